#include "plexus/graph_import.h"

#include <atomic>
#include <map>
#include <memory>
#include <set>

#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/text_format.h"
#include "ir/static_values.h"
#include "plexus/logging.h"
#include "plexus/status.h"

namespace plexus {
namespace {

// Graph files are untrusted: cap their size before parsing.
constexpr size_t kMaxGraphBytes = size_t{2} << 30;

bool TypeAllowed(const AttrSpec& spec, DataType type) {
  if (spec.allowed_types.empty()) return true;
  for (DataType allowed : spec.allowed_types) {
    if (allowed == type) return true;
  }
  return false;
}

// Fills defaults and checks every declared attribute is present and of the
// declared kind.
absl::Status CheckAttrs(Node* node) {
  for (const AttrSpec& spec : node->def->attrs) {
    auto it = node->attrs.find(spec.name);
    if (it == node->attrs.end()) {
      if (!spec.has_default) {
        return absl::InvalidArgumentError(absl::StrCat(
            node->Describe(), ": required attribute '", spec.name, "' is missing"));
      }
      node->attrs.emplace(spec.name, spec.default_value);
      continue;
    }
    const tf::AttrValue& value = it->second;
    if (spec.type == "type") {
      if (value.value_case() != tf::AttrValue::kType) {
        return absl::InvalidArgumentError(absl::StrCat(
            node->Describe(), ": attribute '", spec.name, "' must be a type"));
      }
      if (!IsKnownDataType(value.type())) {
        return absl::InvalidArgumentError(absl::StrCat(
            node->Describe(), ": attribute '", spec.name, "' has unknown data type ",
            static_cast<int>(value.type())));
      }
      DataType type = BaseType(value.type());
      if (!TypeAllowed(spec, type)) {
        return absl::InvalidArgumentError(absl::StrCat(
            node->Describe(), ": attribute '", spec.name, "' = ", DataTypeName(type),
            " is not an allowed type for this op"));
      }
    } else if (spec.type == "int" && value.value_case() != tf::AttrValue::kI) {
      return absl::InvalidArgumentError(absl::StrCat(
          node->Describe(), ": attribute '", spec.name, "' must be an int"));
    } else if (spec.type == "bool" && value.value_case() != tf::AttrValue::kB) {
      return absl::InvalidArgumentError(absl::StrCat(
          node->Describe(), ": attribute '", spec.name, "' must be a bool"));
    } else if (spec.type == "tensor" && value.value_case() != tf::AttrValue::kTensor) {
      return absl::InvalidArgumentError(absl::StrCat(
          node->Describe(), ": attribute '", spec.name, "' must be a tensor"));
    } else if (spec.type == "string" && value.value_case() != tf::AttrValue::kS) {
      return absl::InvalidArgumentError(absl::StrCat(
          node->Describe(), ": attribute '", spec.name, "' must be a string"));
    } else if (spec.type == "shape" && value.value_case() != tf::AttrValue::kShape) {
      return absl::InvalidArgumentError(absl::StrCat(
          node->Describe(), ": attribute '", spec.name, "' must be a shape"));
    }
    if (spec.type == "int" && spec.has_minimum && value.i() < spec.minimum) {
      return absl::InvalidArgumentError(absl::StrCat(
          node->Describe(), ": attribute '", spec.name, "' = ", value.i(),
          " is below its minimum ", spec.minimum));
    }
  }
  for (const auto& [name, value] : node->attrs) {
    if (node->def->FindAttr(name) == nullptr && !absl::StartsWith(name, "_")) {
      Log(LogLevel::kDebug, absl::StrCat(node->Describe(), ": ignoring undeclared attribute '",
                                         name, "'"));
    }
  }
  return absl::OkStatus();
}

absl::Status ExpandArgType(const Node& node, const ArgSpec& arg, std::vector<DataType>* types);

// Expands the op's argument specs into one dtype per input or output.
absl::Status ExpandArgTypes(const Node& node, const std::vector<ArgSpec>& args,
                            std::vector<DataType>* types, std::vector<bool>* refs = nullptr) {
  for (const ArgSpec& arg : args) {
    PX_RETURN_IF_ERROR(ExpandArgType(node, arg, types));
    if (refs != nullptr) refs->resize(types->size(), arg.is_ref);
  }
  return absl::OkStatus();
}

// One argument spec's dtypes.
absl::Status ExpandArgType(const Node& node, const ArgSpec& arg, std::vector<DataType>* types) {
  {
    int64_t count = 1;
    if (!arg.number_attr.empty()) {
      PX_ASSIGN_OR_RETURN(count, GetAttrInt(node, arg.number_attr));
      constexpr int64_t kMaxArgs = 1 << 20;
      if (count < 0 || count > kMaxArgs) {
        return absl::InvalidArgumentError(absl::StrCat(
            node.Describe(), ": attribute '", arg.number_attr, "' = ", count,
            " is out of range [0, ", kMaxArgs, "]"));
      }
    }
    if (arg.fixed_type != DataType::kInvalid) {
      types->insert(types->end(), count, arg.fixed_type);
    } else if (!arg.type_attr.empty()) {
      PX_ASSIGN_OR_RETURN(DataType type, GetAttrType(node, arg.type_attr));
      types->insert(types->end(), count, type);
    } else {
      const tf::AttrValue* list = node.FindAttr(arg.type_list_attr);
      if (list == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(
            node.Describe(), ": attribute '", arg.type_list_attr, "' is missing"));
      }
      for (int t : list->list().type()) {
        if (!IsKnownDataType(t)) {
          return absl::InvalidArgumentError(absl::StrCat(
              node.Describe(), ": attribute '", arg.type_list_attr,
              "' has unknown data type ", t));
        }
        types->push_back(BaseType(t));
      }
    }
  }
  return absl::OkStatus();
}

// Kahn's algorithm over data and control edges (one entry per edge, so the
// work is linear). Fails on a cycle, naming a node on it.
// Edges out of NextIteration nodes are the back edges of TensorFlow 1 loops
// and are left out; any other cycle is an error.
absl::StatusOr<std::vector<Node*>> TopologicalOrder(const Graph& graph) {
  std::vector<int> pending(graph.num_nodes(), 0);
  std::vector<std::vector<Node*>> out_edges(graph.num_nodes());
  auto back_edge = [](const Node* source) {
    return source->op == "NextIteration" || source->op == "RefNextIteration";
  };
  for (const auto& node : graph.nodes()) {
    for (const Endpoint& in : node->inputs) {
      if (back_edge(in.node)) continue;
      ++pending[node->id];
      out_edges[in.node->id].push_back(node.get());
    }
    for (Node* c : node->control_inputs) {
      if (back_edge(c)) continue;
      ++pending[node->id];
      out_edges[c->id].push_back(node.get());
    }
  }
  std::vector<Node*> order;
  order.reserve(graph.num_nodes());
  for (const auto& node : graph.nodes()) {
    if (pending[node->id] == 0) order.push_back(node.get());
  }
  for (size_t i = 0; i < order.size(); ++i) {
    for (Node* consumer : out_edges[order[i]->id]) {
      if (--pending[consumer->id] == 0) order.push_back(consumer);
    }
  }
  if (static_cast<int>(order.size()) != graph.num_nodes()) {
    for (const auto& node : graph.nodes()) {
      if (pending[node->id] > 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            node->Describe(), " is part of a cycle that does not pass through a "
            "NextIteration node (only loop frames may have cycles)"));
      }
    }
  }
  return order;
}

// Every op of the graph and of its function library that Plexus lacks, with
// the nodes that use it, in one message.
absl::Status CheckOpsKnown(const tf::GraphDef& def) {
  const OpRegistry& registry = OpRegistry::Global();
  std::map<std::string, std::vector<std::string>> missing;
  std::set<std::string> functions;
  for (const tf::FunctionDef& f : def.library().function()) functions.insert(f.signature().name());
  auto check = [&](const tf::NodeDef& n, const std::string& where) {
    if (registry.Find(n.op()) == nullptr && !functions.count(n.op())) {
      auto& nodes = missing[n.op()];
      if (nodes.size() < 3) nodes.push_back(absl::StrCat("'", n.name(), "'", where));
      else if (nodes.size() == 3) nodes.push_back("...");
    }
  };
  for (const tf::NodeDef& n : def.node()) check(n, "");
  for (const tf::FunctionDef& f : def.library().function()) {
    for (const tf::NodeDef& n : f.node_def()) check(n, absl::StrCat(" in function ", f.signature().name()));
  }
  if (missing.empty()) return absl::OkStatus();
  std::vector<std::string> parts;
  for (const auto& [op, nodes] : missing) {
    parts.push_back(absl::StrCat(op, " (node ", absl::StrJoin(nodes, ", "), ")"));
  }
  return absl::NotFoundError(absl::StrCat(missing.size(), " op(s) used by the graph are not "
                                          "registered in Plexus: ", absl::StrJoin(parts, "; ")));
}

absl::Status ImportNodes(const tf::GraphDef& def, Graph* graph) {
  const OpRegistry& registry = OpRegistry::Global();
  PX_RETURN_IF_ERROR(CheckOpsKnown(def));
  for (const tf::NodeDef& node_def : def.node()) {
    if (node_def.name().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node #", graph->num_nodes(), " (op ", node_def.op(), ") has an empty name"));
    }
    if (graph->FindNode(node_def.name()) != nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("node name '", node_def.name(), "' is used twice"));
    }
    Node* node = graph->AddNode(node_def.name(), node_def.op());
    node->def = registry.Find(node_def.op());
    if (node->def == nullptr) {
      return absl::NotFoundError(absl::StrCat(
          node->Describe(), ": op '", node_def.op(), "' is not registered in Plexus"));
    }
    node->requested_device = node_def.device();
    for (const auto& [name, value] : node_def.attr()) node->attrs.emplace(name, value);
    PX_RETURN_IF_ERROR(PrepareNode(node));
  }
  // Second pass: edges, now that every node exists. `last_consumer` keeps
  // Node::consumers free of duplicates in linear time.
  std::vector<int> last_consumer(graph->num_nodes(), -1);
  for (int i = 0; i < def.node_size(); ++i) {
    const tf::NodeDef& node_def = def.node(i);
    Node* node = graph->nodes()[i].get();
    for (const std::string& input : node_def.input()) {
      auto parsed = ParseTensorRef(input);
      if (!parsed.ok()) {
        return Annotate(parsed.status(), absl::StrCat(node->Describe(), ": input '", input, "'"));
      }
      const TensorRef& ref = *parsed;
      Node* source = graph->FindNode(ref.node);
      if (source == nullptr) {
        return absl::NotFoundError(absl::StrCat(node->Describe(), ": input '", input,
                                                "' names no node in the graph"));
      }
      if (ref.control) {
        node->control_inputs.push_back(source);
      } else {
        if (!node->control_inputs.empty()) {
          return absl::InvalidArgumentError(absl::StrCat(
              node->Describe(), ": data input '", input, "' follows a control input"));
        }
        if (ref.index >= source->num_outputs()) {
          return absl::InvalidArgumentError(absl::StrCat(
              node->Describe(), ": input '", input, "' asks for output ", ref.index,
              " of ", source->Describe(), ", which has ", source->num_outputs()));
        }
        node->inputs.push_back(Endpoint{source, ref.index});
      }
      if (last_consumer[source->id] != node->id) {
        last_consumer[source->id] = node->id;
        source->consumers.push_back(node);
      }
    }
    if (node->num_inputs() != static_cast<int>(node->input_types.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          node->Describe(), ": expects ", node->input_types.size(), " data input(s), got ",
          node->num_inputs()));
    }
    for (int k = 0; k < node->num_inputs(); ++k) {
      const Endpoint& in = node->inputs[k];
      DataType produced = in.node->output_types[in.index];
      if (produced != node->input_types[k]) {
        return absl::InvalidArgumentError(absl::StrCat(
            node->Describe(), ": input ", k, " ('", in.node->name, ":", in.index, "') is ",
            DataTypeName(produced), " but the op expects ", DataTypeName(node->input_types[k])));
      }
    }
  }
  return absl::OkStatus();
}

std::atomic<StaticValueFn> static_value_fn{nullptr};  // see static_values.h

absl::Status InferStaticShapes(Graph* graph) {
  PX_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*graph));
  // Loop back edges are visited before their source: start from unknown.
  for (Node* node : order) {
    node->output_shapes.assign(node->num_outputs(), PartialShape::Unknown());
  }
  // Small integer values known statically (ir/shape_values.h), by node
  // (output 0), for the shape functions that read their inputs' values.
  const StaticValueFn evaluate = GetStaticValueFn();
  std::map<const Node*, std::shared_ptr<const Tensor>> values;
  for (Node* node : order) {
    std::vector<PartialShape> inputs;
    std::vector<const Tensor*> input_values;
    for (const Endpoint& in : node->inputs) {
      inputs.push_back(in.node->output_shapes[in.index]);
      auto it = in.index == 0 ? values.find(in.node) : values.end();
      input_values.push_back(it == values.end() ? nullptr : it->second.get());
    }
    if (evaluate != nullptr) {
      if (std::shared_ptr<const Tensor> value = evaluate(*node, inputs, input_values)) {
        values.emplace(node, std::move(value));
      }
    }
    InferenceContext ctx(*node, std::move(inputs), std::move(input_values));
    PX_RETURN_IF_ERROR(InferShapes(ctx));
    node->output_shapes = std::move(ctx.outputs());
  }
  return absl::OkStatus();
}

absl::Status CheckVersions(const tf::GraphDef& def) {
  if (!def.has_versions()) return absl::OkStatus();
  const tf::VersionDef& v = def.versions();
  // TensorFlow's rules: the producer must be at least the oldest producer
  // this consumer reads (0), the consumer at least the graph's min_consumer,
  // and the consumer not among its bad_consumers. A newer producer is fine.
  if (v.producer() < kGraphDefMinProducerVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the graph's producer version ", v.producer(), " is below the oldest producer Plexus "
        "reads (", kGraphDefMinProducerVersion, ")"));
  }
  if (v.min_consumer() > kGraphDefConsumerVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the graph needs a consumer of version ", v.min_consumer(), " or newer; Plexus reads ",
        kGraphDefConsumerVersion));
  }
  for (int bad : v.bad_consumers()) {
    if (bad == kGraphDefConsumerVersion) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the graph disallows consumer version ", kGraphDefConsumerVersion));
    }
  }
  return absl::OkStatus();
}

}  // namespace

void SetStaticValueFn(StaticValueFn fn) { static_value_fn.store(fn); }
StaticValueFn GetStaticValueFn() { return static_value_fn.load(); }

absl::Status PrepareNode(Node* node) {
  PX_RETURN_IF_ERROR(CheckAttrs(node));
  node->input_types.clear();
  node->input_is_ref.clear();
  node->output_types.clear();
  PX_RETURN_IF_ERROR(ExpandArgTypes(*node, node->def->inputs, &node->input_types,
                                    &node->input_is_ref));
  return ExpandArgTypes(*node, node->def->outputs, &node->output_types);
}

tf::GraphDef GraphToGraphDef(const Graph& graph) {
  tf::GraphDef def;
  def.mutable_versions()->set_producer(graph.producer_version);
  *def.mutable_library() = graph.library;
  for (const auto& node : graph.nodes()) {
    tf::NodeDef* n = def.add_node();
    n->set_name(node->name);
    n->set_op(node->op);
    n->set_device(node->requested_device);
    for (const Endpoint& in : node->inputs) {
      n->add_input(in.index == 0 ? in.node->name : absl::StrCat(in.node->name, ":", in.index));
    }
    for (const Node* c : node->control_inputs) n->add_input(absl::StrCat("^", c->name));
    for (const auto& [name, value] : node->attrs) (*n->mutable_attr())[name] = value;
  }
  return def;
}

absl::StatusOr<TensorRef> ParseTensorRef(absl::string_view text) {
  TensorRef ref;
  if (!text.empty() && text[0] == '^') {
    ref.control = true;
    text.remove_prefix(1);
  }
  size_t colon = text.rfind(':');
  if (colon != absl::string_view::npos && !ref.control) {
    int index;
    if (!absl::SimpleAtoi(text.substr(colon + 1), &index) || index < 0) {
      return absl::InvalidArgumentError(absl::StrCat("malformed tensor reference '", text, "'"));
    }
    ref.index = index;
    text = text.substr(0, colon);
  }
  if (text.empty()) return absl::InvalidArgumentError("empty tensor reference");
  ref.node = std::string(text);
  return ref;
}

absl::StatusOr<std::unique_ptr<Graph>> ImportGraphDef(const tf::GraphDef& def,
                                                      absl::string_view source) {
  if (def.library().function_size() > 0) {
    // Calls of library functions by op name become explicit call ops.
    std::set<std::string> names;
    for (const tf::FunctionDef& f : def.library().function()) names.insert(f.signature().name());
    bool calls = false;
    for (const tf::NodeDef& n : def.node()) {
      calls = calls || (names.count(n.op()) > 0 && OpRegistry::Global().Find(n.op()) == nullptr);
    }
    if (calls) {
      tf::GraphDef rewritten = def;
      for (tf::NodeDef& n : *rewritten.mutable_node()) RewriteCall(rewritten.library(), &n);
      return ImportGraphDef(rewritten, source);
    }
  }
  auto graph = std::make_unique<Graph>();
  graph->source = std::string(source);
  graph->producer_version = def.has_versions() ? def.versions().producer() : 0;
  graph->library = def.library();
  absl::Status status = CheckVersions(def);
  if (status.ok()) status = ImportNodes(def, graph.get());
  if (status.ok()) status = InferStaticShapes(graph.get());
  if (!status.ok()) return Annotate(status, absl::StrCat("importing ", source));
  return graph;
}

// How deep a text GraphDef may nest messages (protobuf's own default for
// binary messages is 100; real graphs stay far below it).
constexpr int kMaxTextNesting = 100;

absl::StatusOr<std::unique_ptr<Graph>> ImportGraphDefBytes(absl::string_view bytes,
                                                           absl::string_view source,
                                                           GraphFormat format) {
  if (bytes.size() > kMaxGraphBytes || bytes.size() > static_cast<size_t>(INT_MAX)) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": graph file is too large"));
  }
  tf::GraphDef def;
  bool parsed = false;
  const bool text = format == GraphFormat::kText;
  if (!text) {
    google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
    google::protobuf::io::CodedInputStream coded(&raw);
    coded.SetRecursionLimit(200);
    parsed = def.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
  }
  if (!parsed && format == GraphFormat::kBinary) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": not a valid binary GraphDef (", bytes.size(), " bytes could not be parsed)"));
  }
  if (!parsed) {
    def.Clear();
    google::protobuf::TextFormat::Parser parser;
    parser.AllowUnknownField(true);
    // Nesting (attributes inside attributes, unknown fields inside unknown
    // fields) is bounded as in the binary parse: a few thousand levels
    // would overflow the stack.
    parser.SetRecursionLimit(kMaxTextNesting);
    // Silence the parser's own stderr report; the status says it all.
    class Collector : public google::protobuf::io::ErrorCollector {
     public:
      void AddError(int line, int column, const std::string& message) override {
        if (first.empty()) first = absl::StrCat("line ", line + 1, ", column ", column + 1, ": ", message);
      }
      std::string first;
    } collector;
    parser.RecordErrorsTo(&collector);
    std::string copy(bytes);
    if (!parser.ParseFromString(copy, &def)) {
      if (text) {
        return absl::InvalidArgumentError(absl::StrCat(
            source, ": not a valid text GraphDef (", collector.first, ")"));
      }
      return absl::InvalidArgumentError(absl::StrCat(
          source, ": not a valid GraphDef (neither binary nor text format)"));
    }
  }
  return ImportGraphDef(def, source);
}

absl::StatusOr<std::unique_ptr<Graph>> ImportGraphDefFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is a directory, not a graph file"));
  }
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot open graph file '", path, "'"));
  const auto size = file.tellg();
  if (size < 0) return absl::InvalidArgumentError(absl::StrCat("'", path, "' cannot be read as a file"));
  if (static_cast<size_t>(size) > kMaxGraphBytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": graph file is too large (", static_cast<size_t>(size),
                                                   " bytes; the limit is ", kMaxGraphBytes, ")"));
  }
  file.seekg(0);
  std::ostringstream contents;
  contents << file.rdbuf();
  bool text = absl::EndsWith(path, ".pbtxt") || absl::EndsWith(path, ".txt");
  return ImportGraphDefBytes(contents.str(), path, text ? GraphFormat::kText : GraphFormat::kAuto);
}

}  // namespace plexus

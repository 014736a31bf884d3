#include "plexus/graph_builder.h"
#include "plexus/device.h"

#include <cctype>
#include <utility>

#include "absl/strings/str_cat.h"
#include "plexus/graph_import.h"
#include "plexus/status.h"
#include "plexus/tensor_proto.h"

namespace plexus {

GraphBuilder::GraphBuilder(std::string source) { graph_.source = std::move(source); }

std::string GraphBuilder::UniqueName(absl::string_view hint) {
  std::string base(hint);
  for (char& c : base) {
    // TensorFlow's node names: letters, digits and ._-/ ; anything else becomes '_'.
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '/')) c = '_';
  }
  if (base.empty()) base = "node";
  std::string name = base;
  int& count = name_counts_[base];
  while (graph_.FindNode(name) != nullptr) name = absl::StrCat(base, "_", ++count);
  return name;
}

absl::StatusOr<Node*> GraphBuilder::AddNode(absl::string_view op, const std::vector<Endpoint>& inputs,
                                            AttrMap attrs, absl::string_view name_hint,
                                            const std::vector<Node*>& control_inputs) {
  const OpDef* def = OpRegistry::Global().Find(op);
  if (def == nullptr) {
    return absl::NotFoundError(absl::StrCat("op '", op, "' is not registered in Plexus"));
  }
  std::vector<DataType> types;
  std::vector<PartialShape> shapes;
  std::vector<const Tensor*> values;
  for (const Endpoint& in : inputs) {
    if (in.node == nullptr || in.index < 0 || in.index >= in.node->num_outputs()) {
      return absl::InvalidArgumentError(absl::StrCat("op ", op, ": an input is not an output of this graph"));
    }
    types.push_back(in.node->output_types[in.index]);
    shapes.push_back(in.node->output_shapes[in.index]);
    values.push_back(in.index == 0 ? ConstValue(in.node) : nullptr);
  }
  // Checked on a scratch node first, so an error leaves the graph unchanged.
  Node probe;
  probe.name = UniqueName(name_hint.empty() ? op : name_hint);
  probe.op = std::string(op);
  probe.def = def;
  probe.attrs = std::move(attrs);
  PX_RETURN_IF_ERROR(InferOpAttrs(*def, types, &probe.attrs));
  PX_RETURN_IF_ERROR(PrepareNode(&probe));
  if (probe.input_types.size() != types.size()) {
    return absl::InvalidArgumentError(absl::StrCat(probe.Describe(), ": takes ", probe.input_types.size(),
                                                   " input(s), got ", types.size()));
  }
  for (size_t k = 0; k < types.size(); ++k) {
    if (probe.input_types[k] != types[k]) {
      return absl::InvalidArgumentError(absl::StrCat(
          probe.Describe(), ": input ", k, " ('", inputs[k].node->name, ":", inputs[k].index, "') is ",
          DataTypeName(types[k]), " but the op expects ", DataTypeName(probe.input_types[k])));
    }
    probe.inputs.push_back(inputs[k]);
  }
  InferenceContext ctx(probe, std::move(shapes), std::move(values));
  PX_RETURN_IF_ERROR(InferShapes(ctx));
  Node* node = graph_.AddNode(probe.name, probe.op);
  node->def = def;
  node->attrs = std::move(probe.attrs);
  node->inputs = std::move(probe.inputs);
  node->control_inputs = control_inputs;
  node->input_types = std::move(probe.input_types);
  node->input_is_ref = std::move(probe.input_is_ref);
  node->output_types = std::move(probe.output_types);
  node->output_shapes = std::move(ctx.outputs());
  for (const Endpoint& in : node->inputs) {
    auto& c = in.node->consumers;
    if (c.empty() || c.back() != node) c.push_back(node);
  }
  for (Node* c : control_inputs) c->consumers.push_back(node);
  return node;
}

absl::StatusOr<std::unique_ptr<GraphBuilder>> GraphBuilder::FromGraph(const Graph& graph) {
  auto b = std::make_unique<GraphBuilder>(graph.source);
  b->graph_.library = graph.library;
  const int n = graph.num_nodes();
  std::vector<Node*> copy(n, nullptr);
  std::vector<int> pending(n, 0);
  std::vector<const Node*> ready;
  for (const auto& node : graph.nodes()) {
    pending[node->id] = node->num_inputs() + static_cast<int>(node->control_inputs.size());
    if (pending[node->id] == 0) ready.push_back(node.get());
  }
  int done = 0;
  while (!ready.empty()) {
    const Node* node = ready.back();
    ready.pop_back();
    std::vector<Endpoint> inputs;
    for (const Endpoint& in : node->inputs) inputs.push_back({copy[in.node->id], in.index});
    std::vector<Node*> controls;
    for (const Node* c : node->control_inputs) controls.push_back(copy[c->id]);
    absl::StatusOr<Node*> added;
    if (node->op == "Const") {
      const tf::AttrValue* value = node->FindAttr("value");
      absl::StatusOr<Tensor> t = value != nullptr ? TensorFromProto(value->tensor())
                                                  : absl::InvalidArgumentError("Const without a value");
      if (!t.ok()) return absl::Status(t.status().code(), absl::StrCat(node->Describe(), ": ", t.status().message()));
      added = b->AddConst(*t, node->name);
    } else {
      added = b->AddNode(node->op, inputs, node->attrs, node->name, controls);
    }
    if (!added.ok()) return added.status();
    if ((*added)->name != node->name) {
      return absl::InvalidArgumentError(absl::StrCat("graph copy: node name '", node->name, "' is not unique"));
    }
    (*added)->requested_device = node->requested_device;
    copy[node->id] = *added;
    ++done;
    for (const Node* c : node->consumers) {
      int edges = 0;
      for (const Endpoint& in : c->inputs) edges += in.node == node;
      for (const Node* ci : c->control_inputs) edges += ci == node;
      // consumers lists a node once per run of edges; count them all here.
      if (edges > 0 && (pending[c->id] -= edges) == 0) ready.push_back(c);
    }
  }
  if (done != n) {
    return absl::UnimplementedError(absl::StrCat(graph.source, ": the graph has a cycle (a TensorFlow 1 loop); "
                                                 "it cannot be extended node by node"));
  }
  return b;
}

absl::StatusOr<Node*> GraphBuilder::AddPlaceholder(DataType dtype, const PartialShape& shape,
                                                   absl::string_view name_hint) {
  AttrMap attrs;
  attrs["dtype"].set_type(static_cast<tf::DataType>(dtype));
  tf::TensorShapeProto* s = attrs["shape"].mutable_shape();
  if (!shape.rank_known()) {
    s->set_unknown_rank(true);
  } else {
    for (int64_t d = 0; d < shape.rank(); ++d) s->add_dim()->set_size(shape.dim(d));
  }
  return AddNode("Placeholder", {}, std::move(attrs), name_hint);
}

absl::StatusOr<Node*> GraphBuilder::AddConst(const Tensor& value, absl::string_view name_hint) {
  PX_ASSIGN_OR_RETURN(Tensor host, CopyTensorTo(value, nullptr));
  PX_ASSIGN_OR_RETURN(tf::TensorProto proto, TensorToProto(host));
  AttrMap attrs;
  attrs["dtype"].set_type(static_cast<tf::DataType>(host.dtype()));
  *attrs["value"].mutable_tensor() = std::move(proto);
  PX_ASSIGN_OR_RETURN(Node * node, AddNode("Const", {}, std::move(attrs), name_hint));
  const_values_[node->id] = host;
  return node;
}

const Tensor* GraphBuilder::ConstValue(const Node* node) const {
  auto it = const_values_.find(node->id);
  return it == const_values_.end() ? nullptr : &it->second;
}

tf::GraphDef GraphBuilder::ToGraphDef() const { return GraphToGraphDef(graph_); }

absl::StatusOr<std::shared_ptr<const Graph>> GraphBuilder::Finish() const {
  PX_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, ImportGraphDef(ToGraphDef(), graph_.source));
  return std::shared_ptr<const Graph>(std::move(graph));
}

}  // namespace plexus

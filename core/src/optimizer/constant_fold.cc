// Constant folding: every node whose value depends only on constants is
// evaluated once, now, and the values its consumers read become Const nodes.
//   - Shape, Size and Rank of a tensor whose static shape is fully known
//     fold without running anything (feeds are checked against static
//     shapes, so these hold at run time).
//   - The foldable nodes: not stateful, not control flow, not fed, with
//     every input (data and control) from a foldable node or an
//     unconditional Const. Those the folded values need run together as
//     one graph on the host device, with the optimizer off.
//   - Only the values read by nodes that stay are materialized, each at
//     most fold_max_bytes; larger ones stay computed at run time (and are
//     not even evaluated when their static shapes already say so).
// The folded nodes are left for dead-node removal.
#include <optional>
#include <map>

#include "absl/strings/str_cat.h"
#include "optimizer/graph_util.h"
#include "optimizer/optimizer.h"
#include "plexus/dtype.h"
#include "plexus/graph_import.h"
#include "plexus/logging.h"
#include "plexus/session.h"

namespace plexus::opt {
namespace {

bool NeverFold(const tf::NodeDef& n) {
  static const std::set<std::string> kOps = {"Placeholder", "PlaceholderWithDefault", "_Arg", "_Retval",
                                             "VarHandleOp", "ReadVariableOp", "NoOp"};
  if (kOps.count(n.op()) > 0 || IsStateful(n) || IsControlFlow(n)) return true;
  const OpDef* def = FindOpDef(n);
  if (def == nullptr) return true;
  for (const auto& arg : def->inputs) {
    if (arg.is_ref) return true;
  }
  return false;
}

// Shape, Size and Rank of statically known shapes, as tensors.
std::optional<Tensor> StaticShapeValue(const Node& node) {
  if (node.op != "Shape" && node.op != "Size" && node.op != "Rank") return std::nullopt;
  if (node.inputs.empty()) return std::nullopt;
  const PartialShape& s = node.inputs[0].node->output_shapes[node.inputs[0].index];
  DataType out = node.output_types[0];
  if (out != DataType::kInt32 && out != DataType::kInt64) return std::nullopt;
  auto make = [&](const Shape& shape, const Shape& values) {
    Tensor t = Tensor::AllocateHost(out, shape).value();
    for (size_t i = 0; i < values.size(); ++i) {
      if (out == DataType::kInt32) {
        t.data<int32_t>()[i] = static_cast<int32_t>(values[i]);
      } else {
        t.data<int64_t>()[i] = values[i];
      }
    }
    return t;
  };
  if (node.op == "Rank") {
    if (!s.rank_known()) return std::nullopt;
    return make({}, {s.rank()});
  }
  if (!s.fully_defined()) return std::nullopt;
  if (node.op == "Size") {
    int64_t n = 1;
    for (int64_t d : s.dims()) n *= d;
    if (out == DataType::kInt32 && n > INT32_MAX) return std::nullopt;
    return make({}, {n});
  }
  return make({static_cast<int64_t>(s.dims().size())}, s.dims());
}

}  // namespace

absl::StatusOr<bool> FoldConstants(tf::GraphDef& def, const PassContext& ctx) {
  auto graph = ImportGraphDef(def, ctx.source);
  if (!graph.ok()) return graph.status();
  NodeIndex index(def);
  std::vector<std::string> order = index.TopologicalOrder();
  // Static shapes hold only outside control flow (a shape inside a loop
  // frame or conditional branch must stay there) and away from fed
  // constants.
  const std::set<std::string> under_cf = UnderControlFlow(def);
  const std::set<std::string> tainted = FeedTainted(def, ctx.fed);

  // 1. Which nodes are constant.
  std::set<std::string> foldable;  // computable from constants alone
  std::map<std::string, Tensor> known;  // values of Shape/Size/Rank known statically
  for (const std::string& name : order) {
    const tf::NodeDef* n = index.Find(name);
    const Node* node = (*graph)->FindNode(name);
    if (n == nullptr || node == nullptr) continue;
    bool fed = false;
    for (int k = 0; k < node->num_outputs(); ++k) fed |= ctx.fed.count(EndpointKey(name, k)) > 0;
    if (fed) continue;
    const bool shape_static = under_cf.count(name) == 0 && tainted.count(name) == 0;
    if (std::optional<Tensor> v = shape_static ? StaticShapeValue(*node) : std::nullopt;
        v.has_value() && node->control_inputs.empty()) {
      known.emplace(name, *std::move(v));
      foldable.insert(name);
      continue;
    }
    if (NeverFold(*n)) continue;
    bool all_const = true;
    for (const std::string& in : n->input()) all_const &= foldable.count(ParseInput(in).node) > 0;
    if (all_const) foldable.insert(name);
  }

  // 2. The frontier: values of foldable non-Const nodes read by nodes that
  // stay (or fetched through a protected node that is not itself folded).
  struct Target {
    std::string node;
    int index;
  };
  std::vector<Target> targets;
  std::set<std::string> seen;
  for (const std::string& name : foldable) {
    const tf::NodeDef* n = index.Find(name);
    if (n->op() == "Const" || ctx.protected_nodes.count(name) > 0) continue;
    for (const auto& [consumer, pos] : index.DataConsumers(name)) {
      if (foldable.count(consumer->name()) > 0 && ctx.protected_nodes.count(consumer->name()) == 0) continue;
      InputRef ref = ParseInput(consumer->input(pos));
      std::string key = EndpointKey(name, ref.index);
      if (seen.insert(key).second) targets.push_back({name, ref.index});
    }
  }
  if (targets.empty()) return false;

  // 3. Evaluate the frontier: known shapes directly, the rest in one run.
  // A value whose static shape already says it is larger than
  // fold_max_bytes would not be materialized: it is not evaluated at all
  // (a huge Fill must not be allocated just to be thrown away).
  std::map<std::string, Tensor> values;
  std::vector<std::string> fetches;
  int too_large = 0;
  for (const Target& t : targets) {
    auto it = known.find(t.node);
    if (it != known.end()) {
      values[EndpointKey(t.node, t.index)] = it->second;
      continue;
    }
    const Node* node = (*graph)->FindNode(t.node);
    if (node != nullptr && t.index < node->num_outputs()) {
      const PartialShape& shape = node->output_shapes[t.index];
      const size_t element = DataTypeSize(node->output_types[t.index]);
      if (shape.fully_defined() && element > 0) {
        // Saturating: the product of the dimensions may overflow.
        const int64_t limit = ctx.fold_max_bytes;
        int64_t bytes = static_cast<int64_t>(element);
        for (int64_t d : shape.dims()) {
          if (d == 0) {
            bytes = 0;
            break;
          }
          bytes = bytes > limit / d ? limit + 1 : bytes * d;
        }
        if (bytes > limit) {
          ++too_large;
          continue;
        }
      }
    }
    fetches.push_back(OutputName(t.node, t.index));
  }
  if (too_large > 0 && ctx.log) {
    ctx.log->push_back(absl::StrCat("constant_fold: ", too_large, " values left computed, larger than ",
                                    ctx.fold_max_bytes, " bytes by their static shapes"));
  }
  if (!fetches.empty()) {
    std::shared_ptr<Device> host = ctx.runtime ? ctx.runtime->HostDevice() : nullptr;
    if (host == nullptr) {
      fetches.clear();  // nowhere to evaluate: fold the known shapes only
    } else {
      // The subgraph: only the foldable nodes the fetches read, directly or
      // through data and control inputs (not every Const of the graph).
      // Shape/Size/Rank known statically become Consts of their values, so
      // their own inputs are not needed.
      std::set<std::string> needed;
      std::vector<std::string> stack;
      for (const std::string& f : fetches) stack.push_back(ParseInput(f).node);
      while (!stack.empty()) {
        std::string name = std::move(stack.back());
        stack.pop_back();
        if (foldable.count(name) == 0 || !needed.insert(name).second || known.count(name) > 0) continue;
        for (const std::string& in : index.Find(name)->input()) stack.push_back(ParseInput(in).node);
      }
      tf::GraphDef sub;
      *sub.mutable_versions() = def.versions();
      *sub.mutable_library() = def.library();
      for (const tf::NodeDef& n : def.node()) {
        if (needed.count(n.name()) == 0) continue;
        auto it = known.find(n.name());
        if (it == known.end()) {
          *sub.add_node() = n;
          continue;
        }
        auto c = MakeConst(n.name(), it->second, n.device());
        if (!c.ok()) return c.status();
        *sub.add_node() = *std::move(c);
      }
      auto subgraph = ImportGraphDef(sub, "<constant folding>");
      absl::StatusOr<std::vector<Tensor>> result = absl::UnknownError("not run");
      if (!subgraph.ok()) {
        result = subgraph.status();
      } else {
        SessionOptions options;
        options.device = host->name();
        options.optimizer.enabled = false;
        auto session = Session::Create(const_cast<Runtime*>(ctx.runtime),
                                       std::shared_ptr<const Graph>(std::move(*subgraph)), options);
        result = session.ok() ? (*session)->Run({}, fetches) : session.status();
      }
      if (!result.ok()) {
        // A kernel refused a constant input (say an integer division by
        // zero): the error belongs to the run, where it names the node.
        if (ctx.log) ctx.log->push_back(absl::StrCat("constant_fold: evaluation failed, nothing folded: ",
                                                     result.status().message()));
        fetches.clear();
      } else {
        for (size_t i = 0; i < fetches.size(); ++i) {
          InputRef ref = ParseInput(fetches[i]);
          values[EndpointKey(ref.node, ref.index)] = (*result)[i];
        }
      }
    }
  }

  // 4. Replace each value with a Const read by the nodes that stay. The
  // index, kept current, rewires each value's readers in time proportional
  // to them; names come from one set built here.
  int folded = 0;
  std::set<std::string> skip;  // folded nodes keep reading the values they fold from
  for (const std::string& f : foldable) {
    if (ctx.protected_nodes.count(f) == 0) skip.insert(f);
  }
  std::optional<NameSet> names;
  for (const Target& t : targets) {
    auto it = values.find(EndpointKey(t.node, t.index));
    if (it == values.end()) continue;
    const Tensor& value = it->second;
    if (!value.valid() || !value.host_readable() || static_cast<int64_t>(value.nbytes()) > ctx.fold_max_bytes) {
      continue;
    }
    const tf::NodeDef* producer = index.Find(t.node);
    if (!names.has_value()) names.emplace(def);
    std::string name = names->Unique(absl::StrCat(t.node, "/folded", t.index ? absl::StrCat("_", t.index) : ""));
    auto c = MakeConst(name, value, producer->device());
    if (!c.ok()) continue;  // resource or variant values stay computed
    if (index.RewireOutputs(t.node, t.index, name, &skip) == 0) continue;
    index.AddNode(*std::move(c));  // the index's pointers stay valid
    ++folded;
  }
  // Control edges from folded nodes to nodes that stay carry no effect
  // (folded nodes have none): drop them.
  if (folded > 0) {
    for (tf::NodeDef& n : *def.mutable_node()) {
      if (foldable.count(n.name()) > 0) continue;
      auto* inputs = n.mutable_input();
      for (int i = inputs->size() - 1; i >= 0; --i) {
        InputRef ref = ParseInput(inputs->Get(i));
        if (ref.control && foldable.count(ref.node) > 0 && index.Find(ref.node) != nullptr &&
            index.Find(ref.node)->op() != "Const") {
          inputs->erase(inputs->begin() + i);
        }
      }
    }
  }
  if (folded == 0) return false;
  if (ctx.log) ctx.log->push_back(absl::StrCat("constant_fold: ", folded, " values folded into constants"));
  return true;
}

}  // namespace plexus::opt

// Constant folding: every node whose value depends only on constants is
// evaluated once, now, and the values its consumers read become Const nodes.
//   - Shape, Size and Rank of a tensor whose static shape is fully known
//     fold without running anything (feeds are checked against static
//     shapes, so these hold at run time).
//   - The foldable nodes: not stateful, not control flow, not fed, with
//     every input (data and control) from a foldable node or an
//     unconditional Const. Those the folded values need run together as
//     one graph through the context's evaluator (a session on the host
//     device with the optimizer off, given by the session: passes never
//     build sessions themselves).
//   - Only the values read by nodes that stay are materialized, each at
//     most fold_max_bytes; larger ones stay computed at run time (and are
//     not even evaluated when their static shapes already say so).
// The folded nodes are left for dead-node removal.
#include <optional>
#include <map>

#include "absl/strings/str_cat.h"
#include "passes/optimizer/graph_util.h"
#include "passes/optimizer/optimizer.h"
#include "plexus/dtype.h"
#include "plexus/graph_import.h"
#include "plexus/logging.h"
#include "plexus/status.h"

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

// True when the static shape of output `index` of `node` already says its
// value is larger than `limit` bytes.
bool StaticallyLargerThan(const Node* node, int index, int64_t limit) {
  if (node == nullptr || index >= node->num_outputs()) return false;
  const PartialShape& shape = node->output_shapes[index];
  const size_t element = DataTypeSize(node->output_types[index]);
  if (!shape.fully_defined() || element == 0) return false;
  // Saturating: the product of the dimensions may overflow.
  int64_t bytes = static_cast<int64_t>(element);
  for (int64_t d : shape.dims()) {
    if (d == 0) {
      bytes = 0;
      break;
    }
    bytes = bytes > limit / d ? limit + 1 : bytes * d;
  }
  return bytes > limit;
}

// A value to fold: output `index` of node `node`.
struct Target {
  std::string node;
  int index;
};

// The folding of one graph, step by step.
class ConstantFolder {
 public:
  ConstantFolder(tf::GraphDef& def, const PassContext& ctx, const Graph& graph)
      : def_(def), ctx_(ctx), graph_(graph), index_(def) {}

  // 1. Which nodes are constant.
  void FindFoldable();
  // 2. The frontier: values of foldable non-Const nodes read by nodes that
  // stay (or fetched through a protected node that is not itself folded).
  std::vector<Target> FindTargets() const;
  // 3. Evaluate the frontier: known shapes directly, the rest in one run.
  absl::Status Evaluate(const std::vector<Target>& targets);
  // 4. Replace each value with a Const read by the nodes that stay. Returns
  // how many were.
  int Materialize(const std::vector<Target>& targets);

 private:
  // The fetches of step 3's run; fills values_ with the known shapes.
  std::vector<std::string> SelectFetches(const std::vector<Target>& targets);
  // The graph that computes `fetches`.
  absl::StatusOr<tf::GraphDef> Subgraph(const std::vector<std::string>& fetches) const;
  // Runs `fetches` through the context's evaluator into values_.
  absl::Status EvaluateFetches(const std::vector<std::string>& fetches);
  // Drops the control edges from folded nodes to nodes that stay.
  void DropFoldedControlEdges();

  tf::GraphDef& def_;
  const PassContext& ctx_;
  const Graph& graph_;
  NodeIndex index_;
  std::set<std::string> foldable_;  // computable from constants alone
  std::map<std::string, Tensor> known_;  // values of Shape/Size/Rank known statically
  std::map<std::string, Tensor> values_;  // evaluated values, by endpoint
};

void ConstantFolder::FindFoldable() {
  std::vector<std::string> order = index_.TopologicalOrder();
  // Static shapes hold only outside control flow (a shape inside a loop
  // frame or conditional branch must stay there) and away from fed
  // constants.
  const std::set<std::string> under_cf = UnderControlFlow(def_);
  const std::set<std::string> tainted = FeedTainted(def_, ctx_.fed);
  for (const std::string& name : order) {
    const tf::NodeDef* n = index_.Find(name);
    const Node* node = graph_.FindNode(name);
    if (n == nullptr || node == nullptr) continue;
    bool fed = false;
    for (int k = 0; k < node->num_outputs(); ++k) fed |= ctx_.fed.count(EndpointKey(name, k)) > 0;
    if (fed) continue;
    const bool shape_static = under_cf.count(name) == 0 && tainted.count(name) == 0;
    if (std::optional<Tensor> v = shape_static ? StaticShapeValue(*node) : std::nullopt;
        v.has_value() && node->control_inputs.empty()) {
      known_.emplace(name, *std::move(v));
      foldable_.insert(name);
      continue;
    }
    if (NeverFold(*n)) continue;
    bool all_const = true;
    for (const std::string& in : n->input()) all_const &= foldable_.count(ParseInput(in).node) > 0;
    if (all_const) foldable_.insert(name);
  }
}

std::vector<Target> ConstantFolder::FindTargets() const {
  std::vector<Target> targets;
  std::set<std::string> seen;
  for (const std::string& name : foldable_) {
    const tf::NodeDef* n = index_.Find(name);
    if (n->op() == "Const" || ctx_.protected_nodes.count(name) > 0) continue;
    for (const auto& [consumer, pos] : index_.DataConsumers(name)) {
      if (foldable_.count(consumer->name()) > 0 && ctx_.protected_nodes.count(consumer->name()) == 0) continue;
      InputRef ref = ParseInput(consumer->input(pos));
      std::string key = EndpointKey(name, ref.index);
      if (seen.insert(key).second) targets.push_back({name, ref.index});
    }
  }
  return targets;
}

// A value whose static shape already says it is larger than fold_max_bytes
// would not be materialized: it is not evaluated at all (a huge Fill must
// not be allocated just to be thrown away).
std::vector<std::string> ConstantFolder::SelectFetches(const std::vector<Target>& targets) {
  std::vector<std::string> fetches;
  int too_large = 0;
  for (const Target& t : targets) {
    auto it = known_.find(t.node);
    if (it != known_.end()) {
      values_[EndpointKey(t.node, t.index)] = it->second;
      continue;
    }
    if (StaticallyLargerThan(graph_.FindNode(t.node), t.index, ctx_.fold_max_bytes)) {
      ++too_large;
      continue;
    }
    fetches.push_back(OutputName(t.node, t.index));
  }
  if (too_large > 0 && ctx_.log) {
    ctx_.log->push_back(absl::StrCat("constant_fold: ", too_large, " values left computed, larger than ",
                                     ctx_.fold_max_bytes, " bytes by their static shapes"));
  }
  return fetches;
}

// The subgraph: only the foldable nodes the fetches read, directly or
// through data and control inputs (not every Const of the graph).
// Shape/Size/Rank known statically become Consts of their values, so their
// own inputs are not needed.
absl::StatusOr<tf::GraphDef> ConstantFolder::Subgraph(const std::vector<std::string>& fetches) const {
  std::set<std::string> needed;
  std::vector<std::string> stack;
  for (const std::string& f : fetches) stack.push_back(ParseInput(f).node);
  while (!stack.empty()) {
    std::string name = std::move(stack.back());
    stack.pop_back();
    if (foldable_.count(name) == 0 || !needed.insert(name).second || known_.count(name) > 0) continue;
    for (const std::string& in : index_.Find(name)->input()) stack.push_back(ParseInput(in).node);
  }
  tf::GraphDef sub;
  *sub.mutable_versions() = def_.versions();
  *sub.mutable_library() = def_.library();
  for (const tf::NodeDef& n : def_.node()) {
    if (needed.count(n.name()) == 0) continue;
    auto it = known_.find(n.name());
    if (it == known_.end()) {
      *sub.add_node() = n;
      continue;
    }
    auto c = MakeConst(n.name(), it->second, n.device());
    if (!c.ok()) return c.status();
    *sub.add_node() = *std::move(c);
  }
  return sub;
}

absl::Status ConstantFolder::EvaluateFetches(const std::vector<std::string>& fetches) {
  PX_ASSIGN_OR_RETURN(tf::GraphDef sub, Subgraph(fetches));
  auto subgraph = ImportGraphDef(sub, "<constant folding>");
  absl::StatusOr<std::vector<Tensor>> result = absl::UnknownError("not run");
  if (!subgraph.ok()) {
    result = subgraph.status();
  } else {
    result = ctx_.evaluate(std::shared_ptr<const Graph>(std::move(*subgraph)), fetches);
  }
  if (!result.ok()) {
    // A kernel refused a constant input (say an integer division by
    // zero): the error belongs to the run, where it names the node.
    if (ctx_.log) ctx_.log->push_back(absl::StrCat("constant_fold: evaluation failed, nothing folded: ",
                                                   result.status().message()));
    return absl::OkStatus();  // nothing folded but the known shapes
  }
  for (size_t i = 0; i < fetches.size(); ++i) {
    InputRef ref = ParseInput(fetches[i]);
    values_[EndpointKey(ref.node, ref.index)] = (*result)[i];
  }
  return absl::OkStatus();
}

absl::Status ConstantFolder::Evaluate(const std::vector<Target>& targets) {
  const std::vector<std::string> fetches = SelectFetches(targets);
  if (fetches.empty()) return absl::OkStatus();
  if (!ctx_.evaluate) return absl::OkStatus();  // nowhere to evaluate: fold the known shapes only
  return EvaluateFetches(fetches);
}

// The index, kept current, rewires each value's readers in time
// proportional to them; names come from one set built here.
int ConstantFolder::Materialize(const std::vector<Target>& targets) {
  int folded = 0;
  std::set<std::string> skip;  // folded nodes keep reading the values they fold from
  for (const std::string& f : foldable_) {
    if (ctx_.protected_nodes.count(f) == 0) skip.insert(f);
  }
  std::optional<NameSet> names;
  for (const Target& t : targets) {
    auto it = values_.find(EndpointKey(t.node, t.index));
    if (it == values_.end()) continue;
    const Tensor& value = it->second;
    if (!value.valid() || !value.host_readable() || static_cast<int64_t>(value.nbytes()) > ctx_.fold_max_bytes) {
      continue;
    }
    const tf::NodeDef* producer = index_.Find(t.node);
    if (!names.has_value()) names.emplace(def_);
    std::string name = names->Unique(absl::StrCat(t.node, "/folded", t.index ? absl::StrCat("_", t.index) : ""));
    auto c = MakeConst(name, value, producer->device());
    if (!c.ok()) continue;  // resource or variant values stay computed
    if (index_.RewireOutputs(t.node, t.index, name, &skip) == 0) continue;
    index_.AddNode(*std::move(c));  // the index's pointers stay valid
    ++folded;
  }
  if (folded > 0) DropFoldedControlEdges();
  return folded;
}

// Control edges from folded nodes to nodes that stay carry no effect
// (folded nodes have none): drop them.
void ConstantFolder::DropFoldedControlEdges() {
  for (tf::NodeDef& n : *def_.mutable_node()) {
    if (foldable_.count(n.name()) > 0) continue;
    auto* inputs = n.mutable_input();
    for (int i = inputs->size() - 1; i >= 0; --i) {
      InputRef ref = ParseInput(inputs->Get(i));
      if (ref.control && foldable_.count(ref.node) > 0 && index_.Find(ref.node) != nullptr &&
          index_.Find(ref.node)->op() != "Const") {
        inputs->erase(inputs->begin() + i);
      }
    }
  }
}

}  // namespace

absl::StatusOr<bool> FoldConstants(tf::GraphDef& def, const PassContext& ctx) {
  auto graph = ImportGraphDef(def, ctx.source);
  if (!graph.ok()) return graph.status();
  ConstantFolder folder(def, ctx, **graph);
  folder.FindFoldable();
  std::vector<Target> targets = folder.FindTargets();
  if (targets.empty()) return false;
  PX_RETURN_IF_ERROR(folder.Evaluate(targets));
  const int folded = folder.Materialize(targets);
  if (folded == 0) return false;
  if (ctx.log) ctx.log->push_back(absl::StrCat("constant_fold: ", folded, " values folded into constants"));
  return true;
}

}  // namespace plexus::opt

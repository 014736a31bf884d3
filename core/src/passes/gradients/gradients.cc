// The gradient registry, GradientContext's helpers and reverse accumulation
// over a graph (AddGradients).
#include "plexus/gradients.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "plexus/status.h"

namespace plexus {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, GradientFn, std::less<>> fns;
};

Registry& GetRegistry() {
  static Registry* r = new Registry;
  return *r;
}

bool IsDifferentiableType(DataType t) {
  return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kHalf ||
         t == DataType::kBFloat16 || t == DataType::kResource;
}

// Static dims of `e`, or empty when some are unknown.
bool StaticDims(const PartialShape& s, std::vector<int64_t>* dims) {
  if (!s.rank_known()) return false;
  dims->clear();
  for (int64_t d = 0; d < s.rank(); ++d) {
    if (s.dim(d) < 0) return false;
    dims->push_back(s.dim(d));
  }
  return true;
}

}  // namespace

void RegisterGradient(const std::string& op, GradientFn fn) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.fns[op] = fn;
}

bool FindGradient(absl::string_view op, GradientFn* fn) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.fns.find(op);
  if (it == r.fns.end()) return false;
  *fn = it->second;
  return true;
}

std::vector<std::string> GradientOps() {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> out;
  for (const auto& [op, fn] : r.fns) out.push_back(op);
  return out;
}

// ---------------------------------------------------------------------------
// GradientContext
// ---------------------------------------------------------------------------

absl::StatusOr<std::vector<Endpoint>> GradientContext::Ops(absl::string_view op,
                                                           const std::vector<Endpoint>& inputs,
                                                           AttrMap attrs) {
  PX_ASSIGN_OR_RETURN(Node * node, b_->AddNode(op, inputs, std::move(attrs), absl::StrCat(scope_, "/", op)));
  std::vector<Endpoint> out;
  for (int k = 0; k < node->num_outputs(); ++k) out.push_back({node, k});
  return out;
}

absl::StatusOr<Endpoint> GradientContext::Op(absl::string_view op, const std::vector<Endpoint>& inputs,
                                             AttrMap attrs) {
  PX_ASSIGN_OR_RETURN(Node * node, b_->AddNode(op, inputs, std::move(attrs), absl::StrCat(scope_, "/", op)));
  if (node->num_outputs() == 0) {
    return absl::InternalError(absl::StrCat("gradient op ", op, " has no outputs"));
  }
  return Endpoint{node, 0};
}

absl::StatusOr<Endpoint> GradientContext::Const(const Tensor& value) {
  PX_ASSIGN_OR_RETURN(Node * node, b_->AddConst(value, absl::StrCat(scope_, "/Const")));
  return Endpoint{node, 0};
}

absl::StatusOr<Endpoint> GradientContext::Scalar(double value, DataType dtype) {
  switch (dtype) {
    case DataType::kFloat:
      return Const(Tensor::FromVector<float>(dtype, {}, {static_cast<float>(value)}));
    case DataType::kDouble: return Const(Tensor::FromVector<double>(dtype, {}, {value}));
    case DataType::kInt32:
      return Const(Tensor::FromVector<int32_t>(dtype, {}, {static_cast<int32_t>(value)}));
    case DataType::kInt64:
      return Const(Tensor::FromVector<int64_t>(dtype, {}, {static_cast<int64_t>(value)}));
    default: {
      PX_ASSIGN_OR_RETURN(Endpoint f, Const(Tensor::FromVector<float>(DataType::kFloat, {}, {static_cast<float>(value)})));
      AttrMap attrs;
      attrs["DstT"].set_type(static_cast<tf::DataType>(dtype));
      return Op("Cast", {f}, std::move(attrs));
    }
  }
}

absl::StatusOr<Endpoint> GradientContext::IntVector(const std::vector<int64_t>& values) {
  std::vector<int32_t> v(values.begin(), values.end());
  return Const(Tensor::FromVector<int32_t>(DataType::kInt32, {static_cast<int64_t>(v.size())}, v));
}

const Tensor* GradientContext::ConstValue(const Endpoint& e) const {
  return e.index == 0 ? b_->ConstValue(e.node) : nullptr;
}

absl::StatusOr<Endpoint> GradientContext::ShapeOf(const Endpoint& x) {
  std::vector<int64_t> dims;
  if (StaticDims(shape(x), &dims)) return IntVector(dims);
  return Op("Shape", {x});
}

absl::StatusOr<Endpoint> GradientContext::ReshapeLike(const Endpoint& t, const Endpoint& like) {
  std::vector<int64_t> a, b;
  if (StaticDims(shape(t), &a) && StaticDims(shape(like), &b) && a == b) return t;
  PX_ASSIGN_OR_RETURN(Endpoint s, ShapeOf(like));
  return Op("Reshape", {t, s});
}

absl::StatusOr<Endpoint> GradientContext::SumToShapeOf(const Endpoint& grad, const Endpoint& x,
                                                       const Endpoint& y) {
  std::vector<int64_t> gx, gg, gy;
  const bool x_static = StaticDims(shape(x), &gx);
  const bool g_static = StaticDims(shape(grad), &gg);
  if (x_static && g_static) {
    if (gx == gg) return grad;
    // Reduce the leading dims grad has beyond x, and dims where x has 1.
    std::vector<int64_t> axes;
    const size_t lead = gg.size() - std::min(gg.size(), gx.size());
    for (size_t k = 0; k < gg.size(); ++k) {
      if (k < lead || (gx[k - lead] == 1 && gg[k] != 1)) axes.push_back(static_cast<int64_t>(k));
    }
    Endpoint out = grad;
    if (!axes.empty()) {
      PX_ASSIGN_OR_RETURN(Endpoint axis, IntVector(axes));
      PX_ASSIGN_OR_RETURN(out, Op("Sum", {grad, axis}));
    }
    return ReshapeLike(out, x);
  }
  // Dynamic shapes: TensorFlow's BroadcastGradientArgs.
  PX_ASSIGN_OR_RETURN(Endpoint sx, Op("Shape", {x}));
  PX_ASSIGN_OR_RETURN(Endpoint sy, Op("Shape", {y}));
  PX_ASSIGN_OR_RETURN(std::vector<Endpoint> r, Ops("BroadcastGradientArgs", {sx, sy}));
  PX_ASSIGN_OR_RETURN(Endpoint sum, Op("Sum", {grad, r[0]}));
  return Op("Reshape", {sum, sx});
}

absl::StatusOr<Endpoint> GradientContext::ZerosLike(const Endpoint& x) { return Op("ZerosLike", {x}); }

absl::StatusOr<Endpoint> GradientContext::Add(const Endpoint& a, const Endpoint& b) {
  return Op("AddV2", {a, b});
}

// ---------------------------------------------------------------------------
// Reverse accumulation
// ---------------------------------------------------------------------------

GradientOp GradientOpOf(const Node& node) {
  GradientOp op;
  op.op = node.op;
  op.name = node.name;
  op.attrs = node.attrs;
  op.inputs = node.inputs;
  for (int k = 0; k < node.num_outputs(); ++k) op.outputs.push_back({const_cast<Node*>(&node), k});
  return op;
}

absl::Status RunGradientFunction(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                 GradientList* dx) {
  GradientFn fn = nullptr;
  if (!FindGradient(op.op, &fn)) {
    return absl::UnimplementedError(absl::StrCat("no gradient is defined for op ", op.op, " (node '", op.name,
                                                 "'); it lies between the differentiated output and input"));
  }
  dx->assign(op.inputs.size(), std::nullopt);
  if (fn == nullptr) return absl::OkStatus();
  g.set_scope(absl::StrCat("gradients/", op.name));
  absl::Status s = fn(g, op, dy, dx);
  if (!s.ok()) {
    return absl::Status(s.code(), absl::StrCat("gradient of op ", op.op, " (node '", op.name, "'): ", s.message()));
  }
  if (dx->size() != op.inputs.size()) {
    return absl::InternalError(absl::StrCat("gradient of op ", op.op, " returned ", dx->size(),
                                            " gradients for ", op.inputs.size(), " inputs"));
  }
  return absl::OkStatus();
}

namespace {

// Marks in `from_x` the nodes reachable forward from `xs` through data edges.
absl::Status MarkReachableFromInputs(const std::vector<Endpoint>& xs, std::vector<char>* from_x) {
  std::vector<const Node*> stack;
  for (const Endpoint& x : xs) {
    if (x.node == nullptr) return absl::InvalidArgumentError("gradients: an input is not in the graph");
    if (!(*from_x)[x.node->id]) {
      (*from_x)[x.node->id] = 1;
      stack.push_back(x.node);
    }
  }
  while (!stack.empty()) {
    const Node* node = stack.back();
    stack.pop_back();
    for (const Node* c : node->consumers) {
      bool data = false;
      for (const Endpoint& in : c->inputs) data = data || in.node == node;
      if (data && !(*from_x)[c->id]) {
        (*from_x)[c->id] = 1;
        stack.push_back(c);
      }
    }
  }
  return absl::OkStatus();
}

// Marks in `to_y` the nodes reachable backward from `ys` through data edges.
absl::Status MarkReachingOutputs(const std::vector<Endpoint>& ys, std::vector<char>* to_y) {
  std::vector<const Node*> stack;
  for (const Endpoint& y : ys) {
    if (y.node == nullptr) return absl::InvalidArgumentError("gradients: an output is not in the graph");
    if (!(*to_y)[y.node->id]) {
      (*to_y)[y.node->id] = 1;
      stack.push_back(y.node);
    }
  }
  while (!stack.empty()) {
    const Node* node = stack.back();
    stack.pop_back();
    for (const Endpoint& in : node->inputs) {
      if (!(*to_y)[in.node->id]) {
        (*to_y)[in.node->id] = 1;
        stack.push_back(in.node);
      }
    }
  }
  return absl::OkStatus();
}

// The state of one reverse accumulation: the nodes on a path from xs to ys,
// and the gradients passed back to each output so far.
class Accumulation {
 public:
  explicit Accumulation(GraphBuilder* builder) : g_(builder) {}

  // Finds the nodes on a path (reachable forward from xs and backward from
  // ys) and counts, for each, the consumers on a path still to pass their
  // gradients back.
  absl::Status FindPath(const Graph& graph, const std::vector<Endpoint>& ys, const std::vector<Endpoint>& xs);

  // Seeds the gradient of each y: grad_ys, or ones.
  absl::Status SeedOutputs(const std::vector<Endpoint>& ys, const std::vector<Endpoint>& grad_ys);

  // Runs the gradient function of every node on the path, each once every
  // consumer on a path has passed its gradients back (reverse topological
  // order).
  absl::Status PropagateAll();

  // The gradient of output `index` of node `id`: the sum of those passed
  // back (summed once, in place), or nullopt when none was.
  absl::StatusOr<std::optional<Endpoint>> Summed(int id, int index);

 private:
  // Passes the gradients of `node`'s outputs back to its inputs.
  absl::Status Propagate(const Node* node);

  GradientContext g_;
  std::vector<const Node*> path_;
  std::vector<char> on_path_;
  std::vector<int> pending_;
  std::map<std::pair<int, int>, std::vector<Endpoint>> grads_;
};

absl::Status Accumulation::FindPath(const Graph& graph, const std::vector<Endpoint>& ys,
                                    const std::vector<Endpoint>& xs) {
  const int n = graph.num_nodes();
  // Nodes reachable forward from xs and backward from ys (data edges).
  std::vector<char> from_x(n, 0), to_y(n, 0);
  PX_RETURN_IF_ERROR(MarkReachableFromInputs(xs, &from_x));
  PX_RETURN_IF_ERROR(MarkReachingOutputs(ys, &to_y));
  // Nodes on a path, processed once every consumer on a path has passed its
  // gradients back (reverse topological order).
  for (const auto& node : graph.nodes()) {
    if (from_x[node->id] && to_y[node->id]) path_.push_back(node.get());
  }
  on_path_.assign(n, 0);
  for (const Node* node : path_) on_path_[node->id] = 1;
  pending_.assign(n, 0);
  for (const Node* node : path_) {
    for (const Endpoint& in : node->inputs) {
      if (on_path_[in.node->id]) ++pending_[in.node->id];
    }
  }
  return absl::OkStatus();
}

absl::Status Accumulation::SeedOutputs(const std::vector<Endpoint>& ys, const std::vector<Endpoint>& grad_ys) {
  for (size_t i = 0; i < ys.size(); ++i) {
    Endpoint dy;
    if (!grad_ys.empty()) {
      dy = grad_ys[i];
    } else {
      g_.set_scope("gradients");
      PX_ASSIGN_OR_RETURN(dy, g_.Op("OnesLike", {ys[i]}));
    }
    grads_[{ys[i].node->id, ys[i].index}].push_back(dy);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Endpoint>> Accumulation::Summed(int id, int index) {
  auto it = grads_.find({id, index});
  if (it == grads_.end() || it->second.empty()) return std::optional<Endpoint>();
  std::vector<Endpoint>& list = it->second;
  if (list.size() > 1) {
    g_.set_scope("gradients/sum");
    Endpoint total = list[0];
    for (size_t k = 1; k < list.size(); ++k) {
      PX_ASSIGN_OR_RETURN(total, g_.Add(total, list[k]));
    }
    list.assign(1, total);
  }
  return std::optional<Endpoint>(list[0]);
}

absl::Status Accumulation::Propagate(const Node* node) {
  GradientList dy(node->num_outputs());
  bool any = false;
  for (int k = 0; k < node->num_outputs(); ++k) {
    PX_ASSIGN_OR_RETURN(dy[k], Summed(node->id, k));
    any = any || dy[k].has_value();
  }
  // Inputs of the differentiation (x nodes without inputs on the path)
  // need no gradient function.
  bool inputs_on_path = false;
  for (const Endpoint& in : node->inputs) inputs_on_path = inputs_on_path || on_path_[in.node->id];
  if (!any || !inputs_on_path) return absl::OkStatus();
  GradientList dx;
  PX_RETURN_IF_ERROR(RunGradientFunction(g_, GradientOpOf(*node), dy, &dx));
  for (size_t k = 0; k < node->inputs.size(); ++k) {
    const Endpoint& in = node->inputs[k];
    if (!dx[k].has_value() || !on_path_[in.node->id]) continue;
    if (!IsDifferentiableType(in.node->output_types[in.index])) continue;
    grads_[{in.node->id, in.index}].push_back(*dx[k]);
  }
  return absl::OkStatus();
}

absl::Status Accumulation::PropagateAll() {
  std::vector<const Node*> ready;
  for (const Node* node : path_) {
    if (pending_[node->id] == 0) ready.push_back(node);
  }
  while (!ready.empty()) {
    const Node* node = ready.back();
    ready.pop_back();
    PX_RETURN_IF_ERROR(Propagate(node));
    for (const Endpoint& in : node->inputs) {
      if (on_path_[in.node->id] && --pending_[in.node->id] == 0) ready.push_back(in.node);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GradientList> AddGradients(GraphBuilder& builder, const std::vector<Endpoint>& ys,
                                          const std::vector<Endpoint>& xs,
                                          const std::vector<Endpoint>& grad_ys) {
  if (!grad_ys.empty() && grad_ys.size() != ys.size()) {
    return absl::InvalidArgumentError(absl::StrCat("gradients: ", ys.size(), " outputs but ", grad_ys.size(),
                                                   " output gradients"));
  }
  Accumulation acc(&builder);
  PX_RETURN_IF_ERROR(acc.FindPath(builder.graph(), ys, xs));
  PX_RETURN_IF_ERROR(acc.SeedOutputs(ys, grad_ys));
  PX_RETURN_IF_ERROR(acc.PropagateAll());
  GradientList result;
  for (const Endpoint& x : xs) {
    PX_ASSIGN_OR_RETURN(std::optional<Endpoint> dx, acc.Summed(x.node->id, x.index));
    result.push_back(dx);
  }
  return result;
}

}  // namespace plexus

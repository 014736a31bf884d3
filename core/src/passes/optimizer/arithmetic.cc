// Arithmetic simplification: rewrites that replace a node's value with one
// of its inputs because the node changes nothing:
//   x * 1, 1 * x, x + 0, 0 + x, x - 0, x / 1  (the constant has one element,
//     so the result has x's shape; for floats the zero must be -0.0 in an
//     addition and +0.0 in a subtraction, the cases that keep -0.0 as it is);
//   Transpose(x, p) when p is the identity permutation of x's known rank,
//     and Transpose(Transpose(x, p), q) when q undoes p;
//   Cast to the type it already has, and a round trip through a wider type;
//   Reshape to the shape x already has (both known), and Reshape of a
//     Reshape (only the last target shape matters);
//   Identity, StopGradient and PreventGradient chains (not those that carry
//     control dependencies, read variables or cross requested devices);
//   and, not a bypass, Pow(x, 2) and Pow(x, 3) as Square and Mul (below).
// Consumers are rewired to the input; the bypassed node is left for
// dead-node removal. Nodes the signature names are never bypassed.
#include <cmath>
#include <optional>
#include <map>

#include "absl/strings/str_cat.h"
#include "passes/optimizer/graph_util.h"
#include "passes/optimizer/optimizer.h"
#include "plexus/graph_import.h"
#include "plexus/tensor_proto.h"

namespace plexus::opt {
namespace {

// The value of a Const node, or nullopt.
std::optional<Tensor> ConstValue(const tf::NodeDef* n, const PassContext& ctx) {
  if (n == nullptr || n->op() != "Const") return std::nullopt;
  if (ctx.fed.count(EndpointKey(n->name(), 0)) > 0) return std::nullopt;  // fed: not constant
  for (const std::string& in : n->input()) {
    if (ParseInput(in).control) return std::nullopt;  // a Const inside a conditional branch
  }
  auto it = n->attr().find("value");
  if (it == n->attr().end()) return std::nullopt;
  auto t = TensorFromProto(it->second.tensor());
  if (!t.ok()) return std::nullopt;
  return *std::move(t);
}

// True when every element of a one-element numeric tensor equals `v`.
bool IsScalarValue(const Tensor& t, double v) {
  if (t.num_elements() != 1 || t.dtype() == DataType::kString || t.dtype() == DataType::kBool) return false;
  auto as_double = [&]() -> std::optional<double> {
    switch (t.dtype()) {
      case DataType::kFloat: return t.data<float>()[0];
      case DataType::kDouble: return t.data<double>()[0];
      case DataType::kInt32: return t.data<int32_t>()[0];
      case DataType::kInt64: return static_cast<double>(t.data<int64_t>()[0]);
      case DataType::kInt8: return t.data<int8_t>()[0];
      case DataType::kInt16: return t.data<int16_t>()[0];
      case DataType::kUInt8: return t.data<uint8_t>()[0];
      default: return std::nullopt;  // 16-bit floats: leave them alone
    }
  }();
  return as_double.has_value() && *as_double == v;
}

std::vector<int64_t> IntValues(const Tensor& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    v.push_back(t.dtype() == DataType::kInt64 ? t.data<int64_t>()[i] : t.data<int32_t>()[i]);
  }
  return v;
}

// A cast from `from` to `to` that keeps every value of `from`.
bool Lossless(DataType from, DataType to) {
  static const std::map<DataType, std::set<DataType>> kWider = {
      {DataType::kHalf, {DataType::kFloat, DataType::kDouble}},
      {DataType::kBFloat16, {DataType::kFloat, DataType::kDouble}},
      {DataType::kFloat, {DataType::kDouble}},
      {DataType::kInt8, {DataType::kInt16, DataType::kInt32, DataType::kInt64, DataType::kFloat, DataType::kDouble}},
      {DataType::kInt16, {DataType::kInt32, DataType::kInt64, DataType::kFloat, DataType::kDouble}},
      {DataType::kInt32, {DataType::kInt64, DataType::kDouble}},
      {DataType::kUInt8, {DataType::kInt16, DataType::kInt32, DataType::kInt64, DataType::kFloat, DataType::kDouble}},
  };
  auto it = kWider.find(from);
  return it != kWider.end() && it->second.count(to) > 0;
}

// The data (not control) inputs of `n`.
std::vector<std::string> DataInputs(const tf::NodeDef& n) {
  std::vector<std::string> data_inputs;
  for (const std::string& in : n.input()) {
    if (!ParseInput(in).control) data_inputs.push_back(in);
  }
  return data_inputs;
}

// The rewrites of one graph. Each Simplify* method takes a node `n` (with
// its imported `node` and data inputs) of the kind it names.
class Simplifier {
 public:
  Simplifier(tf::GraphDef& def, const PassContext& ctx)
      : ctx_(ctx), index_(def), tainted_(FeedTainted(def, ctx.fed)) {}

  int rewrites() const { return rewrites_; }

  // Applies the rewrite that fits `n` (imported as `node`), if any.
  void Simplify(tf::NodeDef& n, const Node* node);

  // Identity, StopGradient and PreventGradient chains.
  void SimplifyIdentity(tf::NodeDef& n, const Node* node, const std::vector<std::string>& data_inputs);
  // x * 1, 1 * x, x + 0, 0 + x, x - 0, x / 1.
  void SimplifyBinary(tf::NodeDef& n, const Node* node, const std::vector<std::string>& data_inputs);
  // Transpose(x, identity) and Transpose(Transpose(x, p), q) when q undoes p.
  void SimplifyTranspose(tf::NodeDef& n, const Node* node, const std::vector<std::string>& data_inputs);
  // Cast to the type it already has, and a round trip through a wider type.
  void SimplifyCast(tf::NodeDef& n, const std::vector<std::string>& data_inputs);
  // Reshape to the shape x already has, and Reshape of a Reshape.
  void SimplifyReshape(tf::NodeDef& n, const Node* node, const std::vector<std::string>& data_inputs);

 private:
  void Bypass(tf::NodeDef& n, const std::string& in);

  const PassContext& ctx_;
  NodeIndex index_;  // kept current by the rewrites
  const std::set<std::string> tainted_;
  int rewrites_ = 0;
  std::set<std::string> bypassed_;
};

// Replaces the value of `n` (output 0) with input `in` of `n`. Not when
// `n` orders itself after something (control inputs its consumers would
// lose), nor onto a stateful producer (reading a variable later than the
// graph says).
void Simplifier::Bypass(tf::NodeDef& n, const std::string& in) {
  if (ctx_.protected_nodes.count(n.name()) > 0 || bypassed_.count(n.name()) > 0) return;
  for (const std::string& i : n.input()) {
    if (ParseInput(i).control) return;
  }
  InputRef ref = ParseInput(in);
  const tf::NodeDef* target = index_.Find(ref.node);
  if (target == nullptr || IsStateful(*target)) return;
  if (ctx_.fed.count(EndpointKey(n.name(), 0)) > 0) return;
  if (index_.RewireOutputs(n.name(), 0, OutputName(ref.node, ref.index)) > 0) {
    bypassed_.insert(n.name());
    ++rewrites_;
  }
}

void Simplifier::SimplifyIdentity(tf::NodeDef& n, const Node* node, const std::vector<std::string>& data_inputs) {
  const tf::NodeDef* producer = index_.Find(ParseInput(data_inputs[0]).node);
  if (producer == nullptr || IsStateful(*producer) || IsControlFlow(*producer) || node->input_is_ref[0]) {
    return;
  }
  if (!n.device().empty() && !producer->device().empty() && n.device() != producer->device()) return;
  Bypass(n, data_inputs[0]);
}

void Simplifier::SimplifyBinary(tf::NodeDef& n, const Node* node, const std::vector<std::string>& data_inputs) {
  const std::string& op = n.op();
  for (int side = 0; side < 2; ++side) {
    if (side == 0 && (op == "Sub" || op == "Div" || op == "RealDiv")) continue;  // 0 - x, 1 / x
    std::optional<Tensor> c = ConstValue(index_.Find(ParseInput(data_inputs[side]).node), ctx_);
    if (!c.has_value()) continue;
    double identity = (op == "Mul" || op == "Div" || op == "RealDiv") ? 1.0 : 0.0;
    if (!IsScalarValue(*c, identity)) continue;
    if (identity == 0.0 && (c->dtype() == DataType::kFloat || c->dtype() == DataType::kDouble)) {
      // x + (-0.0) and x - (+0.0) are x for every x; x + (+0.0) turns
      // -0.0 into +0.0, so it stays.
      const bool negative_zero =
          c->dtype() == DataType::kFloat ? std::signbit(c->data<float>()[0]) : std::signbit(c->data<double>()[0]);
      if ((op == "Sub") == negative_zero) continue;
    }
    const Node* other = node->inputs[1 - side].node;
    const PartialShape& xs = other->output_shapes[node->inputs[1 - side].index];
    if (!xs.rank_known() || static_cast<int64_t>(c->dims()) > xs.rank()) continue;
    if (node->output_types[0] != node->input_types[1 - side]) continue;
    Bypass(n, data_inputs[1 - side]);
    return;
  }
}

void Simplifier::SimplifyTranspose(tf::NodeDef& n, const Node* node, const std::vector<std::string>& data_inputs) {
  if (std::optional<Tensor> perm = ConstValue(index_.Find(ParseInput(data_inputs[1]).node), ctx_)) {
    // The identity permutation of x's known rank (Keras' Tensordot makes
    // one before every Dense layer on a 3-D input).
    const PartialShape& xs = node->inputs[0].node->output_shapes[node->inputs[0].index];
    const std::vector<int64_t> pv = IntValues(*perm);
    bool identity = xs.rank_known() && xs.rank() == static_cast<int64_t>(pv.size()) && !tainted_.count(n.name());
    for (size_t i = 0; i < pv.size() && identity; ++i) identity = pv[i] == static_cast<int64_t>(i);
    if (identity) {
      Bypass(n, data_inputs[0]);
      return;
    }
  }
  tf::NodeDef* inner = index_.Find(ParseInput(data_inputs[0]).node);
  if (inner == nullptr || inner->op() != "Transpose" || ParseInput(data_inputs[0]).index != 0 ||
      ctx_.fed.count(EndpointKey(inner->name(), 0)) > 0) {
    return;
  }
  std::optional<Tensor> q = ConstValue(index_.Find(ParseInput(data_inputs[1]).node), ctx_);
  std::vector<std::string> inner_data = DataInputs(*inner);
  if (!q.has_value() || inner_data.size() != 2) return;
  std::optional<Tensor> p = ConstValue(index_.Find(ParseInput(inner_data[1]).node), ctx_);
  if (!p.has_value()) return;
  std::vector<int64_t> pv = IntValues(*p), qv = IntValues(*q);
  if (pv.size() != qv.size()) return;
  bool undone = true;
  for (size_t i = 0; i < qv.size() && undone; ++i) {
    undone = qv[i] >= 0 && qv[i] < static_cast<int64_t>(pv.size()) && pv[qv[i]] == static_cast<int64_t>(i);
  }
  if (undone) Bypass(n, inner_data[0]);
}

void Simplifier::SimplifyCast(tf::NodeDef& n, const std::vector<std::string>& data_inputs) {
  DataType src = TypeAttr(n, "SrcT"), dst = TypeAttr(n, "DstT");
  if (src == dst && src != DataType::kInvalid) {
    Bypass(n, data_inputs[0]);
    return;
  }
  tf::NodeDef* inner = index_.Find(ParseInput(data_inputs[0]).node);
  if (inner != nullptr && inner->op() == "Cast" && ctx_.fed.count(EndpointKey(inner->name(), 0)) == 0 &&
      TypeAttr(*inner, "SrcT") == dst &&
      TypeAttr(*inner, "DstT") == src && Lossless(dst, src)) {
    std::string x;
    for (const std::string& in : inner->input()) {
      if (!ParseInput(in).control) x = in;
    }
    if (!x.empty()) Bypass(n, x);
  }
}

void Simplifier::SimplifyReshape(tf::NodeDef& n, const Node* node, const std::vector<std::string>& data_inputs) {
  const Endpoint& x = node->inputs[0];
  const PartialShape& in_shape = x.node->output_shapes[x.index];
  const PartialShape& out_shape = node->output_shapes[0];
  if (tainted_.count(n.name()) == 0 && in_shape.fully_defined() && out_shape.fully_defined() &&
      in_shape.dims() == out_shape.dims()) {
    Bypass(n, data_inputs[0]);
    return;
  }
  tf::NodeDef* inner = index_.Find(ParseInput(data_inputs[0]).node);
  if (inner == nullptr || inner->op() != "Reshape" || bypassed_.count(inner->name()) > 0 ||
      ctx_.fed.count(EndpointKey(inner->name(), 0)) > 0) {
    return;
  }
  std::string x_in;
  for (const std::string& in : inner->input()) {
    if (!ParseInput(in).control) {
      x_in = in;
      break;
    }
  }
  // Reshape(Reshape(x, s1), s2) reads x directly.
  for (int i = 0; i < n.input_size(); ++i) {
    if (n.input(i) == data_inputs[0] && !x_in.empty()) {
      index_.SetInput(n, i, x_in);
      ++rewrites_;
      break;
    }
  }
}

void Simplifier::Simplify(tf::NodeDef& n, const Node* node) {
  const std::vector<std::string> data_inputs = DataInputs(n);
  const std::string& op = n.op();
  if ((op == "Identity" || op == "StopGradient" || op == "PreventGradient") && data_inputs.size() == 1 &&
      data_inputs.size() == static_cast<size_t>(n.input_size()) && index_.ControlConsumers(n.name()).empty()) {
    SimplifyIdentity(n, node, data_inputs);
  } else if (data_inputs.size() == 2 && (op == "Mul" || op == "Add" || op == "AddV2" || op == "Sub" ||
                                         op == "Div" || op == "RealDiv")) {
    SimplifyBinary(n, node, data_inputs);
  } else if (op == "Transpose" && data_inputs.size() == 2) {
    SimplifyTranspose(n, node, data_inputs);
  } else if (op == "Cast" && data_inputs.size() == 1) {
    SimplifyCast(n, data_inputs);
  } else if (op == "Reshape" && data_inputs.size() == 2) {
    SimplifyReshape(n, node, data_inputs);
  }
}

// Pow(x, 2) -> Square(x), Pow(x, 3) -> Mul(x, Square(x)) for float and
// double, with a one-element constant exponent that does not broadcast x
// up (GELU's x^3, the squares of norm layers): Square and Mul fuse into
// elementwise trees, Pow does not. x*x is exactly pow(x, 2); x*(x*x) is
// what the cpu kernel computes for pow(x, 3) anyway (within an ulp of it).
// Returns how many were rewritten.
int RewriteSmallPowers(tf::GraphDef& def, const PassContext& ctx, const Graph& graph) {
  std::vector<std::string> pows;
  for (const tf::NodeDef& n : def.node()) {
    if (n.op() == "Pow" && ctx.protected_nodes.count(n.name()) == 0) pows.push_back(n.name());
  }
  if (pows.empty()) return 0;
  NodeIndex index(def);
  NameSet names(def);
  int rewritten = 0;
  for (const std::string& name : pows) {
    tf::NodeDef* n = index.Find(name);
    const Node* node = graph.FindNode(name);
    if (n == nullptr || node == nullptr || node->inputs.size() != 2) continue;
    const DataType t = node->output_types[0];
    if (t != DataType::kFloat && t != DataType::kDouble) continue;
    std::vector<std::string> data_inputs = DataInputs(*n);
    if (data_inputs.size() != 2) continue;
    std::optional<Tensor> c = ConstValue(index.Find(ParseInput(data_inputs[1]).node), ctx);
    const PartialShape& xs = node->inputs[0].node->output_shapes[node->inputs[0].index];
    if (!c.has_value() || c->num_elements() != 1 || !xs.rank_known() || c->dims() > xs.rank()) continue;
    const double k = t == DataType::kFloat ? c->data<float>()[0] : c->data<double>()[0];
    if (k != 2.0 && k != 3.0) continue;
    tf::NodeDef square;
    square.set_op("Square");
    square.set_device(n->device());
    square.add_input(data_inputs[0]);
    (*square.mutable_attr())["T"].set_type(static_cast<tf::DataType>(t));
    tf::NodeDef replacement;
    if (k == 2.0) {
      replacement = square;
      replacement.set_name(n->name());
    } else {
      square.set_name(names.Unique(absl::StrCat(n->name(), "/square")));
      replacement.set_name(n->name());
      replacement.set_op("Mul");
      replacement.set_device(n->device());
      replacement.add_input(data_inputs[0]);
      replacement.add_input(square.name());
      (*replacement.mutable_attr())["T"].set_type(static_cast<tf::DataType>(t));
      index.AddNode(std::move(square));
    }
    for (const std::string& in : n->input()) {
      if (ParseInput(in).control) replacement.add_input(in);
    }
    index.ReplaceNode(*n, std::move(replacement));
    ++rewritten;
  }
  return rewritten;
}

}  // namespace

absl::StatusOr<bool> SimplifyArithmetic(tf::GraphDef& def, const PassContext& ctx) {
  auto graph = ImportGraphDef(def, ctx.source);
  if (!graph.ok()) return graph.status();
  Simplifier simplifier(def, ctx);
  for (tf::NodeDef& n : *def.mutable_node()) {
    const Node* node = (*graph)->FindNode(n.name());
    if (node == nullptr || n.input_size() == 0) continue;
    simplifier.Simplify(n, node);
  }
  const int rewrites = simplifier.rewrites() + RewriteSmallPowers(def, ctx, **graph);
  if (rewrites == 0) return false;
  if (ctx.log) ctx.log->push_back(absl::StrCat("arithmetic: ", rewrites, " rewrites"));
  return true;
}

}  // namespace plexus::opt

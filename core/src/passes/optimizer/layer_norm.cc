// Layer normalization over the last axis, written out in elementwise ops
// and means, becomes one _PlexusLayerNorm node when the session's device
// has a kernel for it. The forms recognized, with
//   mean = Mean(x, [-1], keep_dims), variance = Mean(SquaredDifference(x, mean), [-1], keep_dims),
//   inv = Rsqrt(variance + epsilon), optionally times a constant gamma:
//   - Keras 3's LayerNormalization: x * inv + (-mean * inv + beta), the
//     beta term optional; and x * inv + (beta - mean * inv) (tf.keras);
//   - the textbook one: (x - mean) * inv + beta, beta optional, gamma also
//     as a last product ((x - mean) * Rsqrt(...) * gamma).
// Every product and sum may have its operands in either order. gamma and
// beta must be constants with the last axis's size ([C] or [1, ..., 1, C]),
// epsilon a one-element constant, and every intermediate node read only
// inside the pattern. The last node becomes the _PlexusLayerNorm (its name
// kept); the rest are left to dead-node removal.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "passes/optimizer/fuse_util.h"
#include "plexus/graph_import.h"
#include "plexus/tensor_proto.h"

namespace plexus::opt {
namespace {

struct Match {
  std::string x;      // the normalized input ("node" or "node:k")
  std::string gamma;  // constant inputs; empty when absent
  std::string beta;
  double epsilon = 0;
  std::set<std::string> members;  // the pattern's nodes other than the root
};

class Matcher {
 public:
  Matcher(const PassContext& ctx, const Graph& graph, NodeIndex& index, std::set<std::string> tainted)
      : ctx_(ctx), graph_(graph), index_(index), tainted_(std::move(tainted)) {}

  // The pattern ending at `root`, or nullopt.
  std::optional<Match> MatchRoot(const tf::NodeDef& root) {
    Match m;
    if (IsAdd(root)) {
      const std::vector<std::string> in = DataInputs(root);
      for (int side = 0; side < 2; ++side) {
        // Keras 3: x * inv + rest.
        Match k;
        if (KerasForm(in[side], in[1 - side], &k)) return k;
        // Textbook: ((x - mean) * inv) + beta.
        Match t;
        if (IsConst(in[1 - side]) && Normalized(in[side], &t)) {
          t.beta = in[1 - side];
          return t;
        }
      }
      return std::nullopt;
    }
    if (Normalized(root.name(), &m, /*root=*/true)) return m;
    return std::nullopt;
  }

  // Whether every member is read only by members or the root, and none is
  // fed or named by the signature.
  bool Closed(const Match& m, const tf::NodeDef& root) const {
    for (const std::string& name : m.members) {
      if (ctx_.protected_nodes.count(name) > 0 || ctx_.fed.count(EndpointKey(name, 0)) > 0) return false;
      if (!index_.ControlConsumers(name).empty()) return false;
      for (const auto& [consumer, pos] : index_.DataConsumers(name)) {
        if (consumer == &root || m.members.count(consumer->name()) > 0 || Dead(*consumer)) continue;
        return false;
      }
    }
    return true;
  }

  // A node nothing reads, that the signature does not name and that has
  // no effect: dead-node removal takes it (tf.nn.moments' StopGradient of
  // the mean, bypassed by "arithmetic", is one until then).
  bool Dead(const tf::NodeDef& n) const {
    return !index_.HasConsumers(n.name()) && ctx_.protected_nodes.count(n.name()) == 0 && !IsStateful(n);
  }

  // The static shape of `input`, when known and reliable.
  const PartialShape* ShapeOf(const std::string& input) const { return InferredShape(graph_, tainted_, input); }

  std::optional<Tensor> Const(const std::string& input) const { return ConstOf(index_, ctx_, input); }

 private:
  // The node producing output 0 named by `input`, when its op is one of
  // `ops` and it has that op's number of data inputs (1 for Rsqrt and Neg,
  // 2 for the others).
  tf::NodeDef* Producer(const std::string& input, std::initializer_list<const char*> ops) const {
    const InputRef ref = ParseInput(input);
    tf::NodeDef* n = ref.index == 0 ? index_.Find(ref.node) : nullptr;
    if (n == nullptr) return nullptr;
    const size_t arity = n->op() == "Rsqrt" || n->op() == "Neg" ? 1 : 2;
    for (const char* op : ops) {
      if (n->op() == op) return DataInputs(*n).size() == arity ? n : nullptr;
    }
    return nullptr;
  }
  static bool IsAdd(const tf::NodeDef& n) {
    return (n.op() == "Add" || n.op() == "AddV2") && DataInputs(n).size() == 2;
  }
  bool IsConst(const std::string& input) const { return Const(input).has_value(); }
  static bool Same(const std::string& a, const std::string& b) {
    const InputRef ra = ParseInput(a), rb = ParseInput(b);
    return ra.node == rb.node && ra.index == rb.index;
  }

  // Mean(x, [-1]) with keep_dims; sets *x.
  bool MeanOfLastAxis(const std::string& input, std::string* x, Match* m) const {
    tf::NodeDef* mean = Producer(input, {"Mean"});
    if (mean == nullptr) return false;
    auto keep = mean->attr().find("keep_dims");
    if (keep == mean->attr().end() || !keep->second.b()) return false;
    const std::vector<std::string> in = DataInputs(*mean);
    std::optional<Tensor> axes = Const(in[1]);
    const PartialShape* xs = ShapeOf(in[0]);
    if (!axes || axes->num_elements() != 1 || xs == nullptr || !xs->rank_known() || xs->rank() < 1) return false;
    const int64_t axis = axes->dtype() == DataType::kInt64 ? axes->data<int64_t>()[0]
                                                            : axes->dtype() == DataType::kInt32 ? axes->data<int32_t>()[0] : -99;
    if (axis != -1 && axis != xs->rank() - 1) return false;
    *x = in[0];
    m->members.insert(mean->name());
    return true;
  }

  // inv: Rsqrt(variance + epsilon), optionally times gamma (either order).
  // Sets m->x from the variance's mean, mean_out to the mean's output.
  bool Inverse(const std::string& input, Match* m, std::string* mean_out) const {
    if (tf::NodeDef* mul = Producer(input, {"Mul"})) {
      const std::vector<std::string> in = DataInputs(*mul);
      for (int side = 0; side < 2; ++side) {
        if (!IsConst(in[1 - side])) continue;
        Match trial = *m;
        if (!Rsqrt(in[side], &trial, mean_out)) continue;
        trial.gamma = in[1 - side];
        trial.members.insert(mul->name());
        *m = trial;
        return true;
      }
      return false;
    }
    return Rsqrt(input, m, mean_out);
  }

  bool Rsqrt(const std::string& input, Match* m, std::string* mean_out) const {
    tf::NodeDef* rsqrt = Producer(input, {"Rsqrt"});
    if (rsqrt == nullptr) return false;
    tf::NodeDef* add = Producer(DataInputs(*rsqrt)[0], {"Add", "AddV2"});
    if (add == nullptr) return false;
    const std::vector<std::string> in = DataInputs(*add);
    for (int side = 0; side < 2; ++side) {
      std::optional<Tensor> eps = Const(in[1 - side]);
      if (!eps || eps->num_elements() != 1 ||
          (eps->dtype() != DataType::kFloat && eps->dtype() != DataType::kDouble)) {
        continue;
      }
      // variance = Mean(SquaredDifference(x, mean)).
      Match trial = *m;
      std::string sq;
      if (!MeanOfLastAxis(in[side], &sq, &trial)) continue;
      tf::NodeDef* diff = Producer(sq, {"SquaredDifference"});
      if (diff == nullptr) continue;
      const std::vector<std::string> d = DataInputs(*diff);
      for (int o = 0; o < 2; ++o) {
        std::string x;
        Match t2 = trial;
        if (!MeanOfLastAxis(d[1 - o], &x, &t2) || !Same(x, d[o])) continue;
        if (!m->x.empty() && !Same(m->x, x)) continue;
        t2.x = x;
        t2.epsilon = At(*eps, 0);
        t2.members.insert(diff->name());
        t2.members.insert(add->name());
        t2.members.insert(rsqrt->name());
        *mean_out = d[1 - o];
        *m = t2;
        return true;
      }
    }
    return false;
  }

  // Keras 3: prod = x * inv, rest = -mean * inv [+ beta] or beta - mean * inv.
  bool KerasForm(const std::string& prod_in, const std::string& rest_in, Match* m) const {
    tf::NodeDef* prod = Producer(prod_in, {"Mul"});
    if (prod == nullptr) return false;
    const std::vector<std::string> p = DataInputs(*prod);
    for (int side = 0; side < 2; ++side) {
      Match trial;
      std::string mean;
      if (!Inverse(p[1 - side], &trial, &mean) || !Same(trial.x, p[side])) continue;
      const std::string inv = p[1 - side];
      trial.members.insert(prod->name());
      // The rest: the mean's product by inv, negated, plus beta.
      auto mean_times_inv = [&](const std::string& input, bool negated, Match* t) {
        tf::NodeDef* mul = Producer(input, {"Mul"});
        if (mul == nullptr) return false;
        const std::vector<std::string> q = DataInputs(*mul);
        for (int o = 0; o < 2; ++o) {
          if (!Same(q[1 - o], inv)) continue;
          std::string operand = q[o];
          if (negated) {
            tf::NodeDef* neg = Producer(operand, {"Neg"});
            if (neg == nullptr) continue;
            t->members.insert(neg->name());
            operand = DataInputs(*neg)[0];
          }
          if (!Same(operand, mean)) continue;
          t->members.insert(mul->name());
          return true;
        }
        return false;
      };
      if (tf::NodeDef* add = Producer(rest_in, {"Add", "AddV2"})) {
        const std::vector<std::string> r = DataInputs(*add);
        for (int o = 0; o < 2; ++o) {
          Match t = trial;
          if (IsConst(r[1 - o]) && mean_times_inv(r[o], true, &t)) {
            t.beta = r[1 - o];
            t.members.insert(add->name());
            *m = t;
            return true;
          }
        }
      } else if (tf::NodeDef* sub = Producer(rest_in, {"Sub"})) {
        const std::vector<std::string> r = DataInputs(*sub);
        Match t = trial;
        if (IsConst(r[0]) && mean_times_inv(r[1], false, &t)) {
          t.beta = r[0];
          t.members.insert(sub->name());
          *m = t;
          return true;
        }
      } else {
        Match t = trial;
        if (mean_times_inv(rest_in, true, &t)) {
          *m = t;
          return true;
        }
      }
    }
    return false;
  }

  // Textbook: (x - mean) * inv, or ((x - mean) * Rsqrt(...)) * gamma. At
  // the root (`root`), `input` is the root's own name and the root is not
  // a member.
  bool Normalized(const std::string& input, Match* m, bool root = false) const {
    tf::NodeDef* mul = Producer(input, {"Mul"});
    if (mul == nullptr) return false;
    const std::vector<std::string> p = DataInputs(*mul);
    for (int side = 0; side < 2; ++side) {
      Match trial;
      std::string mean;
      if (Centered(p[side], &trial, &mean) && Inverse(p[1 - side], &trial, &mean) && !trial.x.empty()) {
        if (!root) trial.members.insert(mul->name());
        *m = trial;
        return true;
      }
      // The gamma product last.
      trial = Match();
      if (IsConst(p[1 - side]) && Normalized(p[side], &trial) && trial.gamma.empty()) {
        trial.gamma = p[1 - side];
        if (!root) trial.members.insert(mul->name());
        *m = trial;
        return true;
      }
    }
    return false;
  }

  // x - mean, where mean = Mean(x, [-1]); sets m->x and *mean.
  bool Centered(const std::string& input, Match* m, std::string* mean) const {
    tf::NodeDef* sub = Producer(input, {"Sub"});
    if (sub == nullptr) return false;
    const std::vector<std::string> d = DataInputs(*sub);
    std::string x;
    Match t = *m;
    if (!MeanOfLastAxis(d[1], &x, &t) || !Same(x, d[0])) return false;
    t.x = x;
    t.members.insert(sub->name());
    *mean = d[1];
    *m = t;
    return true;
  }

  const PassContext& ctx_;
  const Graph& graph_;
  NodeIndex& index_;
  std::set<std::string> tainted_;
};

// A constant of `c` elements ([C] or [1, ..., 1, C]) of type t, as [C].
std::optional<Tensor> Vector(const std::optional<Tensor>& v, int64_t c, DataType t) {
  if (!v || v->dtype() != t || v->num_elements() != c || v->dims() < 1 || v->shape().back() != c) return std::nullopt;
  Tensor out = Tensor::AllocateHost(t, {c}).value();
  for (int64_t i = 0; i < c; ++i) Set(out, i, At(*v, i));
  return out;
}

}  // namespace

absl::StatusOr<bool> FuseLayerNorms(tf::GraphDef& def, const PassContext& ctx) {
  if (ctx.device == nullptr) return false;
  auto graph = ImportGraphDef(def, ctx.source);
  if (!graph.ok()) return graph.status();
  NodeIndex index(def);
  NameSet names(def);
  Matcher matcher(ctx, **graph, index, FeedTainted(def, ctx.fed));
  int fused = 0;
  // Consumers before their inputs, so the largest pattern wins: with a beta,
  // the final sum is the root, not the product before it.
  const std::vector<std::string> order = index.TopologicalOrder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    tf::NodeDef* found = index.Find(*it);
    if (found == nullptr) continue;
    tf::NodeDef& root = *found;
    if (root.op() != "Add" && root.op() != "AddV2" && root.op() != "Mul") continue;
    if (ctx.fed.count(EndpointKey(root.name(), 0)) > 0) continue;
    const DataType t = TypeAttr(root, "T");
    if ((t != DataType::kFloat && t != DataType::kDouble) || !DeviceHasKernel(ctx, "_PlexusLayerNorm", t)) continue;
    std::optional<Match> m = matcher.MatchRoot(root);
    if (!m || !matcher.Closed(*m, root)) continue;
    const PartialShape* xs = matcher.ShapeOf(m->x);
    const PartialShape* ys = matcher.ShapeOf(root.name());
    if (xs == nullptr || ys == nullptr || !xs->rank_known() || !ys->rank_known() || xs->rank() < 1 ||
        xs->dims() != ys->dims()) {
      continue;  // the pattern must not broadcast x up
    }
    const int64_t c = xs->dim(xs->rank() - 1);
    if (c <= 0) continue;
    std::optional<Tensor> gamma, beta;
    if (m->gamma.empty()) {
      gamma = Tensor::AllocateHost(t, {c}).value();
      for (int64_t k = 0; k < c; ++k) Set(*gamma, k, 1.0);
    } else {
      gamma = Vector(matcher.Const(m->gamma), c, t);
    }
    if (m->beta.empty()) {
      beta = Tensor::AllocateHost(t, {c}).value();
      for (int64_t k = 0; k < c; ++k) Set(*beta, k, 0.0);
    } else {
      beta = Vector(matcher.Const(m->beta), c, t);
    }
    if (!gamma || !beta) continue;
    auto gamma_node = MakeConst(names.Unique(absl::StrCat(root.name(), "/gamma")), *gamma, root.device());
    auto beta_node = MakeConst(names.Unique(absl::StrCat(root.name(), "/beta")), *beta, root.device());
    if (!gamma_node.ok() || !beta_node.ok()) continue;
    tf::NodeDef norm;
    norm.set_name(root.name());
    norm.set_op("_PlexusLayerNorm");
    norm.set_device(root.device());
    norm.add_input(m->x);
    norm.add_input(gamma_node->name());
    norm.add_input(beta_node->name());
    (*norm.mutable_attr())["T"].set_type(static_cast<tf::DataType>(t));
    (*norm.mutable_attr())["epsilon"].set_f(static_cast<float>(m->epsilon));
    index.AddNode(*std::move(gamma_node));
    index.AddNode(*std::move(beta_node));
    index.ReplaceNode(root, std::move(norm));
    ++fused;
  }
  if (fused == 0) return false;
  if (ctx.log) ctx.log->push_back(absl::StrCat("layer_norm: ", fused, " layer normalizations made _PlexusLayerNorm"));
  return true;
}

}  // namespace plexus::opt

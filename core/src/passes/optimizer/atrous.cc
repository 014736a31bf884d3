// Atrous (dilated) convolutions as TensorFlow 1 writes them:
//
//   SpaceToBatchND(x, block, paddings) -> Conv2D or DepthwiseConv2dNative
//   (NHWC, VALID, strides 1, dilations 1) -> BatchToSpaceND(y, block, crops)
//
// become one convolution of x with dilations [1, block..., 1], which the
// fuse pass then joins with the BiasAdd and activation after it.
//
// Why it is exact, per blocked spatial dimension (block b, filter size k,
// paddings [pb, pa], crops [cb, ca]): with xp = x padded by [pb, pa] (its size
// a multiple of b), SpaceToBatchND makes b images xp[i*b + r]; the VALID
// convolution of image r gives out_r[i] = sum_j w[j] xp[(i+j)*b + r]; and
// BatchToSpaceND interleaves them back: z[i*b + r] = out_r[i], that is
// z[t] = sum_j w[j] xp[t + j*b], the VALID convolution of xp with dilation b,
// of the same size. The crops then drop cb elements at the start and ca at
// the end, which is the dilated convolution of x padded by [pb - cb, pa - ca]:
// a convolution with explicit padding when neither is negative (VALID when
// both are 0). Other batch images and the channels are untouched.
//
// tf.nn.convolution computes the paddings and crops from the input's shape
// at run time (required_space_to_batch_paddings: pa = base + extra,
// ca = extra, with extra = (-size) mod b), so they are rarely constants.
// Only their differences matter, so they are evaluated symbolically: each
// element is an integer constant plus a sum of opaque run-time values (an
// element of a Shape or FloorMod output, say), through Const, Identity,
// Pack, StridedSlice, Add and Sub; the rewrite applies when pb - cb and
// pa - ca come out constant. The block shape must be constant.
//
// Not checked when the sizes are unknown: that the padded size is a multiple
// of the block, which SpaceToBatchND would reject at run time (the
// rewritten graph then returns a result where the original failed; TF's
// own padding computation always makes it a multiple). When the static
// shape of x and the paddings are known, a pattern that would fail is kept.
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "passes/optimizer/graph_util.h"
#include "passes/optimizer/optimizer.h"
#include "plexus/graph.h"
#include "plexus/graph_import.h"
#include "plexus/tensor_proto.h"

namespace plexus::opt {
namespace {

// An integer: a constant plus a sum of coefficient * opaque run-time value,
// each opaque value named "node:k#element".
struct Affine {
  int64_t c = 0;
  std::map<std::string, int64_t> terms;

  bool is_const() const { return terms.empty(); }
};

// Limits that keep the evaluation small: values of more elements, or
// expressions deeper than this, are not evaluated.
constexpr int64_t kMaxElements = 64;
constexpr int kMaxDepth = 64;
constexpr int64_t kMaxMagnitude = int64_t{1} << 40;

std::optional<Affine> Combine(const Affine& a, const Affine& b, int64_t sign) {
  Affine r = a;
  r.c += sign * b.c;
  if (r.c > kMaxMagnitude || r.c < -kMaxMagnitude) return std::nullopt;
  for (const auto& [sym, coeff] : b.terms) {
    int64_t& v = r.terms[sym];
    v += sign * coeff;
    if (v > kMaxMagnitude || v < -kMaxMagnitude) return std::nullopt;
    if (v == 0) r.terms.erase(sym);
  }
  return r;
}

// A small integer tensor, element by element (row-major).
struct SymTensor {
  std::vector<int64_t> shape;
  std::vector<Affine> v;

  bool all_const() const {
    for (const Affine& a : v) {
      if (!a.is_const()) return false;
    }
    return true;
  }
};

int64_t Count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const tf::AttrValue* FindAttr(const tf::NodeDef& n, const std::string& name) {
  auto it = n.attr().find(name);
  return it == n.attr().end() ? nullptr : &it->second;
}

int64_t IntAttr(const tf::NodeDef& n, const std::string& name, int64_t dflt) {
  const tf::AttrValue* a = FindAttr(n, name);
  return a == nullptr ? dflt : a->i();
}

std::vector<std::string> DataInputsOf(const tf::NodeDef& n) {
  std::vector<std::string> v;
  for (const std::string& in : n.input()) {
    if (!ParseInput(in).control) v.push_back(in);
  }
  return v;
}

// What the rewrite needs to know about the graph beyond the node index:
// static shapes (for opaque values and the input's size) and which nodes
// are under control flow or downstream of fed constants. Built on first use,
// once per pass (the rewrites change neither).
struct GraphFacts {
  std::unique_ptr<Graph> graph;  // null when the import failed
  std::set<std::string> under_cf;
  std::set<std::string> tainted;
};

class Evaluator {
 public:
  Evaluator(const NodeIndex& index, const PassContext& ctx, const GraphFacts& facts)
      : index_(index), ctx_(ctx), facts_(facts) {}

  std::optional<SymTensor> Eval(const std::string& input, int depth = 0) {
    InputRef ref = ParseInput(input);
    if (ref.control || depth > kMaxDepth) return std::nullopt;
    const std::string key = EndpointKey(ref.node, ref.index);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    std::optional<SymTensor> r = Compute(ref, key, depth);
    memo_[key] = r;
    return r;
  }

 private:
  std::optional<SymTensor> Compute(const InputRef& ref, const std::string& key, int depth) {
    const tf::NodeDef* n = index_.Find(ref.node);
    // A fed value, or one whose static shape may not hold, is not evaluated.
    if (n == nullptr || ctx_.fed.count(key) > 0 || facts_.tainted.count(n->name()) > 0 ||
        facts_.under_cf.count(n->name()) > 0) {
      return std::nullopt;
    }
    const std::vector<std::string> in = DataInputsOf(*n);
    const std::string& op = n->op();
    if (op == "Const" && ref.index == 0) {
      const tf::AttrValue* value = FindAttr(*n, "value");
      if (value == nullptr) return std::nullopt;
      auto t = TensorFromProto(value->tensor());
      if (!t.ok() || (t->dtype() != DataType::kInt32 && t->dtype() != DataType::kInt64) ||
          t->num_elements() > kMaxElements) {
        return std::nullopt;
      }
      SymTensor s;
      s.shape.assign(t->shape().begin(), t->shape().end());
      for (int64_t i = 0; i < t->num_elements(); ++i) {
        Affine a;
        a.c = t->dtype() == DataType::kInt32 ? t->data<int32_t>()[i] : t->data<int64_t>()[i];
        if (a.c > kMaxMagnitude || a.c < -kMaxMagnitude) return std::nullopt;
        s.v.push_back(a);
      }
      return s;
    }
    if ((op == "Identity" || op == "Snapshot") && ref.index == 0 && in.size() == 1) return Eval(in[0], depth + 1);
    if (op == "Pack" && ref.index == 0 && !in.empty()) {
      if (auto s = Pack(*n, in, depth)) return s;
    } else if ((op == "Add" || op == "AddV2" || op == "Sub") && ref.index == 0 && in.size() == 2) {
      if (auto s = AddSub(in, op == "Sub" ? -1 : 1, depth)) return s;
    } else if (op == "StridedSlice" && ref.index == 0 && in.size() == 4) {
      if (auto s = StridedSlice(*n, in, depth)) return s;
    }
    return Opaque(ref, key);
  }

  // A value not evaluated further: one symbol per element, when its static
  // shape is fully known.
  std::optional<SymTensor> Opaque(const InputRef& ref, const std::string& key) {
    if (facts_.graph == nullptr) return std::nullopt;
    const Node* node = facts_.graph->FindNode(ref.node);
    if (node == nullptr || ref.index < 0 || ref.index >= static_cast<int>(node->output_shapes.size())) {
      return std::nullopt;
    }
    const DataType t = node->output_types[ref.index];
    const PartialShape& ps = node->output_shapes[ref.index];
    if ((t != DataType::kInt32 && t != DataType::kInt64) || !ps.fully_defined()) return std::nullopt;
    SymTensor s;
    s.shape = ps.dim_vector();
    const int64_t count = Count(s.shape);
    if (count > kMaxElements) return std::nullopt;
    for (int64_t i = 0; i < count; ++i) {
      Affine a;
      a.terms[absl::StrCat(key, "#", i)] = 1;
      s.v.push_back(std::move(a));
    }
    return s;
  }

  std::optional<SymTensor> Pack(const tf::NodeDef& n, const std::vector<std::string>& in, int depth) {
    std::vector<SymTensor> parts;
    for (const std::string& i : in) {
      auto s = Eval(i, depth + 1);
      if (!s || (!parts.empty() && s->shape != parts[0].shape)) return std::nullopt;
      parts.push_back(*std::move(s));
    }
    const int64_t rank = static_cast<int64_t>(parts[0].shape.size());
    int64_t axis = IntAttr(n, "axis", 0);
    if (axis < 0) axis += rank + 1;
    if (axis < 0 || axis > rank) return std::nullopt;
    SymTensor r;
    r.shape = parts[0].shape;
    r.shape.insert(r.shape.begin() + axis, static_cast<int64_t>(parts.size()));
    if (Count(r.shape) > kMaxElements) return std::nullopt;
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= parts[0].shape[d];
    const int64_t inner = Count(parts[0].shape) / std::max<int64_t>(outer, 1);
    for (int64_t o = 0; o < outer; ++o) {
      for (const SymTensor& p : parts) {
        for (int64_t i = 0; i < inner; ++i) r.v.push_back(p.v[o * inner + i]);
      }
    }
    return r;
  }

  // Equal shapes, or either side a scalar.
  std::optional<SymTensor> AddSub(const std::vector<std::string>& in, int64_t sign, int depth) {
    auto a = Eval(in[0], depth + 1);
    auto b = Eval(in[1], depth + 1);
    if (!a || !b) return std::nullopt;
    const bool a_scalar = a->shape.empty(), b_scalar = b->shape.empty();
    if (a->shape != b->shape && !a_scalar && !b_scalar) return std::nullopt;
    SymTensor r;
    r.shape = a_scalar ? b->shape : a->shape;
    const int64_t count = Count(r.shape);
    for (int64_t i = 0; i < count; ++i) {
      auto v = Combine(a->v[a_scalar ? 0 : i], b->v[b_scalar ? 0 : i], sign);
      if (!v) return std::nullopt;
      r.v.push_back(*std::move(v));
    }
    return r;
  }

  // StridedSlice with constant begin, end and strides, and no ellipsis or
  // new axes.
  std::optional<SymTensor> StridedSlice(const tf::NodeDef& n, const std::vector<std::string>& in, int depth) {
    if (IntAttr(n, "ellipsis_mask", 0) != 0 || IntAttr(n, "new_axis_mask", 0) != 0) return std::nullopt;
    const int64_t begin_mask = IntAttr(n, "begin_mask", 0), end_mask = IntAttr(n, "end_mask", 0),
                  shrink_mask = IntAttr(n, "shrink_axis_mask", 0);
    auto x = Eval(in[0], depth + 1);
    auto begin = Eval(in[1], depth + 1), end = Eval(in[2], depth + 1), strides = Eval(in[3], depth + 1);
    if (!x || !begin || !end || !strides) return std::nullopt;
    if (!begin->all_const() || !end->all_const() || !strides->all_const()) return std::nullopt;
    const size_t m = begin->v.size();
    if (begin->shape.size() != 1 || end->v.size() != m || strides->v.size() != m || m > x->shape.size()) {
      return std::nullopt;
    }
    if ((shrink_mask >> m) != 0 || (begin_mask >> m) != 0 || (end_mask >> m) != 0) return std::nullopt;
    // The indices taken in each dimension of x, and the output's shape.
    std::vector<std::vector<int64_t>> taken(x->shape.size());
    std::vector<int64_t> out_shape;
    for (size_t d = 0; d < x->shape.size(); ++d) {
      const int64_t size = x->shape[d];
      if (d >= m) {
        for (int64_t i = 0; i < size; ++i) taken[d].push_back(i);
        out_shape.push_back(size);
        continue;
      }
      const int64_t s = strides->v[d].c;
      if (s == 0) return std::nullopt;
      if ((shrink_mask >> d) & 1) {
        int64_t i = begin->v[d].c;
        if (i < 0) i += size;
        if (s != 1 || i < 0 || i >= size) return std::nullopt;
        taken[d].push_back(i);
        continue;
      }
      auto canonical = [&](int64_t v) {
        if (v < 0) v += size;
        return s > 0 ? std::clamp<int64_t>(v, 0, size) : std::clamp<int64_t>(v, -1, size - 1);
      };
      const int64_t b = (begin_mask >> d) & 1 ? (s > 0 ? 0 : size - 1) : canonical(begin->v[d].c);
      const int64_t e = (end_mask >> d) & 1 ? (s > 0 ? size : -1) : canonical(end->v[d].c);
      for (int64_t i = b; s > 0 ? i < e : i > e; i += s) taken[d].push_back(i);
      out_shape.push_back(static_cast<int64_t>(taken[d].size()));
    }
    SymTensor r;
    r.shape = out_shape;
    const int64_t count = Count(out_shape);
    if (count == 0) return r;
    // Every combination of taken indices, last dimension fastest.
    std::vector<size_t> pos(x->shape.size(), 0);
    for (int64_t k = 0; k < count; ++k) {
      int64_t flat = 0;
      for (size_t d = 0; d < x->shape.size(); ++d) flat = flat * x->shape[d] + taken[d][pos[d]];
      r.v.push_back(x->v[flat]);
      for (size_t d = x->shape.size(); d-- > 0;) {
        if (++pos[d] < taken[d].size()) break;
        pos[d] = 0;
      }
    }
    return r;
  }

  const NodeIndex& index_;
  const PassContext& ctx_;
  const GraphFacts& facts_;
  std::map<std::string, std::optional<SymTensor>> memo_;
};

// `n` is read by exactly one data input, output 0, of `reader`, by nothing
// else, and is neither named by the signature nor fed.
bool OnlyReadBy(const NodeIndex& index, const PassContext& ctx, const tf::NodeDef& n, const tf::NodeDef& reader) {
  if (ctx.protected_nodes.count(n.name()) > 0 || ctx.fed.count(EndpointKey(n.name(), 0)) > 0) return false;
  const auto& data = index.DataConsumers(n.name());
  if (data.size() != 1 || !index.ControlConsumers(n.name()).empty() || data[0].first != &reader) return false;
  return ParseInput(data[0].first->input(data[0].second)).index == 0;
}

bool AllOnes(const tf::AttrValue* list) {
  if (list == nullptr) return true;
  for (int64_t v : list->list().i()) {
    if (v != 1) return false;
  }
  return true;
}

// Rewrites the pattern ending at `b2s` when it qualifies.
bool RewriteOne(const PassContext& ctx, NodeIndex& index, Evaluator& eval, const GraphFacts& facts,
                tf::NodeDef& b2s) {
  if (ctx.protected_nodes.count(b2s.name()) > 0 || ctx.fed.count(EndpointKey(b2s.name(), 0)) > 0) return false;
  const std::vector<std::string> b2s_in = DataInputsOf(b2s);
  if (b2s_in.size() != 3 || ParseInput(b2s_in[0]).index != 0) return false;
  tf::NodeDef* conv = index.Find(ParseInput(b2s_in[0]).node);
  if (conv == nullptr || (conv->op() != "Conv2D" && conv->op() != "DepthwiseConv2dNative") ||
      !OnlyReadBy(index, ctx, *conv, b2s)) {
    return false;
  }
  const tf::AttrValue* format = FindAttr(*conv, "data_format");
  const tf::AttrValue* padding = FindAttr(*conv, "padding");
  const tf::AttrValue* strides = FindAttr(*conv, "strides");
  const tf::AttrValue* explicit_pads = FindAttr(*conv, "explicit_paddings");
  if ((format != nullptr && format->s() != "NHWC") || padding == nullptr || padding->s() != "VALID" ||
      strides == nullptr || strides->list().i_size() != 4 || !AllOnes(strides) ||
      !AllOnes(FindAttr(*conv, "dilations")) || (explicit_pads != nullptr && explicit_pads->list().i_size() != 0)) {
    return false;
  }
  const std::vector<std::string> conv_in = DataInputsOf(*conv);
  if (conv_in.size() != 2 || ParseInput(conv_in[0]).index != 0) return false;
  tf::NodeDef* s2b = index.Find(ParseInput(conv_in[0]).node);
  if (s2b == nullptr || s2b->op() != "SpaceToBatchND" || !OnlyReadBy(index, ctx, *s2b, *conv)) return false;
  const std::vector<std::string> s2b_in = DataInputsOf(*s2b);
  if (s2b_in.size() != 3) return false;
  for (const tf::NodeDef* n : {&b2s, conv, s2b}) {
    if (facts.under_cf.count(n->name()) > 0) return false;
  }

  // The block: the same constant for both, over H (and W).
  auto block = eval.Eval(s2b_in[1]);
  auto block2 = eval.Eval(b2s_in[1]);
  if (!block || !block2 || !block->all_const() || !block2->all_const() || block->shape.size() != 1 ||
      block2->shape != block->shape) {
    return false;
  }
  const int64_t m = block->shape[0];
  if (m < 1 || m > 2) return false;
  int64_t dilation[2] = {1, 1};
  for (int64_t i = 0; i < m; ++i) {
    if (block->v[i].c < 1 || block->v[i].c != block2->v[i].c || block->v[i].c > kMaxMagnitude) return false;
    dilation[i] = block->v[i].c;
  }
  auto paddings = eval.Eval(s2b_in[2]);
  auto crops = eval.Eval(b2s_in[2]);
  const std::vector<int64_t> want = {m, 2};
  if (!paddings || !crops || paddings->shape != want || crops->shape != want) return false;
  // The explicit padding of each spatial dimension: paddings - crops.
  int64_t pads[2][2] = {{0, 0}, {0, 0}};
  for (int64_t i = 0; i < m; ++i) {
    for (int side = 0; side < 2; ++side) {
      const Affine& p = paddings->v[i * 2 + side];
      const Affine& c = crops->v[i * 2 + side];
      auto diff = Combine(p, c, -1);
      if (!diff || !diff->is_const() || diff->c < 0) return false;
      // Known paddings or crops the original would reject keep the pattern.
      if ((p.is_const() && p.c < 0) || (c.is_const() && c.c < 0)) return false;
      pads[i][side] = diff->c;
    }
  }
  // With x's size known, the padded size must be a multiple of the block.
  if (facts.graph != nullptr) {
    const InputRef x_ref = ParseInput(s2b_in[0]);
    const Node* x = facts.graph->FindNode(x_ref.node);
    if (x != nullptr && x_ref.index >= 0 && x_ref.index < static_cast<int>(x->output_shapes.size()) &&
        facts.tainted.count(x_ref.node) == 0) {
      const PartialShape& s = x->output_shapes[x_ref.index];
      if (s.rank_known() && s.rank() != 4) return false;
      for (int64_t i = 0; i < m && s.rank_known(); ++i) {
        const Affine& before = paddings->v[i * 2];
        const Affine& after = paddings->v[i * 2 + 1];
        if (s.dim(1 + i) >= 0 && before.is_const() && after.is_const() &&
            (s.dim(1 + i) + before.c + after.c) % dilation[i] != 0) {
          return false;
        }
      }
    }
  }

  tf::NodeDef rewritten;
  rewritten.set_name(b2s.name());
  rewritten.set_op(conv->op());
  rewritten.set_device(conv->device());
  rewritten.add_input(s2b_in[0]);
  rewritten.add_input(conv_in[1]);
  std::set<std::string> controls;
  for (const tf::NodeDef* n : {s2b, conv, &b2s}) {
    for (const std::string& in : n->input()) {
      if (ParseInput(in).control) controls.insert(in);
    }
  }
  for (const std::string& c : controls) rewritten.add_input(c);
  auto& attr = *rewritten.mutable_attr();
  for (const auto& [name, value] : conv->attr()) attr[name] = value;
  auto* dilations = attr["dilations"].mutable_list();
  dilations->clear_i();
  for (int64_t d : {int64_t{1}, dilation[0], dilation[1], int64_t{1}}) dilations->add_i(d);
  const bool valid = pads[0][0] == 0 && pads[0][1] == 0 && pads[1][0] == 0 && pads[1][1] == 0;
  attr["padding"].set_s(valid ? "VALID" : "EXPLICIT");
  auto* explicit_list = attr["explicit_paddings"].mutable_list();
  explicit_list->clear_i();
  if (!valid) {
    for (int64_t p : {int64_t{0}, int64_t{0}, pads[0][0], pads[0][1], pads[1][0], pads[1][1], int64_t{0},
                      int64_t{0}}) {
      explicit_list->add_i(p);
    }
  }
  // The SpaceToBatchND and the convolution are left unread; dead-node
  // removal drops them.
  index.ReplaceNode(b2s, std::move(rewritten));
  return true;
}

}  // namespace

// Called by FuseOps first, with its index. Returns how many patterns were
// rewritten.
int RewriteAtrousConvolutions(tf::GraphDef& def, const PassContext& ctx, NodeIndex& index) {
  // Candidates first, by structure alone, so most graphs pay nothing more.
  std::vector<int> candidates;
  for (int i = 0; i < def.node_size(); ++i) {
    const tf::NodeDef& n = def.node(i);
    if (n.op() != "BatchToSpaceND" || n.input_size() < 1) continue;
    const tf::NodeDef* conv = index.Find(ParseInput(n.input(0)).node);
    if (conv == nullptr || (conv->op() != "Conv2D" && conv->op() != "DepthwiseConv2dNative") ||
        conv->input_size() < 1) {
      continue;
    }
    const tf::NodeDef* s2b = index.Find(ParseInput(conv->input(0)).node);
    if (s2b != nullptr && s2b->op() == "SpaceToBatchND") candidates.push_back(i);
  }
  if (candidates.empty()) return 0;
  GraphFacts facts;
  if (auto g = ImportGraphDef(def, ctx.source); g.ok()) facts.graph = *std::move(g);
  facts.under_cf = UnderControlFlow(def);
  facts.tainted = FeedTainted(def, ctx.fed);
  Evaluator eval(index, ctx, facts);
  int rewritten = 0;
  for (int i : candidates) {
    if (RewriteOne(ctx, index, eval, facts, *def.mutable_node(i))) ++rewritten;
  }
  return rewritten;
}

}  // namespace plexus::opt

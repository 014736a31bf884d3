// Cases for the fused ops the graph optimizer creates: _FusedMatMul,
// _FusedConv2D and _FusedDepthwiseConv2dNative (plexus/sdk/fused.h). Every supported fused_ops combination
// runs with some geometry (transposes, data formats, paddings, strides,
// dilations), plus zero-size and special values, and the combinations and
// argument counts a kernel must refuse. The source is tests/ops/fused_test.cc.
#include <limits>
#include <string>
#include <vector>

#include "cases.h"

namespace plexus::conformance {
namespace {

using Ints = std::vector<int64_t>;
using Names = std::vector<std::string>;

tf::AttrValue StringList(const Names& names) {
  tf::AttrValue v;
  auto* list = v.mutable_list();
  for (const std::string& s : names) list->add_s(s);
  return v;
}

// The activations that may follow BiasAdd or FusedBatchNorm ("" = none).
const Names& Activations() {
  static const Names kActivations = {"", "Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid"};
  return kActivations;
}

Names FusedOps(const std::string& first, const std::string& activation) {
  return activation.empty() ? Names{first} : Names{first, activation};
}

std::string Label(const Names& ops) {
  std::string s = "[";
  for (size_t i = 0; i < ops.size(); ++i) s += (i ? "," : "") + ops[i];
  return s + "]";
}

// The products sum up to ~30 terms: float results may differ from the
// double reference by a few 1e-5 where the bias cancels them towards zero.
Tolerance FusedTolerance(DataType t) {
  Tolerance tol = DefaultTolerance(t);
  if (t == DataType::kFloat) tol.atol = 1e-4;
  return tol;
}

// ---------------------------------------------------------------------------
// _FusedMatMul
// ---------------------------------------------------------------------------

PX_CONFORMANCE_CASES("_FusedMatMul")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t)) return cases;
  struct Size {
    int64_t m, k, n;
    bool ta, tb;
  };
  // One geometry per activation, so that every combination also meets the
  // transposes.
  const std::vector<Size> sizes = {
      {3, 4, 5, false, false}, {4, 6, 3, true, false}, {5, 6, 2, false, true},
      {2, 7, 4, true, true},   {33, 17, 9, false, false}, {1, 5, 1, false, true},
      {6, 3, 7, true, false},
  };
  auto add = [&](const std::string& label, const Size& s, const Names& ops, Tensor a) {
    const Shape bs = s.tb ? Shape{s.n, s.k} : Shape{s.k, s.n};
    cases.push_back(Case(ctx.op, label)
                        .Input(std::move(a))
                        .Input(RandomTensor(t, bs, ctx.rng))
                        .Input(RandomTensor(t, {s.n}, ctx.rng))
                        .Attr("T", t)
                        .Attr("num_args", 1)
                        .Attr("fused_ops", StringList(ops))
                        .Attr("transpose_a", s.ta)
                        .Attr("transpose_b", s.tb)
                        .WithTolerance(FusedTolerance(t)));
  };
  auto a_of = [&](const Size& s) {
    return RandomTensor(t, s.ta ? Shape{s.k, s.m} : Shape{s.m, s.k}, ctx.rng);
  };
  const Names& acts = Activations();
  for (size_t i = 0; i < acts.size(); ++i) {
    const Size& s = sizes[i];
    const Names ops = FusedOps("BiasAdd", acts[i]);
    std::string label = Label(ops) + " [" + std::to_string(s.m) + "," + std::to_string(s.k) +
                        "] x [" + std::to_string(s.k) + "," + std::to_string(s.n) + "]";
    if (s.ta) label += " transpose_a";
    if (s.tb) label += " transpose_b";
    add(label, s, ops, a_of(s));
  }
  // LeakyRelu with another alpha.
  {
    const Size s{4, 5, 6, false, false};
    add("[BiasAdd,LeakyRelu] alpha 0.05", s, {"BiasAdd", "LeakyRelu"}, a_of(s));
    cases.back().Attr("leakyrelu_alpha", 0.05f);
  }
  // Edge shapes.
  {
    const Size s{0, 3, 4, false, false};
    add("zero-size m: [0,3] x [3,4]", s, {"BiasAdd", "Relu"}, a_of(s));
  }
  {
    const Size s{3, 4, 0, false, false};
    add("zero-size n: [3,4] x [4,0]", s, {"BiasAdd", "Relu"}, a_of(s));
  }
  {
    const Size s{2, 0, 3, false, true};
    add("empty k: bias and activation only", s, {"BiasAdd", "Relu6"}, a_of(s));
  }
  // NaN and infinities pass through the bias and the activation.
  {
    const double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<double> pattern = {1.5, inf, -2, -0.0, 0.5, -inf, 2.5, nan, -1, 3, -0.5, 1};
    std::vector<double> v(4 * 3);
    for (size_t i = 0; i < v.size(); ++i) v[i] = pattern[i % pattern.size()];
    const Size s{4, 3, 5, false, false};
    add("NaN, inf and -0.0 through [BiasAdd,Relu]", s, {"BiasAdd", "Relu"},
        MakeTensor(t, {4, 3}, v));
  }
  // Refused by the kernels: unsupported combinations and a num_args that
  // does not fit them.
  const std::vector<Names> unsupported = {
      {}, {"Relu"}, {"BiasAdd", "Gelu"}, {"FusedBatchNorm"}, {"BiasAdd", "Relu", "Relu"}};
  for (const Names& ops : unsupported) {
    cases.push_back(Case(ctx.op, "error: unsupported fused_ops " + Label(ops))
                        .Input(RandomTensor(t, {2, 3}, ctx.rng))
                        .Input(RandomTensor(t, {3, 4}, ctx.rng))
                        .Input(RandomTensor(t, {4}, ctx.rng))
                        .Attr("T", t)
                        .Attr("num_args", 1)
                        .Attr("fused_ops", StringList(ops))
                        .ExpectError(absl::StatusCode::kUnimplemented));
  }
  cases.push_back(Case(ctx.op, "error: [BiasAdd] with num_args 2")
                      .Input(RandomTensor(t, {2, 3}, ctx.rng))
                      .Input(RandomTensor(t, {3, 4}, ctx.rng))
                      .Input(RandomTensor(t, {4}, ctx.rng))
                      .Input(RandomTensor(t, {4}, ctx.rng))
                      .Attr("T", t)
                      .Attr("num_args", 2)
                      .Attr("fused_ops", StringList({"BiasAdd"}))
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  return cases;
}

// ---------------------------------------------------------------------------
// _FusedConv2D
// ---------------------------------------------------------------------------

Ints Spatial(const std::string& format, int64_t h, int64_t w) {
  return format == "NCHW" ? Ints{1, 1, h, w} : Ints{1, h, w, 1};
}
Shape ImageShape(const std::string& format, int64_t n, int64_t h, int64_t w, int64_t c) {
  return format == "NCHW" ? Shape{n, c, h, w} : Shape{n, h, w, c};
}

struct Conv {
  std::string format, padding;
  int64_t n, h, w, kh, kw, sh, sw, dh, dw, out;
  std::string label;
};

// The geometries the combinations cycle through.
std::vector<Conv> Geometries() {
  return {
      {"NHWC", "VALID", 2, 6, 7, 3, 3, 1, 1, 1, 1, 4, "NHWC VALID 3x3"},
      {"NHWC", "SAME", 2, 6, 7, 3, 3, 2, 2, 1, 1, 2, "NHWC SAME 3x3 stride 2"},
      {"NCHW", "SAME", 1, 7, 8, 2, 3, 2, 1, 1, 1, 3, "NCHW SAME 2x3 strides 2,1"},
      {"NHWC", "EXPLICIT", 1, 5, 6, 3, 2, 2, 1, 1, 1, 2, "NHWC EXPLICIT padding"},
      {"NCHW", "VALID", 1, 7, 7, 3, 3, 1, 1, 2, 2, 2, "NCHW VALID dilation 2"},
      {"NHWC", "SAME", 1, 8, 6, 2, 2, 3, 1, 2, 1, 1, "NHWC SAME dilations 2,1 strides 3,1"},
      {"NHWC", "VALID", 2, 5, 5, 1, 1, 1, 1, 1, 1, 4, "NHWC 1x1 filter"},
      {"NCHW", "EXPLICIT", 1, 4, 5, 2, 2, 1, 2, 1, 1, 3, "NCHW EXPLICIT padding stride 1,2"},
  };
}

// What both fused convolutions' cases share after their input and filter:
// `num_args` random [channels] arguments (the fourth, a batch norm's
// variance, positive) and the attributes.
template <typename Geometry>
Case WithArgsAndAttrs(Case c, const CaseContext& ctx, const Geometry& k, const Names& ops,
                      int64_t num_args, int64_t channels) {
  const DataType t = ctx.dtype;
  const bool bn = !ops.empty() && ops[0] == "FusedBatchNorm";
  for (int64_t i = 0; i < num_args; ++i) {
    const bool positive = bn && i == 3;
    c.Input(RandomTensor(t, {channels}, ctx.rng, positive ? 0.25 : -2, 2));
  }
  c.Attr("T", t)
      .Attr("num_args", num_args)
      .Attr("fused_ops", StringList(ops))
      .Attr("data_format", k.format)
      .Attr("padding", k.padding)
      .Attr("strides", Spatial(k.format, k.sh, k.sw))
      .Attr("dilations", Spatial(k.format, k.dh, k.dw))
      .WithTolerance(FusedTolerance(t));
  if (k.padding == "EXPLICIT") {
    // Top 1, bottom 2, left 2, right 0.
    c.Attr("explicit_paddings", k.format == "NCHW" ? Ints{0, 0, 0, 0, 1, 2, 2, 0}
                                                   : Ints{0, 0, 1, 2, 2, 0, 0, 0});
  }
  return c;
}

// A _FusedConv2D case with `ops`; the arguments are random [out] tensors
// (variance positive) unless `num_args` says otherwise.
Case ConvCase(const CaseContext& ctx, const Conv& k, const Names& ops, const std::string& label,
              int64_t num_args = -1) {
  const DataType t = ctx.dtype;
  const int64_t in_c = 3;
  const bool bn = !ops.empty() && ops[0] == "FusedBatchNorm";
  if (num_args < 0) num_args = bn ? 4 : 1;
  Case c(ctx.op, label);
  c.Input(RandomTensor(t, ImageShape(k.format, k.n, k.h, k.w, in_c), ctx.rng, -2, 2))
      .Input(RandomTensor(t, {k.kh, k.kw, in_c, k.out}, ctx.rng, -2, 2));
  return WithArgsAndAttrs(c, ctx, k, ops, num_args, k.out);
}

PX_CONFORMANCE_CASES("_FusedConv2D")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t)) return cases;
  const std::vector<Conv> geometries = Geometries();
  const Names& acts = Activations();
  size_t g = 0;
  for (const char* first : {"BiasAdd", "FusedBatchNorm"}) {
    for (const std::string& act : acts) {
      const Conv& k = geometries[g++ % geometries.size()];
      const Names ops = FusedOps(first, act);
      cases.push_back(ConvCase(ctx, k, ops, Label(ops) + " " + k.label));
    }
  }
  // Grouped convolutions (Keras' Conv2D(groups=...)): 6 input channels,
  // a filter of input depth 3 (2 groups) or 1 (6 groups), 6 outputs.
  for (size_t i = 0; i < 4; ++i) {
    const Conv& k = geometries[i * 2 % geometries.size()];
    const int64_t f_in = i % 2 == 0 ? 3 : 1;
    const Names ops = FusedOps(i < 2 ? "BiasAdd" : "FusedBatchNorm", i % 2 == 0 ? "Relu" : "");
    Case c(ctx.op, "grouped, filter input depth " + std::to_string(f_in) + " " + Label(ops) +
                       " " + k.label);
    c.Input(RandomTensor(t, ImageShape(k.format, k.n, k.h, k.w, 6), ctx.rng, -2, 2))
        .Input(RandomTensor(t, {k.kh, k.kw, f_in, 6}, ctx.rng, -2, 2));
    cases.push_back(WithArgsAndAttrs(c, ctx, k, ops, i < 2 ? 1 : 4, 6));
  }
  // Batch norm with another epsilon, LeakyRelu with another alpha.
  cases.push_back(ConvCase(ctx, geometries[0], {"FusedBatchNorm", "Relu"},
                           "[FusedBatchNorm,Relu] epsilon 0.01")
                      .Attr("epsilon", 0.01f));
  cases.push_back(ConvCase(ctx, geometries[2], {"BiasAdd", "LeakyRelu"},
                           "[BiasAdd,LeakyRelu] alpha 0.3")
                      .Attr("leakyrelu_alpha", 0.3f));
  // Zero-size batch.
  const Conv empty{"NHWC", "SAME", 0, 5, 5, 3, 3, 2, 2, 1, 1, 2, "zero-size batch"};
  cases.push_back(ConvCase(ctx, empty, {"BiasAdd", "Relu"}, "zero-size batch [BiasAdd,Relu]"));
  cases.push_back(ConvCase(ctx, empty, {"FusedBatchNorm"}, "zero-size batch [FusedBatchNorm]"));
  // Refused by the kernels.
  const std::vector<Names> unsupported = {
      {}, {"Relu"}, {"BiasAdd", "Gelu"}, {"FusedBatchNorm", "BiasAdd"}, {"BiasAdd", "Add"}};
  for (const Names& ops : unsupported) {
    cases.push_back(ConvCase(ctx, geometries[0], ops, "error: unsupported fused_ops " + Label(ops),
                             1)
                        .ExpectError(absl::StatusCode::kUnimplemented));
  }
  cases.push_back(ConvCase(ctx, geometries[0], {"FusedBatchNorm"},
                           "error: [FusedBatchNorm] with num_args 1", 1)
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  cases.push_back(ConvCase(ctx, geometries[1], {"BiasAdd", "Relu"},
                           "error: [BiasAdd,Relu] with num_args 4", 4)
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  cases.push_back(ConvCase(ctx, geometries[0], {"BiasAdd"}, "error: filter_format OIHW")
                      .Attr("filter_format", "OIHW")
                      .ExpectError(absl::StatusCode::kUnimplemented));
  return cases;
}

// ---------------------------------------------------------------------------
// _FusedDepthwiseConv2dNative
// ---------------------------------------------------------------------------

struct Depthwise {
  std::string format, padding;
  int64_t n, h, w, c, kh, kw, sh, sw, dh, dw, mult;
  std::string label;
};

// Channel counts in whole 16-float vectors and with a tail, borders,
// strides, dilations, and channel multipliers above 1.
std::vector<Depthwise> DepthwiseGeometries() {
  return {
      {"NHWC", "SAME", 2, 7, 5, 16, 3, 3, 1, 1, 1, 1, 1, "NHWC SAME 3x3 16 channels"},
      {"NHWC", "VALID", 1, 6, 19, 40, 3, 3, 1, 1, 1, 1, 1, "NHWC VALID 3x3 40 channels, 17 wide"},
      {"NCHW", "SAME", 1, 7, 8, 3, 2, 3, 2, 1, 1, 1, 1, "NCHW SAME 2x3 strides 2,1"},
      {"NHWC", "EXPLICIT", 1, 5, 6, 20, 3, 2, 2, 1, 1, 1, 1, "NHWC EXPLICIT padding"},
      {"NHWC", "SAME", 1, 9, 11, 33, 3, 3, 2, 3, 2, 2, 1, "NHWC SAME strides 2,3 dilation 2"},
      {"NCHW", "VALID", 1, 7, 7, 5, 3, 3, 1, 1, 2, 2, 2, "NCHW VALID dilation 2 multiplier 2"},
      {"NHWC", "SAME", 1, 5, 6, 4, 3, 3, 1, 2, 1, 1, 3, "NHWC SAME multiplier 3"},
  };
}

// A _FusedDepthwiseConv2dNative case with `ops`; the arguments are random
// [c * mult] tensors (variance positive) unless `num_args` says otherwise.
Case DepthwiseCase(const CaseContext& ctx, const Depthwise& k, const Names& ops,
                   const std::string& label, int64_t num_args = -1) {
  const DataType t = ctx.dtype;
  const bool bn = !ops.empty() && ops[0] == "FusedBatchNorm";
  if (num_args < 0) num_args = bn ? 4 : 1;
  Case c(ctx.op, label);
  c.Input(RandomTensor(t, ImageShape(k.format, k.n, k.h, k.w, k.c), ctx.rng, -2, 2))
      .Input(RandomTensor(t, {k.kh, k.kw, k.c, k.mult}, ctx.rng, -2, 2));
  return WithArgsAndAttrs(c, ctx, k, ops, num_args, k.c * k.mult);
}

PX_CONFORMANCE_CASES("_FusedDepthwiseConv2dNative")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t)) return cases;
  const std::vector<Depthwise> geometries = DepthwiseGeometries();
  const Names& acts = Activations();
  size_t g = 0;
  for (const char* first : {"BiasAdd", "FusedBatchNorm"}) {
    for (const std::string& act : acts) {
      const Depthwise& k = geometries[g++ % geometries.size()];
      const Names ops = FusedOps(first, act);
      cases.push_back(DepthwiseCase(ctx, k, ops, Label(ops) + " " + k.label));
    }
  }
  cases.push_back(DepthwiseCase(ctx, geometries[0], {"FusedBatchNorm", "Relu"},
                                "[FusedBatchNorm,Relu] epsilon 0.01")
                      .Attr("epsilon", 0.01f));
  cases.push_back(DepthwiseCase(ctx, geometries[1], {"BiasAdd", "LeakyRelu"},
                                "[BiasAdd,LeakyRelu] alpha 0.3")
                      .Attr("leakyrelu_alpha", 0.3f));
  const Depthwise empty{"NHWC", "SAME", 0, 5, 5, 3, 3, 3, 2, 2, 1, 1, 1, "zero-size batch"};
  cases.push_back(DepthwiseCase(ctx, empty, {"BiasAdd", "Relu"}, "zero-size batch [BiasAdd,Relu]"));
  // Refused by the kernels.
  const std::vector<Names> unsupported = {
      {}, {"Relu"}, {"BiasAdd", "Gelu"}, {"FusedBatchNorm", "BiasAdd"}};
  for (const Names& ops : unsupported) {
    cases.push_back(DepthwiseCase(ctx, geometries[0], ops,
                                  "error: unsupported fused_ops " + Label(ops), 1)
                        .ExpectError(absl::StatusCode::kUnimplemented));
  }
  cases.push_back(DepthwiseCase(ctx, geometries[0], {"FusedBatchNorm"},
                                "error: [FusedBatchNorm] with num_args 1", 1)
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  cases.push_back(DepthwiseCase(ctx, geometries[2], {"BiasAdd", "Relu"},
                                "error: [BiasAdd,Relu] with num_args 4", 4)
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

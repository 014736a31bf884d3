// Cases for the nn family: BiasAdd, Conv2D, DepthwiseConv2dNative, MaxPool,
// AvgPool, FusedBatchNorm, FusedBatchNormV2 and FusedBatchNormV3. The source
// is tests/ops/nn_test.cc. Every error these ops can meet (bad shapes,
// windows, paddings) is found by the shape functions, so no error cases here.
#include <limits>
#include <string>
#include <vector>

#include "cases.h"

namespace plexus::conformance {
namespace {

using Ints = std::vector<int64_t>;

bool IsRealType(DataType t) {
  return IsFloatType(t) || t == DataType::kInt8 || t == DataType::kInt16 ||
         t == DataType::kInt32 || t == DataType::kInt64 || t == DataType::kUInt8;
}

// A 4-D attribute list for the spatial values (h, w) in `format`.
Ints Spatial(const std::string& format, int64_t h, int64_t w) {
  return format == "NCHW" ? Ints{1, 1, h, w} : Ints{1, h, w, 1};
}
Shape ImageShape(const std::string& format, int64_t n, int64_t h, int64_t w, int64_t c) {
  return format == "NCHW" ? Shape{n, c, h, w} : Shape{n, h, w, c};
}

// `shape` filled with a repeating pattern of infinities, NaN (when `nan`),
// -0.0 and finite values.
Tensor SpecialTensor(DataType t, const Shape& shape, bool nan) {
  const double inf = std::numeric_limits<double>::infinity();
  const double special = nan ? std::numeric_limits<double>::quiet_NaN() : 2.25;
  const std::vector<double> pattern = {1.5, inf, -2, -0.0, 0.5, -inf, 2.5, special, -1, 3, 0.0};
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = pattern[i % pattern.size()];
  return MakeTensor(t, shape, v);
}

// ---------------------------------------------------------------------------
// BiasAdd
// ---------------------------------------------------------------------------

PX_CONFORMANCE_CASES("BiasAdd")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsRealType(t)) return cases;
  struct Layout {
    std::string format;
    Shape shape;
    const char* label;
  };
  const std::vector<Layout> layouts = {
      {"NHWC", {4, 3}, "NHWC rank 2 [4,3]"},
      {"NHWC", {2, 3, 4, 5}, "NHWC [2,3,4,5]"},
      {"NCHW", {2, 3, 4, 5}, "NCHW [2,3,4,5]"},
      {"NCHW", {2, 3, 5}, "NCHW rank 3 [2,3,5]"},
      {"NCHW", {1, 3, 2, 2, 2}, "NCHW rank 5 [1,3,2,2,2]"},
      {"NHWC", {2, 1, 1, 1}, "one channel [2,1,1,1]"},
      {"NCHW", {0, 3, 2}, "zero-size [0,3,2]"},
  };
  for (const Layout& l : layouts) {
    const int64_t channels = l.format == "NCHW" ? l.shape[1] : l.shape.back();
    cases.push_back(Case(ctx.op, l.label)
                        .Input(RandomTensor(t, l.shape, ctx.rng))
                        .Input(RandomTensor(t, {channels}, ctx.rng))
                        .Attr("T", t)
                        .Attr("data_format", l.format));
  }
  if (IsFloatType(t)) {
    cases.push_back(Case(ctx.op, "NaN, inf and -0.0")
                        .Input(SpecialTensor(t, {4, 3, 2}, true))
                        .Input(MakeTensor(t, {2}, {-0.0, 1.5}))
                        .Attr("T", t)
                        .Attr("data_format", "NHWC"));
  }
  return cases;
}

// ---------------------------------------------------------------------------
// Conv2D, DepthwiseConv2dNative
// ---------------------------------------------------------------------------

// Convolutions sum up to ~30 products: float results may differ from the
// double reference by a few 1e-5 where they cancel towards zero.
Tolerance ConvTolerance(DataType t) {
  Tolerance tol = DefaultTolerance(t);
  if (t == DataType::kFloat) tol.atol = 1e-4;
  return tol;
}

PX_CONFORMANCE_CASES("Conv2D", "DepthwiseConv2dNative")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  const bool depthwise = ctx.op == "DepthwiseConv2dNative";
  if (!IsFloatType(t) && !(t == DataType::kInt32 && !depthwise)) return cases;
  struct Conv {
    std::string format, padding;
    int64_t n, h, w, kh, kw, sh, sw, dh, dw;
    int64_t out;  // output channels (Conv2D) or channel multiplier (depthwise)
    const char* label;
  };
  const std::vector<Conv> convs = {
      {"NHWC", "VALID", 2, 6, 7, 3, 3, 1, 1, 1, 1, 4, "NHWC VALID 3x3"},
      {"NHWC", "SAME", 2, 6, 7, 3, 3, 2, 2, 1, 1, 2, "NHWC SAME 3x3 stride 2"},
      {"NCHW", "SAME", 1, 7, 8, 2, 3, 2, 1, 1, 1, 3, "NCHW SAME 2x3 strides 2,1"},
      {"NHWC", "EXPLICIT", 1, 5, 6, 3, 2, 2, 1, 1, 1, 2, "NHWC EXPLICIT padding"},
      {"NCHW", "VALID", 1, 7, 7, 3, 3, 1, 1, 2, 2, 2, "NCHW VALID dilation 2"},
      {"NHWC", "SAME", 1, 8, 6, 2, 2, 3, 1, 2, 1, 1, "NHWC SAME dilations 2,1 strides 3,1"},
      {"NHWC", "VALID", 2, 5, 5, 1, 1, 1, 1, 1, 1, 4, "1x1 filter"},
      {"NHWC", "SAME", 0, 5, 5, 3, 3, 2, 2, 1, 1, 2, "zero-size batch"},
  };
  for (const Conv& k : convs) {
    const int64_t in_c = 3;
    Case c(ctx.op, k.label);
    c.Input(RandomTensor(t, ImageShape(k.format, k.n, k.h, k.w, in_c), ctx.rng, -2, 2))
        .Input(RandomTensor(t, {k.kh, k.kw, in_c, k.out}, ctx.rng, -2, 2))
        .Attr("T", t)
        .Attr("data_format", k.format)
        .Attr("padding", k.padding)
        .Attr("strides", Spatial(k.format, k.sh, k.sw))
        .Attr("dilations", Spatial(k.format, k.dh, k.dw))
        .WithTolerance(ConvTolerance(t));
    if (k.padding == "EXPLICIT") {
      // Top 1, bottom 2, left 2, right 0.
      c.Attr("explicit_paddings", k.format == "NCHW" ? Ints{0, 0, 0, 0, 1, 2, 2, 0}
                                                     : Ints{0, 0, 1, 2, 2, 0, 0, 0});
    }
    cases.push_back(std::move(c));
  }
  if (!depthwise) {
    // Grouped (Keras' Conv2D(groups=...)): the filter's input depth divides
    // the input's, the quotient is the number of groups, each feeding its
    // share of the output channels.
    struct Grouped {
      std::string format, padding;
      int64_t h, w, kh, kw, sh, sw, dh, dw, c, f_in, out;
      const char* label;
    };
    const std::vector<Grouped> grouped = {
        {"NHWC", "SAME", 6, 7, 3, 3, 1, 1, 1, 1, 4, 2, 6, "grouped 2 groups NHWC SAME 3x3"},
        {"NHWC", "VALID", 7, 6, 3, 2, 2, 1, 1, 1, 6, 2, 3, "grouped 3 groups NHWC VALID strides 2,1"},
        {"NCHW", "SAME", 6, 6, 3, 3, 2, 2, 1, 1, 4, 1, 8, "grouped 4 groups of 1 NCHW SAME stride 2"},
        {"NHWC", "EXPLICIT", 7, 7, 3, 3, 1, 1, 2, 2, 6, 3, 4, "grouped 2 groups EXPLICIT dilation 2"},
        {"NHWC", "VALID", 1, 9, 1, 3, 1, 1, 1, 1, 8, 4, 4, "grouped 1-D 2 groups"},
    };
    for (const Grouped& k : grouped) {
      Case c(ctx.op, k.label);
      c.Input(RandomTensor(t, ImageShape(k.format, 2, k.h, k.w, k.c), ctx.rng, -2, 2))
          .Input(RandomTensor(t, {k.kh, k.kw, k.f_in, k.out}, ctx.rng, -2, 2))
          .Attr("T", t)
          .Attr("data_format", k.format)
          .Attr("padding", k.padding)
          .Attr("strides", Spatial(k.format, k.sh, k.sw))
          .Attr("dilations", Spatial(k.format, k.dh, k.dw))
          .WithTolerance(ConvTolerance(t));
      if (k.padding == "EXPLICIT") c.Attr("explicit_paddings", Ints{0, 0, 1, 2, 2, 0, 0, 0});
      cases.push_back(std::move(c));
    }
  }
  if (IsFloatType(t)) {
    // Infinities and NaN in the input only, against a filter without zeros:
    // no product is 0 * inf, however a plugin treats the padding.
    Tensor f = RandomTensor(t, {2, 2, 3, 2}, ctx.rng, 0.5, 2);
    std::vector<double> fv(f.num_elements());
    for (size_t i = 0; i < fv.size(); ++i) fv[i] = (i % 3 == 1 ? -1 : 1) * ElementAsDouble(f, i);
    cases.push_back(Case(ctx.op, "NaN, inf and -0.0 in the input")
                        .Input(SpecialTensor(t, {1, 4, 5, 3}, true))
                        .Input(MakeTensor(t, {2, 2, 3, 2}, fv))
                        .Attr("T", t)
                        .Attr("data_format", "NHWC")
                        .Attr("padding", "SAME")
                        .Attr("strides", Spatial("NHWC", 1, 1))
                        .Attr("dilations", Spatial("NHWC", 1, 1))
                        .WithTolerance(ConvTolerance(t)));
  }
  return cases;
}

// ---------------------------------------------------------------------------
// MaxPool, AvgPool
// ---------------------------------------------------------------------------

PX_CONFORMANCE_CASES("MaxPool", "AvgPool")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  const bool max = ctx.op == "MaxPool";
  if (max ? !IsRealType(t) : !IsFloatType(t)) return cases;
  struct Pool {
    std::string format, padding;
    Shape nhwc;
    int64_t kh, kw, sh, sw;
    const char* label;
  };
  const std::vector<Pool> pools = {
      {"NHWC", "VALID", {2, 7, 6, 3}, 2, 2, 2, 2, "NHWC VALID 2x2 stride 2"},
      {"NHWC", "SAME", {2, 7, 6, 3}, 3, 3, 1, 1, "NHWC SAME 3x3 stride 1"},
      {"NCHW", "SAME", {2, 7, 6, 3}, 3, 3, 2, 2, "NCHW SAME 3x3 stride 2"},
      {"NCHW", "VALID", {1, 5, 7, 2}, 2, 3, 1, 2, "NCHW VALID 2x3 strides 1,2"},
      {"NHWC", "SAME", {1, 7, 6, 2}, 3, 2, 3, 2, "NHWC SAME 3x2 strides 3,2"},
      {"NHWC", "VALID", {2, 3, 3, 1}, 1, 1, 1, 1, "1x1 window"},
      {"NHWC", "SAME", {0, 4, 4, 2}, 2, 2, 2, 2, "zero-size batch"},
  };
  for (const Pool& p : pools) {
    cases.push_back(
        Case(ctx.op, p.label)
            .Input(RandomTensor(t, ImageShape(p.format, p.nhwc[0], p.nhwc[1], p.nhwc[2], p.nhwc[3]),
                                ctx.rng))
            .Attr("T", t)
            .Attr("data_format", p.format)
            .Attr("padding", p.padding)
            .Attr("ksize", Spatial(p.format, p.kh, p.kw))
            .Attr("strides", Spatial(p.format, p.sh, p.sw)));
  }
  if (max) {
    for (const std::string format : {"NHWC", "NCHW"}) {
      // Top 1, bottom 2, left 1, right 0.
      cases.push_back(
          Case(ctx.op, format + " EXPLICIT padding")
              .Input(RandomTensor(t, ImageShape(format, 2, 5, 6, 3), ctx.rng))
              .Attr("T", t)
              .Attr("data_format", format)
              .Attr("padding", "EXPLICIT")
              .Attr("ksize", Spatial(format, 3, 2))
              .Attr("strides", Spatial(format, 2, 1))
              .Attr("explicit_paddings", format == "NCHW" ? Ints{0, 0, 0, 0, 1, 2, 1, 0}
                                                          : Ints{0, 0, 1, 2, 1, 0, 0, 0}));
    }
  }
  if (IsFloatType(t)) {
    // Infinities and -0.0, and NaN for AvgPool only (which of a NaN and a
    // number a max keeps differs between implementations).
    cases.push_back(Case(ctx.op, max ? "inf and -0.0" : "NaN, inf and -0.0")
                        .Input(SpecialTensor(t, {1, 4, 5, 2}, /*nan=*/!max))
                        .Attr("T", t)
                        .Attr("data_format", "NHWC")
                        .Attr("padding", "SAME")
                        .Attr("ksize", Spatial("NHWC", 2, 2))
                        .Attr("strides", Spatial("NHWC", 2, 2)));
  }
  return cases;
}

// ---------------------------------------------------------------------------
// FusedBatchNorm, FusedBatchNormV2, FusedBatchNormV3 (inference mode)
// ---------------------------------------------------------------------------

PX_CONFORMANCE_CASES("FusedBatchNorm", "FusedBatchNormV2",
                     "FusedBatchNormV3")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  const bool v1 = ctx.op == "FusedBatchNorm";
  if (v1 ? t != DataType::kFloat
         : !(t == DataType::kFloat || t == DataType::kHalf || t == DataType::kBFloat16)) {
    return cases;
  }
  // The statistics are float (U), x is T.
  const DataType u = v1 ? t : DataType::kFloat;
  struct Norm {
    std::string format;
    Shape nhwc;
    float epsilon;
    const char* label;
  };
  const std::vector<Norm> norms = {
      {"NHWC", {2, 4, 5, 3}, 1e-3f, "NHWC [2,4,5,3]"},
      {"NCHW", {2, 4, 5, 3}, 1e-3f, "NCHW [2,3,4,5]"},
      {"NHWC", {1, 1, 1, 7}, 1e-3f, "one pixel, 7 channels"},
      {"NCHW", {3, 2, 2, 1}, 0.5f, "one channel, epsilon 0.5"},
      {"NHWC", {2, 3, 3, 4}, 0.0f, "epsilon 0"},
      {"NHWC", {0, 2, 2, 3}, 1e-3f, "zero-size batch"},
  };
  for (const Norm& k : norms) {
    const int64_t c = k.nhwc[3];
    Case bn(ctx.op, k.label);
    bn.Input(RandomTensor(t, ImageShape(k.format, k.nhwc[0], k.nhwc[1], k.nhwc[2], c), ctx.rng))
        .Input(RandomTensor(u, {c}, ctx.rng, 0.5, 2))    // scale
        .Input(RandomTensor(u, {c}, ctx.rng, -1, 1))     // offset
        .Input(RandomTensor(u, {c}, ctx.rng, -1, 1))     // mean
        .Input(RandomTensor(u, {c}, ctx.rng, 0.1, 3))    // variance
        .Attr("T", t)
        .Attr("epsilon", k.epsilon)
        .Attr("data_format", k.format)
        .Attr("is_training", false);
    if (!v1) bn.Attr("U", u);
    cases.push_back(std::move(bn));
  }
  Case special(ctx.op, "NaN, inf and -0.0 in x");
  special.Input(SpecialTensor(t, {1, 3, 4, 2}, true))
      .Input(MakeTensor(u, {2}, {1.5, 0.5}))
      .Input(MakeTensor(u, {2}, {0.25, -1}))
      .Input(MakeTensor(u, {2}, {-0.5, 1}))
      .Input(MakeTensor(u, {2}, {2, 0.25}))
      .Attr("T", t)
      .Attr("epsilon", 1e-3f)
      .Attr("data_format", "NHWC")
      .Attr("is_training", false);
  if (!v1) special.Attr("U", u);
  cases.push_back(std::move(special));
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

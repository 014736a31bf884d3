// Cases for the nn gradients: BiasAddGrad, MaxPoolGrad, MaxPoolGradV2,
// AvgPoolGrad, Conv2DBackpropInput, Conv2DBackpropFilter,
// DepthwiseConv2dNativeBackpropInput, DepthwiseConv2dNativeBackpropFilter
// and FusedBatchNormGrad, V2 and V3. The geometries mirror the forward ops'
// cases in nn.cc. The shape functions find every bad shape, window and
// padding (MaxPoolGradV2's ksize and strides inputs too: they are host
// values the shape function reads), so there are no error cases here.
#include <algorithm>
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

Ints Spatial(const std::string& format, int64_t h, int64_t w) {
  return format == "NCHW" ? Ints{1, 1, h, w} : Ints{1, h, w, 1};
}
Shape ImageShape(const std::string& format, int64_t n, int64_t h, int64_t w, int64_t c) {
  return format == "NCHW" ? Shape{n, c, h, w} : Shape{n, h, w, c};
}

// Sums of many products: float results may differ from the double
// reference by a few 1e-5 where they cancel towards zero.
Tolerance SumTolerance(DataType t) {
  Tolerance tol = DefaultTolerance(t);
  if (t == DataType::kFloat) tol.atol = 1e-4;
  if (t == DataType::kHalf) tol.atol = 1e-2;
  if (t == DataType::kBFloat16) tol.atol = 1e-1;
  return tol;
}

// The output size and the leading padding of one spatial dimension.
struct Dim1 {
  int64_t out, pad;
};
Dim1 WindowDim(const std::string& padding, int64_t in, int64_t k, int64_t s, int64_t d,
               int64_t pad_lo = 0, int64_t pad_hi = 0) {
  const int64_t span = (k - 1) * d + 1;
  if (padding == "VALID") return {in >= span ? (in - span) / s + 1 : 0, 0};
  if (padding == "EXPLICIT") return {(in + pad_lo + pad_hi - span) / s + 1, pad_lo};
  const int64_t out = (in + s - 1) / s;
  const int64_t total = std::max<int64_t>((out - 1) * s + span - in, 0);
  return {out, total / 2};
}

// A 4-D image as (n, h, w, c) whatever its layout.
struct Image {
  std::string format;
  int64_t n, h, w, c;
  int64_t At(int64_t bn, int64_t bh, int64_t bw, int64_t bc) const {
    return format == "NCHW" ? ((bn * c + bc) * h + bh) * w + bw : ((bn * h + bh) * w + bw) * c + bc;
  }
  Shape shape() const { return ImageShape(format, n, h, w, c); }
};

// MaxPool of `x` computed here, as orig_output for MaxPoolGrad (a kernel may
// find the maximum by comparing with it).
Tensor MaxPoolOf(DataType t, const Tensor& x, const Image& in, const Image& out, int64_t kh,
                 int64_t kw, int64_t sh, int64_t sw, int64_t top, int64_t left) {
  std::vector<double> v(static_cast<size_t>(out.n * out.h * out.w * out.c), 0.0);
  for (int64_t n = 0; n < out.n; ++n) {
    for (int64_t i = 0; i < out.h; ++i) {
      for (int64_t j = 0; j < out.w; ++j) {
        for (int64_t c = 0; c < out.c; ++c) {
          double best = -std::numeric_limits<double>::infinity();
          for (int64_t a = 0; a < kh; ++a) {
            for (int64_t b = 0; b < kw; ++b) {
              const int64_t ih = i * sh - top + a, iw = j * sw - left + b;
              if (ih < 0 || ih >= in.h || iw < 0 || iw >= in.w) continue;
              best = std::max(best, ElementAsDouble(x, in.At(n, ih, iw, c)));
            }
          }
          v[out.At(n, i, j, c)] = best;
        }
      }
    }
  }
  return MakeTensor(t, out.shape(), v);
}

PX_CONFORMANCE_CASES("BiasAddGrad")(const CaseContext& ctx) {
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
      {"NHWC", {40, 37}, "many rows [40,37]"},
      {"NHWC", {300, 128}, "[300,128], columns summed in parallel"},
      {"NCHW", {4, 16, 30, 30}, "NCHW [4,16,30,30], channels in parallel"},
      {"NCHW", {0, 3, 2}, "zero-size batch [0,3,2]: zero sums"},
      {"NHWC", {3, 0}, "no channels [3,0]"},
  };
  for (const Layout& l : layouts) {
    cases.push_back(Case(ctx.op, l.label)
                        .Input(RandomTensor(t, l.shape, ctx.rng, IsUnsignedType(t) ? 0 : -3, 3))
                        .Attr("T", t)
                        .Attr("data_format", l.format)
                        .WithTolerance(SumTolerance(t)));
  }
  if (IsFloatType(t)) {
    const double inf = std::numeric_limits<double>::infinity();
    cases.push_back(Case(ctx.op, "NaN and inf in one channel each")
                        .Input(MakeTensor(t, {3, 3}, {1, inf, std::nan(""), 2, 1, 3, -0.0, 4, 5}))
                        .Attr("T", t)
                        .Attr("data_format", "NHWC"));
  }
  return cases;
}

struct Pool {
  std::string format, padding;
  Shape nhwc;
  int64_t kh, kw, sh, sw;
  const char* label;
};

const std::vector<Pool>& Pools() {
  static const std::vector<Pool> pools = {
      {"NHWC", "VALID", {2, 7, 6, 3}, 2, 2, 2, 2, "NHWC VALID 2x2 stride 2"},
      {"NHWC", "SAME", {2, 7, 6, 3}, 3, 3, 1, 1, "NHWC SAME 3x3 stride 1 (overlapping windows)"},
      {"NCHW", "SAME", {2, 7, 6, 3}, 3, 3, 2, 2, "NCHW SAME 3x3 stride 2"},
      {"NCHW", "VALID", {1, 5, 7, 2}, 2, 3, 1, 2, "NCHW VALID 2x3 strides 1,2"},
      {"NHWC", "SAME", {1, 7, 6, 2}, 3, 2, 3, 2, "NHWC SAME 3x2 strides 3,2"},
      {"NHWC", "VALID", {2, 3, 3, 1}, 1, 1, 1, 1, "1x1 window"},
      {"NHWC", "SAME", {0, 4, 4, 2}, 2, 2, 2, 2, "zero-size batch"},
      {"NHWC", "SAME", {4, 32, 32, 16}, 3, 3, 2, 2, "[4,32,32,16], in parallel"},
  };
  return pools;
}

// Distinct values in each window, so that which element is the maximum is
// not a matter of tie-breaking (integers and bfloat16 have few values).
Tensor DistinctInput(DataType t, const Shape& shape, std::mt19937& rng) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(i % 61) - 30;
  std::shuffle(v.begin(), v.end(), rng);
  if (IsUnsignedType(t)) {
    for (double& x : v) x += 30;
  }
  return MakeTensor(t, shape, v);
}

PX_CONFORMANCE_CASES("MaxPoolGrad", "MaxPoolGradV2")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsRealType(t)) return cases;
  const bool v2 = ctx.op == "MaxPoolGradV2";
  for (const Pool& p : Pools()) {
    const Image in{p.format, p.nhwc[0], p.nhwc[1], p.nhwc[2], p.nhwc[3]};
    const Dim1 dh = WindowDim(p.padding, in.h, p.kh, p.sh, 1);
    const Dim1 dw = WindowDim(p.padding, in.w, p.kw, p.sw, 1);
    const Image out{p.format, in.n, dh.out, dw.out, in.c};
    Tensor x = DistinctInput(t, in.shape(), ctx.rng);
    Tensor y = MaxPoolOf(t, x, in, out, p.kh, p.kw, p.sh, p.sw, dh.pad, dw.pad);
    Case c(ctx.op, p.label);
    c.Input(x).Input(y).Input(RandomTensor(t, out.shape(), ctx.rng, IsUnsignedType(t) ? 0 : -3, 3));
    if (v2) {
      c.Input(IntTensor(DataType::kInt32, {4}, Spatial(p.format, p.kh, p.kw)))
          .Input(IntTensor(DataType::kInt32, {4}, Spatial(p.format, p.sh, p.sw)));
    } else {
      c.Attr("ksize", Spatial(p.format, p.kh, p.kw)).Attr("strides", Spatial(p.format, p.sh, p.sw));
    }
    c.Attr("T", t).Attr("data_format", p.format).Attr("padding", p.padding).WithTolerance(SumTolerance(t));
    cases.push_back(std::move(c));
  }
  return cases;
}

PX_CONFORMANCE_CASES("AvgPoolGrad")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t)) return cases;
  for (const Pool& p : Pools()) {
    const Image in{p.format, p.nhwc[0], p.nhwc[1], p.nhwc[2], p.nhwc[3]};
    const Dim1 dh = WindowDim(p.padding, in.h, p.kh, p.sh, 1);
    const Dim1 dw = WindowDim(p.padding, in.w, p.kw, p.sw, 1);
    const Image out{p.format, in.n, dh.out, dw.out, in.c};
    const Shape s = in.shape();
    cases.push_back(Case(ctx.op, p.label)
                        .Input(IntTensor(DataType::kInt32, {4}, Ints(s.begin(), s.end())))
                        .Input(RandomTensor(t, out.shape(), ctx.rng))
                        .Attr("T", t)
                        .Attr("data_format", p.format)
                        .Attr("padding", p.padding)
                        .Attr("ksize", Spatial(p.format, p.kh, p.kw))
                        .Attr("strides", Spatial(p.format, p.sh, p.sw))
                        .WithTolerance(SumTolerance(t)));
  }
  const double inf = std::numeric_limits<double>::infinity();
  cases.push_back(Case(ctx.op, "NaN and inf in grad")
                      .Input(IntTensor(DataType::kInt32, {4}, {1, 4, 4, 1}))
                      .Input(MakeTensor(t, {1, 2, 2, 1}, {std::nan(""), inf, -inf, -0.0}))
                      .Attr("T", t)
                      .Attr("padding", "VALID")
                      .Attr("ksize", Ints{1, 2, 2, 1})
                      .Attr("strides", Ints{1, 2, 2, 1}));
  return cases;
}

struct Conv {
  std::string format, padding;
  int64_t n, h, w, kh, kw, sh, sw, dh, dw;
  int64_t out;  // output channels (Conv2D) or channel multiplier (depthwise)
  const char* label;
  int64_t c = 3;     // input channels
  int64_t f_in = 0;  // the filter's input depth: c, or c / groups (Conv2D only)
};

// The backprops of Conv2D and DepthwiseConv2dNative: *BackpropInput(
// input_sizes, filter, out_backprop) and *BackpropFilter(input,
// filter_sizes, out_backprop).
PX_CONFORMANCE_CASES("Conv2DBackpropInput", "Conv2DBackpropFilter",
                     "DepthwiseConv2dNativeBackpropInput",
                     "DepthwiseConv2dNativeBackpropFilter")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  const bool depthwise = ctx.op.rfind("Depthwise", 0) == 0;
  const bool filter_grad = ctx.op.find("Filter") != std::string::npos;
  // Only Conv2DBackpropInput takes int32.
  if (!IsFloatType(t) && !(t == DataType::kInt32 && ctx.op == "Conv2DBackpropInput")) return cases;
  const std::vector<Conv> convs = {
      {"NHWC", "VALID", 2, 6, 7, 3, 3, 1, 1, 1, 1, 4, "NHWC VALID 3x3"},
      {"NHWC", "SAME", 2, 6, 7, 3, 3, 2, 2, 1, 1, 2, "NHWC SAME 3x3 stride 2"},
      {"NCHW", "SAME", 1, 7, 8, 2, 3, 2, 1, 1, 1, 3, "NCHW SAME 2x3 strides 2,1"},
      {"NHWC", "EXPLICIT", 1, 5, 6, 3, 2, 2, 1, 1, 1, 2, "NHWC EXPLICIT padding"},
      {"NCHW", "VALID", 1, 7, 7, 3, 3, 1, 1, 2, 2, 2, "NCHW VALID dilation 2"},
      {"NHWC", "SAME", 1, 8, 6, 2, 2, 3, 1, 2, 1, 1, "NHWC SAME dilations 2,1 strides 3,1"},
      {"NHWC", "VALID", 2, 5, 5, 1, 1, 1, 1, 1, 1, 4, "1x1 filter"},
      {"NHWC", "VALID", 1, 6, 6, 2, 2, 3, 3, 1, 1, 2, "stride 3 skips input pixels"},
      {"NHWC", "SAME", 0, 5, 5, 3, 3, 2, 2, 1, 1, 2, "zero-size batch"},
      // More channels than the cpu plugin's few-channel path takes.
      {"NHWC", "SAME", 2, 6, 7, 3, 3, 1, 1, 1, 1, 6, "8 input channels", 8},
      {"NCHW", "VALID", 1, 7, 6, 3, 3, 2, 1, 1, 1, 4, "NCHW 8 input channels strides 2,1", 8},
      // Grouped convolutions (Keras' Conv2D(groups=...)).
      {"NHWC", "SAME", 2, 6, 6, 3, 3, 1, 1, 1, 1, 6, "grouped: 2 groups of 4 channels", 8, 4},
      {"NHWC", "VALID", 1, 7, 7, 3, 3, 2, 2, 1, 1, 4, "grouped: 4 groups of 2, stride 2", 8, 2},
  };
  for (const Conv& k : convs) {
    const int64_t in_c = k.c;
    const int64_t f_in = k.f_in == 0 ? in_c : k.f_in;
    if (depthwise && f_in != in_c) continue;
    const Ints pads = k.format == "NCHW" ? Ints{0, 0, 0, 0, 1, 2, 2, 0} : Ints{0, 0, 1, 2, 2, 0, 0, 0};
    const Dim1 oh = WindowDim(k.padding, k.h, k.kh, k.sh, k.dh, 1, 2);
    const Dim1 ow = WindowDim(k.padding, k.w, k.kw, k.sw, k.dw, 2, 0);
    const int64_t out_c = depthwise ? in_c * k.out : k.out;
    const Shape in_shape = ImageShape(k.format, k.n, k.h, k.w, in_c);
    const Shape filter_shape = {k.kh, k.kw, f_in, k.out};
    Case c(ctx.op, k.label);
    if (filter_grad) {
      c.Input(RandomTensor(t, in_shape, ctx.rng, -2, 2))
          .Input(IntTensor(DataType::kInt32, {4}, Ints(filter_shape.begin(), filter_shape.end())));
    } else {
      c.Input(IntTensor(DataType::kInt32, {4}, Ints(in_shape.begin(), in_shape.end())))
          .Input(RandomTensor(t, filter_shape, ctx.rng, -2, 2));
    }
    c.Input(RandomTensor(t, ImageShape(k.format, k.n, oh.out, ow.out, out_c), ctx.rng, -2, 2))
        .Attr("T", t)
        .Attr("data_format", k.format)
        .Attr("padding", k.padding)
        .Attr("strides", Spatial(k.format, k.sh, k.sw))
        .Attr("dilations", Spatial(k.format, k.dh, k.dw))
        .WithTolerance(SumTolerance(t));
    if (k.padding == "EXPLICIT") c.Attr("explicit_paddings", pads);
    cases.push_back(std::move(c));
  }
  if (IsFloatType(t)) {
    // Infinities and NaN in the gradient only, against a filter or input
    // without zeros: no product is 0 * inf.
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> g(2 * 2 * (depthwise ? 3 : 2), 1.0);
    g[1] = inf;
    g[4] = std::nan("");
    g[6] = -0.0;
    Case c(ctx.op, "NaN, inf and -0.0 in out_backprop");
    if (filter_grad) {
      c.Input(RandomTensor(t, {1, 3, 3, 3}, ctx.rng, 0.5, 2))
          .Input(IntTensor(DataType::kInt32, {4}, {2, 2, 3, depthwise ? 1 : 2}));
    } else {
      c.Input(IntTensor(DataType::kInt32, {4}, {1, 3, 3, 3}))
          .Input(RandomTensor(t, {2, 2, 3, depthwise ? 1 : 2}, ctx.rng, 0.5, 2));
    }
    c.Input(MakeTensor(t, {1, 2, 2, depthwise ? 3 : 2}, g))
        .Attr("T", t)
        .Attr("padding", "VALID")
        .Attr("strides", Ints{1, 1, 1, 1})
        .WithTolerance(SumTolerance(t));
    cases.push_back(std::move(c));
  }
  return cases;
}

PX_CONFORMANCE_CASES("FusedBatchNormGrad", "FusedBatchNormGradV2",
                     "FusedBatchNormGradV3")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  const bool v1 = ctx.op == "FusedBatchNormGrad";
  const bool v3 = ctx.op == "FusedBatchNormGradV3";
  if (v1 ? t != DataType::kFloat
         : !(t == DataType::kFloat || t == DataType::kHalf || t == DataType::kBFloat16)) {
    return cases;
  }
  const DataType u = DataType::kFloat;
  struct Norm {
    std::string format;
    Shape nhwc;
    float epsilon;
    bool training;
    const char* label;
  };
  const std::vector<Norm> norms = {
      {"NHWC", {2, 4, 5, 3}, 1e-3f, true, "training NHWC [2,4,5,3]"},
      {"NCHW", {2, 4, 5, 3}, 1e-3f, true, "training NCHW [2,3,4,5]"},
      {"NHWC", {2, 4, 5, 3}, 1e-3f, false, "inference NHWC [2,4,5,3]"},
      {"NCHW", {2, 3, 2, 4}, 1e-3f, false, "inference NCHW [2,4,3,2]"},
      {"NHWC", {1, 1, 1, 7}, 1e-3f, false, "inference, one pixel, 7 channels"},
      {"NCHW", {3, 2, 2, 1}, 0.5f, true, "training, one channel, epsilon 0.5"},
      {"NHWC", {4, 8, 8, 2}, 1e-4f, true, "training, 256 values per channel"},
      {"NHWC", {4, 32, 32, 9}, 1e-3f, true, "training [4,32,32,9], in parallel"},
      {"NCHW", {4, 32, 32, 9}, 1e-3f, false, "inference NCHW [4,9,32,32], in parallel"},
      {"NHWC", {0, 2, 2, 3}, 1e-3f, false, "zero-size batch"},
  };
  for (const Norm& k : norms) {
    const int64_t c = k.nhwc[3];
    const Shape x_shape = ImageShape(k.format, k.nhwc[0], k.nhwc[1], k.nhwc[2], c);
    Case bn(ctx.op, k.label);
    bn.Input(RandomTensor(t, x_shape, ctx.rng))  // y_backprop
        .Input(RandomTensor(t, x_shape, ctx.rng))  // x
        .Input(RandomTensor(u, {c}, ctx.rng, 0.5, 2))   // scale
        .Input(RandomTensor(u, {c}, ctx.rng, -1, 1))    // mean
        .Input(RandomTensor(u, {c}, ctx.rng, 0.1, 3));  // variance
    if (v3) bn.Input(RandomTensor(u, {0}, ctx.rng));    // reserve_space_3
    bn.Attr("T", t)
        .Attr("epsilon", k.epsilon)
        .Attr("data_format", k.format)
        .Attr("is_training", k.training)
        .WithTolerance(SumTolerance(t));
    if (!v1) bn.Attr("U", u);
    cases.push_back(std::move(bn));
  }
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

// Per-op tests of the convolution gradients: Conv2DBackpropInput,
// Conv2DBackpropFilter, DepthwiseConv2dNativeBackpropInput and
// DepthwiseConv2dNativeBackpropFilter. The cpu kernels against the reference
// kernels, and both against finite differences of the forward ops (float64),
// exact values and error cases.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "op_test_util.h"

namespace plexus::testing {
namespace {

using Ints = std::vector<int64_t>;

// A 4-D attribute list for the spatial values (h, w) in `format`.
Ints Spatial(const std::string& format, int64_t h, int64_t w) {
  return format == "NCHW" ? Ints{1, 1, h, w} : Ints{1, h, w, 1};
}
Shape ImageShape(const std::string& format, int64_t n, int64_t h, int64_t w, int64_t c) {
  return format == "NCHW" ? Shape{n, c, h, w} : Shape{n, h, w, c};
}

// The forward window of one test case.
struct Geo {
  int64_t n, h, w, c;         // input
  int64_t kh, kw, f_out;      // filter [kh, kw, c, f_out] (depthwise: f_out is the multiplier)
  int64_t sh, sw, dh, dw;
  std::string padding;        // SAME, VALID, EXPLICIT
  Ints pads = {0, 0, 0, 0};   // EXPLICIT: top, bottom, left, right
  std::string format = "NHWC";
  int64_t groups = 1;         // Conv2D only: the filter is [kh, kw, c / groups, f_out]
};

// The forward output size of one spatial dimension.
int64_t OutSize(const Geo& g, int64_t in, int64_t k, int64_t s, int64_t d, int64_t before,
                int64_t after) {
  const int64_t effective = (k - 1) * d + 1;
  if (g.padding == "SAME") return (in + s - 1) / s;
  const int64_t padded = g.padding == "EXPLICIT" ? in + before + after : in;
  return (padded - effective + s) / s;
}

Shape InputShape(const Geo& g) { return ImageShape(g.format, g.n, g.h, g.w, g.c); }
Shape FilterShape(const Geo& g) { return Shape{g.kh, g.kw, g.c / g.groups, g.f_out}; }
Shape OutputShape(const Geo& g, bool depthwise) {
  return ImageShape(g.format, g.n, OutSize(g, g.h, g.kh, g.sh, g.dh, g.pads[0], g.pads[1]),
                    OutSize(g, g.w, g.kw, g.sw, g.dw, g.pads[2], g.pads[3]),
                    depthwise ? g.c * g.f_out : g.f_out);
}

Tensor Sizes(const Shape& s) {
  return conformance::IntTensor(DataType::kInt32, {4}, Ints(s.begin(), s.end()));
}

void SetWindow(OpCase& c, const Geo& g, DataType t) {
  c.Attr("T", t).Attr("data_format", g.format).Attr("padding", g.padding)
      .Attr("strides", Spatial(g.format, g.sh, g.sw))
      .Attr("dilations", Spatial(g.format, g.dh, g.dw));
  if (g.padding == "EXPLICIT") {
    const Ints& p = g.pads;
    c.Attr("explicit_paddings", g.format == "NCHW" ? Ints{0, 0, 0, 0, p[0], p[1], p[2], p[3]}
                                                   : Ints{0, 0, p[0], p[1], p[2], p[3], 0, 0});
  }
}

// The forward op on (x, f).
OpCase Forward(bool depthwise, const Geo& g, const Tensor& x, const Tensor& f) {
  OpCase c(depthwise ? "DepthwiseConv2dNative" : "Conv2D");
  c.Input(x).Input(f);
  SetWindow(c, g, x.dtype());
  return c;
}
// The gradient with respect to the input: (input_sizes, filter, dy).
OpCase InputGrad(bool depthwise, const Geo& g, const Shape& sizes, const Tensor& f,
                 const Tensor& dy) {
  OpCase c(depthwise ? "DepthwiseConv2dNativeBackpropInput" : "Conv2DBackpropInput");
  c.Input(Sizes(sizes)).Input(f).Input(dy);
  SetWindow(c, g, f.dtype());
  return c;
}
// The gradient with respect to the filter: (input, filter_sizes, dy).
OpCase FilterGrad(bool depthwise, const Geo& g, const Tensor& x, const Shape& sizes,
                  const Tensor& dy) {
  OpCase c(depthwise ? "DepthwiseConv2dNativeBackpropFilter" : "Conv2DBackpropFilter");
  c.Input(x).Input(Sizes(sizes)).Input(dy);
  SetWindow(c, g, x.dtype());
  return c;
}

// Sums of up to a few hundred products of values in [-2, 2]: float results
// may differ from the double reference by 1e-4 or so where they cancel; the
// 16-bit floats are rounded once from a float sum (one unit in the last
// place at most, within their defaults).
Tolerance GradTolerance(DataType t) {
  Tolerance tol = DefaultTolerance(t);
  if (t == DataType::kFloat) tol.atol = 5e-4;
  return tol;
}

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.num_elements()));
  for (int64_t i = 0; i < t.num_elements(); ++i) v[i] = ElementAsDouble(t, i);
  return v;
}

// Runs `c` on `device` and returns output 0's values (and shape).
std::vector<double> RunOn(const OpCase& c, const std::string& device, Shape* shape = nullptr) {
  auto r = c.Run(device);
  EXPECT_TRUE(r.ok()) << c.Describe() << " on " << device << ": " << r.status();
  if (!r.ok()) return {};
  if (shape) *shape = (*r)[0].shape();
  return Values((*r)[0]);
}

void Check(const OpCase& c, Tolerance tol) {
  auto r = c.Run("REF:0");
  ASSERT_TRUE(r.ok()) << c.Describe() << ": " << r.status();
  ExpectCpuMatchesReference(c, tol);
}

// Both gradients of one geometry, cpu against the reference.
void CheckBoth(bool depthwise, const Geo& g, DataType t, std::mt19937& rng) {
  const Tensor x = RandomTensor(t, InputShape(g), rng, -2, 2);
  const Tensor f = RandomTensor(t, FilterShape(g), rng, -2, 2);
  const Tensor dy = RandomTensor(t, OutputShape(g, depthwise), rng, -2, 2);
  Check(InputGrad(depthwise, g, InputShape(g), f, dy), GradTolerance(t));
  Check(FilterGrad(depthwise, g, x, FilterShape(g), dy), GradTolerance(t));
}

// Window cases: h, w, kh, kw, sh, sw, dh, dw.
struct Win {
  int64_t h, w, kh, kw, sh, sw, dh, dw;
};
const std::vector<Win>& Windows() {
  static const std::vector<Win> cases = {
      {6, 7, 3, 3, 1, 1, 1, 1}, {6, 7, 3, 3, 2, 2, 1, 1}, {7, 6, 3, 3, 2, 1, 1, 1},
      {5, 5, 1, 1, 1, 1, 1, 1}, {6, 6, 1, 1, 2, 2, 1, 1}, {7, 8, 2, 3, 1, 2, 1, 1},
      {7, 7, 3, 3, 1, 1, 2, 2}, {8, 6, 2, 2, 3, 1, 2, 1}, {3, 3, 3, 3, 1, 1, 1, 1},
      {5, 9, 5, 4, 3, 2, 1, 1},
  };
  return cases;
}

std::vector<DataType> InputGradTypes(bool depthwise) {
  std::vector<DataType> types = FloatTypes();
  if (!depthwise) types.push_back(DataType::kInt32);
  return types;
}

void MatchesReference(bool depthwise, int seed) {
  std::mt19937 rng(seed);
  for (DataType t : FloatTypes()) {
    for (const std::string format : {"NHWC", "NCHW"}) {
      for (const std::string padding : {"VALID", "SAME", "EXPLICIT"}) {
        for (const Win& k : Windows()) {
          for (int64_t batch : {1, 3}) {
            Geo g{batch, k.h, k.w, 3, k.kh, k.kw, depthwise ? 2 : 4, k.sh, k.sw, k.dh, k.dw,
                  padding, {1, 2, 2, 0}, format};
            CheckBoth(depthwise, g, t, rng);
          }
        }
      }
    }
  }
}

TEST(Conv2DBackprop, MatchesReference) { MatchesReference(false, 1); }

// Grouped convolutions (a filter of input depth c / groups): float through
// oneDNN's grouped primitives, the other types a group at a time.
TEST(Conv2DBackprop, GroupedMatchesReference) {
  std::mt19937 rng(11);
  for (DataType t : FloatTypes()) {
    for (const std::string format : {"NHWC", "NCHW"}) {
      for (const std::string padding : {"VALID", "SAME", "EXPLICIT"}) {
        for (const Win& k : Windows()) {
          // 2 groups of 3 -> 2 channels, 3 groups of 2 -> 1 channel.
          Geo two{2, k.h, k.w, 6, k.kh, k.kw, 4, k.sh, k.sw, k.dh, k.dw, padding, {1, 2, 2, 0},
                  format, 2};
          CheckBoth(false, two, t, rng);
          Geo three{1, k.h, k.w, 6, k.kh, k.kw, 3, k.sh, k.sw, k.dh, k.dw, padding,
                    {1, 2, 2, 0}, format, 3};
          CheckBoth(false, three, t, rng);
        }
      }
    }
  }
  // Depthwise as a grouped Conv2D (one input channel per group), and the
  // gather-sized input of 4 channels.
  CheckBoth(false, Geo{2, 8, 8, 4, 3, 3, 8, 1, 1, 1, 1, "SAME", {0, 0, 0, 0}, "NHWC", 4},
            DataType::kFloat, rng);
  CheckBoth(false, Geo{2, 8, 8, 16, 3, 3, 32, 2, 2, 1, 1, "SAME", {0, 0, 0, 0}, "NHWC", 4},
            DataType::kFloat, rng);
  CheckBoth(false, Geo{2, 8, 8, 16, 3, 3, 32, 2, 2, 1, 1, "SAME", {0, 0, 0, 0}, "NHWC", 4},
            DataType::kDouble, rng);
}
TEST(DepthwiseConv2dNativeBackprop, MatchesReference) { MatchesReference(true, 2); }

// Conv2DBackpropInput also takes int32 (as TensorFlow's): exact sums.
TEST(Conv2DBackpropInput, Int32) {
  std::mt19937 rng(3);
  for (const std::string format : {"NHWC", "NCHW"}) {
    for (const std::string padding : {"VALID", "SAME"}) {
      for (const Win& k : Windows()) {
        Geo g{2, k.h, k.w, 3, k.kh, k.kw, 4, k.sh, k.sw, k.dh, k.dw, padding, {0, 0, 0, 0},
              format};
        const Tensor f = RandomTensor(DataType::kInt32, FilterShape(g), rng, -5, 5);
        const Tensor dy = RandomTensor(DataType::kInt32, OutputShape(g, false), rng, -5, 5);
        Check(InputGrad(false, g, InputShape(g), f, dy), DefaultTolerance(DataType::kInt32));
      }
    }
  }
}

// Channel counts and multipliers beyond the small cases: one input channel
// (a first layer), wide outputs, a depthwise multiplier of 3, 16+ channels
// (the vector paths), and the channel counts of a small CNN's layers.
TEST(ConvGrad, ChannelVariety) {
  std::mt19937 rng(4);
  for (DataType t : {DataType::kFloat, DataType::kDouble, DataType::kHalf}) {
    for (const std::string padding : {"SAME", "VALID"}) {
      for (int64_t stride : {1, 2}) {
        CheckBoth(false, Geo{2, 8, 8, 1, 3, 3, 16, stride, stride, 1, 1, padding}, t, rng);
        CheckBoth(false, Geo{2, 8, 8, 16, 3, 3, 32, stride, stride, 1, 1, padding}, t, rng);
        CheckBoth(false, Geo{2, 5, 5, 17, 1, 1, 5, stride, stride, 1, 1, padding}, t, rng);
        CheckBoth(true, Geo{2, 8, 8, 16, 3, 3, 1, stride, stride, 1, 1, padding}, t, rng);
        CheckBoth(true, Geo{2, 7, 9, 19, 3, 3, 3, stride, stride, 1, 1, padding}, t, rng);
      }
    }
  }
}

// Zero-size batch: a zero-size input gradient, an all-zero filter gradient.
// A zero-size filter (no output channels): an all-zero input gradient.
TEST(ConvGrad, ZeroSize) {
  std::mt19937 rng(5);
  for (bool depthwise : {false, true}) {
    for (DataType t : FloatTypes()) {
      Geo g{0, 5, 5, 3, 3, 3, 2, 2, 2, 1, 1, "SAME"};
      const Tensor x = RandomTensor(t, InputShape(g), rng);
      const Tensor f = RandomTensor(t, FilterShape(g), rng);
      const Tensor dy = RandomTensor(t, OutputShape(g, depthwise), rng);
      Shape shape;
      EXPECT_TRUE(RunOn(InputGrad(depthwise, g, InputShape(g), f, dy), "CPU:0", &shape).empty());
      EXPECT_EQ(shape, (Shape{0, 5, 5, 3}));
      EXPECT_EQ(RunOn(FilterGrad(depthwise, g, x, FilterShape(g), dy), "CPU:0", &shape),
                std::vector<double>(3 * 3 * 3 * 2, 0.0));
      EXPECT_EQ(shape, (Shape{3, 3, 3, 2}));
      Check(FilterGrad(depthwise, g, x, FilterShape(g), dy), DefaultTolerance(t));
      Geo none{2, 4, 4, 3, 3, 3, 0, 1, 1, 1, 1, "SAME"};
      const Tensor f0 = RandomTensor(t, FilterShape(none), rng);
      const Tensor dy0 = RandomTensor(t, OutputShape(none, depthwise), rng);
      EXPECT_EQ(RunOn(InputGrad(depthwise, none, InputShape(none), f0, dy0), "CPU:0", &shape),
                std::vector<double>(2 * 4 * 4 * 3, 0.0));
      Check(InputGrad(depthwise, none, InputShape(none), f0, dy0), DefaultTolerance(t));
    }
  }
}

// A small CNN's training step shapes (batch 16 here, to keep the reference
// quick), larger than one im2col block for the first layer.
TEST(ConvGrad, TrainingShapes) {
  std::mt19937 rng(6);
  // Sums over up to 16*28*28 products: float differs from the double
  // reference by ~1e-3 relative at worst.
  const Tolerance tol{2e-3, 1e-4};
  for (const std::string padding : {"SAME", "VALID"}) {
    CheckBoth(false, Geo{16, 28, 28, 1, 3, 3, 16, 1, 1, 1, 1, padding}, DataType::kFloat, rng);
    CheckBoth(false, Geo{16, 14, 14, 16, 3, 3, 32, 2, 2, 1, 1, padding}, DataType::kFloat, rng);
    const Geo g{16, 28, 28, 1, 3, 3, 16, 1, 1, 1, 1, padding};
    const Tensor x = RandomTensor(DataType::kFloat, InputShape(g), rng, -1, 1);
    const Tensor dy = RandomTensor(DataType::kFloat, OutputShape(g, false), rng, -1, 1);
    Check(FilterGrad(false, g, x, FilterShape(g), dy), tol);
  }
  // More patch elements than one block (2^22) for the GEMM paths: double.
  const Geo big{64, 28, 28, 8, 3, 3, 4, 1, 1, 1, 1, "SAME"};
  const Tensor x = RandomTensor(DataType::kDouble, InputShape(big), rng, -1, 1);
  const Tensor f = RandomTensor(DataType::kDouble, FilterShape(big), rng, -1, 1);
  const Tensor dy = RandomTensor(DataType::kDouble, OutputShape(big, false), rng, -1, 1);
  Check(FilterGrad(false, big, x, FilterShape(big), dy), DefaultTolerance(DataType::kDouble));
  Check(InputGrad(false, big, InputShape(big), f, dy), DefaultTolerance(DataType::kDouble));
}

// sum(conv(x, w) * g) is linear in x and in w: its central difference is
// exact up to rounding, so each gradient element must match it to 1e-6
// relative (float64, on both devices).
void CheckFiniteDifferences(bool depthwise, const Geo& g, std::mt19937& rng) {
  const DataType t = DataType::kDouble;
  const Tensor x = RandomTensor(t, InputShape(g), rng, -1, 1);
  const Tensor f = RandomTensor(t, FilterShape(g), rng, -1, 1);
  const Shape out_shape = OutputShape(g, depthwise);
  const Tensor dy = RandomTensor(t, out_shape, rng, -1, 1);
  const std::vector<double> dyv = Values(dy);
  auto loss = [&](const Tensor& xx, const Tensor& ff) {
    Shape shape;
    const std::vector<double> y = RunOn(Forward(depthwise, g, xx, ff), "CPU:0", &shape);
    EXPECT_EQ(shape, out_shape);
    double s = 0;
    for (size_t i = 0; i < y.size() && i < dyv.size(); ++i) s += y[i] * dyv[i];
    return s;
  };
  const double h = 1e-3;
  auto perturbed = [&](const Tensor& base, int64_t i, double delta) {
    std::vector<double> v = Values(base);
    v[i] += delta;
    return MakeTensor(t, base.shape(), v);
  };
  for (const std::string device : {"CPU:0", "REF:0"}) {
    const std::vector<double> dx = RunOn(InputGrad(depthwise, g, x.shape(), f, dy), device);
    const std::vector<double> df = RunOn(FilterGrad(depthwise, g, x, f.shape(), dy), device);
    ASSERT_EQ(dx.size(), static_cast<size_t>(x.num_elements()));
    ASSERT_EQ(df.size(), static_cast<size_t>(f.num_elements()));
    std::uniform_int_distribution<int64_t> xi(0, x.num_elements() - 1), fi(0, f.num_elements() - 1);
    for (int k = 0; k < 4; ++k) {
      // The first and last elements (borders) and random ones.
      const int64_t i = k == 0 ? 0 : k == 1 ? x.num_elements() - 1 : xi(rng);
      const double fd = (loss(perturbed(x, i, h), f) - loss(perturbed(x, i, -h), f)) / (2 * h);
      EXPECT_NEAR(dx[i], fd, 1e-6 * std::max(1.0, std::fabs(fd)))
          << device << " d/dx[" << i << "] " << InputGrad(depthwise, g, x.shape(), f, dy).Describe();
      const int64_t j = k == 0 ? 0 : k == 1 ? f.num_elements() - 1 : fi(rng);
      const double fdw = (loss(x, perturbed(f, j, h)) - loss(x, perturbed(f, j, -h))) / (2 * h);
      EXPECT_NEAR(df[j], fdw, 1e-6 * std::max(1.0, std::fabs(fdw)))
          << device << " d/dw[" << j << "] " << FilterGrad(depthwise, g, x, f.shape(), dy).Describe();
    }
  }
}

TEST(ConvGrad, FiniteDifferences) {
  std::mt19937 rng(7);
  for (bool depthwise : {false, true}) {
    for (const std::string format : {"NHWC", "NCHW"}) {
      const int64_t m = depthwise ? 2 : 3;
      CheckFiniteDifferences(depthwise, Geo{2, 5, 6, 2, 3, 3, m, 1, 1, 1, 1, "SAME", {0, 0, 0, 0}, format}, rng);
      CheckFiniteDifferences(depthwise, Geo{2, 7, 6, 2, 3, 2, m, 2, 2, 1, 1, "VALID", {0, 0, 0, 0}, format}, rng);
      CheckFiniteDifferences(depthwise, Geo{1, 6, 6, 3, 2, 3, m, 2, 1, 1, 1, "SAME", {0, 0, 0, 0}, format}, rng);
      CheckFiniteDifferences(depthwise, Geo{2, 7, 7, 2, 3, 3, m, 1, 2, 2, 1, "EXPLICIT", {1, 2, 0, 1}, format}, rng);
      CheckFiniteDifferences(depthwise, Geo{1, 6, 7, 2, 3, 3, m, 1, 1, 2, 2, "VALID", {0, 0, 0, 0}, format}, rng);
    }
  }
  // Grouped Conv2D: 2 groups of 2 input channels -> 2 outputs each.
  for (const std::string format : {"NHWC", "NCHW"}) {
    CheckFiniteDifferences(false, Geo{2, 5, 6, 4, 3, 3, 4, 1, 1, 1, 1, "SAME", {0, 0, 0, 0}, format, 2}, rng);
    CheckFiniteDifferences(false, Geo{1, 7, 7, 6, 3, 2, 3, 2, 1, 2, 1, "EXPLICIT", {1, 2, 0, 1}, format, 3}, rng);
  }
}

TEST(ConvGrad, ExactValues) {
  // 3x3 input, 2x2 filter of ones, VALID, dy of ones: each input element's
  // gradient is the number of windows covering it.
  const Geo g{1, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, "VALID"};
  const Tensor ones_f = MakeTensor(DataType::kFloat, {2, 2, 1, 1}, {1, 1, 1, 1});
  const Tensor ones_dy = MakeTensor(DataType::kFloat, {1, 2, 2, 1}, {1, 1, 1, 1});
  const Tensor x = MakeTensor(DataType::kFloat, {1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  for (bool depthwise : {false, true}) {
    Shape shape;
    EXPECT_EQ(RunOn(InputGrad(depthwise, g, {1, 3, 3, 1}, ones_f, ones_dy), "CPU:0", &shape),
              (std::vector<double>{1, 2, 1, 2, 4, 2, 1, 2, 1}));
    EXPECT_EQ(shape, (Shape{1, 3, 3, 1}));
    // The filter gradient with dy of ones: each tap sums the input it sees.
    EXPECT_EQ(RunOn(FilterGrad(depthwise, g, x, {2, 2, 1, 1}, ones_dy), "CPU:0", &shape),
              (std::vector<double>{12, 16, 24, 28}));
    EXPECT_EQ(shape, (Shape{2, 2, 1, 1}));
  }
  // Stride 2, SAME on 3x3 (output 2x2, padding one row/column after): dy
  // [1, 2; 3, 4] with a 1x1 filter of 10 lands on the even positions.
  const Geo s2{1, 3, 3, 1, 1, 1, 1, 2, 2, 1, 1, "SAME"};
  const Tensor f10 = MakeTensor(DataType::kFloat, {1, 1, 1, 1}, {10});
  const Tensor dy = MakeTensor(DataType::kFloat, {1, 2, 2, 1}, {1, 2, 3, 4});
  EXPECT_EQ(RunOn(InputGrad(false, s2, {1, 3, 3, 1}, f10, dy), "CPU:0"),
            (std::vector<double>{10, 0, 20, 0, 0, 0, 30, 0, 40}));
  EXPECT_EQ(RunOn(FilterGrad(false, s2, x, {1, 1, 1, 1}, dy), "CPU:0"),
            (std::vector<double>{1 * 1 + 2 * 3 + 3 * 7 + 4 * 9}));
}

TEST(ConvGrad, Errors) {
  std::mt19937 rng(8);
  const Geo g{1, 5, 5, 2, 3, 3, 2, 1, 1, 1, 1, "SAME"};
  for (bool depthwise : {false, true}) {
    const Tensor x = RandomTensor(DataType::kFloat, InputShape(g), rng);
    const Tensor f = RandomTensor(DataType::kFloat, FilterShape(g), rng);
    const Tensor dy = RandomTensor(DataType::kFloat, OutputShape(g, depthwise), rng);
    // input_sizes / filter_sizes of 3 elements.
    OpCase short_sizes(depthwise ? "DepthwiseConv2dNativeBackpropInput" : "Conv2DBackpropInput");
    short_sizes.Input(conformance::IntTensor(DataType::kInt32, {3}, {1, 5, 5})).Input(f).Input(dy);
    SetWindow(short_sizes, g, DataType::kFloat);
    ExpectBothFail(short_sizes, absl::StatusCode::kInvalidArgument,
                   "input_sizes must be a vector of 4 elements");
    OpCase short_filter(depthwise ? "DepthwiseConv2dNativeBackpropFilter" : "Conv2DBackpropFilter");
    short_filter.Input(x).Input(conformance::IntTensor(DataType::kInt32, {3}, {3, 3, 2})).Input(dy);
    SetWindow(short_filter, g, DataType::kFloat);
    ExpectBothFail(short_filter, absl::StatusCode::kInvalidArgument,
                   "filter_sizes must be a vector of 4 elements");
    // out_backprop of the wrong spatial size (as if VALID) and channels.
    const Tensor dy_valid = RandomTensor(DataType::kFloat, {1, 3, 3, depthwise ? 4 : 2}, rng);
    ExpectBothFail(InputGrad(depthwise, g, InputShape(g), f, dy_valid),
                   absl::StatusCode::kInvalidArgument, "out_backprop must have shape [1,5,5,");
    ExpectBothFail(FilterGrad(depthwise, g, x, FilterShape(g), dy_valid),
                   absl::StatusCode::kInvalidArgument, "out_backprop must have shape [1,5,5,");
    const Tensor dy_channels = RandomTensor(DataType::kFloat, {1, 5, 5, 7}, rng);
    ExpectBothFail(InputGrad(depthwise, g, InputShape(g), f, dy_channels),
                   absl::StatusCode::kInvalidArgument, "out_backprop must have shape");
    // Input depth not matching the filter.
    ExpectBothFail(InputGrad(depthwise, g, {1, 5, 5, 3}, f, dy), absl::StatusCode::kInvalidArgument,
                   "input depth 3");
    // Negative sizes.
    ExpectBothFail(InputGrad(depthwise, g, {1, -5, 5, 2}, f, dy),
                   absl::StatusCode::kInvalidArgument, "input_sizes must be non-negative");
    // A window larger than the input with VALID padding.
    Geo valid = g;
    valid.padding = "VALID";
    const Tensor big_f = RandomTensor(DataType::kFloat, {7, 7, 2, 2}, rng);
    ExpectBothFail(InputGrad(depthwise, valid, InputShape(g), big_f, dy),
                   absl::StatusCode::kInvalidArgument, "negative");
    // Bad attributes.
    OpCase stride = InputGrad(depthwise, g, InputShape(g), f, dy);
    stride.Attr("strides", Ints{2, 1, 1, 1});
    ExpectBothFail(stride, absl::StatusCode::kInvalidArgument, "strides");
    OpCase padding = InputGrad(depthwise, g, InputShape(g), f, dy);
    padding.Attr("padding", "FULL");
    ExpectBothFail(padding, absl::StatusCode::kInvalidArgument, "padding");
  }
}

}  // namespace
}  // namespace plexus::testing

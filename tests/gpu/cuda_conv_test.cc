// The CUDA plugin's convolutions through cuDNN on CUDA:0 against the cpu
// plugin: Conv2D, DepthwiseConv2dNative, _FusedConv2D and
// _FusedDepthwiseConv2dNative in NHWC and NCHW, strides 1 and 2, dilation 2,
// SAME (odd and even sizes, so the padding is asymmetric), VALID and
// EXPLICIT padding, 1x1, 3x3, 2x2 and 1xK (1-D) filters, channel multipliers
// 1 and 2, batch 1 and more, every fused_ops variant, float, double, half
// and bfloat16; zero-size shapes; exact values on small integer cases
// (grouped Conv2D against a plain loop
// here); and the refusals. TF32 is off (PX_CUDA_ALLOW_TF32 is cleared before
// the first convolution). Skipped, with the reason, where the plugin reports
// no CUDA device; label gpu.
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "attr_value.pb.h"
#include "cases.h"
#include "gtest/gtest.h"
#include "plexus/plexus.h"
#include "gpu/cuda_test_util.h"

namespace plexus {
namespace {

using conformance::DefaultTolerance;
using conformance::ElementAsDouble;
using conformance::MakeTensor;
using conformance::RandomTensor;
using conformance::Tolerance;

using cuda_test::AttrMap;
using cuda_test::ExpectCudaMatchesCpu;
using cuda_test::kFloatTypes;
using cuda_test::RunOp;
using cuda_test::SetAttrs;
using cuda_test::SetType;
using cuda_test::Values;

// Float results must match the cpu plugin's FP32 arithmetic: no TF32 here,
// whatever the environment says (the plugin reads it once, at the first
// convolution, after this).
const bool kTf32Off = [] {
  unsetenv("PX_CUDA_ALLOW_TF32");
  return true;
}();

// One convolution's window: filter size, strides, dilations, padding
// (explicit: top, bottom, left, right).
struct Geometry {
  int64_t n, h, w, c;  // input, in NHWC terms
  int64_t kh, kw;
  int64_t sh, sw, dh, dw;
  std::string padding;
  std::vector<int64_t> pads = {};  // EXPLICIT only
  const char* what = "";
};

const std::vector<Geometry> kGeometries = {
    {2, 7, 8, 3, 3, 3, 1, 1, 1, 1, "SAME", {}, "3x3 SAME"},
    // h 7, stride 2: 1 row before and after; w 8: none before, 1 after.
    {2, 7, 8, 3, 3, 3, 2, 2, 1, 1, "SAME", {}, "3x3 SAME stride 2 (asymmetric)"},
    {1, 9, 9, 5, 3, 3, 2, 2, 1, 1, "VALID", {}, "3x3 VALID stride 2"},
    {2, 10, 9, 4, 3, 3, 1, 1, 2, 2, "SAME", {}, "3x3 SAME dilation 2"},
    {1, 11, 10, 3, 3, 2, 2, 1, 2, 2, "VALID", {}, "3x2 VALID dilation 2 stride 2x1"},
    {3, 5, 5, 16, 1, 1, 1, 1, 1, 1, "VALID", {}, "1x1"},
    {1, 6, 7, 8, 1, 1, 2, 2, 1, 1, "SAME", {}, "1x1 SAME stride 2"},
    {2, 6, 6, 3, 2, 2, 1, 1, 1, 1, "SAME", {}, "2x2 SAME (padding after only)"},
    // 1-D convolutions as in the hey_snips graph: [n, 1, time, features].
    {2, 1, 49, 10, 1, 5, 1, 1, 1, 1, "SAME", {}, "1x5 SAME (1-D)"},
    {1, 1, 40, 6, 1, 3, 1, 2, 1, 1, "VALID", {}, "1x3 VALID stride 2 (1-D)"},
    {1, 1, 30, 4, 1, 3, 1, 1, 1, 2, "SAME", {}, "1x3 SAME dilation 2 (1-D)"},
    {1, 6, 5, 3, 2, 3, 1, 1, 1, 1, "EXPLICIT", {1, 2, 0, 3}, "2x3 EXPLICIT asymmetric"},
    {2, 8, 7, 3, 3, 3, 2, 2, 2, 1, "EXPLICIT", {1, 1, 2, 2}, "3x3 EXPLICIT symmetric"},
    {1, 4, 4, 2, 5, 5, 1, 1, 1, 1, "SAME", {}, "5x5 SAME larger than the input"},
};

// [n, h, w, c] in the layout's order.
Shape InputShape(const Geometry& g, bool nchw) {
  return nchw ? Shape{g.n, g.c, g.h, g.w} : Shape{g.n, g.h, g.w, g.c};
}

void SetConvAttrs(AttrMap& a, DataType t, const Geometry& g, bool nchw) {
  SetType(a, "T", t);
  const std::vector<int64_t> strides =
      nchw ? std::vector<int64_t>{1, 1, g.sh, g.sw} : std::vector<int64_t>{1, g.sh, g.sw, 1};
  const std::vector<int64_t> dilations =
      nchw ? std::vector<int64_t>{1, 1, g.dh, g.dw} : std::vector<int64_t>{1, g.dh, g.dw, 1};
  for (int64_t v : strides) a["strides"].mutable_list()->add_i(v);
  for (int64_t v : dilations) a["dilations"].mutable_list()->add_i(v);
  a["padding"].set_s(g.padding);
  a["data_format"].set_s(nchw ? "NCHW" : "NHWC");
  if (g.padding == "EXPLICIT") {
    // Pairs (before, after) per dimension in the layout's order.
    const std::vector<int64_t> hw = {g.pads[0], g.pads[1], g.pads[2], g.pads[3]};
    const std::vector<int64_t> pads = nchw ? std::vector<int64_t>{0, 0, 0, 0, hw[0], hw[1], hw[2], hw[3]}
                                           : std::vector<int64_t>{0, 0, hw[0], hw[1], hw[2], hw[3], 0, 0};
    for (int64_t v : pads) a["explicit_paddings"].mutable_list()->add_i(v);
  }
}

void SetFused(AttrMap& a, const std::vector<std::string>& fused_ops) {
  for (const std::string& s : fused_ops) a["fused_ops"].mutable_list()->add_s(s);
  a["num_args"].set_i(fused_ops.front() == "BiasAdd" ? 1 : 4);
  a["epsilon"].set_f(0.001f);
  a["leakyrelu_alpha"].set_f(0.3f);
}

// Tolerances growing with the depth of each output's sum (k = kh * kw *
// input channels per output), inputs in [-1, 1]: float with FMA only sums in
// another order (a few ulps of a sum of k terms of size about sqrt(k));
// half and bfloat16 accumulate in float on both sides, so the difference is
// mostly one rounding of the output (2^-11 and 2^-8 relative) plus the
// rounding of the epilogue's input.
Tolerance ConvTolerance(DataType t, int64_t k) {
  const double scale = 1.0 + std::sqrt(static_cast<double>(k));
  switch (t) {
    case DataType::kFloat: return {2e-6 * scale, 1e-5};
    case DataType::kDouble: return {1e-12 * scale, 1e-12};
    case DataType::kHalf: return {2e-3 * scale, 2e-3};
    case DataType::kBFloat16: return {1.6e-2 * scale, 1.6e-2};
    default: return {0, 0};
  }
}

TEST(CudaConv, Conv2DEveryDtypeLayoutGeometry) {
  PX_SKIP_WITHOUT_CUDA();
  ASSERT_TRUE(kTf32Off);
  std::mt19937 rng(1);
  for (DataType t : kFloatTypes) {
    for (bool nchw : {false, true}) {
      for (const Geometry& g : kGeometries) {
        const int64_t out_c = g.c == 16 ? 8 : 5;
        SCOPED_TRACE(absl::StrCat(g.what, nchw ? " NCHW " : " NHWC ", DataTypeName(t)));
        const Tensor x = RandomTensor(t, InputShape(g, nchw), rng, -1, 1);
        const Tensor f = RandomTensor(t, {g.kh, g.kw, g.c, out_c}, rng, -1, 1);
        ExpectCudaMatchesCpu("Conv2D", {x, f}, [&](AttrMap& a) { SetConvAttrs(a, t, g, nchw); },
                             ConvTolerance(t, g.kh * g.kw * g.c));
      }
    }
  }
}

TEST(CudaConv, Conv2DLargerChannels) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(2);
  // Sizes where cuDNN picks tensor-core kernels for the 16-bit types.
  const Geometry g{4, 17, 16, 32, 3, 3, 1, 1, 1, 1, "SAME", {}, "3x3 x 32 -> 64"};
  for (DataType t : kFloatTypes) {
    for (bool nchw : {false, true}) {
      SCOPED_TRACE(absl::StrCat(nchw ? "NCHW " : "NHWC ", DataTypeName(t)));
      ExpectCudaMatchesCpu("Conv2D",
                           {RandomTensor(t, InputShape(g, nchw), rng, -1, 1),
                            RandomTensor(t, {3, 3, 32, 64}, rng, -1, 1)},
                           [&](AttrMap& a) { SetConvAttrs(a, t, g, nchw); },
                           ConvTolerance(t, 3 * 3 * 32));
    }
  }
}

TEST(CudaConv, DepthwiseEveryDtypeLayoutGeometryMultiplier) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(3);
  for (DataType t : kFloatTypes) {
    for (bool nchw : {false, true}) {
      for (const Geometry& g : kGeometries) {
        for (int64_t m : {1, 2}) {
          SCOPED_TRACE(absl::StrCat(g.what, nchw ? " NCHW " : " NHWC ", DataTypeName(t),
                                    " multiplier ", m));
          const Tensor x = RandomTensor(t, InputShape(g, nchw), rng, -1, 1);
          const Tensor f = RandomTensor(t, {g.kh, g.kw, g.c, m}, rng, -1, 1);
          const Tensor y = ExpectCudaMatchesCpu(
              "DepthwiseConv2dNative", {x, f}, [&](AttrMap& a) { SetConvAttrs(a, t, g, nchw); },
              ConvTolerance(t, g.kh * g.kw));
          EXPECT_EQ(y.shape()[nchw ? 1 : 3], g.c * m);
        }
      }
    }
  }
}

const std::vector<std::vector<std::string>> kFusedOps = {
    {"BiasAdd"},
    {"BiasAdd", "Relu"},
    {"BiasAdd", "Relu6"},
    {"BiasAdd", "Elu"},
    {"BiasAdd", "LeakyRelu"},
    {"BiasAdd", "Tanh"},
    {"BiasAdd", "Sigmoid"},
    {"FusedBatchNorm"},
    {"FusedBatchNorm", "Relu"},
    {"FusedBatchNorm", "Relu6"},
    {"FusedBatchNorm", "Elu"},
    {"FusedBatchNorm", "LeakyRelu"},
    {"FusedBatchNorm", "Tanh"},
    {"FusedBatchNorm", "Sigmoid"},
};

// The args of `fused_ops` for `channels` output channels: a bias, or scale,
// offset, mean and a positive variance.
std::vector<Tensor> FusedArgs(DataType t, const std::vector<std::string>& fused_ops,
                              int64_t channels, std::mt19937& rng) {
  if (fused_ops.front() == "BiasAdd") return {RandomTensor(t, {channels}, rng, -2, 2)};
  return {RandomTensor(t, {channels}, rng, 0.5, 2), RandomTensor(t, {channels}, rng, -1, 1),
          RandomTensor(t, {channels}, rng, -1, 1), RandomTensor(t, {channels}, rng, 0.1, 2)};
}

const std::vector<Geometry> kFusedGeometries = {
    {2, 7, 8, 3, 3, 3, 2, 2, 1, 1, "SAME", {}, "3x3 SAME stride 2"},
    {1, 1, 49, 10, 1, 5, 1, 1, 1, 1, "SAME", {}, "1x5 SAME (1-D)"},
    {1, 6, 5, 4, 1, 1, 1, 1, 1, 1, "VALID", {}, "1x1"},
    {1, 6, 5, 3, 2, 3, 1, 1, 1, 1, "EXPLICIT", {1, 2, 0, 3}, "2x3 EXPLICIT"},
};

TEST(CudaConv, FusedConv2DEveryFusion) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(4);
  for (DataType t : kFloatTypes) {
    for (bool nchw : {false, true}) {
      for (const Geometry& g : kFusedGeometries) {
        for (const std::vector<std::string>& ops : kFusedOps) {
          const int64_t out_c = 6;
          SCOPED_TRACE(absl::StrCat(g.what, nchw ? " NCHW " : " NHWC ", DataTypeName(t), " ",
                                    ops.front(), ops.size() > 1 ? "+" + ops.back() : ""));
          std::vector<Tensor> inputs = {RandomTensor(t, InputShape(g, nchw), rng, -1, 1),
                                        RandomTensor(t, {g.kh, g.kw, g.c, out_c}, rng, -1, 1)};
          for (Tensor& a : FusedArgs(t, ops, out_c, rng)) inputs.push_back(a);
          ExpectCudaMatchesCpu("_FusedConv2D", inputs,
                               [&](AttrMap& a) {
                                 SetConvAttrs(a, t, g, nchw);
                                 SetFused(a, ops);
                               },
                               ConvTolerance(t, 4 * g.kh * g.kw * g.c));
        }
      }
    }
  }
}

TEST(CudaConv, FusedDepthwiseEveryFusion) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(5);
  for (DataType t : kFloatTypes) {
    for (bool nchw : {false, true}) {
      for (const Geometry& g : kFusedGeometries) {
        for (int64_t m : {1, 2}) {
          for (const std::vector<std::string>& ops : kFusedOps) {
            SCOPED_TRACE(absl::StrCat(g.what, nchw ? " NCHW " : " NHWC ", DataTypeName(t),
                                      " multiplier ", m, " ", ops.front(),
                                      ops.size() > 1 ? "+" + ops.back() : ""));
            std::vector<Tensor> inputs = {RandomTensor(t, InputShape(g, nchw), rng, -1, 1),
                                          RandomTensor(t, {g.kh, g.kw, g.c, m}, rng, -1, 1)};
            for (Tensor& a : FusedArgs(t, ops, g.c * m, rng)) inputs.push_back(a);
            ExpectCudaMatchesCpu("_FusedDepthwiseConv2dNative", inputs,
                                 [&](AttrMap& a) {
                                   SetConvAttrs(a, t, g, nchw);
                                   SetFused(a, ops);
                                 },
                                 ConvTolerance(t, 4 * g.kh * g.kw));
          }
        }
      }
    }
  }
}

TEST(CudaConv, ZeroSize) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(6);
  const DataType t = DataType::kFloat;
  for (bool nchw : {false, true}) {
    // Batch 0.
    const Geometry g0{0, 5, 5, 3, 3, 3, 1, 1, 1, 1, "SAME", {}, "batch 0"};
    const SetAttrs attrs = [&](AttrMap& a) { SetConvAttrs(a, t, g0, nchw); };
    Tensor y = ExpectCudaMatchesCpu(
        "Conv2D", {RandomTensor(t, InputShape(g0, nchw), rng), RandomTensor(t, {3, 3, 3, 4}, rng)},
        attrs, DefaultTolerance(t));
    EXPECT_EQ(y.num_elements(), 0);
    EXPECT_EQ(y.shape(), nchw ? (Shape{0, 4, 5, 5}) : (Shape{0, 5, 5, 4}));
    y = ExpectCudaMatchesCpu("DepthwiseConv2dNative",
                             {RandomTensor(t, InputShape(g0, nchw), rng),
                              RandomTensor(t, {3, 3, 3, 2}, rng)},
                             attrs, DefaultTolerance(t));
    EXPECT_EQ(y.num_elements(), 0);
    y = ExpectCudaMatchesCpu("_FusedConv2D",
                             {RandomTensor(t, InputShape(g0, nchw), rng),
                              RandomTensor(t, {3, 3, 3, 4}, rng), RandomTensor(t, {4}, rng)},
                             [&](AttrMap& a) {
                               SetConvAttrs(a, t, g0, nchw);
                               SetFused(a, {"BiasAdd", "Relu"});
                             },
                             DefaultTolerance(t));
    EXPECT_EQ(y.num_elements(), 0);
    // No output channels.
    const Geometry g1{2, 5, 5, 3, 3, 3, 1, 1, 1, 1, "VALID", {}, "out 0"};
    y = ExpectCudaMatchesCpu(
        "Conv2D", {RandomTensor(t, InputShape(g1, nchw), rng), RandomTensor(t, {3, 3, 3, 0}, rng)},
        [&](AttrMap& a) { SetConvAttrs(a, t, g1, nchw); }, DefaultTolerance(t));
    EXPECT_EQ(y.num_elements(), 0);
    // Zero spatial size with SAME: an empty output.
    const Geometry g2{2, 0, 5, 3, 3, 3, 1, 1, 1, 1, "SAME", {}, "h 0"};
    y = ExpectCudaMatchesCpu("DepthwiseConv2dNative",
                             {RandomTensor(t, InputShape(g2, nchw), rng),
                              RandomTensor(t, {3, 3, 3, 1}, rng)},
                             [&](AttrMap& a) { SetConvAttrs(a, t, g2, nchw); },
                             DefaultTolerance(t));
    EXPECT_EQ(y.num_elements(), 0);
  }
}

TEST(CudaConv, ExactValues) {
  PX_SKIP_WITHOUT_CUDA();
  // x (NHWC [1, 3, 3, 1]) = 1..9, a 2 x 2 filter of ones.
  const Tensor x = MakeTensor(DataType::kFloat, {1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const Tensor ones = MakeTensor(DataType::kFloat, {2, 2, 1, 1}, {1, 1, 1, 1});
  const Geometry valid{1, 3, 3, 1, 2, 2, 1, 1, 1, 1, "VALID", {}, ""};
  auto y = RunOp("Conv2D", {x, ones}, [&](AttrMap& a) { SetConvAttrs(a, DataType::kFloat, valid, false); },
                 "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), (Shape{1, 2, 2, 1}));
  EXPECT_EQ(Values(*y), (std::vector<double>{12, 16, 24, 28}));
  // SAME, stride 2: padding after only (one row and column of zeros):
  // windows {1,2,4,5}, {3,6}, {7,8}, {9}.
  const Geometry same{1, 3, 3, 1, 2, 2, 2, 2, 1, 1, "SAME", {}, ""};
  y = RunOp("Conv2D", {x, ones}, [&](AttrMap& a) { SetConvAttrs(a, DataType::kFloat, same, false); },
            "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), (Shape{1, 2, 2, 1}));
  EXPECT_EQ(Values(*y), (std::vector<double>{12, 9, 15, 9}));
  // EXPLICIT: one row of zeros on top only, 1 x 1 filter of 2 with stride
  // 2: rows 0 (zeros) and 2 (= x row 1) of the padded input.
  const Geometry expl{1, 3, 3, 1, 1, 1, 2, 1, 1, 1, "EXPLICIT", {1, 0, 0, 0}, ""};
  y = RunOp("Conv2D", {x, MakeTensor(DataType::kFloat, {1, 1, 1, 1}, {2})},
            [&](AttrMap& a) { SetConvAttrs(a, DataType::kFloat, expl, false); }, "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), (Shape{1, 2, 3, 1}));
  EXPECT_EQ(Values(*y), (std::vector<double>{0, 0, 0, 8, 10, 12}));
  // Depthwise, NCHW [1, 2, 1, 3] (channels {1, 2, 3} and {4, 5, 6}), 1 x 2
  // filter with multiplier 2: output channel c * 2 + j uses filter [., ., c, j].
  const Tensor xd = MakeTensor(DataType::kDouble, {1, 2, 1, 3}, {1, 2, 3, 4, 5, 6});
  // filter [1, 2, 2, 2]: [kw][c][j].
  const Tensor fd = MakeTensor(DataType::kDouble, {1, 2, 2, 2}, {1, 10, 100, 1000, 2, 20, 200, 2000});
  const Geometry dw{1, 1, 3, 2, 1, 2, 1, 1, 1, 1, "VALID", {}, ""};
  y = RunOp("DepthwiseConv2dNative", {xd, fd},
            [&](AttrMap& a) { SetConvAttrs(a, DataType::kDouble, dw, true); }, "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), (Shape{1, 4, 1, 2}));
  // c 0, j 0: 1*x0 + 2*x1 (weights 1, 2); c 0, j 1: 10, 20; c 1, j 0: 100,
  // 200 on {4, 5, 6}; c 1, j 1: 1000, 2000.
  EXPECT_EQ(Values(*y), (std::vector<double>{5, 8, 50, 80, 1400, 1700, 14000, 17000}));
  // _FusedConv2D with batch norm and Relu6 on the VALID sums above:
  // (v - mean) * scale / sqrt(variance + epsilon) + offset with mean 12,
  // scale 0.5, variance 3.999, epsilon 0.001 (factor 0.25), offset 1:
  // 1, 2, 4, 5 -> Relu6 -> 1, 2, 4, 5.
  auto fy = RunOp("_FusedConv2D",
                  {x, ones, MakeTensor(DataType::kFloat, {1}, {0.5}),
                   MakeTensor(DataType::kFloat, {1}, {1}), MakeTensor(DataType::kFloat, {1}, {12}),
                   MakeTensor(DataType::kFloat, {1}, {3.999})},
                  [&](AttrMap& a) {
                    SetConvAttrs(a, DataType::kFloat, valid, false);
                    SetFused(a, {"FusedBatchNorm", "Relu6"});
                  },
                  "CUDA:0");
  ASSERT_TRUE(fy.ok()) << fy.status();
  const std::vector<double> want = {1, 2, 4, 5};
  const std::vector<double> got = Values(*fy);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
}

// Grouped Conv2D (input depth a multiple of the filter's), which the cpu
// plugin refuses: against a plain loop (NHWC, VALID, stride 1), exact on
// small integers.
TEST(CudaConv, GroupedConv2DExact) {
  PX_SKIP_WITHOUT_CUDA();
  const int64_t n = 2, h = 4, w = 5, c = 4, groups = 2, cg = c / groups, kh = 2, kw = 3, out_c = 6;
  std::vector<double> xv(n * h * w * c), fv(kh * kw * cg * out_c);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<double>(static_cast<int>(i * 7 % 11) - 5);
  for (size_t i = 0; i < fv.size(); ++i) fv[i] = static_cast<double>(static_cast<int>(i * 5 % 7) - 3);
  const int64_t oh = h - kh + 1, ow = w - kw + 1;
  std::vector<double> want(n * oh * ow * out_c, 0.0);
  const int64_t per_group = out_c / groups;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j)
        for (int64_t o = 0; o < out_c; ++o) {
          const int64_t gidx = o / per_group;
          double s = 0;
          for (int64_t di = 0; di < kh; ++di)
            for (int64_t dj = 0; dj < kw; ++dj)
              for (int64_t ci = 0; ci < cg; ++ci) {
                s += xv[((b * h + i + di) * w + j + dj) * c + gidx * cg + ci] *
                     fv[((di * kw + dj) * cg + ci) * out_c + o];
              }
          want[((b * oh + i) * ow + j) * out_c + o] = s;
        }
  const Geometry g{n, h, w, c, kh, kw, 1, 1, 1, 1, "VALID", {}, ""};
  auto y = RunOp("Conv2D",
                 {MakeTensor(DataType::kFloat, {n, h, w, c}, xv),
                  MakeTensor(DataType::kFloat, {kh, kw, cg, out_c}, fv)},
                 [&](AttrMap& a) { SetConvAttrs(a, DataType::kFloat, g, false); }, "CUDA:0");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape(), (Shape{n, oh, ow, out_c}));
  EXPECT_EQ(Values(*y), want);
}

TEST(CudaConv, BadFilterDepthIsInvalidArgument) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(7);
  const DataType t = DataType::kFloat;
  const Geometry g{1, 5, 5, 3, 3, 3, 1, 1, 1, 1, "SAME", {}, ""};
  const SetAttrs attrs = [&](AttrMap& a) { SetConvAttrs(a, t, g, false); };
  // Conv2D: input depth 3 is no multiple of the filter's 2.
  auto y = RunOp("Conv2D", {RandomTensor(t, {1, 5, 5, 3}, rng), RandomTensor(t, {3, 3, 2, 4}, rng)},
                 attrs, "CUDA:0");
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument) << y.status();
  EXPECT_NE(std::string(y.status().message()).find("filter input depth"), std::string::npos)
      << y.status();
  // Depthwise: input depth 3, filter depth 4.
  y = RunOp("DepthwiseConv2dNative",
            {RandomTensor(t, {1, 5, 5, 3}, rng), RandomTensor(t, {3, 3, 4, 1}, rng)}, attrs,
            "CUDA:0");
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument) << y.status();
  EXPECT_NE(std::string(y.status().message()).find("filter depth"), std::string::npos)
      << y.status();
  // A bias of the wrong length.
  y = RunOp("_FusedConv2D",
            {RandomTensor(t, {1, 5, 5, 3}, rng), RandomTensor(t, {3, 3, 3, 4}, rng),
             RandomTensor(t, {5}, rng)},
            [&](AttrMap& a) {
              SetConvAttrs(a, t, g, false);
              SetFused(a, {"BiasAdd"});
            },
            "CUDA:0");
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument) << y.status();
  EXPECT_NE(std::string(y.status().message()).find("bias"), std::string::npos) << y.status();
  // VALID with a filter larger than the input.
  const Geometry small{1, 2, 2, 3, 3, 3, 1, 1, 1, 1, "VALID", {}, ""};
  y = RunOp("Conv2D", {RandomTensor(t, {1, 2, 2, 3}, rng), RandomTensor(t, {3, 3, 3, 4}, rng)},
            [&](AttrMap& a) { SetConvAttrs(a, t, small, false); }, "CUDA:0");
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument) << y.status();
}

}  // namespace
}  // namespace plexus

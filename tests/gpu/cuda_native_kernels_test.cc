// The native GEMM and convolution kernels (plugins/gpu/src/kernels/
// gemm.cu, native_matmul.cc, conv_direct.cu, native_conv.cc) on CUDA:0
// against the cpu plugin. The program sets PX_CUDA_KERNELS=native before the
// runtime loads the plugin, so the CUDA plugin registers these kernels
// instead of cuBLASLt's and cuDNN's.
//
// MatMul with every transposition and odd sizes (1, 7, 65, 129: edge tiles
// in every dimension), a product of many tiles, k = 0 (zeros), zero-size
// outputs, BatchMatMul, BatchMatMulV2 broadcasting (one side, both sides,
// alternating groups of dimensions, different ranks), BatchMatMulV3 with
// mixed types, _FusedMatMul with every activation; Conv2D in NHWC and NCHW
// with strides 2, dilation 2, SAME / VALID / EXPLICIT, 1x1, 3x3 and 5x5
// filters, more than one tile of output channels; depthwise with channel
// multipliers 1 and 2; every fused convolution; grouped Conv2D against a
// plain loop (the cpu plugin has none); exact values where obvious. Float,
// double, half and bfloat16 throughout. Skipped, with the reason, where the
// plugin reports no CUDA device; label gpu.
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

// The plugin reads PX_CUDA_KERNELS when it loads, which is after this (the
// runtime is created by the first test).
const bool kNativeKernels = [] {
  setenv("PX_CUDA_KERNELS", "native", 1);
  return true;
}();

// ---------------------------------------------------------------------------
// Matrix products
// ---------------------------------------------------------------------------

// A product over k terms of values in [-1, 1] (or [-2, 2]): the rounding of
// each sum grows with k; half and bfloat16 round the output to 11 and 8 bits
// (both sides accumulate in float; the fused epilogue here runs before the
// rounding, the cpu plugin's after, so one more rounding of slack).
Tolerance MatMulTolerance(DataType t, int64_t k) {
  const double kd = static_cast<double>(k);
  switch (t) {
    case DataType::kFloat: return {1e-5 + 2e-6 * kd, 1e-4};
    case DataType::kDouble: return {1e-12 * (1 + kd), 1e-10};
    case DataType::kHalf: return {8e-3 + 2e-4 * kd, 8e-3};
    case DataType::kBFloat16: return {6e-2 + 2e-3 * kd, 6e-2};
    default: return {0, 0};
  }
}

// [r, c] stored transposed when `t`.
Shape Stored(int64_t r, int64_t c, bool t) { return t ? Shape{c, r} : Shape{r, c}; }

SetAttrs MatMulAttrs(DataType t, bool ta, bool tb) {
  return [=](AttrMap& a) {
    SetType(a, "T", t);
    a["transpose_a"].set_b(ta);
    a["transpose_b"].set_b(tb);
  };
}

SetAttrs BatchAttrs(const std::string& op, DataType tx, DataType ty, DataType tout, bool ax,
                    bool ay) {
  return [=](AttrMap& a) {
    if (op == "BatchMatMulV3") {
      SetType(a, "Ta", tx);
      SetType(a, "Tb", ty);
      SetType(a, "Tout", tout);
    } else {
      SetType(a, "T", tout);
    }
    a["adj_x"].set_b(ax);
    a["adj_y"].set_b(ay);
  };
}

SetAttrs FusedMatMulAttrs(DataType t, const std::string& activation, bool ta, bool tb) {
  return [=](AttrMap& a) {
    SetType(a, "T", t);
    a["transpose_a"].set_b(ta);
    a["transpose_b"].set_b(tb);
    a["num_args"].set_i(1);
    a["leakyrelu_alpha"].set_f(0.3f);
    auto* list = a["fused_ops"].mutable_list();
    list->add_s("BiasAdd");
    if (!activation.empty()) list->add_s(activation);
  };
}

TEST(PlexusMatMul, EveryTranspositionAndOddSize) {
  PX_SKIP_WITHOUT_CUDA();
  ASSERT_TRUE(kNativeKernels);
  std::mt19937 rng(1);
  const std::vector<int64_t> sizes = {1, 7, 65, 129};
  for (DataType t : kFloatTypes) {
    for (int64_t m : sizes) {
      for (int64_t k : sizes) {
        for (int64_t n : sizes) {
          for (int tr = 0; tr < 4; ++tr) {
            const bool ta = tr & 1, tb = tr & 2;
            SCOPED_TRACE(absl::StrCat(DataTypeName(t), " m=", m, " k=", k, " n=", n, " ta=", ta,
                                      " tb=", tb));
            ExpectCudaMatchesCpu("MatMul",
                                 {RandomTensor(t, Stored(m, k, ta), rng, -1, 1),
                                  RandomTensor(t, Stored(k, n, tb), rng, -1, 1)},
                                 MatMulAttrs(t, ta, tb), MatMulTolerance(t, k));
          }
        }
      }
    }
  }
}

TEST(PlexusMatMul, ManyTiles) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(2);
  // 5 x 4 tiles of 64 x 64, 19 slices of k (the last one partial).
  const int64_t m = 300, k = 301, n = 250;
  for (DataType t : kFloatTypes) {
    for (int tr = 0; tr < 4; ++tr) {
      const bool ta = tr & 1, tb = tr & 2;
      SCOPED_TRACE(absl::StrCat(DataTypeName(t), " ta=", ta, " tb=", tb));
      ExpectCudaMatchesCpu("MatMul",
                           {RandomTensor(t, Stored(m, k, ta), rng, -1, 1),
                            RandomTensor(t, Stored(k, n, tb), rng, -1, 1)},
                           MatMulAttrs(t, ta, tb), MatMulTolerance(t, k));
    }
  }
}

TEST(PlexusMatMul, ExactValues) {
  PX_SKIP_WITHOUT_CUDA();
  for (DataType t : kFloatTypes) {
    SCOPED_TRACE(DataTypeName(t));
    const Tensor a = MakeTensor(t, {2, 2}, {1, 2, 3, 4});
    const Tensor b = MakeTensor(t, {2, 2}, {5, 6, 7, 8});
    auto y = RunOp("MatMul", {a, b}, MatMulAttrs(t, false, false), "CUDA:0");
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(Values(*y), (std::vector<double>{19, 22, 43, 50}));
    // a^T b^T = (b a)^T: b a = [[23, 34], [31, 46]].
    y = RunOp("MatMul", {a, b}, MatMulAttrs(t, true, true), "CUDA:0");
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(Values(*y), (std::vector<double>{23, 31, 34, 46}));
  }
}

TEST(PlexusMatMul, ZeroKAndZeroSize) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(3);
  for (DataType t : kFloatTypes) {
    SCOPED_TRACE(DataTypeName(t));
    for (int tr = 0; tr < 4; ++tr) {
      const bool ta = tr & 1, tb = tr & 2;
      // k == 0: zeros.
      Tensor y = ExpectCudaMatchesCpu(
          "MatMul", {RandomTensor(t, Stored(3, 0, ta), rng), RandomTensor(t, Stored(0, 70, tb), rng)},
          MatMulAttrs(t, ta, tb), MatMulTolerance(t, 0));
      EXPECT_EQ(y.shape(), (Shape{3, 70}));
      for (int64_t i = 0; i < y.num_elements(); ++i) EXPECT_EQ(ElementAsDouble(y, i), 0.0);
      // m == 0, n == 0.
      y = ExpectCudaMatchesCpu(
          "MatMul", {RandomTensor(t, Stored(0, 4, ta), rng), RandomTensor(t, Stored(4, 5, tb), rng)},
          MatMulAttrs(t, ta, tb), MatMulTolerance(t, 4));
      EXPECT_EQ(y.shape(), (Shape{0, 5}));
      y = ExpectCudaMatchesCpu(
          "MatMul", {RandomTensor(t, Stored(3, 4, ta), rng), RandomTensor(t, Stored(4, 0, tb), rng)},
          MatMulAttrs(t, ta, tb), MatMulTolerance(t, 4));
      EXPECT_EQ(y.shape(), (Shape{3, 0}));
    }
  }
}

struct BatchCase {
  Shape x_batch, y_batch;
};

TEST(PlexusBatchMatMul, BroadcastingAndAdjoints) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(4);
  const std::vector<BatchCase> cases = {
      {{3}, {3}},                          // one matrix per batch on both sides
      {{2, 3}, {2, 3}},
      {{4}, {1}},                          // y repeated (stride 0)
      {{1}, {4}},                          // x repeated
      {{5}, {}},                           // y has no batch dimensions
      {{}, {2, 3}},                        // x has none
      {{2, 1}, {1, 3}},                    // both broadcast
      {{2, 1, 4}, {3, 1}},                 // different ranks, both broadcast
      {{2, 1, 3, 1}, {1, 4, 1, 2}},        // four alternating groups
      {{2, 3, 1, 1}, {1, 1, 2, 2}},        // two groups of two merged dimensions
      {{70000}, {1}},                      // more matrices than a grid's z dimension
      {{0}, {0}},                          // no matrices
      {{0}, {1}},
  };
  const int64_t m = 7, k = 33, n = 5;
  for (const char* op : {"BatchMatMulV2", "BatchMatMulV3", "BatchMatMul"}) {
    for (DataType t : kFloatTypes) {
      for (const BatchCase& c : cases) {
        const bool broadcasting = c.x_batch != c.y_batch;
        if (std::string(op) == "BatchMatMul" && broadcasting) continue;
        const int64_t batch = c.x_batch.empty() ? 1 : c.x_batch[0];
        for (int adj = 0; adj < 4; ++adj) {
          const bool ax = adj & 1, ay = adj & 2;
          // The big batch once per dtype and op.
          if (batch == 70000 && adj != 0) continue;
          const int64_t mm = batch == 70000 ? 2 : m, kk = batch == 70000 ? 3 : k;
          Shape xs = c.x_batch, ys = c.y_batch;
          for (int64_t d : Stored(mm, kk, ax)) xs.push_back(d);
          for (int64_t d : Stored(kk, n, ay)) ys.push_back(d);
          SCOPED_TRACE(absl::StrCat(op, " ", DataTypeName(t), " x ", ShapeToString(xs), " y ",
                                    ShapeToString(ys), " adj_x=", ax, " adj_y=", ay));
          ExpectCudaMatchesCpu(op, {RandomTensor(t, xs, rng, -1, 1), RandomTensor(t, ys, rng, -1, 1)},
                               BatchAttrs(op, t, t, t, ax, ay), MatMulTolerance(t, kk));
        }
      }
    }
  }
}

TEST(PlexusBatchMatMul, OddSizesAndZeroK) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(5);
  for (DataType t : kFloatTypes) {
    for (int64_t s : {1, 7, 65, 129}) {
      SCOPED_TRACE(absl::StrCat(DataTypeName(t), " size ", s));
      ExpectCudaMatchesCpu("BatchMatMulV2",
                           {RandomTensor(t, {3, s, s}, rng, -1, 1),
                            RandomTensor(t, {1, s, 7}, rng, -1, 1)},
                           BatchAttrs("BatchMatMulV2", t, t, t, false, false),
                           MatMulTolerance(t, s));
    }
    Tensor y = ExpectCudaMatchesCpu("BatchMatMulV2",
                                    {RandomTensor(t, {2, 3, 0}, rng), RandomTensor(t, {2, 0, 4}, rng)},
                                    BatchAttrs("BatchMatMulV2", t, t, t, false, false),
                                    MatMulTolerance(t, 0));
    EXPECT_EQ(y.shape(), (Shape{2, 3, 4}));
    for (int64_t i = 0; i < y.num_elements(); ++i) EXPECT_EQ(ElementAsDouble(y, i), 0.0);
  }
}

TEST(PlexusBatchMatMul, MixedTypesV3) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(6);
  struct Mixed {
    DataType x, y, out;
  };
  const std::vector<Mixed> cases = {
      {DataType::kHalf, DataType::kFloat, DataType::kFloat},
      {DataType::kFloat, DataType::kBFloat16, DataType::kFloat},
      {DataType::kBFloat16, DataType::kBFloat16, DataType::kFloat},
      {DataType::kFloat, DataType::kFloat, DataType::kHalf},
  };
  for (const Mixed& c : cases) {
    SCOPED_TRACE(absl::StrCat(DataTypeName(c.x), " x ", DataTypeName(c.y), " -> ",
                              DataTypeName(c.out)));
    ExpectCudaMatchesCpu("BatchMatMulV3",
                         {RandomTensor(c.x, {2, 9, 17}, rng, -1, 1),
                          RandomTensor(c.y, {1, 17, 6}, rng, -1, 1)},
                         BatchAttrs("BatchMatMulV3", c.x, c.y, c.out, false, false),
                         MatMulTolerance(c.out, 17));
  }
}

TEST(PlexusFusedMatMul, EveryActivation) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(7);
  const std::vector<std::string> activations = {"",          "Relu", "Relu6",  "Elu",
                                                "LeakyRelu", "Tanh", "Sigmoid"};
  for (DataType t : kFloatTypes) {
    for (const std::string& act : activations) {
      for (int64_t s : {1, 7, 65, 129}) {
        for (int tr = 0; tr < 4; ++tr) {
          const bool ta = tr & 1, tb = tr & 2;
          const int64_t m = s, k = 33, n = s == 129 ? 7 : s + 2;
          SCOPED_TRACE(absl::StrCat(DataTypeName(t), " [BiasAdd,", act, "] m=", m, " n=", n,
                                    " ta=", ta, " tb=", tb));
          // Larger values so that Relu6 clips.
          ExpectCudaMatchesCpu("_FusedMatMul",
                               {RandomTensor(t, Stored(m, k, ta), rng, -2, 2),
                                RandomTensor(t, Stored(k, n, tb), rng, -1, 1),
                                RandomTensor(t, {n}, rng, -2, 2)},
                               FusedMatMulAttrs(t, act, ta, tb), MatMulTolerance(t, 2 * k));
        }
      }
      SCOPED_TRACE(absl::StrCat(DataTypeName(t), " [BiasAdd,", act, "] k = 0 and m = 0"));
      // k == 0: activation(bias) in every row.
      ExpectCudaMatchesCpu("_FusedMatMul",
                           {RandomTensor(t, {3, 0}, rng), RandomTensor(t, {0, 5}, rng),
                            RandomTensor(t, {5}, rng)},
                           FusedMatMulAttrs(t, act, false, false), MatMulTolerance(t, 1));
      ExpectCudaMatchesCpu("_FusedMatMul",
                           {RandomTensor(t, {0, 4}, rng), RandomTensor(t, {4, 5}, rng),
                            RandomTensor(t, {5}, rng)},
                           FusedMatMulAttrs(t, act, false, false), MatMulTolerance(t, 4));
    }
  }
}

TEST(PlexusFusedMatMul, ExactValues) {
  PX_SKIP_WITHOUT_CUDA();
  // [[1, 2], [3, 4]] x I + [-2, 10] = [[-1, 12], [1, 14]]
  const Tensor a = MakeTensor(DataType::kFloat, {2, 2}, {1, 2, 3, 4});
  const Tensor eye = MakeTensor(DataType::kFloat, {2, 2}, {1, 0, 0, 1});
  const Tensor bias = MakeTensor(DataType::kFloat, {2}, {-2, 10});
  auto run = [&](const std::string& act) {
    auto y = RunOp("_FusedMatMul", {a, eye, bias}, FusedMatMulAttrs(DataType::kFloat, act, false, false),
                   "CUDA:0");
    EXPECT_TRUE(y.ok()) << act << ": " << y.status();
    return y.ok() ? Values(*y) : std::vector<double>{};
  };
  EXPECT_EQ(run(""), (std::vector<double>{-1, 12, 1, 14}));
  EXPECT_EQ(run("Relu"), (std::vector<double>{0, 12, 1, 14}));
  EXPECT_EQ(run("Relu6"), (std::vector<double>{0, 6, 1, 6}));
  const std::vector<double> leaky = run("LeakyRelu");
  ASSERT_EQ(leaky.size(), 4u);
  EXPECT_NEAR(leaky[0], -0.3, 1e-6);
  EXPECT_EQ(leaky[1], 12);
}

// ---------------------------------------------------------------------------
// Convolutions
// ---------------------------------------------------------------------------

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
    {2, 9, 8, 3, 5, 5, 1, 1, 1, 1, "SAME", {}, "5x5 SAME"},
    {1, 12, 11, 2, 5, 5, 2, 2, 1, 1, "VALID", {}, "5x5 VALID stride 2"},
    {1, 4, 4, 2, 5, 5, 1, 1, 1, 1, "SAME", {}, "5x5 SAME larger than the input"},
    {2, 1, 49, 10, 1, 5, 1, 1, 1, 1, "SAME", {}, "1x5 SAME (1-D)"},
    {1, 6, 5, 3, 2, 3, 1, 1, 1, 1, "EXPLICIT", {1, 2, 0, 3}, "2x3 EXPLICIT asymmetric"},
    {2, 8, 7, 3, 3, 3, 2, 2, 2, 1, "EXPLICIT", {1, 1, 2, 2}, "3x3 EXPLICIT stride 2 dilation 2x1"},
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
    const std::vector<int64_t>& p = g.pads;
    const std::vector<int64_t> pads = nchw ? std::vector<int64_t>{0, 0, 0, 0, p[0], p[1], p[2], p[3]}
                                           : std::vector<int64_t>{0, 0, p[0], p[1], p[2], p[3], 0, 0};
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
// input channels), inputs in [-1, 1]: float sums in another order; half and
// bfloat16 accumulate in float on both sides, so the difference is mostly
// one or two roundings of the output (2^-11 and 2^-8 relative).
Tolerance ConvTolerance(DataType t, int64_t k) {
  const double scale = 1.0 + std::sqrt(static_cast<double>(k));
  switch (t) {
    case DataType::kFloat: return {2e-6 * scale, 1e-5};
    case DataType::kDouble: return {1e-12 * scale, 1e-12};
    case DataType::kHalf: return {2e-3 * scale, 4e-3};
    case DataType::kBFloat16: return {1.6e-2 * scale, 3.2e-2};
    default: return {0, 0};
  }
}

TEST(PlexusConv, Conv2DEveryDtypeLayoutGeometry) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(11);
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

TEST(PlexusConv, Conv2DManyTiles) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(12);
  // 1088 output pixels (17 row tiles), 130 output channels (3 column tiles,
  // the last partial), k = 3 * 3 * 32 = 288 (18 slices).
  const Geometry g{4, 17, 16, 32, 3, 3, 1, 1, 1, 1, "SAME", {}, "3x3 x 32 -> 130"};
  for (DataType t : kFloatTypes) {
    for (bool nchw : {false, true}) {
      SCOPED_TRACE(absl::StrCat(nchw ? "NCHW " : "NHWC ", DataTypeName(t)));
      ExpectCudaMatchesCpu("Conv2D",
                           {RandomTensor(t, InputShape(g, nchw), rng, -1, 1),
                            RandomTensor(t, {3, 3, 32, 130}, rng, -1, 1)},
                           [&](AttrMap& a) { SetConvAttrs(a, t, g, nchw); },
                           ConvTolerance(t, 3 * 3 * 32));
    }
  }
}

TEST(PlexusConv, DepthwiseEveryDtypeLayoutGeometryMultiplier) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(13);
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
          if (y.shape().size() == 4) {
            EXPECT_EQ(y.shape()[nchw ? 1 : 3], g.c * m);
          }
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

TEST(PlexusConv, FusedConv2DEveryFusion) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(14);
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

TEST(PlexusConv, FusedDepthwiseEveryFusion) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(15);
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

TEST(PlexusConv, ZeroSize) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(16);
  const DataType t = DataType::kFloat;
  for (bool nchw : {false, true}) {
    SCOPED_TRACE(nchw ? "NCHW" : "NHWC");
    const Geometry g0{0, 5, 5, 3, 3, 3, 1, 1, 1, 1, "SAME", {}, "batch 0"};
    const SetAttrs attrs = [&](AttrMap& a) { SetConvAttrs(a, t, g0, nchw); };
    Tensor y = ExpectCudaMatchesCpu(
        "Conv2D", {RandomTensor(t, InputShape(g0, nchw), rng), RandomTensor(t, {3, 3, 3, 4}, rng)},
        attrs, DefaultTolerance(t));
    EXPECT_EQ(y.num_elements(), 0);
    y = ExpectCudaMatchesCpu("DepthwiseConv2dNative",
                             {RandomTensor(t, InputShape(g0, nchw), rng),
                              RandomTensor(t, {3, 3, 3, 2}, rng)},
                             attrs, DefaultTolerance(t));
    EXPECT_EQ(y.num_elements(), 0);
    const Geometry g1{2, 5, 5, 3, 3, 3, 1, 1, 1, 1, "VALID", {}, "out 0"};
    y = ExpectCudaMatchesCpu(
        "Conv2D", {RandomTensor(t, InputShape(g1, nchw), rng), RandomTensor(t, {3, 3, 3, 0}, rng)},
        [&](AttrMap& a) { SetConvAttrs(a, t, g1, nchw); }, DefaultTolerance(t));
    EXPECT_EQ(y.num_elements(), 0);
    const Geometry g2{2, 0, 5, 3, 3, 3, 1, 1, 1, 1, "SAME", {}, "h 0"};
    y = ExpectCudaMatchesCpu("DepthwiseConv2dNative",
                             {RandomTensor(t, InputShape(g2, nchw), rng),
                              RandomTensor(t, {3, 3, 3, 1}, rng)},
                             [&](AttrMap& a) { SetConvAttrs(a, t, g2, nchw); },
                             DefaultTolerance(t));
    EXPECT_EQ(y.num_elements(), 0);
  }
}

TEST(PlexusConv, ExactValues) {
  PX_SKIP_WITHOUT_CUDA();
  for (DataType t : kFloatTypes) {
    SCOPED_TRACE(DataTypeName(t));
    // x (NHWC [1, 3, 3, 1]) = 1..9, a 2 x 2 filter of ones.
    const Tensor x = MakeTensor(t, {1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
    const Tensor ones = MakeTensor(t, {2, 2, 1, 1}, {1, 1, 1, 1});
    const Geometry valid{1, 3, 3, 1, 2, 2, 1, 1, 1, 1, "VALID", {}, ""};
    auto y = RunOp("Conv2D", {x, ones}, [&](AttrMap& a) { SetConvAttrs(a, t, valid, false); },
                   "CUDA:0");
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(y->shape(), (Shape{1, 2, 2, 1}));
    EXPECT_EQ(Values(*y), (std::vector<double>{12, 16, 24, 28}));
    // SAME, stride 2: padding after only: windows {1,2,4,5}, {3,6}, {7,8}, {9}.
    const Geometry same{1, 3, 3, 1, 2, 2, 2, 2, 1, 1, "SAME", {}, ""};
    y = RunOp("Conv2D", {x, ones}, [&](AttrMap& a) { SetConvAttrs(a, t, same, false); }, "CUDA:0");
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(Values(*y), (std::vector<double>{12, 9, 15, 9}));
    // The same as a depthwise convolution.
    y = RunOp("DepthwiseConv2dNative", {x, ones},
              [&](AttrMap& a) { SetConvAttrs(a, t, same, false); }, "CUDA:0");
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(Values(*y), (std::vector<double>{12, 9, 15, 9}));
  }
}

// Grouped Conv2D (input depth a multiple of the filter's), which the cpu
// plugin does not run: against a plain loop over small integers (exact in
// every dtype).
TEST(PlexusConv, GroupedConv2DExact) {
  PX_SKIP_WITHOUT_CUDA();
  const int64_t n = 2, h = 5, w = 4, c = 6, groups = 3, fi = c / groups, out_c = 9;
  const int64_t kh = 3, kw = 2;
  const int64_t og = out_c / groups;
  std::vector<double> xv(n * h * w * c), fv(kh * kw * fi * out_c);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<double>(static_cast<int>(i % 7) - 3);
  for (size_t i = 0; i < fv.size(); ++i) fv[i] = static_cast<double>(static_cast<int>(i % 5) - 2);
  // VALID, stride 1: oh = 3, ow = 3 (NHWC).
  const int64_t oh = h - kh + 1, ow = w - kw + 1;
  std::vector<double> want(n * oh * ow * out_c, 0.0);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t x = 0; x < ow; ++x) {
        for (int64_t o = 0; o < out_c; ++o) {
          const int64_t g = o / og;
          double sum = 0;
          for (int64_t r = 0; r < kh; ++r) {
            for (int64_t s = 0; s < kw; ++s) {
              for (int64_t i = 0; i < fi; ++i) {
                sum += xv[((b * h + y + r) * w + x + s) * c + g * fi + i] *
                       fv[((r * kw + s) * fi + i) * out_c + o];
              }
            }
          }
          want[((b * oh + y) * ow + x) * out_c + o] = sum;
        }
      }
    }
  }
  const Geometry valid{n, h, w, c, kh, kw, 1, 1, 1, 1, "VALID", {}, ""};
  for (DataType t : kFloatTypes) {
    SCOPED_TRACE(DataTypeName(t));
    auto y = RunOp("Conv2D", {MakeTensor(t, {n, h, w, c}, xv), MakeTensor(t, {kh, kw, fi, out_c}, fv)},
                   [&](AttrMap& a) { SetConvAttrs(a, t, valid, false); }, "CUDA:0");
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(y->shape(), (Shape{n, oh, ow, out_c}));
    EXPECT_EQ(Values(*y), want);
  }
}

}  // namespace
}  // namespace plexus

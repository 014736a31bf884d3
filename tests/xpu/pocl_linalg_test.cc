// The XPU plugin's GEMM kernels (plugins/xpu/kernels/linalg.cl: px_gemm_f32,
// _f16, _bf16) run on PoCL against double-precision loops.
//
// Why plain loops and not sdk/reference: these tests launch the OpenCL
// kernels on raw buffers, without the runtime that hosts the reference
// plugin's kernels (which need host services and a graph to run); the loops
// here are the reference GEMM, written out in double.
//
// Tolerance of one output element with k products: the kernel accumulates
// in float, so |error| <= k * 2^-24 * sum_p |a_ip * b_pj| (one rounding per
// add and multiply), plus one rounding of the stored result (StoreEpsilon of
// its dtype, relative), plus the activation's float error; bounded below
// with 1e-6 absolute.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "pocl_harness.h"
#include "pocl_xpu_test_util.h"

namespace plexus::xpu::test {
namespace {

enum Act { kNone = 0, kRelu, kRelu6, kElu, kLeakyRelu, kTanh, kSigmoid };

double Activate(double x, int act, double alpha) {
  switch (act) {
    case kRelu: return x < 0 ? 0 : x;
    case kRelu6: return x < 0 ? 0 : (x > 6 ? 6 : x);
    case kElu: return x < 0 ? std::expm1(x) : x;
    case kLeakyRelu: return x < 0 ? alpha * x : x;
    case kTanh: return std::tanh(x);
    case kSigmoid: return 1 / (1 + std::exp(-x));
    default: return x;
  }
}

struct GemmCase {
  int64_t batch, m, n, k;
  bool ta, tb;
  bool a_repeat = false, b_repeat = false;  // one matrix for every batch (stride 0)
  bool bias = false;
  int act = kNone;
  float alpha = 0.2f;
};

// Runs one case for dtype t and compares with the double loops.
void RunGemm(PoclHarness* h, FloatType t, const GemmCase& c, uint32_t seed) {
  SCOPED_TRACE(::testing::Message()
               << Name(t) << " batch " << c.batch << " m " << c.m << " n " << c.n << " k " << c.k
               << " ta " << c.ta << " tb " << c.tb << " a_repeat " << c.a_repeat << " b_repeat "
               << c.b_repeat << " bias " << c.bias << " act " << c.act);
  std::mt19937 rng(seed);
  const int64_t a_count = (c.a_repeat ? 1 : c.batch) * c.m * c.k;
  const int64_t b_count = (c.b_repeat ? 1 : c.batch) * c.k * c.n;
  const std::vector<float> a = RandomValues(rng, t, static_cast<size_t>(a_count));
  const std::vector<float> b = RandomValues(rng, t, static_cast<size_t>(b_count));
  const std::vector<float> bias = RandomValues(rng, t, static_cast<size_t>(c.n), -2.0f, 2.0f);
  // Stored as a [m, k] (or [k, m] when transposed), b as [k, n] (or [n, k]).
  const int64_t a_rs = c.ta ? 1 : c.k, a_cs = c.ta ? c.m : 1;
  const int64_t b_rs = c.tb ? 1 : c.n, b_cs = c.tb ? c.k : 1;
  const int64_t a_batch = c.a_repeat ? 0 : c.m * c.k, b_batch = c.b_repeat ? 0 : c.k * c.n;
  const int64_t c_batch = c.m * c.n;
  const int64_t total = c.batch * c.m * c.n;

  ClBuffer da = UploadAs(h, t, a), db = UploadAs(h, t, b), dbias = UploadAs(h, t, bias);
  ClBuffer dc = h->Alloc(static_cast<size_t>(total) * ElementSize(t));
  const size_t global[3] = {static_cast<size_t>(c.n), static_cast<size_t>(c.m),
                            static_cast<size_t>(c.batch)};
  const size_t local[3] = {16, 16, 1};
  const std::string kernel = std::string("px_gemm_") + Suffix(t);
  ASSERT_TRUE(h->Run("linalg", kernel, 3, global, local,
                     {Mem(da), Mem(db), Mem(dc), Mem(dbias), Arg(c.m), Arg(c.n), Arg(c.k),
                      Arg(a_batch), Arg(a_rs), Arg(a_cs), Arg(b_batch), Arg(b_rs), Arg(b_cs),
                      Arg(c_batch), Arg(int32_t{c.bias ? 1 : 0}), Arg(int32_t{c.act}),
                      Arg(c.alpha)}));
  const std::vector<float> got = DownloadAs(h, t, dc, static_cast<size_t>(total));
  int failures = 0;
  for (int64_t bi = 0; bi < c.batch; ++bi) {
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        double sum = 0, abs_sum = 0;
        for (int64_t p = 0; p < c.k; ++p) {
          const double x = a[bi * a_batch + i * a_rs + p * a_cs];
          const double y = b[bi * b_batch + p * b_rs + j * b_cs];
          sum += x * y;
          abs_sum += std::fabs(x * y);
        }
        if (c.bias) {
          sum += bias[j];
          abs_sum += std::fabs(bias[j]);
        }
        const double want = Activate(sum, c.act, c.alpha);
        const double tol = (static_cast<double>(c.k) + 1) * 1.2e-7 * abs_sum +
                           StoreEpsilon(t) * std::fabs(want) + 1e-6;
        const double value = got[(bi * c.m + i) * c.n + j];
        if (!(std::fabs(value - want) <= tol) && ++failures <= 5) {
          ADD_FAILURE() << "C[" << bi << "][" << i << "][" << j << "] = " << value
                        << ", expected " << want << " (tolerance " << tol << ")";
        }
      }
    }
  }
  EXPECT_EQ(failures, 0);
}

class PoclGemmTest : public ::testing::TestWithParam<FloatType> {};

// Odd sizes that are not multiples of the 16 x 16 tile, every transpose.
TEST_P(PoclGemmTest, TransposesAndOddSizes) {
  PX_POCL_HARNESS(h);
  uint32_t seed = 1;
  for (const auto& mnk : std::vector<std::vector<int64_t>>{
           {1, 1, 1}, {17, 33, 19}, {16, 16, 16}, {3, 40, 70}, {31, 1, 5}, {1, 29, 48}}) {
    for (int tr = 0; tr < 4; ++tr) {
      GemmCase c{1, mnk[0], mnk[1], mnk[2], (tr & 1) != 0, (tr & 2) != 0};
      RunGemm(h, GetParam(), c, seed++);
    }
  }
}

// Batches, with either side repeated (batch broadcasting as the kernel class
// lowers it: stride 0).
TEST_P(PoclGemmTest, BatchesAndBroadcasting) {
  PX_POCL_HARNESS(h);
  RunGemm(h, GetParam(), GemmCase{3, 7, 9, 11, false, false}, 11);
  RunGemm(h, GetParam(), GemmCase{4, 18, 5, 20, true, false, true, false}, 12);
  RunGemm(h, GetParam(), GemmCase{2, 5, 17, 3, false, true, false, true}, 13);
  RunGemm(h, GetParam(), GemmCase{5, 20, 20, 33, true, true}, 14);
}

// k == 0: the empty sum (zeros), then the bias and activation.
TEST_P(PoclGemmTest, EmptyInnerDimension) {
  PX_POCL_HARNESS(h);
  RunGemm(h, GetParam(), GemmCase{1, 5, 7, 0, false, false}, 21);
  GemmCase with_bias{2, 3, 18, 0, false, false};
  with_bias.bias = true;
  with_bias.act = kRelu;
  RunGemm(h, GetParam(), with_bias, 22);
  // Exact: zeros for the plain product.
  const FloatType t = GetParam();
  ClBuffer a = UploadAs(h, t, {1.0f}), b = UploadAs(h, t, {1.0f});
  ClBuffer c = UploadAs(h, t, std::vector<float>(6, 7.0f));
  const size_t global[3] = {3, 2, 1}, local[3] = {16, 16, 1};
  const int64_t m = 2, n = 3, k = 0, zero = 0, one = 1;
  ASSERT_TRUE(h->Run("linalg", std::string("px_gemm_") + Suffix(t), 3, global, local,
                     {Mem(a), Mem(b), Mem(c), Mem(a), Arg(m), Arg(n), Arg(k), Arg(zero),
                      Arg(one), Arg(one), Arg(zero), Arg(one), Arg(one), Arg(zero),
                      Arg(int32_t{0}), Arg(int32_t{0}), Arg(0.2f)}));
  for (float v : DownloadAs(h, t, c, 6)) EXPECT_EQ(v, 0.0f);
}

// _FusedMatMul's epilogues: bias and each activation.
TEST_P(PoclGemmTest, BiasAndActivations) {
  PX_POCL_HARNESS(h);
  uint32_t seed = 31;
  for (int act : {kNone, kRelu, kRelu6, kElu, kLeakyRelu, kTanh, kSigmoid}) {
    GemmCase c{1, 19, 21, 9, false, act % 2 == 0};
    c.bias = true;
    c.act = act;
    c.alpha = 0.3f;
    RunGemm(h, GetParam(), c, seed++);
  }
}

// A small product checked against exact values.
TEST_P(PoclGemmTest, ExactSmallProduct) {
  PX_POCL_HARNESS(h);
  const FloatType t = GetParam();
  // [[1, 2], [3, 4]] x [[5, 6], [7, 8]] = [[19, 22], [43, 50]], + bias [1, -100], Relu.
  ClBuffer a = UploadAs(h, t, {1, 2, 3, 4}), b = UploadAs(h, t, {5, 6, 7, 8});
  ClBuffer bias = UploadAs(h, t, {1, -100});
  ClBuffer c = h->Alloc(4 * ElementSize(t));
  const size_t global[3] = {2, 2, 1}, local[3] = {16, 16, 1};
  const int64_t two = 2, one = 1, four = 4;
  ASSERT_TRUE(h->Run("linalg", std::string("px_gemm_") + Suffix(t), 3, global, local,
                     {Mem(a), Mem(b), Mem(c), Mem(bias), Arg(two), Arg(two), Arg(two), Arg(four),
                      Arg(two), Arg(one), Arg(four), Arg(two), Arg(one), Arg(four),
                      Arg(int32_t{1}), Arg(int32_t{kRelu}), Arg(0.2f)}));
  EXPECT_EQ(DownloadAs(h, t, c, 4), (std::vector<float>{20, 0, 44, 0}));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, PoclGemmTest, ::testing::ValuesIn(AllFloatTypes()),
                         [](const ::testing::TestParamInfo<FloatType>& info) {
                           return Name(info.param);
                         });

}  // namespace
}  // namespace plexus::xpu::test

// The XPU plugin's convolution-family kernels (plugins/xpu/kernels/conv.cl:
// px_conv2d_*, px_pool_*, px_batch_norm_*; float, half, bfloat16) run on
// PoCL against double-precision loops.
//
// Why plain loops and not sdk/reference: these tests launch the OpenCL
// kernels on raw buffers, without the runtime that hosts the reference
// plugin's kernels; the loops here are the reference definitions in double.
//
// Tolerances: float accumulation of `terms` products gives
// |error| <= terms * 2^-24 * sum |x * f| (the same bound as the GEMM test),
// plus one rounding of the stored result (StoreEpsilon, relative) and 1e-6
// absolute. Pooling's max is exact (the stored value is an input value);
// the average has the same bound with terms = the window's elements.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "abi.h"
#include "pocl_harness.h"
#include "pocl_xpu_test_util.h"

namespace plexus::xpu::test {
namespace {

// Flat index of (b, y, x, ch) in an [n, h, w, c] tensor stored NHWC or NCHW.
int64_t At(bool nchw, int64_t c, int64_t h, int64_t w, int64_t b, int64_t y, int64_t x,
           int64_t ch) {
  return nchw ? ((b * c + ch) * h + y) * w + x : ((b * h + y) * w + x) * c + ch;
}

double Activate(double x, int act, double alpha) {
  switch (act) {
    case 1: return x < 0 ? 0 : x;
    case 2: return x < 0 ? 0 : (x > 6 ? 6 : x);
    case 3: return x < 0 ? std::expm1(x) : x;
    case 4: return x < 0 ? alpha * x : x;
    case 5: return std::tanh(x);
    case 6: return 1 / (1 + std::exp(-x));
    default: return x;
  }
}

struct ConvCase {
  int64_t n, c, h, w;
  int64_t kh, kw, oc;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t top = 0, bottom = 0, left = 0, right = 0;
  int64_t groups = 1;   // c / filter depth
  bool nchw = false;
  int epi = 0;          // 0 none, 1 bias, 2 batch norm
  int act = 0;
};

void RunConv(PoclHarness* h, FloatType t, const ConvCase& cc, uint32_t seed) {
  SCOPED_TRACE(::testing::Message()
               << Name(t) << " x [" << cc.n << "," << cc.c << "," << cc.h << "," << cc.w
               << "] k " << cc.kh << "x" << cc.kw << " oc " << cc.oc << " s " << cc.sh << ","
               << cc.sw << " d " << cc.dh << "," << cc.dw << " pad " << cc.top << ","
               << cc.bottom << "," << cc.left << "," << cc.right << " groups " << cc.groups
               << " nchw " << cc.nchw << " epi " << cc.epi << " act " << cc.act);
  std::mt19937 rng(seed);
  px_xpu_conv_geom g{};
  g.n = cc.n;
  g.c = cc.c;
  g.h = cc.h;
  g.w = cc.w;
  g.oc = cc.oc;
  g.kh = cc.kh;
  g.kw = cc.kw;
  g.sh = cc.sh;
  g.sw = cc.sw;
  g.dh = cc.dh;
  g.dw = cc.dw;
  g.top = cc.top;
  g.left = cc.left;
  g.cpg = cc.c / cc.groups;
  g.ocpg = cc.oc / cc.groups;
  g.nchw = cc.nchw ? 1 : 0;
  g.oh = std::max<int64_t>(0, (cc.h + cc.top + cc.bottom - ((cc.kh - 1) * cc.dh + 1)) / cc.sh + 1);
  g.ow = std::max<int64_t>(0, (cc.w + cc.left + cc.right - ((cc.kw - 1) * cc.dw + 1)) / cc.sw + 1);
  const int64_t total = g.n * g.oh * g.ow * g.oc;
  const std::vector<float> x = RandomValues(rng, t, static_cast<size_t>(g.n * g.c * g.h * g.w));
  const std::vector<float> f = RandomValues(rng, t, static_cast<size_t>(g.kh * g.kw * g.cpg * g.oc));
  const std::vector<float> p0 = RandomValues(rng, t, static_cast<size_t>(g.oc), 0.5f, 2.0f);
  const std::vector<float> p1 = RandomValues(rng, t, static_cast<size_t>(g.oc));
  const std::vector<float> p2 = RandomValues(rng, t, static_cast<size_t>(g.oc));
  const std::vector<float> p3 = RandomValues(rng, t, static_cast<size_t>(g.oc), 0.1f, 3.0f);
  const float eps = 1e-3f, alpha = 0.25f;
  ClBuffer dx = UploadAs(h, t, x), df = UploadAs(h, t, f), d0 = UploadAs(h, t, p0),
           d1 = UploadAs(h, t, p1), d2 = UploadAs(h, t, p2), d3 = UploadAs(h, t, p3);
  ClBuffer dy = h->Alloc(static_cast<size_t>(total) * ElementSize(t));
  const size_t global = static_cast<size_t>(total);
  ASSERT_TRUE(h->Run("conv", std::string("px_conv2d_") + Suffix(t), 1, &global, nullptr,
                     {Mem(dx), Mem(df), Mem(dy), Arg(g), Arg(total), Arg(int32_t{cc.epi}),
                      Arg(int32_t{cc.act}), Arg(alpha), Arg(eps), Mem(d0), Mem(d1), Mem(d2),
                      Mem(d3)}));
  const std::vector<float> got = DownloadAs(h, t, dy, static_cast<size_t>(total));
  int failures = 0;
  for (int64_t b = 0; b < g.n; ++b) {
    for (int64_t i = 0; i < g.oh; ++i) {
      for (int64_t j = 0; j < g.ow; ++j) {
        for (int64_t o = 0; o < g.oc; ++o) {
          double sum = 0, abs_sum = 0;
          const int64_t group = o / g.ocpg;
          for (int64_t ky = 0; ky < g.kh; ++ky) {
            for (int64_t kx = 0; kx < g.kw; ++kx) {
              const int64_t y = i * g.sh - g.top + ky * g.dh, xx = j * g.sw - g.left + kx * g.dw;
              if (y < 0 || y >= g.h || xx < 0 || xx >= g.w) continue;
              for (int64_t ci = 0; ci < g.cpg; ++ci) {
                const double v = x[At(cc.nchw, g.c, g.h, g.w, b, y, xx, group * g.cpg + ci)] *
                                 static_cast<double>(f[((ky * g.kw + kx) * g.cpg + ci) * g.oc + o]);
                sum += v;
                abs_sum += std::fabs(v);
              }
            }
          }
          double tol_scale = abs_sum;
          if (cc.epi == 1) {
            sum += p0[o];
            tol_scale += std::fabs(p0[o]);
          } else if (cc.epi == 2) {
            const double s = p0[o] / std::sqrt(static_cast<double>(p3[o]) + eps);
            sum = (sum - p2[o]) * s + p1[o];
            tol_scale = (abs_sum + std::fabs(p2[o])) * std::fabs(s) + std::fabs(p1[o]);
          }
          const double want = Activate(sum, cc.act, alpha);
          const int64_t terms = g.kh * g.kw * g.cpg + 4;
          const double tol = static_cast<double>(terms) * 1.2e-7 * tol_scale +
                             StoreEpsilon(t) * std::fabs(want) + 1e-6;
          const double value = got[At(cc.nchw, g.oc, g.oh, g.ow, b, i, j, o)];
          if (!(std::fabs(value - want) <= tol) && ++failures <= 5) {
            ADD_FAILURE() << "y(" << b << "," << i << "," << j << "," << o << ") = " << value
                          << ", expected " << want << " (tolerance " << tol << ")";
          }
        }
      }
    }
  }
  EXPECT_EQ(failures, 0);
}

class PoclConvTest : public ::testing::TestWithParam<FloatType> {};

TEST_P(PoclConvTest, Conv2DLayoutsStridesDilationsPadding) {
  PX_POCL_HARNESS(h);
  uint32_t seed = 1;
  for (bool nchw : {false, true}) {
    // VALID, 1x1, odd sizes.
    RunConv(h, GetParam(), ConvCase{2, 3, 7, 5, 3, 3, 4, 1, 1, 1, 1, 0, 0, 0, 0, 1, nchw}, seed++);
    RunConv(h, GetParam(), ConvCase{1, 5, 4, 4, 1, 1, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, nchw}, seed++);
    // SAME-like asymmetric padding (bottom/right extra), strides 2.
    RunConv(h, GetParam(), ConvCase{2, 4, 9, 8, 3, 2, 5, 2, 2, 1, 1, 1, 1, 0, 1, 1, nchw}, seed++);
    // Dilations with explicit padding.
    RunConv(h, GetParam(), ConvCase{1, 2, 11, 10, 3, 3, 3, 1, 2, 2, 3, 2, 1, 3, 0, 1, nchw},
            seed++);
    // A window larger than the input (all taps in the padding for some outputs).
    RunConv(h, GetParam(), ConvCase{1, 2, 2, 3, 5, 5, 2, 1, 1, 1, 1, 2, 2, 2, 2, 1, nchw}, seed++);
  }
}

TEST_P(PoclConvTest, GroupedAndDepthwise) {
  PX_POCL_HARNESS(h);
  uint32_t seed = 40;
  for (bool nchw : {false, true}) {
    // Grouped Conv2D: 6 input channels, filter depth 2 (3 groups), 9 outputs.
    RunConv(h, GetParam(), ConvCase{2, 6, 5, 6, 3, 3, 9, 1, 1, 1, 1, 1, 1, 1, 1, 3, nchw}, seed++);
    // Depthwise: c = 4, multiplier 2 -> cpg 1, oc 8, 4 groups.
    RunConv(h, GetParam(), ConvCase{1, 4, 7, 7, 3, 3, 8, 2, 1, 1, 1, 1, 1, 1, 1, 4, nchw}, seed++);
    // Depthwise, multiplier 1, dilated.
    RunConv(h, GetParam(), ConvCase{2, 3, 8, 6, 2, 2, 3, 1, 1, 2, 2, 0, 0, 0, 0, 3, nchw}, seed++);
  }
}

TEST_P(PoclConvTest, FusedEpilogues) {
  PX_POCL_HARNESS(h);
  uint32_t seed = 60;
  for (int epi : {1, 2}) {
    for (int act = 0; act <= 6; ++act) {
      ConvCase c{1, 3, 5, 4, 2, 3, 5, 1, 1, 1, 1, 0, 1, 1, 1, 1, act % 2 == 1};
      c.epi = epi;
      c.act = act;
      RunConv(h, GetParam(), c, seed++);
    }
  }
}

TEST_P(PoclConvTest, Conv2DExactValues) {
  PX_POCL_HARNESS(h);
  const FloatType t = GetParam();
  // 1x3x3x1 input 1..9, 2x2 filter of ones, VALID: window sums.
  px_xpu_conv_geom g{1, 1, 3, 3, 1, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 1, 1, 0};
  ClBuffer x = UploadAs(h, t, {1, 2, 3, 4, 5, 6, 7, 8, 9}), f = UploadAs(h, t, {1, 1, 1, 1});
  ClBuffer y = h->Alloc(4 * ElementSize(t));
  const int64_t total = 4;
  const size_t global = 4;
  ASSERT_TRUE(h->Run("conv", std::string("px_conv2d_") + Suffix(t), 1, &global, nullptr,
                     {Mem(x), Mem(f), Mem(y), Arg(g), Arg(total), Arg(int32_t{0}),
                      Arg(int32_t{0}), Arg(0.2f), Arg(1e-3f), Mem(x), Mem(x), Mem(x), Mem(x)}));
  EXPECT_EQ(DownloadAs(h, t, y, 4), (std::vector<float>{12, 16, 24, 28}));
}

// ---------------------------------------------------------------------------
// Pooling
// ---------------------------------------------------------------------------

void RunPool(PoclHarness* h, FloatType t, bool is_max, const px_xpu_pool_geom& g, uint32_t seed) {
  SCOPED_TRACE(::testing::Message()
               << Name(t) << (is_max ? " max" : " avg") << " x [" << g.n << "," << g.c << ","
               << g.h << "," << g.w << "] k " << g.kh << "x" << g.kw << " s " << g.sh << ","
               << g.sw << " pad " << g.top << "," << g.left << " out " << g.oh << "x" << g.ow
               << " nchw " << g.nchw);
  std::mt19937 rng(seed);
  const std::vector<float> x = RandomValues(rng, t, static_cast<size_t>(g.n * g.c * g.h * g.w));
  const int64_t total = g.n * g.c * g.oh * g.ow;
  ClBuffer dx = UploadAs(h, t, x);
  ClBuffer dy = h->Alloc(static_cast<size_t>(total) * ElementSize(t));
  const size_t global = static_cast<size_t>(total);
  ASSERT_TRUE(h->Run("conv", std::string("px_pool_") + Suffix(t), 1, &global, nullptr,
                     {Mem(dx), Mem(dy), Arg(g), Arg(total), Arg(int32_t{is_max ? 1 : 0})}));
  const std::vector<float> got = DownloadAs(h, t, dy, static_cast<size_t>(total));
  const bool nchw = g.nchw != 0;
  int failures = 0;
  for (int64_t b = 0; b < g.n; ++b) {
    for (int64_t i = 0; i < g.oh; ++i) {
      for (int64_t j = 0; j < g.ow; ++j) {
        for (int64_t ch = 0; ch < g.c; ++ch) {
          double acc = is_max ? -std::numeric_limits<double>::infinity() : 0, abs_sum = 0;
          int64_t count = 0;
          for (int64_t ky = 0; ky < g.kh; ++ky) {
            for (int64_t kx = 0; kx < g.kw; ++kx) {
              const int64_t y = i * g.sh - g.top + ky, xx = j * g.sw - g.left + kx;
              if (y < 0 || y >= g.h || xx < 0 || xx >= g.w) continue;
              const double v = x[At(nchw, g.c, g.h, g.w, b, y, xx, ch)];
              acc = is_max ? std::max(acc, v) : acc + v;
              abs_sum += std::fabs(v);
              ++count;
            }
          }
          if (!is_max) acc /= static_cast<double>(count);
          const double want = is_max ? acc : RoundTo(t, static_cast<float>(acc));
          const double tol =
              is_max ? 0.0
                     : static_cast<double>(count + 1) * 1.2e-7 * abs_sum / static_cast<double>(count) +
                           StoreEpsilon(t) * std::fabs(acc) + 1e-6;
          const double value = got[At(nchw, g.c, g.oh, g.ow, b, i, j, ch)];
          if (!(std::fabs(value - want) <= tol) && ++failures <= 5) {
            ADD_FAILURE() << "y(" << b << "," << i << "," << j << "," << ch << ") = " << value
                          << ", expected " << want << " (tolerance " << tol << ")";
          }
        }
      }
    }
  }
  EXPECT_EQ(failures, 0);
}

// The output size as the SDK's Window computes it (SAME: ceil(in / stride),
// padding before = needed / 2; VALID: no padding).
px_xpu_pool_geom MakePool(int64_t n, int64_t c, int64_t h, int64_t w, int64_t kh, int64_t kw,
                          int64_t sh, int64_t sw, bool same, bool nchw) {
  px_xpu_pool_geom g{n, c, h, w, 0, 0, kh, kw, sh, sw, 0, 0, nchw ? 1 : 0};
  if (same) {
    g.oh = (h + sh - 1) / sh;
    g.ow = (w + sw - 1) / sw;
    g.top = std::max<int64_t>(0, (g.oh - 1) * sh + kh - h) / 2;
    g.left = std::max<int64_t>(0, (g.ow - 1) * sw + kw - w) / 2;
  } else {
    g.oh = (h - kh + sh) / sh;
    g.ow = (w - kw + sw) / sw;
  }
  return g;
}

class PoclPoolTest : public ::testing::TestWithParam<FloatType> {};

TEST_P(PoclPoolTest, MaxAndAvgSameValid) {
  PX_POCL_HARNESS(h);
  uint32_t seed = 100;
  for (bool is_max : {true, false}) {
    for (bool nchw : {false, true}) {
      for (bool same : {false, true}) {
        RunPool(h, GetParam(), is_max, MakePool(2, 3, 7, 9, 3, 3, 2, 2, same, nchw), seed++);
        RunPool(h, GetParam(), is_max, MakePool(1, 5, 6, 5, 2, 3, 1, 2, same, nchw), seed++);
        RunPool(h, GetParam(), is_max, MakePool(3, 1, 4, 4, 4, 4, 3, 3, same, nchw), seed++);
        RunPool(h, GetParam(), is_max, MakePool(1, 2, 5, 5, 1, 1, 1, 1, same, nchw), seed++);
      }
    }
  }
}

TEST_P(PoclPoolTest, ExactValues) {
  PX_POCL_HARNESS(h);
  const FloatType t = GetParam();
  // 4x4 input 0..15, 2x2 windows, stride 2: max and mean of each quarter.
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i);
  const px_xpu_pool_geom g = MakePool(1, 1, 4, 4, 2, 2, 2, 2, false, false);
  ClBuffer dx = UploadAs(h, t, x), dy = h->Alloc(4 * ElementSize(t));
  const int64_t total = 4;
  const size_t global = 4;
  ASSERT_TRUE(h->Run("conv", std::string("px_pool_") + Suffix(t), 1, &global, nullptr,
                     {Mem(dx), Mem(dy), Arg(g), Arg(total), Arg(int32_t{1})}));
  EXPECT_EQ(DownloadAs(h, t, dy, 4), (std::vector<float>{5, 7, 13, 15}));
  ASSERT_TRUE(h->Run("conv", std::string("px_pool_") + Suffix(t), 1, &global, nullptr,
                     {Mem(dx), Mem(dy), Arg(g), Arg(total), Arg(int32_t{0})}));
  EXPECT_EQ(DownloadAs(h, t, dy, 4), (std::vector<float>{2.5f, 4.5f, 10.5f, 12.5f}));
}

// ---------------------------------------------------------------------------
// FusedBatchNorm inference
// ---------------------------------------------------------------------------

class PoclBatchNormTest : public ::testing::TestWithParam<FloatType> {};

TEST_P(PoclBatchNormTest, NhwcAndNchw) {
  PX_POCL_HARNESS(h);
  const FloatType t = GetParam();
  std::mt19937 rng(7);
  for (bool nchw : {false, true}) {
    for (const auto& s : std::vector<std::vector<int64_t>>{{2, 3, 5, 7}, {1, 1, 1, 1}, {3, 4, 1, 17}}) {
      const int64_t n = s[0], hh = s[1], ww = s[2], c = s[3];
      const int64_t total = n * hh * ww * c;
      const std::vector<float> x = RandomValues(rng, t, static_cast<size_t>(total), -3, 3);
      const std::vector<float> scale = RandomValues(rng, FloatType::kF32, c, 0.5f, 2.0f);
      const std::vector<float> offset = RandomValues(rng, FloatType::kF32, c);
      const std::vector<float> mean = RandomValues(rng, FloatType::kF32, c);
      const std::vector<float> var = RandomValues(rng, FloatType::kF32, c, 0.1f, 2.0f);
      const float eps = 1e-3f;
      ClBuffer dx = UploadAs(h, t, x), ds = h->Upload(scale), dof = h->Upload(offset),
               dm = h->Upload(mean), dv = h->Upload(var);
      ClBuffer dy = h->Alloc(static_cast<size_t>(total) * ElementSize(t));
      const int64_t inner = nchw ? hh * ww : 1;
      const size_t global = static_cast<size_t>(total);
      ASSERT_TRUE(h->Run("conv", std::string("px_batch_norm_") + Suffix(t), 1, &global, nullptr,
                         {Mem(dx), Mem(ds), Mem(dof), Mem(dm), Mem(dv), Mem(dy), Arg(total),
                          Arg(c), Arg(inner), Arg(eps)}));
      const std::vector<float> got = DownloadAs(h, t, dy, static_cast<size_t>(total));
      for (int64_t k = 0; k < total; ++k) {
        const int64_t ch = (k / inner) % c;
        const double sc = scale[ch] / std::sqrt(static_cast<double>(var[ch]) + eps);
        const double want = (x[k] - static_cast<double>(mean[ch])) * sc + offset[ch];
        const double tol = 8 * 1.2e-7 * (std::fabs((x[k] - mean[ch]) * sc) + std::fabs(offset[ch])) +
                           StoreEpsilon(t) * std::fabs(want) + 1e-6;
        ASSERT_NEAR(got[k], want, tol) << Name(t) << " nchw " << nchw << " k " << k;
      }
    }
  }
}

auto ParamName = [](const ::testing::TestParamInfo<FloatType>& info) { return Name(info.param); };
INSTANTIATE_TEST_SUITE_P(Dtypes, PoclConvTest, ::testing::ValuesIn(AllFloatTypes()), ParamName);
INSTANTIATE_TEST_SUITE_P(Dtypes, PoclPoolTest, ::testing::ValuesIn(AllFloatTypes()), ParamName);
INSTANTIATE_TEST_SUITE_P(Dtypes, PoclBatchNormTest, ::testing::ValuesIn(AllFloatTypes()),
                         ParamName);

}  // namespace
}  // namespace plexus::xpu::test

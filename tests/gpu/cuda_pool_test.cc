// The CUDA plugin's MaxPool and AvgPool on CUDA:0 against the cpu plugin:
// every dtype (float, double, half, bfloat16), SAME and VALID padding (and
// EXPLICIT for MaxPool), NHWC and NCHW, several window and stride shapes
// (windows larger than the input, strides larger than the window), NaN and
// -inf in the input, zero-size shapes, and exact values on small cases.
// Skipped, with the reason, where the plugin reports no CUDA device; label
// gpu.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "attr_value.pb.h"
#include "cases.h"
#include "graph.pb.h"
#include "gtest/gtest.h"
#include "plexus/plexus.h"
#include "gpu/cuda_test_util.h"
#include "test_util.h"

namespace plexus {
namespace {

using conformance::CompareTensors;
using conformance::DefaultTolerance;
using conformance::ElementAsDouble;
using conformance::MakeTensor;
using conformance::RandomTensor;
using conformance::Tolerance;

using cuda_test::AttrMap;
using cuda_test::Describe;
using cuda_test::kAllTypes;
using cuda_test::kFloatTypes;
using cuda_test::NoCudaDeviceReason;
using cuda_test::RunOp;
using cuda_test::SetAttrs;
using cuda_test::SetType;
using cuda_test::TheRuntime;
using cuda_test::Values;
using cuda_test::ExpectCudaMatchesCpu;

void SetPoolAttrs(AttrMap& a, DataType t, const std::vector<int64_t>& k,
                  const std::vector<int64_t>& s, const std::string& padding, bool nchw) {
  SetType(a, "T", t);
  for (int64_t v : k) a["ksize"].mutable_list()->add_i(v);
  for (int64_t v : s) a["strides"].mutable_list()->add_i(v);
  a["padding"].set_s(padding);
  a["data_format"].set_s(nchw ? "NCHW" : "NHWC");
}

// ksize/strides [kh, kw] and [sh, sw] placed in the layout's 4-element lists.
std::vector<int64_t> Spatial(int64_t a, int64_t b, bool nchw) {
  return nchw ? std::vector<int64_t>{1, 1, a, b} : std::vector<int64_t>{1, a, b, 1};
}

// [n, h, w, c] in the layout's order.
Shape InputShape(int64_t n, int64_t h, int64_t w, int64_t c, bool nchw) {
  return nchw ? Shape{n, c, h, w} : Shape{n, h, w, c};
}

struct Window2 {
  int64_t kh, kw, sh, sw;
};

const std::vector<Window2> kWindows = {
    {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 1, 1}, {3, 3, 2, 2}, {2, 3, 1, 2}, {5, 4, 3, 1}, {1, 3, 3, 1}};

TEST(CudaPool, EveryOpDtypePaddingFormatWindow) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(1);
  for (const char* op : {"MaxPool", "AvgPool"}) {
    const bool max = std::string(op) == "MaxPool";
    for (DataType t : kFloatTypes) {
      Tolerance tol = DefaultTolerance(t);
      if (max) {
        tol.atol = 0;
        tol.rtol = 0;
      }
      for (bool nchw : {false, true}) {
        for (const char* padding : {"SAME", "VALID"}) {
          for (const Window2& win : kWindows) {
            for (const std::vector<int64_t>& d :
                 std::vector<std::vector<int64_t>>{{2, 9, 11, 3}, {1, 7, 6, 17}, {3, 5, 5, 1}}) {
              const Tensor x = RandomTensor(t, InputShape(d[0], d[1], d[2], d[3], nchw), rng);
              SCOPED_TRACE(absl::StrCat(padding, nchw ? " NCHW" : " NHWC", " k ", win.kh, "x",
                                        win.kw, " s ", win.sh, "x", win.sw));
              ExpectCudaMatchesCpu(op, {x}, [&](AttrMap& a) {
                SetPoolAttrs(a, t, Spatial(win.kh, win.kw, nchw), Spatial(win.sh, win.sw, nchw),
                             padding, nchw);
              }, tol);
            }
          }
        }
      }
    }
  }
}

TEST(CudaPool, LargeAndWindowBiggerThanInput) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(2);
  for (const char* op : {"MaxPool", "AvgPool"}) {
    for (bool nchw : {false, true}) {
      const SetAttrs big = [&](AttrMap& a) {
        SetPoolAttrs(a, DataType::kFloat, Spatial(3, 3, nchw), Spatial(2, 2, nchw), "SAME", nchw);
      };
      ExpectCudaMatchesCpu(op, {RandomTensor(DataType::kFloat, InputShape(4, 65, 63, 64, nchw), rng)},
                           big, DefaultTolerance(DataType::kFloat));
      // SAME with a window larger than the input: every window is partly
      // outside.
      const SetAttrs wide = [&](AttrMap& a) {
        SetPoolAttrs(a, DataType::kHalf, Spatial(7, 6, nchw), Spatial(1, 1, nchw), "SAME", nchw);
      };
      ExpectCudaMatchesCpu(op, {RandomTensor(DataType::kHalf, InputShape(2, 4, 3, 5, nchw), rng)},
                           wide, DefaultTolerance(DataType::kHalf));
    }
  }
}

TEST(CudaPool, ZeroSize) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(3);
  for (const char* op : {"MaxPool", "AvgPool"}) {
    for (bool nchw : {false, true}) {
      for (const Shape& nhwc : std::vector<Shape>{{0, 4, 4, 3}, {2, 4, 4, 0}, {2, 0, 4, 3}}) {
        const Shape shape = InputShape(nhwc[0], nhwc[1], nhwc[2], nhwc[3], nchw);
        // VALID on a zero height would ask for a negative output: SAME only there.
        const char* padding = nhwc[1] == 0 ? "SAME" : "VALID";
        const Tensor y = ExpectCudaMatchesCpu(op, {RandomTensor(DataType::kFloat, shape, rng)},
                                              [&](AttrMap& a) {
                                                SetPoolAttrs(a, DataType::kFloat,
                                                             Spatial(2, 2, nchw),
                                                             Spatial(2, 2, nchw), padding, nchw);
                                              },
                                              DefaultTolerance(DataType::kFloat));
        EXPECT_EQ(y.num_elements(), 0);
      }
    }
  }
}

TEST(CudaPool, ExactValues) {
  PX_SKIP_WITHOUT_CUDA();
  // x (NHWC [1, 3, 3, 1]) = 1..9; 2 x 2 windows with stride 2 and SAME
  // padding (padding after only): windows {1,2,4,5}, {3,6}, {7,8}, {9}.
  const Tensor x = MakeTensor(DataType::kFloat, {1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const SetAttrs attrs = [](AttrMap& a) {
    SetPoolAttrs(a, DataType::kFloat, {1, 2, 2, 1}, {1, 2, 2, 1}, "SAME", false);
  };
  auto mx = RunOp("MaxPool", {x}, attrs, "CUDA:0");
  ASSERT_TRUE(mx.ok()) << mx.status();
  EXPECT_EQ(mx->shape(), (Shape{1, 2, 2, 1}));
  EXPECT_EQ(Values(*mx), (std::vector<double>{5, 6, 8, 9}));
  // AvgPool divides by the number of in-bounds elements.
  auto av = RunOp("AvgPool", {x}, attrs, "CUDA:0");
  ASSERT_TRUE(av.ok()) << av.status();
  EXPECT_EQ(Values(*av), (std::vector<double>{3, 4.5, 7.5, 9}));
  // NCHW [1, 2, 2, 2], VALID 2 x 2: one output per channel.
  const Tensor xc = MakeTensor(DataType::kDouble, {1, 2, 2, 2}, {1, -2, 3, 4, -5, -6, -7, -8});
  const SetAttrs nchw = [](AttrMap& a) {
    SetPoolAttrs(a, DataType::kDouble, {1, 1, 2, 2}, {1, 1, 1, 1}, "VALID", true);
  };
  auto mc = RunOp("MaxPool", {xc}, nchw, "CUDA:0");
  ASSERT_TRUE(mc.ok()) << mc.status();
  EXPECT_EQ(mc->shape(), (Shape{1, 2, 1, 1}));
  EXPECT_EQ(Values(*mc), (std::vector<double>{4, -5}));
  auto ac = RunOp("AvgPool", {xc}, nchw, "CUDA:0");
  ASSERT_TRUE(ac.ok()) << ac.status();
  EXPECT_EQ(Values(*ac), (std::vector<double>{1.5, -6.5}));
}

TEST(CudaPool, NanAndInfinity) {
  PX_SKIP_WITHOUT_CUDA();
  // MaxPool skips NaN (like the cpu plugin); AvgPool propagates it; -inf
  // alone gives -inf.
  const double nan = std::nan(""), inf = INFINITY;
  const Tensor x = MakeTensor(DataType::kFloat, {1, 1, 4, 1}, {nan, 1, -inf, -inf});
  const SetAttrs attrs = [](AttrMap& a) {
    SetPoolAttrs(a, DataType::kFloat, {1, 1, 2, 1}, {1, 1, 2, 1}, "VALID", false);
  };
  for (const char* op : {"MaxPool", "AvgPool"}) {
    ExpectCudaMatchesCpu(op, {x}, attrs, DefaultTolerance(DataType::kFloat));
  }
  auto mx = RunOp("MaxPool", {x}, attrs, "CUDA:0");
  ASSERT_TRUE(mx.ok()) << mx.status();
  const std::vector<double> v = Values(*mx);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0], 1);
  EXPECT_EQ(v[1], -inf);
  auto av = RunOp("AvgPool", {x}, attrs, "CUDA:0");
  ASSERT_TRUE(av.ok()) << av.status();
  EXPECT_TRUE(std::isnan(Values(*av)[0]));
}

TEST(CudaPool, MaxPoolExplicitPadding) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(4);
  for (DataType t : kFloatTypes) {
    const Tensor x = RandomTensor(t, {2, 6, 7, 5}, rng);
    Tolerance exact;
    exact.atol = 0;
    exact.rtol = 0;
    ExpectCudaMatchesCpu("MaxPool", {x}, [&](AttrMap& a) {
      SetPoolAttrs(a, t, {1, 3, 2, 1}, {1, 2, 1, 1}, "EXPLICIT", false);
      for (int64_t p : {0, 0, 1, 2, 0, 1, 0, 0}) a["explicit_paddings"].mutable_list()->add_i(p);
    }, exact);
  }
}

TEST(CudaPool, BadAttributesAreRefused) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(5);
  const Tensor x = RandomTensor(DataType::kFloat, {1, 4, 4, 2}, rng);
  // Pooling over the depth dimension.
  auto y = RunOp("MaxPool", {x}, [](AttrMap& a) {
    SetPoolAttrs(a, DataType::kFloat, {1, 2, 2, 2}, {1, 1, 1, 1}, "VALID", false);
  }, "CUDA:0");
  EXPECT_FALSE(y.ok());
  // VALID with a window larger than the input.
  y = RunOp("AvgPool", {x}, [](AttrMap& a) {
    SetPoolAttrs(a, DataType::kFloat, {1, 5, 1, 1}, {1, 1, 1, 1}, "VALID", false);
  }, "CUDA:0");
  EXPECT_FALSE(y.ok());
}

}  // namespace
}  // namespace plexus

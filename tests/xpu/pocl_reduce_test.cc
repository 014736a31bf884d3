// The XPU plugin's reduction kernels (plugins/xpu/kernels/reduce.cl) on
// PoCL: Sum, Mean, Max, Min, Prod (both the work-group and the serial
// kernels), All / Any, ArgMax / ArgMin (int64 and int32 output), Softmax,
// LogSoftmax and BiasAdd, for float32, float16 and bfloat16, over single and
// multiple axes, lengths that are not powers of two (and longer than a
// work-group), empty reductions and zero-size outputs; expected values from
// double-precision loops (pocl_test_util.h).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "abi.h"
#include "kernels/plans.h"
#include "pocl_harness.h"
#include "pocl_test_util.h"

namespace plexus::xpu::test {
namespace {

using Shape = std::vector<int64_t>;
const FloatType kFloatTypes[] = {FloatType::kF32, FloatType::kF16, FloatType::kBF16};

struct ReduceShape {
  Shape shape;
  std::vector<int> axes;
};
const ReduceShape kShapes[] = {
    {{7, 1000}, {1}},       // rows, longer than a work-group, not a power of two
    {{1000, 3}, {0}},       // columns
    {{4, 37, 5}, {1}},      // middle axis
    {{6, 5, 7}, {0, 2}},    // two separate groups of axes
    {{3, 300}, {0, 1}},     // everything
    {{5}, {0}},             // short
    {{3, 0, 4}, {1}},       // empty reduction: the identity
    {{0, 4}, {1}},          // no outputs
};

// The reduction of x (shape) over axes, in double: element o of the output
// folds the elements whose kept coordinates are o's.
std::vector<std::vector<double>> Groups(const std::vector<float>& x, const Shape& shape,
                                        const std::vector<bool>& reduced, int64_t outputs) {
  std::vector<std::vector<double>> groups(outputs);
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
    int64_t rest = i, o = 0, o_stride = 1;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      const int64_t c = rest % shape[d];
      rest /= shape[d];
      if (!reduced[d]) {
        o += c * o_stride;
        o_stride *= shape[d];
      }
    }
    groups[o].push_back(x[i]);
  }
  return groups;
}

px_xpu_reduce_plan Plan(const Shape& shape, const std::vector<bool>& reduced) {
  px_xpu_reduce_plan plan;
  EXPECT_TRUE(MakeReducePlan(shape, reduced, &plan));
  return plan;
}

TEST(PoclReduce, SumMeanMaxMinProd) {
  PX_POCL_HARNESS(h);
  const int ops[] = {PX_RED_SUM, PX_RED_MEAN, PX_RED_MAX, PX_RED_MIN, PX_RED_PROD};
  for (FloatType t : kFloatTypes) {
    for (const ReduceShape& rs : kShapes) {
      std::vector<bool> reduced(rs.shape.size(), false);
      for (int a : rs.axes) reduced[a] = true;
      const px_xpu_reduce_plan plan = Plan(rs.shape, reduced);
      const int64_t outputs = plan.outputs;
      std::vector<float> x = RandomFloats(NumElements(rs.shape), -2, 2, 3);
      for (float& v : x) v = Stored(v, t);
      const auto groups = Groups(x, rs.shape, reduced, outputs);
      ClBuffer dx = UploadFloats(h, x, t);
      for (int op : ops) {
        for (const char* shape_kind : {"group", "serial"}) {
          SCOPED_TRACE(std::string(Suffix(t)) + " op " + std::to_string(op) + " " + shape_kind +
                       " " + sdk::ShapeString(rs.shape));
          std::vector<float> x_prod = x;
          ClBuffer dy = h->Alloc(outputs * ElementSize(t));
          const bool group = std::string(shape_kind) == "group";
          size_t global = group ? outputs * PX_XPU_REDUCE_WG : outputs;
          size_t local = group ? PX_XPU_REDUCE_WG : 64;
          ASSERT_TRUE(h->Run("reduce", std::string("reduce_") + Suffix(t) + "_" + shape_kind, 1,
                             &global, &local, {Mem(dx), Mem(dy), Arg(plan), Arg(int32_t{op})}));
          std::vector<float> y = DownloadFloats(h, dy, outputs, t);
          for (int64_t o = 0; o < outputs; ++o) {
            const std::vector<double>& g = groups[o];
            double expected = 0, scale = 0;  // scale: for the tolerance
            switch (op) {
              case PX_RED_SUM:
              case PX_RED_MEAN:
                for (double v : g) {
                  expected += v;
                  scale += std::fabs(v);
                }
                if (op == PX_RED_MEAN) {
                  expected = g.empty() ? NAN : expected / g.size();
                  scale = g.empty() ? 0 : scale / g.size();
                }
                break;
              case PX_RED_MAX:
                expected = -INFINITY;
                for (double v : g) expected = std::max(expected, v);
                break;
              case PX_RED_MIN:
                expected = INFINITY;
                for (double v : g) expected = std::min(expected, v);
                break;
              default:
                expected = 1;
                for (double v : g) expected *= v;
                break;
            }
            // Float accumulation: a relative error of ~count * 2^-24 of the
            // sum of magnitudes, then one rounding to the stored type.
            Tolerance tol = DefaultTolerance(t);
            const double accumulation = 4e-7 * std::sqrt(double(g.size()) + 1) * (scale + 1e-30);
            const bool ok = Close(y[o], Stored(static_cast<float>(expected), t),
                                  {tol.rel * (op == PX_RED_PROD ? 4 : 1), tol.abs + accumulation});
            EXPECT_TRUE(ok) << "output " << o << " of " << outputs << ": got " << y[o]
                            << ", expected " << expected;
            if (!ok) break;
          }
        }
      }
    }
  }
}

TEST(PoclReduce, MaxPropagatesNan) {
  PX_POCL_HARNESS(h);
  std::vector<float> x(600, 1.0f);
  x[517] = NAN;
  const px_xpu_reduce_plan plan = Plan({600}, {true});
  ClBuffer dx = h->Upload(x);
  for (int op : {PX_RED_MAX, PX_RED_MIN}) {
    ClBuffer dy = h->Alloc(4);
    size_t global = PX_XPU_REDUCE_WG, local = PX_XPU_REDUCE_WG;
    ASSERT_TRUE(h->Run("reduce", "reduce_f32_group", 1, &global, &local,
                       {Mem(dx), Mem(dy), Arg(plan), Arg(int32_t{op})}));
    EXPECT_TRUE(std::isnan(h->Download<float>(dy, 1)[0]));
  }
}

TEST(PoclReduce, AllAny) {
  PX_POCL_HARNESS(h);
  // [3, 700] over axis 1: row 0 all true, row 1 one false (late), row 2 all false but one.
  std::vector<uint8_t> x(3 * 700, 1);
  x[700 + 650] = 0;
  for (int i = 0; i < 700; ++i) x[1400 + i] = i == 333;
  const px_xpu_reduce_plan plan = Plan({3, 700}, {false, true});
  ClBuffer dx = h->Upload(x);
  for (const char* kind : {"group", "serial"}) {
    for (int op : {PX_RED_ALL, PX_RED_ANY}) {
      ClBuffer dy = h->Alloc(3);
      const bool group = std::string(kind) == "group";
      size_t global = group ? 3 * PX_XPU_REDUCE_WG : 3, local = group ? PX_XPU_REDUCE_WG : 64;
      ASSERT_TRUE(h->Run("reduce", std::string("reduce_b8_") + kind, 1, &global, &local,
                         {Mem(dx), Mem(dy), Arg(plan), Arg(int32_t{op})}));
      const std::vector<uint8_t> expected =
          op == PX_RED_ALL ? std::vector<uint8_t>{1, 0, 0} : std::vector<uint8_t>{1, 1, 1};
      EXPECT_EQ(h->Download<uint8_t>(dy, 3), expected) << kind << " op " << op;
    }
  }
  // Empty: All is true, Any false.
  px_xpu_reduce_plan empty;
  ASSERT_TRUE(MakeReducePlan({2, 0}, {false, true}, &empty));
  for (int op : {PX_RED_ALL, PX_RED_ANY}) {
    ClBuffer dy = h->Alloc(2);
    size_t global = 2 * PX_XPU_REDUCE_WG, local = PX_XPU_REDUCE_WG;
    ASSERT_TRUE(h->Run("reduce", "reduce_b8_group", 1, &global, &local,
                       {Mem(dx), Mem(dy), Arg(empty), Arg(int32_t{op})}));
    EXPECT_EQ(h->Download<uint8_t>(dy, 2), std::vector<uint8_t>(2, op == PX_RED_ALL ? 1 : 0));
  }
}

TEST(PoclReduce, ArgMaxArgMin) {
  PX_POCL_HARNESS(h);
  const Shape shapes[] = {{5, 777}, {300, 6}, {4, 9, 3}};
  const int axes[] = {1, 0, 1};
  for (int s = 0; s < 3; ++s) {
    const Shape& shape = shapes[s];
    std::vector<bool> reduced(shape.size(), false);
    reduced[axes[s]] = true;
    const px_xpu_reduce_plan plan = Plan(shape, reduced);
    for (FloatType t : kFloatTypes) {
      // Few distinct values, so that ties happen: the first index wins.
      std::vector<float> x = RandomFloats(NumElements(shape), 0, 8, 9 + s);
      for (float& v : x) v = std::floor(v);
      const auto groups = Groups(x, shape, reduced, plan.outputs);
      ClBuffer dx = UploadFloats(h, x, t);
      for (int op : {PX_RED_ARGMAX, PX_RED_ARGMIN}) {
        for (const char* index : {"i64", "i32"}) {
          for (const char* kind : {"group", "serial"}) {
            SCOPED_TRACE(std::string(Suffix(t)) + " " + index + " " + kind + " op " +
                         std::to_string(op) + " " + sdk::ShapeString(shape));
            const bool group = std::string(kind) == "group";
            const bool i64 = std::string(index) == "i64";
            ClBuffer dy = h->Alloc(plan.outputs * (i64 ? 8 : 4));
            size_t global = group ? plan.outputs * PX_XPU_REDUCE_WG : plan.outputs;
            size_t local = group ? PX_XPU_REDUCE_WG : 64;
            ASSERT_TRUE(h->Run("reduce",
                               std::string("argreduce_") + Suffix(t) + "_" + index + "_" + kind, 1,
                               &global, &local, {Mem(dx), Mem(dy), Arg(plan), Arg(int32_t{op})}));
            std::vector<int64_t> y(plan.outputs);
            if (i64) {
              y = h->Download<int64_t>(dy, plan.outputs);
            } else {
              std::vector<int32_t> y32 = h->Download<int32_t>(dy, plan.outputs);
              for (int64_t o = 0; o < plan.outputs; ++o) y[o] = y32[o];
            }
            for (int64_t o = 0; o < plan.outputs; ++o) {
              const std::vector<double>& g = groups[o];
              int64_t best = 0;
              for (size_t i = 1; i < g.size(); ++i) {
                if (op == PX_RED_ARGMAX ? g[i] > g[best] : g[i] < g[best]) best = i;
              }
              ASSERT_EQ(y[o], best) << "output " << o;
            }
          }
        }
      }
    }
  }
  // The int32 input kernel.
  std::vector<int32_t> xi = {3, -1, 7, 7, -5, 0};
  const px_xpu_reduce_plan plan = Plan({2, 3}, {false, true});
  ClBuffer dx = h->Upload(xi), dy = h->Alloc(16);
  size_t global = 2 * PX_XPU_REDUCE_WG, local = PX_XPU_REDUCE_WG;
  ASSERT_TRUE(h->Run("reduce", "argreduce_i32_i64_group", 1, &global, &local,
                     {Mem(dx), Mem(dy), Arg(plan), Arg(int32_t{PX_RED_ARGMAX})}));
  EXPECT_EQ(h->Download<int64_t>(dy, 2), (std::vector<int64_t>{2, 0}));
  // Values float cannot tell apart (2^24 and 2^24 + 1) compare exactly, in
  // both kernels.
  std::vector<int32_t> big = {16777216, 16777217, 16777216, 16777217, 16777216, 16777215};
  ClBuffer dbig = h->Upload(big);
  for (const char* kind : {"group", "serial"}) {
    SCOPED_TRACE(kind);
    const bool group = std::string(kind) == "group";
    size_t g = group ? 2 * PX_XPU_REDUCE_WG : 2, l = group ? PX_XPU_REDUCE_WG : 64;
    for (int op : {PX_RED_ARGMAX, PX_RED_ARGMIN}) {
      ASSERT_TRUE(h->Run("reduce", std::string("argreduce_i32_i64_") + kind, 1, &g, &l,
                         {Mem(dbig), Mem(dy), Arg(plan), Arg(int32_t{op})}));
      EXPECT_EQ(h->Download<int64_t>(dy, 2),
                op == PX_RED_ARGMAX ? (std::vector<int64_t>{1, 0}) : (std::vector<int64_t>{0, 2}));
    }
  }
}

TEST(PoclReduce, SoftmaxLogSoftmax) {
  PX_POCL_HARNESS(h);
  const int64_t shapes[][2] = {{3, 10}, {2, 1000}, {5, 1}, {1, 257}};
  for (FloatType t : kFloatTypes) {
    for (const auto& s : shapes) {
      const int64_t rows = s[0], cols = s[1];
      std::vector<float> x = RandomFloats(rows * cols, -20, 20, 4);
      for (float& v : x) v = Stored(v, t);
      ClBuffer dx = UploadFloats(h, x, t);
      for (int log : {0, 1}) {
        SCOPED_TRACE(std::string(Suffix(t)) + (log ? " LogSoftmax " : " Softmax ") +
                     std::to_string(rows) + "x" + std::to_string(cols));
        ClBuffer dy = h->Alloc(rows * cols * ElementSize(t));
        size_t global = rows * PX_XPU_REDUCE_WG, local = PX_XPU_REDUCE_WG;
        ASSERT_TRUE(h->Run("reduce", std::string("softmax_") + Suffix(t), 1, &global, &local,
                           {Mem(dx), Mem(dy), Arg(rows), Arg(cols), Arg(int32_t{log})}));
        std::vector<float> y = DownloadFloats(h, dy, rows * cols, t);
        for (int64_t r = 0; r < rows; ++r) {
          double m = -INFINITY, sum = 0;
          for (int64_t c = 0; c < cols; ++c) m = std::max(m, double(x[r * cols + c]));
          for (int64_t c = 0; c < cols; ++c) sum += std::exp(x[r * cols + c] - m);
          for (int64_t c = 0; c < cols; ++c) {
            const double v = x[r * cols + c] - m;
            const double expected = log ? v - std::log(sum) : std::exp(v) / sum;
            Tolerance tol = DefaultTolerance(t);
            if (t == FloatType::kF32) tol = {1e-5, 1e-6};  // exp, log and a float sum
            ASSERT_TRUE(Close(y[r * cols + c], Stored(static_cast<float>(expected), t), tol))
                << "row " << r << " col " << c << ": got " << y[r * cols + c] << ", expected "
                << expected;
          }
        }
      }
    }
  }
}

TEST(PoclReduce, BiasAdd) {
  PX_POCL_HARNESS(h);
  // NHWC [2, 3, 5, 4] (channels last: inner 1) and NCHW [2, 4, 3, 5] (inner 15).
  struct Case {
    Shape shape;
    int64_t channels, inner;
  };
  const Case cases[] = {{{2, 3, 5, 4}, 4, 1}, {{2, 4, 3, 5}, 4, 15}, {{0, 4}, 4, 1}};
  for (FloatType t : kFloatTypes) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(Suffix(t)) + " " + sdk::ShapeString(c.shape));
      const int64_t n = NumElements(c.shape);
      std::vector<float> x = RandomFloats(n, -5, 5, 1), bias = RandomFloats(c.channels, -5, 5, 2);
      for (float& v : x) v = Stored(v, t);
      for (float& v : bias) v = Stored(v, t);
      ClBuffer dx = UploadFloats(h, x, t), db = UploadFloats(h, bias, t);
      ClBuffer dy = h->Alloc(n * ElementSize(t));
      size_t global = n;
      ASSERT_TRUE(h->Run("reduce", std::string("bias_add_") + Suffix(t), 1, &global, nullptr,
                         {Mem(dx), Mem(db), Mem(dy), Arg(n), Arg(c.channels), Arg(c.inner)}));
      std::vector<float> y = DownloadFloats(h, dy, n, t);
      for (int64_t i = 0; i < n; ++i) {
        const double expected = Stored(x[i] + bias[(i / c.inner) % c.channels], t);
        ASSERT_TRUE(Close(y[i], expected, DefaultTolerance(t))) << "element " << i;
      }
    }
  }
}

TEST(PoclReduce, Plans) {
  px_xpu_reduce_plan plan;
  // Nothing reduced (size-1 axis): a copy.
  EXPECT_FALSE(MakeReducePlan({4, 1, 3}, {false, true, false}, &plan));
  // [2, 3, 4, 5] over {1, 2}: kept [2, 5], reduced [12].
  ASSERT_TRUE(MakeReducePlan({2, 3, 4, 5}, {false, true, true, false}, &plan));
  EXPECT_EQ(plan.outputs, 10);
  EXPECT_EQ(plan.count, 12);
  EXPECT_EQ(plan.kept_rank, 2);
  EXPECT_EQ(plan.red_rank, 1);
  EXPECT_EQ(plan.red_strides[0], 5);
  EXPECT_EQ(plan.kept_strides[0], 60);
}

}  // namespace
}  // namespace plexus::xpu::test

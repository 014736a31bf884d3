// The XPU plugin's elementwise kernels (plugins/xpu/kernels/elementwise.cl)
// on PoCL: every unary op, binary op, comparison, logical op, Select and Cast
// for float32, float16 and bfloat16 (and the integer kernels), against
// double-precision loops (pocl_test_util.h), with broadcasting corners,
// zero-size outputs and sizes that are not multiples of the work-group.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "abi.h"
#include "kernels/plans.h"
#include "pocl_harness.h"
#include "pocl_test_util.h"

namespace plexus::xpu::test {
namespace {

const FloatType kFloatTypes[] = {FloatType::kF32, FloatType::kF16, FloatType::kBF16};

// ---- unary ------------------------------------------------------------------

struct UnaryCase {
  const char* name;
  int op;
  float lo, hi;  // input range
  std::function<double(double)> f;
};

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

std::vector<UnaryCase> UnaryCases(float alpha) {
  const double selu_scale = 1.0507009873554804934, selu_alpha = 1.6732632423543772848;
  return {
      {"Neg", PX_UN_NEG, -10, 10, [](double x) { return -x; }},
      {"Abs", PX_UN_ABS, -10, 10, [](double x) { return std::fabs(x); }},
      {"Sign", PX_UN_SIGN, -3, 3, [](double x) { return double((x > 0) - (x < 0)); }},
      {"Exp", PX_UN_EXP, -10, 10, [](double x) { return std::exp(x); }},
      {"Log", PX_UN_LOG, 0.01f, 100, [](double x) { return std::log(x); }},
      {"Log1p", PX_UN_LOG1P, -0.9f, 10, [](double x) { return std::log1p(x); }},
      {"Sqrt", PX_UN_SQRT, 0, 100, [](double x) { return std::sqrt(x); }},
      {"Rsqrt", PX_UN_RSQRT, 0.01f, 100, [](double x) { return 1.0 / std::sqrt(x); }},
      {"Square", PX_UN_SQUARE, -10, 10, [](double x) { return x * x; }},
      {"Reciprocal", PX_UN_RECIPROCAL, 0.1f, 10, [](double x) { return 1.0 / x; }},
      {"Tanh", PX_UN_TANH, -5, 5, [](double x) { return std::tanh(x); }},
      {"Sigmoid", PX_UN_SIGMOID, -20, 20, Sigmoid},
      {"Erf", PX_UN_ERF, -3, 3, [](double x) { return std::erf(x); }},
      {"Floor", PX_UN_FLOOR, -10, 10, [](double x) { return std::floor(x); }},
      {"Ceil", PX_UN_CEIL, -10, 10, [](double x) { return std::ceil(x); }},
      {"Round", PX_UN_ROUND, -10, 10, [](double x) { return std::nearbyint(x); }},
      {"Relu", PX_UN_RELU, -5, 5, [](double x) { return x < 0 ? 0.0 : x; }},
      {"Relu6", PX_UN_RELU6, -3, 9, [](double x) { return x < 0 ? 0.0 : (x > 6 ? 6.0 : x); }},
      {"Elu", PX_UN_ELU, -5, 5, [](double x) { return x < 0 ? std::expm1(x) : x; }},
      {"Selu", PX_UN_SELU, -5, 5,
       [=](double x) { return x < 0 ? selu_scale * selu_alpha * std::expm1(x) : selu_scale * x; }},
      {"LeakyRelu", PX_UN_LEAKY_RELU, -5, 5, [=](double x) { return x < 0 ? alpha * x : x; }},
      {"Softplus", PX_UN_SOFTPLUS, -30, 30,
       [](double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }},
      {"GeluApproximate", PX_UN_GELU_TANH, -5, 5,
       [](double x) {
         return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
       }},
      {"GeluExact", PX_UN_GELU_ERF, -5, 5,
       [](double x) { return 0.5 * x * (1 + std::erf(x * 0.7071067811865476)); }},
  };
}

TEST(PoclElementwise, UnaryFloat) {
  PX_POCL_HARNESS(h);
  const float alpha = 0.3f;
  for (FloatType t : kFloatTypes) {
    const std::string kernel = std::string("ew_unary_") + Suffix(t);
    for (const UnaryCase& c : UnaryCases(alpha)) {
      SCOPED_TRACE(std::string(c.name) + " " + Suffix(t));
      // 1000: not a multiple of the work-group size (bounds checks).
      std::vector<float> x = RandomFloats(1000, c.lo, c.hi, 7);
      // Exact ties for Round (to even), zeros, and a NaN.
      for (float v : {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 0.0f, -0.0f}) x.push_back(v);
      if (c.op != PX_UN_SIGN && c.op != PX_UN_LOG && c.op != PX_UN_SQRT) x.push_back(NAN);
      for (float& v : x) v = Stored(v, t);
      const int64_t n = static_cast<int64_t>(x.size());
      ClBuffer in = UploadFloats(h, x, t);
      ClBuffer out = h->Alloc(x.size() * ElementSize(t));
      size_t global = x.size();
      ASSERT_TRUE(h->Run("elementwise", kernel, 1, &global, nullptr,
                         {Mem(in), Mem(out), Arg(n), Arg(int32_t{c.op}), Arg(alpha)}));
      std::vector<float> y = DownloadFloats(h, out, x.size(), t);
      Tolerance tol = DefaultTolerance(t);
      if (t == FloatType::kF32 && (c.op == PX_UN_ERF || c.op == PX_UN_GELU_ERF ||
                                   c.op == PX_UN_GELU_TANH || c.op == PX_UN_SELU ||
                                   c.op == PX_UN_ELU || c.op == PX_UN_SOFTPLUS)) {
        tol = {1e-5, 1e-6};  // a few float roundings inside the formula
      }
      int failures = 0;
      for (size_t i = 0; i < x.size() && failures < 5; ++i) {
        const double expected = Stored(static_cast<float>(c.f(x[i])), t);
        if (!Close(y[i], expected, tol)) {
          ADD_FAILURE() << "x = " << x[i] << ": got " << y[i] << ", expected " << expected;
          ++failures;
        }
      }
      if (c.op == PX_UN_ROUND) {
        EXPECT_EQ(y[1000], 0.0f);  // 0.5 -> 0
        EXPECT_EQ(y[1001], 2.0f);  // 1.5 -> 2
        EXPECT_EQ(y[1002], 2.0f);  // 2.5 -> 2
        EXPECT_EQ(y[1004], -2.0f);  // -2.5 -> -2
      }
    }
  }
}

TEST(PoclElementwise, UnaryZeroSize) {
  PX_POCL_HARNESS(h);
  // No launch (the host skips zero-size launches): the kernel is never run;
  // what is checked is that a launch of 0 items is a no-op in the harness too.
  ClBuffer in = h->Alloc(0), out = h->Alloc(0);
  size_t global = 0;
  EXPECT_TRUE(h->Run("elementwise", "ew_unary_f32", 1, &global, nullptr,
                     {Mem(in), Mem(out), Arg(int64_t{0}), Arg(int32_t{PX_UN_EXP}), Arg(0.0f)}));
  // A global size larger than n: nothing past n is written.
  std::vector<float> x = {1, 2, 3};
  ClBuffer in3 = h->Upload(x);
  ClBuffer out3 = h->Upload(std::vector<float>{-7, -7, -7});
  global = 64;
  ASSERT_TRUE(h->Run("elementwise", "ew_unary_f32", 1, &global, nullptr,
                     {Mem(in3), Mem(out3), Arg(int64_t{2}), Arg(int32_t{PX_UN_NEG}), Arg(0.0f)}));
  EXPECT_EQ(h->Download<float>(out3, 3), (std::vector<float>{-1, -2, -7}));
}

TEST(PoclElementwise, UnaryIntegers) {
  PX_POCL_HARNESS(h);
  std::vector<int32_t> x32 = {-7, -1, 0, 1, 5, 6, 7, 100, INT32_MIN, INT32_MAX};
  std::vector<int64_t> x64 = {-7, -1, 0, 1, 5, 6, 7, 100, INT64_MIN, INT64_MAX};
  struct Case {
    int op;
    std::function<int64_t(int64_t)> f;
  };
  const Case cases[] = {
      {PX_UN_NEG, [](int64_t v) { return -v; }},
      {PX_UN_ABS, [](int64_t v) { return v < 0 ? -v : v; }},
      {PX_UN_SIGN, [](int64_t v) { return int64_t((v > 0) - (v < 0)); }},
      {PX_UN_SQUARE, [](int64_t v) { return v * v; }},
      {PX_UN_ROUND, [](int64_t v) { return v; }},
      {PX_UN_RELU, [](int64_t v) { return v < 0 ? int64_t{0} : v; }},
      {PX_UN_RELU6, [](int64_t v) { return v < 0 ? int64_t{0} : (v > 6 ? int64_t{6} : v); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("op " + std::to_string(c.op));
    // int32 (the extremes excluded where the result overflows).
    const size_t n32 = c.op == PX_UN_NEG || c.op == PX_UN_ABS || c.op == PX_UN_SQUARE ? 8 : 10;
    ClBuffer in = h->Upload(x32), out = h->Alloc(x32.size() * 4);
    size_t global = n32;
    ASSERT_TRUE(h->Run("elementwise", "ew_unary_i32", 1, &global, nullptr,
                       {Mem(in), Mem(out), Arg(int64_t(n32)), Arg(int32_t{c.op}), Arg(0.0f)}));
    std::vector<int32_t> y = h->Download<int32_t>(out, n32);
    for (size_t i = 0; i < n32; ++i) EXPECT_EQ(y[i], c.f(x32[i])) << "x = " << x32[i];
    ClBuffer in64 = h->Upload(x64), out64 = h->Alloc(x64.size() * 8);
    ASSERT_TRUE(h->Run("elementwise", "ew_unary_i64", 1, &global, nullptr,
                       {Mem(in64), Mem(out64), Arg(int64_t(n32)), Arg(int32_t{c.op}), Arg(0.0f)}));
    std::vector<int64_t> y64 = h->Download<int64_t>(out64, n32);
    for (size_t i = 0; i < n32; ++i) EXPECT_EQ(y64[i], c.f(x64[i])) << "x = " << x64[i];
  }
  // Wrap-around like the cpu plugin: -INT32_MIN == INT32_MIN.
  ClBuffer in = h->Upload(std::vector<int32_t>{INT32_MIN}), out = h->Alloc(4);
  size_t one = 1;
  ASSERT_TRUE(h->Run("elementwise", "ew_unary_i32", 1, &one, nullptr,
                     {Mem(in), Mem(out), Arg(int64_t{1}), Arg(int32_t{PX_UN_NEG}), Arg(0.0f)}));
  EXPECT_EQ(h->Download<int32_t>(out, 1)[0], INT32_MIN);
}

TEST(PoclElementwise, LogicalNot) {
  PX_POCL_HARNESS(h);
  std::vector<uint8_t> x = {0, 1, 1, 0, 1};
  ClBuffer in = h->Upload(x), out = h->Alloc(x.size());
  size_t global = x.size();
  ASSERT_TRUE(h->Run("elementwise", "ew_logical_not", 1, &global, nullptr,
                     {Mem(in), Mem(out), Arg(int64_t(x.size()))}));
  EXPECT_EQ(h->Download<uint8_t>(out, x.size()), (std::vector<uint8_t>{1, 0, 0, 1, 0}));
}

// ---- binary -----------------------------------------------------------------

using Shape = std::vector<int64_t>;
struct ShapePair {
  Shape a, b;
};
const ShapePair kShapePairs[] = {
    {{3, 5}, {3, 5}},             // same shape
    {{2, 1, 4}, {3, 1}},          // both broadcast
    {{}, {7}},                    // scalar and vector
    {{5, 1}, {1, 6}},             // outer product
    {{4, 3, 2, 5}, {1, 3, 1, 5}}, // alternating
    {{130}, {}},                  // vector and scalar (two work-groups)
    {{0, 3}, {3}},                // zero-size output
    {{2, 3, 1, 2, 1, 2, 1, 2, 1, 2}, {1, 3, 2, 1, 2, 1, 2, 1, 2, 1}},  // 10 dims, none merge: 9 > 8? see below
};

// Builds the plan and the expected output shape.
bool Plan(const Shape& a, const Shape& b, Shape* out, px_xpu_broadcast_plan* plan) {
  sdk::Shape shapes[2] = {a, b};
  return MakeBroadcastPlan(shapes, 2, out, plan);
}

struct BinaryCase {
  const char* name;
  int op;
  float lo, hi, blo, bhi;
  std::function<double(double, double)> f;
};
const std::vector<BinaryCase>& BinaryCases() {
  static const std::vector<BinaryCase> cases = {
      {"Add", PX_BIN_ADD, -10, 10, -10, 10, [](double a, double b) { return a + b; }},
      {"Sub", PX_BIN_SUB, -10, 10, -10, 10, [](double a, double b) { return a - b; }},
      {"Mul", PX_BIN_MUL, -10, 10, -10, 10, [](double a, double b) { return a * b; }},
      {"Div", PX_BIN_DIV, -10, 10, 0.5f, 4, [](double a, double b) { return a / b; }},
      {"Maximum", PX_BIN_MAX, -10, 10, -10, 10, [](double a, double b) { return std::max(a, b); }},
      {"Minimum", PX_BIN_MIN, -10, 10, -10, 10, [](double a, double b) { return std::min(a, b); }},
      {"Pow", PX_BIN_POW, 0.1f, 4, -3, 3, [](double a, double b) { return std::pow(a, b); }},
      {"SquaredDifference", PX_BIN_SQUARED_DIFFERENCE, -10, 10, -10, 10,
       [](double a, double b) { return (a - b) * (a - b); }},
      {"FloorDiv", PX_BIN_FLOOR_DIV, -10, 10, 0.5f, 4,
       [](double a, double b) { return std::floor(a / b); }},
      {"FloorMod", PX_BIN_FLOOR_MOD, -10, 10, -4, -0.5f,
       [](double a, double b) {
         double r = std::fmod(a, b);
         if (r != 0 && ((r < 0) != (b < 0))) r += b;
         return r;
       }},
  };
  return cases;
}

TEST(PoclElementwise, BinaryFloat) {
  PX_POCL_HARNESS(h);
  for (FloatType t : kFloatTypes) {
    const std::string kernel = std::string("ew_binary_") + Suffix(t);
    for (const BinaryCase& c : BinaryCases()) {
      for (const ShapePair& shapes : kShapePairs) {
        if (shapes.a.size() > 8) continue;  // see BroadcastTooManyDims
        SCOPED_TRACE(std::string(c.name) + " " + Suffix(t) + " " + sdk::ShapeString(shapes.a) +
                     " x " + sdk::ShapeString(shapes.b));
        Shape out_shape;
        px_xpu_broadcast_plan plan;
        ASSERT_TRUE(Plan(shapes.a, shapes.b, &out_shape, &plan));
        std::vector<float> a = RandomFloats(NumElements(shapes.a), c.lo, c.hi, 11);
        std::vector<float> b = RandomFloats(NumElements(shapes.b), c.blo, c.bhi, 12);
        for (float& v : a) v = Stored(v, t);
        for (float& v : b) v = Stored(v, t);
        const int64_t n = NumElements(out_shape);
        ASSERT_EQ(plan.num_elements, n);
        ClBuffer da = UploadFloats(h, a, t), db = UploadFloats(h, b, t);
        ClBuffer dy = h->Alloc(n * ElementSize(t));
        size_t global = static_cast<size_t>(n);
        ASSERT_TRUE(h->Run("elementwise", kernel, 1, &global, nullptr,
                           {Mem(da), Mem(db), Mem(dy), Arg(plan), Arg(int32_t{c.op})}));
        std::vector<float> y = DownloadFloats(h, dy, n, t);
        Tolerance tol = DefaultTolerance(t);
        if (c.op == PX_BIN_POW && t == FloatType::kF32) tol = {1e-5, 1e-6};
        int failures = 0;
        for (int64_t i = 0; i < n && failures < 5; ++i) {
          const double x = a[BroadcastIndex(out_shape, shapes.a, i)];
          const double z = b[BroadcastIndex(out_shape, shapes.b, i)];
          // FloorDiv / FloorMod: the quotient rounded in float first, as the kernel.
          double expected = c.f(x, z);
          if (c.op == PX_BIN_FLOOR_DIV) expected = std::floor(static_cast<float>(x / z));
          expected = Stored(static_cast<float>(expected), t);
          if (!Close(y[i], expected, tol)) {
            ADD_FAILURE() << "element " << i << ": " << x << ", " << z << " -> " << y[i]
                          << ", expected " << expected;
            ++failures;
          }
        }
      }
    }
  }
}

TEST(PoclElementwise, MaximumMinimumPropagateNan) {
  PX_POCL_HARNESS(h);
  Shape out_shape;
  px_xpu_broadcast_plan plan;
  ASSERT_TRUE(Plan({3}, {3}, &out_shape, &plan));
  ClBuffer a = h->Upload(std::vector<float>{NAN, 1, 2});
  ClBuffer b = h->Upload(std::vector<float>{1, NAN, 3});
  for (int op : {PX_BIN_MAX, PX_BIN_MIN}) {
    ClBuffer y = h->Alloc(12);
    size_t global = 3;
    ASSERT_TRUE(h->Run("elementwise", "ew_binary_f32", 1, &global, nullptr,
                       {Mem(a), Mem(b), Mem(y), Arg(plan), Arg(int32_t{op})}));
    std::vector<float> r = h->Download<float>(y, 3);
    EXPECT_TRUE(std::isnan(r[0]));
    EXPECT_TRUE(std::isnan(r[1]));
    EXPECT_EQ(r[2], op == PX_BIN_MAX ? 3.0f : 2.0f);
  }
}

TEST(PoclElementwise, BroadcastTooManyDims) {
  // 10 dims that alternate between the inputs collapse to 9 > 8: refused
  // (UNIMPLEMENTED) rather than computed wrongly.
  Shape out_shape;
  px_xpu_broadcast_plan plan;
  const ShapePair& p = kShapePairs[7];
  EXPECT_THROW(Plan(p.a, p.b, &out_shape, &plan), sdk::KernelError);
  EXPECT_FALSE(Plan({2, 3}, {4, 3}, &out_shape, &plan));  // incompatible
}

template <typename T>
void CheckIntegerBinary(PoclHarness* h, const char* kernel) {
  const std::vector<T> a = {-7, 7, -8, 8, 0, 5, -1, 100, -100, 3, 9, -9};
  const std::vector<T> b = {2, -2, 3, -3, 5, 1, 4, -7, 7, -1, 3, 2};
  Shape out_shape;
  px_xpu_broadcast_plan plan;
  ASSERT_TRUE(Plan({12}, {12}, &out_shape, &plan));
  struct Case {
    int op;
    std::function<T(T, T)> f;
  };
  auto floor_div = [](T x, T y) {
    T q = x / y;
    return (x % y != 0 && ((x < 0) != (y < 0))) ? T(q - 1) : q;
  };
  auto floor_mod = [](T x, T y) {
    T r = x % y;
    return (r != 0 && ((r < 0) != (y < 0))) ? T(r + y) : r;
  };
  const Case cases[] = {
      {PX_BIN_ADD, [](T x, T y) { return T(x + y); }},
      {PX_BIN_SUB, [](T x, T y) { return T(x - y); }},
      {PX_BIN_MUL, [](T x, T y) { return T(x * y); }},
      {PX_BIN_MAX, [](T x, T y) { return std::max(x, y); }},
      {PX_BIN_MIN, [](T x, T y) { return std::min(x, y); }},
      {PX_BIN_SQUARED_DIFFERENCE, [](T x, T y) { return T((x - y) * (x - y)); }},
      {PX_BIN_DIV, [](T x, T y) { return T(x / y); }},  // truncates
      {PX_BIN_FLOOR_DIV, floor_div},
      {PX_BIN_FLOOR_MOD, floor_mod},
  };
  ClBuffer da = h->Upload(a), db = h->Upload(b);
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(kernel) + " op " + std::to_string(c.op));
    ClBuffer dy = h->Alloc(a.size() * sizeof(T));
    size_t global = a.size();
    ASSERT_TRUE(h->Run("elementwise", kernel, 1, &global, nullptr,
                       {Mem(da), Mem(db), Mem(dy), Arg(plan), Arg(int32_t{c.op})}));
    std::vector<T> y = h->Download<T>(dy, a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(y[i], c.f(a[i], b[i])) << a[i] << ", " << b[i];
    }
  }
  EXPECT_EQ(floor_div(T(-7), T(2)), T(-4));  // the expectations themselves
  EXPECT_EQ(floor_mod(T(-7), T(2)), T(1));
}

TEST(PoclElementwise, BinaryIntegers) {
  PX_POCL_HARNESS(h);
  CheckIntegerBinary<int32_t>(h, "ew_binary_i32");
  CheckIntegerBinary<int64_t>(h, "ew_binary_i64");
}

TEST(PoclElementwise, Comparisons) {
  PX_POCL_HARNESS(h);
  const int ops[] = {PX_CMP_LESS, PX_CMP_LESS_EQUAL, PX_CMP_GREATER, PX_CMP_GREATER_EQUAL,
                     PX_CMP_EQUAL, PX_CMP_NOT_EQUAL};
  auto compare = [](int op, double x, double z) {
    switch (op) {
      case PX_CMP_LESS: return x < z;
      case PX_CMP_LESS_EQUAL: return x <= z;
      case PX_CMP_GREATER: return x > z;
      case PX_CMP_GREATER_EQUAL: return x >= z;
      case PX_CMP_EQUAL: return x == z;
      default: return x != z;
    }
  };
  const Shape sa = {4, 1, 3}, sb = {5, 1};
  Shape out_shape;
  px_xpu_broadcast_plan plan;
  ASSERT_TRUE(Plan(sa, sb, &out_shape, &plan));
  const int64_t n = NumElements(out_shape);
  // Small integers so that equality happens.
  std::vector<float> a = RandomFloats(12, -3, 3, 5), b = RandomFloats(5, -3, 3, 6);
  for (float& v : a) v = std::round(v);
  for (float& v : b) v = std::round(v);
  a[0] = NAN;  // compares false (NotEqual true)
  for (FloatType t : kFloatTypes) {
    ClBuffer da = UploadFloats(h, a, t), db = UploadFloats(h, b, t);
    for (int op : ops) {
      SCOPED_TRACE(std::string(Suffix(t)) + " op " + std::to_string(op));
      ClBuffer dy = h->Alloc(n);
      size_t global = n;
      ASSERT_TRUE(h->Run("elementwise", std::string("ew_compare_") + Suffix(t), 1, &global,
                         nullptr, {Mem(da), Mem(db), Mem(dy), Arg(plan), Arg(int32_t{op})}));
      std::vector<uint8_t> y = h->Download<uint8_t>(dy, n);
      for (int64_t i = 0; i < n; ++i) {
        const bool expected = compare(op, a[BroadcastIndex(out_shape, sa, i)],
                                      b[BroadcastIndex(out_shape, sb, i)]);
        EXPECT_EQ(y[i], expected ? 1 : 0) << "element " << i;
      }
    }
  }
  // The integer and bool kernels.
  std::vector<int32_t> ia(a.size()), ib(b.size());
  std::vector<int64_t> la(a.size()), lb(b.size());
  std::vector<uint8_t> ba(a.size()), bb(b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ia[i] = la[i] = std::isnan(a[i]) ? 0 : static_cast<int>(a[i]);
    ba[i] = ia[i] > 0;
  }
  for (size_t i = 0; i < b.size(); ++i) {
    ib[i] = lb[i] = static_cast<int>(b[i]);
    bb[i] = ib[i] > 0;
  }
  struct IntCase {
    const char* kernel;
    ClBuffer a, b;
    std::function<double(int64_t, bool)> value;  // element of input a / b
  };
  ClBuffer d32a = h->Upload(ia), d32b = h->Upload(ib), d64a = h->Upload(la), d64b = h->Upload(lb);
  ClBuffer dba = h->Upload(ba), dbb = h->Upload(bb);
  for (const char* kernel : {"ew_compare_i32", "ew_compare_i64", "ew_compare_b8"}) {
    const std::string k = kernel;
    const ClBuffer& xa = k == "ew_compare_i32" ? d32a : k == "ew_compare_i64" ? d64a : dba;
    const ClBuffer& xb = k == "ew_compare_i32" ? d32b : k == "ew_compare_i64" ? d64b : dbb;
    for (int op : ops) {
      if (k == "ew_compare_b8" && op != PX_CMP_EQUAL && op != PX_CMP_NOT_EQUAL) continue;
      SCOPED_TRACE(k + " op " + std::to_string(op));
      ClBuffer dy = h->Alloc(n);
      size_t global = n;
      ASSERT_TRUE(h->Run("elementwise", kernel, 1, &global, nullptr,
                         {Mem(xa), Mem(xb), Mem(dy), Arg(plan), Arg(int32_t{op})}));
      std::vector<uint8_t> y = h->Download<uint8_t>(dy, n);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t ai = BroadcastIndex(out_shape, sa, i), bi = BroadcastIndex(out_shape, sb, i);
        const double x = k == "ew_compare_b8" ? ba[ai] : ia[ai];
        const double z = k == "ew_compare_b8" ? bb[bi] : ib[bi];
        EXPECT_EQ(y[i], compare(op, x, z) ? 1 : 0) << "element " << i;
      }
    }
  }
}

TEST(PoclElementwise, LogicalAndOr) {
  PX_POCL_HARNESS(h);
  const Shape sa = {2, 1}, sb = {3};
  Shape out_shape;
  px_xpu_broadcast_plan plan;
  ASSERT_TRUE(Plan(sa, sb, &out_shape, &plan));
  ClBuffer a = h->Upload(std::vector<uint8_t>{0, 1}), b = h->Upload(std::vector<uint8_t>{0, 1, 1});
  for (int op : {PX_LOGICAL_AND, PX_LOGICAL_OR}) {
    ClBuffer y = h->Alloc(6);
    size_t global = 6;
    ASSERT_TRUE(h->Run("elementwise", "ew_logical", 1, &global, nullptr,
                       {Mem(a), Mem(b), Mem(y), Arg(plan), Arg(int32_t{op})}));
    const std::vector<uint8_t> expected =
        op == PX_LOGICAL_AND ? std::vector<uint8_t>{0, 0, 0, 0, 1, 1}
                             : std::vector<uint8_t>{0, 1, 1, 1, 1, 1};
    EXPECT_EQ(h->Download<uint8_t>(y, 6), expected);
  }
}

TEST(PoclElementwise, Select) {
  PX_POCL_HARNESS(h);
  // SelectV2 broadcasting: condition [3, 1], then [1, 4], else [] (scalar).
  const Shape sc = {3, 1}, st = {1, 4}, se = {};
  sdk::Shape shapes[3] = {sc, st, se};
  Shape out_shape;
  px_xpu_broadcast_plan plan;
  ASSERT_TRUE(MakeBroadcastPlan(shapes, 3, &out_shape, &plan));
  ASSERT_EQ(out_shape, (Shape{3, 4}));
  std::vector<uint8_t> c = {1, 0, 1};
  ClBuffer dc = h->Upload(c);
  auto run = [&](auto tag, const char* kernel) {
    using T = decltype(tag);
    std::vector<T> t = {T(1), T(2), T(3), T(4)};
    std::vector<T> e = {T(9)};
    ClBuffer dt = h->Upload(t), de = h->Upload(e), dy = h->Alloc(12 * sizeof(T));
    size_t global = 12;
    ASSERT_TRUE(h->Run("elementwise", kernel, 1, &global, nullptr,
                       {Mem(dc), Mem(dt), Mem(de), Mem(dy), Arg(plan)}));
    std::vector<T> y = h->Download<T>(dy, 12);
    for (int i = 0; i < 12; ++i) EXPECT_EQ(y[i], c[i / 4] ? t[i % 4] : e[0]) << kernel << " " << i;
  };
  run(uint8_t{}, "ew_select_1");
  run(uint16_t{}, "ew_select_2");
  run(float{}, "ew_select_4");
  run(int64_t{}, "ew_select_8");
}

TEST(PoclElementwise, Cast) {
  PX_POCL_HARNESS(h);
  const std::vector<double> values = {0.0, 1.0, -1.0, 2.5, -2.5, 3.75, 100.0, -0.0, 7.0, 0.4};
  const char* types[] = {"f32", "f16", "bf16", "i32", "i64", "b8"};
  auto size_of = [](const std::string& t) -> size_t {
    return t == "f32" || t == "i32" ? 4 : t == "i64" ? 8 : t == "b8" ? 1 : 2;
  };
  // The value of `v` as stored in type t.
  auto stored = [](const std::string& t, double v) -> double {
    if (t == "f32") return static_cast<float>(v);
    if (t == "f16") return Stored(static_cast<float>(v), FloatType::kF16);
    if (t == "bf16") return Stored(static_cast<float>(v), FloatType::kBF16);
    if (t == "b8") return v != 0 ? 1 : 0;
    return std::trunc(v) + 0.0;  // float to integer truncates (and -0 becomes 0)
  };
  auto encode = [&](const std::string& t, const std::vector<double>& v) {
    std::vector<unsigned char> bytes(v.size() * size_of(t));
    for (size_t i = 0; i < v.size(); ++i) {
      unsigned char* p = &bytes[i * size_of(t)];
      if (t == "f32") {
        float f = static_cast<float>(v[i]);
        std::memcpy(p, &f, 4);
      } else if (t == "f16" || t == "bf16") {
        auto e = Encode({static_cast<float>(v[i])}, t == "f16" ? FloatType::kF16 : FloatType::kBF16);
        std::memcpy(p, e.data(), 2);
      } else if (t == "i32") {
        int32_t x = static_cast<int32_t>(v[i]);
        std::memcpy(p, &x, 4);
      } else if (t == "i64") {
        int64_t x = static_cast<int64_t>(v[i]);
        std::memcpy(p, &x, 8);
      } else {
        p[0] = v[i] != 0;
      }
    }
    return bytes;
  };
  for (const char* from : types) {
    std::vector<double> src(values.size());
    for (size_t i = 0; i < values.size(); ++i) src[i] = stored(from, values[i]);
    ClBuffer dx = h->Upload(encode(from, src));
    for (const char* to : types) {
      SCOPED_TRACE(std::string(from) + " -> " + to);
      ClBuffer dy = h->Alloc(values.size() * size_of(to));
      size_t global = values.size();
      ASSERT_TRUE(h->Run("elementwise", std::string("cast_") + from + "_" + to, 1, &global, nullptr,
                         {Mem(dx), Mem(dy), Arg(int64_t(values.size()))}));
      std::vector<double> expected(values.size());
      for (size_t i = 0; i < values.size(); ++i) expected[i] = stored(to, src[i]);
      EXPECT_EQ(h->Download<unsigned char>(dy, values.size() * size_of(to)), encode(to, expected));
    }
  }
}

}  // namespace
}  // namespace plexus::xpu::test

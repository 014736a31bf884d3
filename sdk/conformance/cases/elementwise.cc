// Cases for the elementwise family: binary arithmetic, comparisons and logic
// (with NumPy broadcasting), unary math, IsFinite / IsNan / IsInf, Atan2,
// DivNoNan, MulNoNan, TruncateDiv, TruncateMod, Rint, Lgamma, Digamma,
// Select / SelectV2 and Cast. Adapted from tests/ops/elementwise_test.cc.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cases.h"

namespace plexus::conformance {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");

// Dtypes RandomTensor and MakeTensor can fill with numbers.
bool IsRealType(DataType t) { return IsFloatType(t) || IsIntegerType(t); }
bool IsSignedIntegerType(DataType t) { return IsIntegerType(t) && !IsUnsignedType(t); }

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.num_elements()));
  for (int64_t i = 0; i < t.num_elements(); ++i) v[i] = ElementAsDouble(t, i);
  return v;
}

// Replaces elements whose magnitude is below `min_abs` with +-min_abs (keeps
// divisors away from zero).
Tensor AwayFromZero(const Tensor& t, double min_abs) {
  std::vector<double> v = Values(t);
  for (double& x : v) {
    if (std::fabs(x) < min_abs) x = x < 0 ? -min_abs : min_abs;
  }
  return MakeTensor(t.dtype(), t.shape(), v);
}

// A large finite magnitude the float dtype can hold (half tops out at 65504).
double Large(DataType t) {
  switch (t) {
    case DataType::kHalf: return 6e4;
    case DataType::kDouble: return 1e200;
    default: return 1e30;
  }
}

// Twelve float values worth checking: NaN, infinities, signed zeros, large
// and small magnitudes, and ordinary numbers.
std::vector<double> Specials(DataType t) {
  return {kNaN, kInf, -kInf, -0.0, 0.0, Large(t), -Large(t), 1.0, -1.0, 0.5, -2.5, 1e-3};
}

// The range of an integer dtype (uint64's top half left out: it does not
// round-trip through int64).
std::pair<int64_t, int64_t> IntLimits(DataType t) {
  switch (t) {
    case DataType::kInt8: return {-128, 127};
    case DataType::kInt16: return {-32768, 32767};
    case DataType::kInt32: return {std::numeric_limits<int32_t>::min(),
                                   std::numeric_limits<int32_t>::max()};
    case DataType::kUInt8: return {0, 255};
    case DataType::kUInt16: return {0, 65535};
    case DataType::kUInt32: return {0, std::numeric_limits<uint32_t>::max()};
    default: return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  }
}

// An integer tensor of exact values (int64 extremes do not survive doubles).
Tensor Ints(DataType t, const Shape& shape, const std::vector<int64_t>& values) {
  if (t == DataType::kInt64) return IntTensor(t, shape, values);
  if (t == DataType::kUInt64) {
    Tensor r = Tensor::AllocateHost(t, shape).value();
    for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < r.num_elements(); ++i) {
      r.data<uint64_t>()[i] = static_cast<uint64_t>(values[i]);
    }
    return r;
  }
  return MakeTensor(t, shape, std::vector<double>(values.begin(), values.end()));
}

Shape Dim(size_t n) { return Shape{static_cast<int64_t>(n)}; }

std::string Pair(const Shape& a, const Shape& b) {
  return ShapeToString(a) + " x " + ShapeToString(b);
}

// ---------------------------------------------------------------------------
// Binary ops
// ---------------------------------------------------------------------------

Case Binary(const CaseContext& ctx, const std::string& label, Tensor x, Tensor y) {
  Case c(ctx.op, label);
  c.Input(std::move(x)).Input(std::move(y)).Attr("T", ctx.dtype);
  return c;
}

// Value ranges of the two operands; unsigned types clamp lo to 0 (RandomTensor
// does). y is kept at least y_min_abs away from zero.
struct Ranges {
  double lo = -3, hi = 3, ylo = -3, yhi = 3, y_min_abs = 0;
};

// Random operands over the broadcasting corners: same shapes, a scalar on
// either side (one of them long enough for vectorized loops), both sides
// broadcasting, zero-size, and rank 0 with rank 0.
void AddBroadcastCases(const CaseContext& ctx, const Ranges& r, std::vector<Case>& cases) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{2, 3}, {2, 3}}, {{}, {2, 3}}, {{37, 41}, {}}, {{2, 1, 3}, {4, 1}},
      {{0, 3}, {3}},    {{}, {}},
  };
  for (const auto& [a, b] : shapes) {
    Tensor x = RandomTensor(ctx.dtype, a, ctx.rng, r.lo, r.hi);
    Tensor y = RandomTensor(ctx.dtype, b, ctx.rng, r.ylo, r.yhi);
    if (r.y_min_abs > 0) y = AwayFromZero(y, r.y_min_abs);
    cases.push_back(Binary(ctx, "random " + Pair(a, b), x, y));
  }
}

// Every pair of special float values: x as a column against y as a row.
Case SpecialPairs(const CaseContext& ctx) {
  std::vector<double> v = Specials(ctx.dtype);
  return Binary(ctx, "NaN, inf, -0.0 and large values, all pairs",
                MakeTensor(ctx.dtype, {static_cast<int64_t>(v.size()), 1}, v),
                MakeTensor(ctx.dtype, Dim(v.size()), v));
}

// Extreme integers against each other and +-1: wrapping arithmetic.
Case IntExtremes(const CaseContext& ctx, const std::string& label) {
  auto [lo, hi] = IntLimits(ctx.dtype);
  const int64_t m1 = IsUnsignedType(ctx.dtype) ? 0 : -1;
  std::vector<int64_t> x = {lo, hi, lo, hi, m1, 1, hi, lo};
  std::vector<int64_t> y = {hi, lo, m1, 1, lo, hi, hi, lo};
  return Binary(ctx, label, Ints(ctx.dtype, Dim(x.size()), x), Ints(ctx.dtype, Dim(y.size()), y));
}

PX_CONFORMANCE_CASES("Add", "AddV2", "Sub", "Mul", "Maximum", "Minimum",
                     "SquaredDifference")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!IsRealType(ctx.dtype)) return cases;
  AddBroadcastCases(ctx, Ranges{}, cases);
  if (IsFloatType(ctx.dtype)) {
    cases.push_back(SpecialPairs(ctx));
  } else {
    // TensorFlow's integer arithmetic wraps around.
    cases.push_back(IntExtremes(ctx, "extreme integers (wraps)"));
  }
  return cases;
}

// TruncateDiv and TruncateMod: Div and C's remainder for integers (the same
// errors), trunc(x / y) and fmod for floats.
PX_CONFORMANCE_CASES("Div", "RealDiv", "FloorDiv", "FloorMod", "TruncateDiv",
                     "TruncateMod")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!IsRealType(ctx.dtype)) return cases;
  const bool is_float = IsFloatType(ctx.dtype);
  // Float divisors close to zero; integer divisors at least 1 in magnitude.
  AddBroadcastCases(ctx, Ranges{-9, 9, -3, 3, is_float ? 0.25 : 1.0}, cases);
  const DataType t = ctx.dtype;
  if (IsUnsignedType(t)) {
    cases.push_back(Binary(ctx, "exact quotients", MakeTensor(t, {3}, {250, 7, 0}),
                           MakeTensor(t, {3}, {7, 250, 3})));
  } else {
    // Div truncates toward zero; FloorDiv and FloorMod round toward -inf.
    cases.push_back(Binary(ctx, "signs of x and y", MakeTensor(t, {6}, {7, -7, 7, -7, 7.5, -7.5}),
                           MakeTensor(t, {6}, {2, 2, -2, -2, 2, -2})));
  }
  if (is_float) {
    // Includes division by zero (IEEE: infinities and NaN).
    cases.push_back(SpecialPairs(ctx));
  } else {
    if (IsSignedIntegerType(t)) {
      // The most negative value divided by -1 wraps instead of trapping.
      auto [lo, hi] = IntLimits(t);
      cases.push_back(Binary(ctx, "min / -1 wraps", Ints(t, {3}, {lo, hi, 5}),
                             Ints(t, {3}, {-1, -1, -1})));
    }
    cases.push_back(Binary(ctx, "error: integer division by zero", MakeTensor(t, {3}, {1, 2, 3}),
                           MakeTensor(t, {3}, {1, 0, 1}))
                        .ExpectError(absl::StatusCode::kInvalidArgument));
    cases.push_back(Binary(ctx, "error: broadcast zero divisor",
                           MakeTensor(t, {2, 2}, {1, 2, 3, 4}), MakeTensor(t, {}, {0}))
                        .ExpectError(absl::StatusCode::kInvalidArgument));
  }
  return cases;
}

PX_CONFORMANCE_CASES("Pow")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsRealType(t)) return cases;
  if (IsFloatType(t)) {
    // Positive bases: a negative base to a fractional power is NaN.
    AddBroadcastCases(ctx, Ranges{0.1, 3, -2, 2, 0}, cases);
    cases.push_back(Binary(ctx, "negative bases, integer exponents",
                           MakeTensor(t, {6}, {-2, -3, -1.5, -2, -0.5, -4}),
                           MakeTensor(t, {6}, {3, 2, 0, -1, -2, 1})));
    cases.push_back(SpecialPairs(ctx));
  } else {
    // Non-negative exponents only (negative ones are an error).
    AddBroadcastCases(ctx, Ranges{IsUnsignedType(t) ? 0.0 : -3, 3, 0, 4, 0}, cases);
    cases.push_back(Binary(ctx, "exact powers", MakeTensor(t, {4}, {2, 3, 5, 1}),
                           MakeTensor(t, {}, {3})));
    if (!IsUnsignedType(t)) {
      cases.push_back(Binary(ctx, "error: negative integer exponent", MakeTensor(t, {2}, {2, 2}),
                             MakeTensor(t, {2}, {1, -1}))
                          .ExpectError(absl::StatusCode::kInvalidArgument));
    }
  }
  return cases;
}

// ---------------------------------------------------------------------------
// Comparisons and logic
// ---------------------------------------------------------------------------

// Small integer values (also for floats) so that ties occur.
Tensor Ties(DataType t, const Shape& s, std::mt19937& rng) {
  if (t == DataType::kBool) return RandomTensor(t, s, rng);
  Tensor r = RandomTensor(DataType::kInt32, s, rng, IsUnsignedType(t) ? 0 : -2, 2);
  return MakeTensor(t, s, Values(r));
}

PX_CONFORMANCE_CASES("Less", "LessEqual", "Greater", "GreaterEqual", "Equal",
                     "NotEqual")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  const bool equality = ctx.op == "Equal" || ctx.op == "NotEqual";
  if (!IsRealType(t) && !(equality && t == DataType::kBool)) return cases;
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{2, 3}, {2, 3}}, {{}, {2, 3}}, {{37, 41}, {41}}, {{2, 1, 3}, {4, 1}},
      {{0, 3}, {3}},    {{}, {}},
  };
  for (const auto& [a, b] : shapes) {
    cases.push_back(
        Binary(ctx, "random with ties " + Pair(a, b), Ties(t, a, ctx.rng), Ties(t, b, ctx.rng)));
  }
  if (IsFloatType(t)) cases.push_back(SpecialPairs(ctx));
  if (!IsFloatType(t) && t != DataType::kBool) {
    auto [lo, hi] = IntLimits(t);
    cases.push_back(Binary(ctx, "extreme integers", Ints(t, {4}, {lo, hi, lo, hi}),
                           Ints(t, {4}, {hi, lo, lo, 0})));
  }
  if (equality) {
    // With incompatible_shape_error = false, incompatible shapes give a
    // scalar (false for Equal, true for NotEqual).
    cases.push_back(Binary(ctx, "incompatible shapes allowed", Ties(t, {2, 3}, ctx.rng),
                           Ties(t, {4}, ctx.rng))
                        .Attr("incompatible_shape_error", false));
    cases.push_back(Binary(ctx, "compatible shapes, incompatible_shape_error=false",
                           Ties(t, {2, 3}, ctx.rng), Ties(t, {3}, ctx.rng))
                        .Attr("incompatible_shape_error", false));
  }
  return cases;
}

PX_CONFORMANCE_CASES("LogicalAnd", "LogicalOr")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType b = DataType::kBool;
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{2, 3}, {2, 3}}, {{}, {2, 3}}, {{37, 41}, {41}}, {{2, 1, 3}, {4, 1}},
      {{0, 3}, {3}},    {{}, {}},
  };
  for (const auto& [x, y] : shapes) {
    cases.push_back(Case(ctx.op, "random " + Pair(x, y))
                        .Input(RandomTensor(b, x, ctx.rng))
                        .Input(RandomTensor(b, y, ctx.rng)));
  }
  cases.push_back(Case(ctx.op, "truth table")
                      .Input(MakeTensor(b, {4}, {0, 0, 1, 1}))
                      .Input(MakeTensor(b, {4}, {0, 1, 0, 1})));
  return cases;
}

PX_CONFORMANCE_CASES("LogicalNot")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType b = DataType::kBool;
  for (const Shape& s : {Shape{2, 3}, Shape{}, Shape{0, 2}, Shape{1500}}) {
    cases.push_back(
        Case(ctx.op, "random " + ShapeToString(s)).Input(RandomTensor(b, s, ctx.rng)));
  }
  cases.push_back(Case(ctx.op, "truth table").Input(MakeTensor(b, {2}, {0, 1})));
  return cases;
}

// ---------------------------------------------------------------------------
// Unary ops
// ---------------------------------------------------------------------------

Case Unary(const CaseContext& ctx, const std::string& label, Tensor x) {
  Case c(ctx.op, label);
  c.Input(std::move(x)).Attr("T", ctx.dtype);
  return c;
}

// Random inputs in [lo, hi] of a few shapes: 2-D, rank 0, zero-size, a
// zero-size dimension between others, and one long enough for vector loops.
void AddUnaryShapes(const CaseContext& ctx, double lo, double hi, double min_abs,
                    std::vector<Case>& cases) {
  for (const Shape& s : {Shape{2, 3}, Shape{}, Shape{0}, Shape{4, 0, 2}, Shape{1500}}) {
    Tensor x = RandomTensor(ctx.dtype, s, ctx.rng, lo, hi);
    if (min_abs > 0) x = AwayFromZero(x, min_abs);
    cases.push_back(Unary(ctx, "random " + ShapeToString(s), x));
  }
}

Case UnarySpecials(const CaseContext& ctx) {
  std::vector<double> v = Specials(ctx.dtype);
  return Unary(ctx, "NaN, inf, -0.0 and large values", MakeTensor(ctx.dtype, Dim(v.size()), v));
}

PX_CONFORMANCE_CASES("Neg", "Abs", "Sign", "Round", "Rint", "Square", "Reciprocal",
                     "Inv")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsRealType(t)) return cases;
  const bool reciprocal = ctx.op == "Reciprocal" || ctx.op == "Inv";
  if (reciprocal) {
    AddUnaryShapes(ctx, -4, 4, 1, cases);
  } else if (ctx.op == "Square") {
    AddUnaryShapes(ctx, -9, 9, 0, cases);
  } else {
    AddUnaryShapes(ctx, -5, 5, 0, cases);
  }
  if (IsFloatType(t)) {
    cases.push_back(UnarySpecials(ctx));
    // Round and Rint are banker's rounding (ties to even).
    cases.push_back(Unary(ctx, "halves (ties)",
                          MakeTensor(t, {8}, {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.25, 3.5})));
  } else {
    // Abs and Neg of the most negative value wrap, like TensorFlow.
    auto [lo, hi] = IntLimits(t);
    std::vector<int64_t> v = {lo, hi, 1, 3};
    if (!IsUnsignedType(t)) v.push_back(-1);
    if (!reciprocal) v.push_back(0);
    cases.push_back(Unary(ctx, "extreme integers", Ints(t, Dim(v.size()), v)));
    if (reciprocal) {
      cases.push_back(Unary(ctx, "error: integer division by zero", MakeTensor(t, {2}, {1, 0}))
                          .ExpectError(absl::StatusCode::kInvalidArgument));
    }
  }
  return cases;
}

PX_CONFORMANCE_CASES("Exp", "Tanh", "Sigmoid", "Erf", "Erfc", "Sin", "Cos", "Floor", "Ceil", "Log",
                     "Sqrt", "Rsqrt", "Log1p", "Tan", "Sinh", "Cosh", "Asin", "Acos", "Atan",
                     "Asinh", "Acosh", "Atanh", "Expm1")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t)) return cases;
  const std::string& op = ctx.op;
  // Random values inside each function's domain (and away from Tan's poles).
  if (op == "Log" || op == "Sqrt" || op == "Rsqrt") {
    AddUnaryShapes(ctx, 0.05, 20, 0, cases);
  } else if (op == "Log1p") {
    AddUnaryShapes(ctx, -0.9, 10, 0, cases);
  } else if (op == "Asin" || op == "Acos" || op == "Atanh") {
    AddUnaryShapes(ctx, -0.95, 0.95, 0, cases);
  } else if (op == "Acosh") {
    AddUnaryShapes(ctx, 1, 20, 0, cases);
  } else if (op == "Tan") {
    AddUnaryShapes(ctx, -1.4, 1.4, 0, cases);
  } else {
    AddUnaryShapes(ctx, -6, 6, 0, cases);
  }
  // Outside the domain too (NaN from Log(-1), Sqrt(-1)).
  cases.push_back(UnarySpecials(ctx));
  cases.push_back(Unary(ctx, "exact values",
                        MakeTensor(t, {8}, {-1.5, 1.5, -0.5, 2, 4, 0.25, -30, 30})));
  return cases;
}

// IsFinite, IsNan, IsInf: bool outputs, exact.
PX_CONFORMANCE_CASES("IsFinite", "IsNan", "IsInf")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!IsFloatType(ctx.dtype)) return cases;
  AddUnaryShapes(ctx, -1e4, 1e4, 0, cases);
  cases.push_back(UnarySpecials(ctx));
  // Overflow to infinity where the dtype is narrow (half tops out at 65504).
  cases.push_back(
      Unary(ctx, "largest values", MakeTensor(ctx.dtype, {4}, {65504, -65504, 3e38, 1e300})));
  return cases;
}

// Lgamma and Digamma: random values on both sides of 0 (Digamma's poles at
// 0 and the negative integers give NaN, Lgamma's +inf), exact integers and
// halves, and the special values. Both are computed in float by a plugin and
// in double by the reference: near a root (Digamma at 1.4616, Lgamma at 1
// and 2) only the absolute error is small.
PX_CONFORMANCE_CASES("Lgamma", "Digamma")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t)) return cases;
  AddUnaryShapes(ctx, -6, 12, 0, cases);
  cases.push_back(UnarySpecials(ctx));
  cases.push_back(Unary(ctx, "poles, integers and halves",
                        MakeTensor(t, {12}, {0, -1, -2, 1, 2, 3, 0.5, -0.5, -1.5, 10, 1e-3, -30})));
  Tolerance tol = DefaultTolerance(t);
  if (t == DataType::kFloat) tol = {1e-5, 1e-5};
  for (Case& c : cases) c.WithTolerance(tol);
  return cases;
}

// Atan2(y, x): every quadrant, the signed zeros and infinities, broadcasting.
// DivNoNan(x, y): x / y, or 0 where y is 0 (the special pairs hold zeros).
// MulNoNan(x, y): x * y, or 0 where y is 0 (NaN and inf in x included).
PX_CONFORMANCE_CASES("Atan2", "DivNoNan", "MulNoNan")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!IsFloatType(ctx.dtype)) return cases;
  AddBroadcastCases(ctx, Ranges{-3, 3, -3, 3, 0}, cases);
  cases.push_back(SpecialPairs(ctx));
  return cases;
}

// ---------------------------------------------------------------------------
// Select and SelectV2
// ---------------------------------------------------------------------------

Case SelectCase(const CaseContext& ctx, const std::string& label, Tensor c, Tensor t, Tensor e) {
  Case s(ctx.op, label);
  s.Input(std::move(c)).Input(std::move(t)).Input(std::move(e)).Attr("T", ctx.dtype);
  return s;
}

PX_CONFORMANCE_CASES("Select")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!IsRealType(ctx.dtype) && ctx.dtype != DataType::kBool) return cases;
  // condition shape, then/else shape: same shape, scalar condition, one
  // condition per row, rank 1, rank 0, zero-size.
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{2, 3}, {2, 3}}, {{}, {2, 3}}, {{2}, {2, 3}}, {{3}, {3, 2, 2}},
      {{40}, {40}},     {{}, {}},     {{0}, {0, 3}}, {{2, 0}, {2, 0}},
  };
  for (const auto& [c, s] : shapes) {
    cases.push_back(SelectCase(ctx,
                               "condition " + ShapeToString(c) + ", values " + ShapeToString(s),
                               RandomTensor(DataType::kBool, c, ctx.rng),
                               RandomTensor(ctx.dtype, s, ctx.rng),
                               RandomTensor(ctx.dtype, s, ctx.rng)));
  }
  return cases;
}

PX_CONFORMANCE_CASES("SelectV2")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!IsRealType(ctx.dtype) && ctx.dtype != DataType::kBool) return cases;
  // condition, then, else shapes, broadcast together.
  const std::vector<std::tuple<Shape, Shape, Shape>> shapes = {
      {{2, 3}, {2, 3}, {2, 3}}, {{}, {2, 3}, {2, 3}},    {{3}, {2, 3}, {}},
      {{2, 1}, {3}, {2, 3}},    {{2, 1, 3}, {4, 1}, {}}, {{}, {}, {}},
      {{0, 3}, {3}, {1}},       {{1}, {5, 1}, {1, 4}},
  };
  for (const auto& [c, a, b] : shapes) {
    cases.push_back(SelectCase(ctx,
                               "broadcast " + ShapeToString(c) + ", " + ShapeToString(a) + ", " +
                                   ShapeToString(b),
                               RandomTensor(DataType::kBool, c, ctx.rng),
                               RandomTensor(ctx.dtype, a, ctx.rng),
                               RandomTensor(ctx.dtype, b, ctx.rng)));
  }
  return cases;
}

// ---------------------------------------------------------------------------
// Cast
// ---------------------------------------------------------------------------

Case CastCase(const std::string& label, Tensor x, DataType dst) {
  Case c("Cast", label + " to " + DataTypeName(dst));
  const DataType src = x.dtype();
  c.Input(std::move(x)).Attr("SrcT", src).Attr("DstT", dst);
  return c;
}

PX_CONFORMANCE_CASES("Cast")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType src = ctx.dtype;
  if (!IsRealType(src) && src != DataType::kBool) return cases;
  const std::vector<DataType> dsts = {
      DataType::kFloat, DataType::kDouble, DataType::kHalf,  DataType::kBFloat16,
      DataType::kInt8,  DataType::kInt16,  DataType::kInt32, DataType::kInt64,
      DataType::kUInt8, DataType::kBool};
  // Every destination, with values out of range of the narrow integers.
  for (DataType dst : dsts) {
    cases.push_back(CastCase("random [3,5]", RandomTensor(src, {3, 5}, ctx.rng, -300, 300), dst));
  }
  cases.push_back(CastCase("rank 0", RandomTensor(src, {}, ctx.rng), DataType::kFloat));
  cases.push_back(CastCase("zero-size", RandomTensor(src, {0, 4}, ctx.rng), DataType::kInt32));
  if (IsFloatType(src)) {
    // NaN casts to integer 0, out-of-range values saturate, anything nonzero
    // (NaN included) is true.
    const std::vector<double> v = {kNaN, kInf,   -kInf,  -0.0, 1e10,   -1e10,
                                   1.7,  -1.7,   0.5,    255.5, -128.5, 65504};
    for (DataType dst : dsts) {
      cases.push_back(CastCase("NaN, inf and out-of-range values",
                               MakeTensor(src, Dim(v.size()), v), dst));
    }
    // Truncate drops mantissa bits instead of rounding to nearest.
    for (DataType dst : {DataType::kHalf, DataType::kBFloat16, DataType::kFloat}) {
      cases.push_back(CastCase("Truncate, random [7]",
                               RandomTensor(src, {7}, ctx.rng, -1e6, 1e6), dst)
                          .Attr("Truncate", true));
    }
    cases.push_back(CastCase("Truncate, halfway values",
                             MakeTensor(src, {3}, {1.0 + 1.0 / 256 + 1.0 / 512,
                                                   1.0 + 1.0 / 1024 + 1.0 / 2048 + 1.0 / 4096,
                                                   -3.0 - 3.0 / 512}),
                             DataType::kBFloat16)
                        .Attr("Truncate", true));
  } else if (IsIntegerType(src)) {
    auto [lo, hi] = IntLimits(src);
    for (DataType dst : {DataType::kInt8, DataType::kUInt8, DataType::kInt32, DataType::kHalf,
                         DataType::kFloat, DataType::kBool}) {
      cases.push_back(CastCase("extreme integers", Ints(src, {4}, {lo, hi, 0, 257}), dst));
    }
  }
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

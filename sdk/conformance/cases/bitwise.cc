// Cases for the bitwise ops: BitwiseAnd, BitwiseOr, BitwiseXor, LeftShift,
// RightShift (with NumPy broadcasting), Invert and PopulationCount, on the
// eight integer types. Shifts cover TensorFlow's clamping of the count to
// [0, bits - 1] (negative counts, counts of bits and more) and the sign of
// right-shifted negative values; the extremes of each type are exact.
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "cases.h"

namespace plexus::conformance {
namespace {

Shape Dim(size_t n) { return Shape{static_cast<int64_t>(n)}; }

int64_t Bits(DataType t) {
  switch (t) {
    case DataType::kInt8: case DataType::kUInt8: return 8;
    case DataType::kInt16: case DataType::kUInt16: return 16;
    case DataType::kInt32: case DataType::kUInt32: return 32;
    default: return 64;
  }
}

// The range of an integer dtype (uint64's top half left out: it does not
// round-trip through int64).
std::pair<int64_t, int64_t> Limits(DataType t) {
  switch (t) {
    case DataType::kInt8: return {-128, 127};
    case DataType::kInt16: return {-32768, 32767};
    case DataType::kInt32: return {std::numeric_limits<int32_t>::min(),
                                   std::numeric_limits<int32_t>::max()};
    case DataType::kUInt8: return {0, 255};
    case DataType::kUInt16: return {0, 65535};
    case DataType::kUInt32: return {0, std::numeric_limits<uint32_t>::max()};
    case DataType::kUInt64: return {0, std::numeric_limits<int64_t>::max()};
    default: return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  }
}

// An integer tensor of exact values (int64 and uint64 extremes do not
// survive doubles).
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

Case Binary(const CaseContext& ctx, const std::string& label, Tensor x, Tensor y) {
  Case c(ctx.op, label);
  c.Input(std::move(x)).Input(std::move(y)).Attr("T", ctx.dtype);
  return c;
}

Case Unary(const CaseContext& ctx, const std::string& label, Tensor x) {
  Case c(ctx.op, label);
  c.Input(std::move(x)).Attr("T", ctx.dtype);
  return c;
}

// The type's extremes and a few patterns, one of each sign where signed.
std::vector<int64_t> Extremes(DataType t) {
  auto [lo, hi] = Limits(t);
  std::vector<int64_t> v = {lo, hi, 0, 1, 5, 0x55, hi / 3};
  if (lo < 0) {
    v.push_back(-1);
    v.push_back(-6);
    v.push_back(lo / 3);
  }
  return v;
}

PX_CONFORMANCE_CASES("BitwiseAnd", "BitwiseOr", "BitwiseXor", "LeftShift",
                     "RightShift")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsIntegerType(t)) return cases;
  const bool shift = ctx.op == "LeftShift" || ctx.op == "RightShift";
  auto [lo, hi] = Limits(t);
  // Random operands over the broadcasting corners (shift counts in range).
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{2, 3}, {2, 3}}, {{}, {2, 3}}, {{37, 41}, {}}, {{2, 1, 3}, {4, 1}}, {{0, 3}, {3}}, {{}, {}},
  };
  for (const auto& [a, b] : shapes) {
    Tensor x = RandomTensor(t, a, ctx.rng, lo < 0 ? -1000 : 0, 1000);
    Tensor y = shift ? RandomTensor(t, b, ctx.rng, 0, Bits(t) - 1)
                     : RandomTensor(t, b, ctx.rng, lo < 0 ? -1000 : 0, 1000);
    cases.push_back(Binary(ctx, "random " + ShapeToString(a) + " x " + ShapeToString(b), x, y));
  }
  // Every extreme against every other (all pairs by broadcasting).
  const std::vector<int64_t> v = Extremes(t);
  if (!shift) {
    cases.push_back(Binary(ctx, "extremes, all pairs", Ints(t, {static_cast<int64_t>(v.size()), 1}, v),
                           Ints(t, Dim(v.size()), v)));
  } else {
    std::vector<int64_t> counts = {0, 1, Bits(t) - 1, Bits(t), Bits(t) + 1, 100};
    if (Bits(t) == 8) counts.back() = 127;
    if (lo < 0) {
      counts.push_back(-1);
      counts.push_back(lo);
    } else {
      counts.push_back(hi);
    }
    cases.push_back(Binary(ctx, "counts out of range (clamped), all pairs",
                           Ints(t, {static_cast<int64_t>(v.size()), 1}, v),
                           Ints(t, Dim(counts.size()), counts)));
  }
  cases.push_back(Binary(ctx, "error: shapes do not broadcast", RandomTensor(t, {2, 3}, ctx.rng),
                         RandomTensor(t, {4}, ctx.rng))
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  return cases;
}

PX_CONFORMANCE_CASES("Invert", "PopulationCount")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsIntegerType(t)) return cases;
  auto [lo, hi] = Limits(t);
  for (const Shape& s : {Shape{2, 3}, Shape{}, Shape{0}, Shape{1500}}) {
    cases.push_back(Unary(ctx, "random " + ShapeToString(s), RandomTensor(t, s, ctx.rng, lo, hi)));
  }
  const std::vector<int64_t> v = Extremes(t);
  cases.push_back(Unary(ctx, "extremes", Ints(t, Dim(v.size()), v)));
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

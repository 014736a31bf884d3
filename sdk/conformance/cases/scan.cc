// Cases for Cumsum and Cumprod: every combination of exclusive and reverse,
// first, middle, last and negative axes, int32 and int64 axes, rank 1,
// zero-size dimensions (along and across the axis), long lines where a half
// or bfloat16 running sum rounds at every step, integer wrap-around and
// float special values. The axis is a host-memory input: invalid axes are
// refused by the core's shape function (array_shapes::ScanAxis) before any
// kernel runs, so they are not kernel error cases here.
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "cases.h"

namespace plexus::conformance {
namespace {

bool Supported(DataType t) { return IsFloatType(t) || IsIntegerType(t); }

Case Scan(const CaseContext& ctx, const std::string& label, Tensor x, int64_t axis,
          bool exclusive, bool reverse, DataType axis_type = DataType::kInt32) {
  Case c(ctx.op, label + (exclusive ? ", exclusive" : "") + (reverse ? ", reverse" : ""));
  c.Input(std::move(x))
      .Input(IntTensor(axis_type, {}, {axis}))
      .Attr("T", ctx.dtype)
      .Attr("Tidx", axis_type)
      .Attr("exclusive", exclusive)
      .Attr("reverse", reverse);
  return c;
}

PX_CONFORMANCE_CASES("Cumsum", "Cumprod")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!Supported(t)) return cases;
  const bool product = ctx.op == "Cumprod";
  // Products stay in range: factors near 1 for floats, small ones for ints.
  const double lo = product ? (IsFloatType(t) ? 0.5 : -2) : -5;
  const double hi = product ? (IsFloatType(t) ? 1.5 : 2) : 5;
  auto data = [&](const Shape& s) {
    return RandomTensor(t, s, ctx.rng, IsUnsignedType(t) ? 0 : lo, hi);
  };
  for (bool exclusive : {false, true}) {
    for (bool reverse : {false, true}) {
      cases.push_back(Scan(ctx, "[2,3,4] axis 1", data({2, 3, 4}), 1, exclusive, reverse));
      cases.push_back(Scan(ctx, "[2,3,4] axis -1", data({2, 3, 4}), -1, exclusive, reverse));
      cases.push_back(Scan(ctx, "[5] axis 0", data({5}), 0, exclusive, reverse));
    }
  }
  cases.push_back(Scan(ctx, "[3,4] axis 0, int64 axis", data({3, 4}), 0, false, false,
                       DataType::kInt64));
  cases.push_back(Scan(ctx, "[4,1,3] axis -3", data({4, 1, 3}), -3, true, false));
  cases.push_back(Scan(ctx, "zero-size [0,3] axis 0", data({0, 3}), 0, false, true));
  cases.push_back(Scan(ctx, "zero-size [2,0] axis 0", data({2, 0}), 0, true, false));
  cases.push_back(Scan(ctx, "size-1 axis [3,1]", data({3, 1}), 1, true, true));
  if (IsFloatType(t)) {
    // 300 steps: a 16-bit running value rounds (and a half sum of 0.1s
    // drifts) at every step, the same way in every kernel.
    const std::vector<double> tenths(300, product ? 1.01 : 0.1);
    cases.push_back(Scan(ctx, "300 steps of one value", MakeTensor(t, {300}, tenths), 0, false,
                         false));
    cases.push_back(Scan(ctx, "[300,2] axis 0", data({300, 2}), 0, false, true));
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> specials = {1.0, inf, -2.0, std::nan(""), 0.5, -inf, 0.0, -0.0};
    cases.push_back(Scan(ctx, "NaN, inf and signed zeros", MakeTensor(t, {8}, specials), 0,
                         false, false));
    cases.push_back(Scan(ctx, "NaN, inf and signed zeros", MakeTensor(t, {8}, specials), 0,
                         true, true));
  } else {
    // Integers wrap around, as TensorFlow's do.
    const std::vector<double> big = IsUnsignedType(t) ? std::vector<double>{200, 100, 250, 7}
                                                      : std::vector<double>{100, 100, -120, 90};
    cases.push_back(Scan(ctx, "wrap-around", MakeTensor(t, {4}, big), 0, false, false));
  }
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

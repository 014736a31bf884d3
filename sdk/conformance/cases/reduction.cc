// Cases for the reduction family: Sum, Mean, Max, Min, Prod, All, Any over
// the axes of a host-memory reduction_indices input, and ArgMax / ArgMin over
// one axis. Adapted from tests/ops/reduction_test.cc.
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "cases.h"

namespace plexus::conformance {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// reduction_indices: a vector of axes, or a scalar when `scalar`.
Tensor Axes(const std::vector<int64_t>& axes, DataType idx = DataType::kInt32,
            bool scalar = false) {
  return IntTensor(idx, scalar ? Shape{} : Shape{static_cast<int64_t>(axes.size())}, axes);
}

std::string AxesLabel(const Shape& shape, const std::vector<int64_t>& axes, bool keep_dims) {
  return ShapeToString(shape) + " axes {" + absl::StrJoin(axes, ",") + "}" +
         (keep_dims ? " keep_dims" : "");
}

struct AxesCase {
  Shape shape;
  std::vector<int64_t> axes;
  bool keep_dims;
  DataType idx;
};

// Axes variants: one, several around a size-1 dimension, all (int64
// indices), negative and duplicated (-1 and 3 are the same axis), a zero-size
// dimension, rank 0 with no axes (the identity), and a larger input.
const std::vector<AxesCase>& AxesCases() {
  static const std::vector<AxesCase> cases = {
      {{2, 3, 4}, {1}, false, DataType::kInt32},
      {{2, 1, 4}, {0, 2}, true, DataType::kInt32},
      {{2, 3, 4}, {0, 1, 2}, false, DataType::kInt64},
      {{2, 3, 2, 3}, {-1, 1, 3}, false, DataType::kInt32},
      {{0, 3}, {0}, false, DataType::kInt32},
      {{}, {}, true, DataType::kInt32},
      {{40, 37}, {0}, false, DataType::kInt64},
  };
  return cases;
}

Case ReductionCase(const CaseContext& ctx, const std::string& label, Tensor x, Tensor axes,
                   bool keep_dims) {
  Case c(ctx.op, label);
  const DataType idx = axes.dtype();
  c.Input(std::move(x)).Input(std::move(axes)).Attr("Tidx", idx).Attr("keep_dims", keep_dims);
  if (ctx.op != "All" && ctx.op != "Any") c.Attr("T", ctx.dtype);
  return c;
}

PX_CONFORMANCE_CASES("Sum", "Mean", "Max", "Min", "Prod")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t) && !IsIntegerType(t)) return cases;
  // Products grow fast: keep float factors near 1 in magnitude. Integer
  // products may wrap, which TensorFlow defines.
  const bool prod = ctx.op == "Prod";
  const double lo = prod && IsFloatType(t) ? -1.5 : -3, hi = -lo;
  for (const AxesCase& ac : AxesCases()) {
    if (prod && NumElements(ac.shape) > 100) continue;  // products of 40 factors mean little
    cases.push_back(ReductionCase(ctx, "random " + AxesLabel(ac.shape, ac.axes, ac.keep_dims),
                                  RandomTensor(t, ac.shape, ctx.rng, lo, hi),
                                  Axes(ac.axes, ac.idx), ac.keep_dims));
  }
  cases.push_back(ReductionCase(ctx, "scalar axis -2",
                                RandomTensor(t, {3, 4}, ctx.rng, lo, hi),
                                Axes({-2}, DataType::kInt32, true), false));
  if (IsFloatType(t)) {
    // Infinities (inf + -inf is NaN) and NaN in a row of its own. Max and
    // Min leave NaN out: TensorFlow does not define whether it propagates.
    std::vector<double> v = {kInf, 1, -kInf, 2, kInf, 3, 1, 2, -kInf};
    if (ctx.op != "Max" && ctx.op != "Min") v.insert(v.end(), {std::nan(""), 1, 2});
    const int64_t rows = static_cast<int64_t>(v.size()) / 3;
    cases.push_back(ReductionCase(ctx, "infinities and NaN", MakeTensor(t, {rows, 3}, v),
                                  Axes({1}), false));
  }
  cases.push_back(ReductionCase(ctx, "error: axis out of range",
                                RandomTensor(t, {2, 3}, ctx.rng), Axes({2}), false)
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  return cases;
}

// All and Any: the element type is bool; ctx.dtype is Tidx.
PX_CONFORMANCE_CASES("All", "Any")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType idx = ctx.dtype;
  if (idx != DataType::kInt32 && idx != DataType::kInt64) return cases;
  const DataType b = DataType::kBool;
  const std::vector<std::pair<Shape, std::vector<int64_t>>> shapes = {
      {{2, 3, 4}, {1}}, {{2, 3, 4}, {0, -1}}, {{2, 3}, {}}, {{40}, {0}},
      {{0, 2}, {0}},    {{}, {}},
  };
  bool keep = false;
  for (const auto& [s, axes] : shapes) {
    cases.push_back(ReductionCase(ctx, "random " + AxesLabel(s, axes, keep),
                                  RandomTensor(b, s, ctx.rng), Axes(axes, idx), keep));
    keep = !keep;
  }
  // Mostly true rows and mostly false rows, so both answers occur.
  cases.push_back(ReductionCase(ctx, "exact rows",
                                MakeTensor(b, {4, 3}, {1, 1, 1, 1, 0, 1, 0, 0, 0, 0, 1, 0}),
                                Axes({1}, idx), false));
  cases.push_back(ReductionCase(ctx, "error: axis out of range", RandomTensor(b, {2, 3}, ctx.rng),
                                Axes({-3}, idx), false)
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  return cases;
}

Case ArgCase(const CaseContext& ctx, const std::string& label, Tensor x, int64_t dim,
             DataType out = DataType::kInt64, DataType idx = DataType::kInt32) {
  Case c(ctx.op, label);
  c.Input(std::move(x))
      .Input(IntTensor(idx, {}, {dim}))
      .Attr("T", ctx.dtype)
      .Attr("Tidx", idx)
      .Attr("output_type", out);
  return c;
}

PX_CONFORMANCE_CASES("ArgMax", "ArgMin")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t) && !IsIntegerType(t) && t != DataType::kBool) return cases;
  // Small integer ranges make ties: the first index must win.
  auto x = [&](const Shape& s) { return RandomTensor(t, s, ctx.rng, -2, 2); };
  cases.push_back(ArgCase(ctx, "random [7] dimension 0", x({7}), 0));
  cases.push_back(ArgCase(ctx, "random [3,4] dimension 1, int32 output", x({3, 4}), 1,
                          DataType::kInt32));
  cases.push_back(ArgCase(ctx, "random [3,4] dimension -2", x({3, 4}), -2));
  cases.push_back(ArgCase(ctx, "random [2,3,4] dimension 1, int64 dimension", x({2, 3, 4}), 1,
                          DataType::kInt64, DataType::kInt64));
  cases.push_back(ArgCase(ctx, "zero-size [2,0,3] dimension 2", x({2, 0, 3}), 2));
  cases.push_back(ArgCase(ctx, "random [40,37] dimension 0", x({40, 37}), 0, DataType::kInt32));
  if (IsFloatType(t)) {
    cases.push_back(ArgCase(ctx, "infinities",
                            MakeTensor(t, {2, 4}, {1, kInf, -kInf, kInf, -kInf, -kInf, 0, -1}),
                            1));
  }
  cases.push_back(ArgCase(ctx, "error: dimension out of range", x({2, 3}), 2)
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

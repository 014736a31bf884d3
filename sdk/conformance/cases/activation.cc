// Cases for the activation family: Relu, Relu6, Elu, Selu, LeakyRelu,
// Softplus, Softsign, Gelu (elementwise) and Softmax, LogSoftmax (over the
// last axis); SoftsignGrad.
// Adapted from tests/ops/activation_test.cc. Sigmoid and Tanh are in
// elementwise.cc with the other unary math ops.
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "cases.h"

namespace plexus::conformance {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");

// A large finite magnitude the float dtype can hold (half tops out at 65504).
double Large(DataType t) {
  switch (t) {
    case DataType::kHalf: return 6e4;
    case DataType::kDouble: return 1e200;
    default: return 1e30;
  }
}

Shape Dim(size_t n) { return Shape{static_cast<int64_t>(n)}; }

Case Act(const CaseContext& ctx, const std::string& label, Tensor x) {
  Case c(ctx.op, label);
  c.Input(std::move(x)).Attr("T", ctx.dtype);
  return c;
}

// Random inputs in [-8, 8]: 2-D, rank 0, zero-size, a zero-size dimension
// between others, and one long enough for vector loops.
void AddRandomShapes(const CaseContext& ctx, std::vector<Case>& cases) {
  for (const Shape& s : {Shape{2, 3}, Shape{}, Shape{0}, Shape{3, 0, 2}, Shape{1500}}) {
    cases.push_back(
        Act(ctx, "random " + ShapeToString(s), RandomTensor(ctx.dtype, s, ctx.rng, -8, 8)));
  }
}

// NaN (passes through), infinities, signed zeros, large magnitudes.
Tensor Specials(DataType t) {
  const std::vector<double> v = {kNaN, kInf, -kInf, -0.0, 0.0, Large(t), -Large(t),
                                 1.0,  -1.0, 0.5,   -2.5, 1e-3};
  return MakeTensor(t, Dim(v.size()), v);
}

PX_CONFORMANCE_CASES("Relu", "Relu6")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t) && !IsIntegerType(t)) return cases;
  AddRandomShapes(ctx, cases);
  const double neg = IsUnsignedType(t) ? 0 : -2;
  cases.push_back(Act(ctx, "exact values around 0 and 6",
                      MakeTensor(t, {7}, {neg, 0, 3, 6, 7, 100, 5})));
  if (IsFloatType(t)) {
    cases.push_back(Act(ctx, "NaN, inf, -0.0 and large values", Specials(t)));
    cases.push_back(Act(ctx, "near 0 and 6", MakeTensor(t, {4}, {5.99, 6.01, -0.01, 0.01})));
  }
  return cases;
}

PX_CONFORMANCE_CASES("Elu", "Selu", "Softplus", "Softsign")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t)) return cases;
  AddRandomShapes(ctx, cases);
  // Softplus must not overflow for large inputs.
  cases.push_back(Act(ctx, "exact values and large inputs",
                      MakeTensor(t, {7}, {-1, 0, 2, 100, -100, 20, -20})));
  cases.push_back(Act(ctx, "NaN, inf, -0.0 and large values", Specials(t)));
  return cases;
}

// SoftsignGrad(gradients, features): gradients / (1 + |features|)^2, both
// of one shape.
PX_CONFORMANCE_CASES("SoftsignGrad")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t)) return cases;
  for (const Shape& s : {Shape{2, 3}, Shape{}, Shape{0}, Shape{1500}}) {
    cases.push_back(Case(ctx.op, "random " + ShapeToString(s))
                        .Input(RandomTensor(t, s, ctx.rng, -3, 3))
                        .Input(RandomTensor(t, s, ctx.rng, -8, 8))
                        .Attr("T", t));
  }
  cases.push_back(Case(ctx.op, "NaN, inf, -0.0 and large features")
                      .Input(MakeTensor(t, {12}, std::vector<double>(12, 1.5)))
                      .Input(Specials(t))
                      .Attr("T", t));
  cases.push_back(Case(ctx.op, "error: shapes differ")
                      .Input(RandomTensor(t, {2, 3}, ctx.rng))
                      .Input(RandomTensor(t, {3}, ctx.rng))
                      .Attr("T", t)
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  return cases;
}

PX_CONFORMANCE_CASES("LeakyRelu")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t)) return cases;
  AddRandomShapes(ctx, cases);  // default alpha 0.2
  cases.push_back(
      Act(ctx, "alpha 0.5", RandomTensor(t, {3, 4}, ctx.rng, -8, 8)).Attr("alpha", 0.5f));
  cases.push_back(
      Act(ctx, "alpha 0, exact values", MakeTensor(t, {3}, {-1, 0, 2})).Attr("alpha", 0.0f));
  cases.push_back(
      Act(ctx, "NaN, inf, -0.0 and large values, alpha 0.1", Specials(t)).Attr("alpha", 0.1f));
  return cases;
}

PX_CONFORMANCE_CASES("Gelu")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t)) return cases;
  // approximate defaults to true: the tanh form.
  cases.push_back(Act(ctx, "random [2,3]", RandomTensor(t, {2, 3}, ctx.rng, -8, 8)));
  cases.push_back(Act(ctx, "rank 0", RandomTensor(t, {}, ctx.rng, -8, 8)));
  cases.push_back(Act(ctx, "zero-size", RandomTensor(t, {3, 0, 2}, ctx.rng)));
  cases.push_back(Act(ctx, "approximate, random [1500]", RandomTensor(t, {1500}, ctx.rng, -8, 8))
                      .Attr("approximate", true));
  cases.push_back(Act(ctx, "exact (erf), random [1500]", RandomTensor(t, {1500}, ctx.rng, -8, 8))
                      .Attr("approximate", false));
  cases.push_back(Act(ctx, "exact (erf), rank 0", RandomTensor(t, {}, ctx.rng, -8, 8))
                      .Attr("approximate", false));
  // Finite special values only: the formulas give NaN at -inf.
  const std::vector<double> v = {kNaN, -0.0, 0.0, 1, -1, 2, -3, 30, -30};
  for (bool approximate : {true, false}) {
    cases.push_back(Act(ctx, std::string("NaN, -0.0 and exact values, approximate=") +
                                 (approximate ? "true" : "false"),
                        MakeTensor(t, Dim(v.size()), v))
                        .Attr("approximate", approximate));
  }
  return cases;
}

PX_CONFORMANCE_CASES("Softmax", "LogSoftmax")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t)) return cases;
  // Rank 1, rank 3, empty batch, empty rows, rows of one element, and a
  // batch of long rows.
  for (const Shape& s : {Shape{5}, Shape{2, 3, 4}, Shape{0, 3}, Shape{3, 0}, Shape{7, 1},
                         Shape{16, 100}}) {
    cases.push_back(Act(ctx, "random " + ShapeToString(s), RandomTensor(t, s, ctx.rng, -5, 5)));
  }
  // Stable for large logits: shifted by the row maximum.
  cases.push_back(Act(ctx, "large logits", MakeTensor(t, {2, 3}, {1000, 1001, 1002, 0, 0, 0})));
  // -inf logits get probability 0 (log: -inf).
  cases.push_back(Act(ctx, "-inf logits", MakeTensor(t, {2, 3}, {-kInf, 0, 1, -kInf, 2, -kInf})));
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

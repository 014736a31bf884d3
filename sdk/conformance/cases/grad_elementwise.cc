// Cases for the elementwise gradients: the activation gradients ReluGrad,
// Relu6Grad, EluGrad, SeluGrad, LeakyReluGrad and SoftplusGrad, which take
// (gradients, features-or-outputs), and the unary math gradients
// SigmoidGrad, TanhGrad, RsqrtGrad, SqrtGrad, ReciprocalGrad and InvGrad,
// which take (y, dy). Both inputs always have one shape; the shape functions
// refuse anything else, so a shape mismatch never reaches a kernel and there
// are no error cases here. SoftsignGrad is in activation.cc.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cases.h"

namespace plexus::conformance {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");

const std::vector<Shape>& RandomShapes() {
  // 2-D, rank 0, zero-size, a zero-size dimension between others, size-1
  // dimensions, one long enough for vector loops and their tails, and one
// large enough to run in parallel.
  // [40000] is past the cpu plugin's threshold for running in parallel.
  static const std::vector<Shape> shapes = {Shape{2, 3},    Shape{},     Shape{0},    Shape{3, 0, 2},
                                            Shape{1, 1, 5}, Shape{1027}, Shape{40000}};
  return shapes;
}

Case Grad2(const CaseContext& ctx, const std::string& label, Tensor a, Tensor b) {
  Case c(ctx.op, label);
  c.Input(std::move(a)).Input(std::move(b)).Attr("T", ctx.dtype);
  return c;
}

// ReluGrad and Relu6Grad: gradients where 0 < features (< 6), else 0. Real
// types, integers included.
PX_CONFORMANCE_CASES("ReluGrad", "Relu6Grad")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t) && !IsIntegerType(t)) return cases;
  const double lo = IsUnsignedType(t) ? 0 : -8;
  for (const Shape& s : RandomShapes()) {
    cases.push_back(Grad2(ctx, "random " + ShapeToString(s), RandomTensor(t, s, ctx.rng, lo, 8),
                          RandomTensor(t, s, ctx.rng, lo, 8)));
  }
  // The boundaries 0 and 6 themselves pass no gradient.
  const double neg = IsUnsignedType(t) ? 1 : -1;
  cases.push_back(Grad2(ctx, "features exactly at 0 and 6 and around them",
                        MakeTensor(t, {7}, {2, 3, 4, 5, 6, 7, 1}),
                        MakeTensor(t, {7}, {0, 6, 5, 7, neg, 1, 100})));
  if (IsFloatType(t)) {
    cases.push_back(Grad2(ctx, "features NaN, inf, -0.0 and near 0 and 6",
                          MakeTensor(t, {8}, {1, 2, 3, 4, 5, 6, 7, 8}),
                          MakeTensor(t, {8}, {kNaN, kInf, -kInf, -0.0, 0.01, -0.01, 5.99, 6.01})));
    cases.push_back(Grad2(ctx, "gradients NaN and inf pass where features are in range",
                          MakeTensor(t, {4}, {kNaN, kInf, -kInf, kNaN}),
                          MakeTensor(t, {4}, {1, 2, 3, -1})));
  }
  return cases;
}

// EluGrad, SeluGrad (outputs of the activation), LeakyReluGrad and
// SoftplusGrad (features).
PX_CONFORMANCE_CASES("EluGrad", "SeluGrad", "LeakyReluGrad", "SoftplusGrad")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t)) return cases;
  // Elu's and Selu's outputs are > -1 and > -1.76 where negative.
  const bool outputs = ctx.op == "EluGrad" || ctx.op == "SeluGrad";
  const double lo = outputs ? -0.99 : -8;
  for (const Shape& s : RandomShapes()) {
    cases.push_back(Grad2(ctx, "random " + ShapeToString(s), RandomTensor(t, s, ctx.rng, -3, 3),
                          RandomTensor(t, s, ctx.rng, lo, 8)));
  }
  cases.push_back(Grad2(ctx, "exact values around 0", MakeTensor(t, {6}, {1, 2, -3, 4, 0.5, 1}),
                        MakeTensor(t, {6}, {0, -0.0, 0.5, -0.5, 1e-3, -1e-3})));
  if (ctx.op == "SoftplusGrad") {
    // exp(-features) overflows for very negative features: the gradient is 0.
    cases.push_back(Grad2(ctx, "large features", MakeTensor(t, {6}, {1, 1, 1, 1, 1, 1}),
                          MakeTensor(t, {6}, {30, -30, 80, -80, 1000, -1000})));
  }
  cases.push_back(Grad2(ctx, "NaN and inf", MakeTensor(t, {6}, {kNaN, 1, kInf, 1, -kInf, 2}),
                        MakeTensor(t, {6}, {1, kNaN, 2, kInf, 3, 1})));
  if (ctx.op == "LeakyReluGrad") {
    for (float alpha : {0.0f, 0.5f, 1.5f}) {
      cases.push_back(Grad2(ctx, "alpha " + std::to_string(alpha),
                            RandomTensor(t, {3, 4}, ctx.rng, -3, 3),
                            RandomTensor(t, {3, 4}, ctx.rng, -8, 8))
                          .Attr("alpha", alpha));
    }
  }
  return cases;
}

// (y, dy) with y in the range of the forward function.
PX_CONFORMANCE_CASES("SigmoidGrad", "TanhGrad", "RsqrtGrad", "SqrtGrad", "ReciprocalGrad",
                     "InvGrad")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t)) return cases;
  double lo = -3, hi = 3;
  if (ctx.op == "SigmoidGrad") lo = 0, hi = 1;
  if (ctx.op == "TanhGrad") lo = -1, hi = 1;
  if (ctx.op == "RsqrtGrad" || ctx.op == "SqrtGrad") lo = 0.1, hi = 4;
  for (const Shape& s : RandomShapes()) {
    cases.push_back(Grad2(ctx, "random " + ShapeToString(s), RandomTensor(t, s, ctx.rng, lo, hi),
                          RandomTensor(t, s, ctx.rng, -3, 3)));
  }
  cases.push_back(Grad2(ctx, "exact values", MakeTensor(t, {6}, {0.5, 1, 0.25, 2, -0.0, 0}),
                        MakeTensor(t, {6}, {1, -2, 4, 0.5, 1, -0.0})));
  // y of 0 (a division for SqrtGrad), infinities and NaN in either input.
  cases.push_back(Grad2(ctx, "NaN, inf and zeros",
                        MakeTensor(t, {8}, {kNaN, 1, kInf, 0.5, -kInf, 0, 0.5, 0}),
                        MakeTensor(t, {8}, {1, kNaN, 1, kInf, 1, 1, -kInf, -0.0})));
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

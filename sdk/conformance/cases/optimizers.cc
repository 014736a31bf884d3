// Cases for the fused optimizer updates: _PlexusApplyGradientDescent,
// _PlexusApplyMomentum, _PlexusApplyAdam, _PlexusApplyAdamW and
// _PlexusApplyRMSProp. These ops are functional (core/src/ops/
// optimizer_ops.cc): they take the variable's and the accumulators' current
// values as ordinary inputs and return the new ones, and the core assigns
// them to the variables. So they need no resource or ref inputs, and the
// tool runs them as any other op. The hyperparameters are scalars the
// kernels take in host memory; the shape functions refuse a hyperparameter
// that is not a scalar and tensors of different shapes, so there are no
// error cases here.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cases.h"

namespace plexus::conformance {
namespace {

Tensor Scalar(DataType t, double v) { return MakeTensor(t, {}, {v}); }

// A few chained float operations in half and bfloat16.
Tolerance UpdateTolerance(DataType t) {
  Tolerance tol = DefaultTolerance(t);
  if (t == DataType::kFloat) tol.atol = 1e-5;
  if (t == DataType::kHalf) tol.atol = 4e-3;
  if (t == DataType::kBFloat16) tol.atol = 3e-2;
  return tol;
}

// The shapes the variable takes: 2-D, rank 0, zero-size, size-1
// dimensions, one long enough for vector loops and their tails, and one
// past the cpu plugin's threshold for running in parallel (2^15).
const std::vector<Shape>& VarShapes() {
  static const std::vector<Shape> shapes = {Shape{3, 4},    Shape{},     Shape{0},    Shape{2, 0, 3},
                                            Shape{1, 1, 5}, Shape{1027}, Shape{40000}};
  return shapes;
}

// The hyperparameters of one optimizer, in input order.
struct Hyper {
  std::vector<double> values;
  const char* label;
};

// Builds a case: random inputs of var's shape at the positions
// `tensor_at` (the one numbered `non_negative` of them, if any, in [0, 2]),
// the hyperparameters at the other positions, in input order.
Case Update(const CaseContext& ctx, const std::string& label, const Shape& shape,
            const std::vector<int>& tensor_at, const std::vector<double>& hyper, int num_inputs,
            int non_negative = -1) {
  Case c(ctx.op, label);
  size_t h = 0, k = 0;
  for (int i = 0; i < num_inputs; ++i) {
    if (k < tensor_at.size() && tensor_at[k] == i) {
      // Second moments (Adam's v, RMSProp's ms) are non-negative.
      const bool moment = static_cast<int>(k) == non_negative;
      c.Input(RandomTensor(ctx.dtype, shape, ctx.rng, moment ? 0 : -2, 2));
      ++k;
    } else {
      c.Input(Scalar(ctx.dtype, hyper[h++]));
    }
  }
  c.Attr("T", ctx.dtype).WithTolerance(UpdateTolerance(ctx.dtype));
  return c;
}

void AddCases(const CaseContext& ctx, const std::vector<int>& tensor_at, const std::vector<Hyper>& hypers,
              int num_inputs, int moments, std::vector<Case>& cases) {
  for (const Shape& s : VarShapes()) {
    cases.push_back(Update(ctx, "random " + ShapeToString(s) + ", " + hypers[0].label, s, tensor_at,
                           hypers[0].values, num_inputs, moments));
  }
  for (size_t i = 1; i < hypers.size(); ++i) {
    cases.push_back(Update(ctx, std::string("random [4,5], ") + hypers[i].label, {4, 5}, tensor_at,
                           hypers[i].values, num_inputs, moments));
  }
}

PX_CONFORMANCE_CASES("_PlexusApplyGradientDescent")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!IsFloatType(ctx.dtype)) return cases;
  // var, alpha, delta.
  AddCases(ctx, {0, 2}, {{{0.1}, "alpha 0.1"}, {{0}, "alpha 0"}, {{-1.5}, "negative alpha"}}, 3, -1, cases);
  const double inf = std::numeric_limits<double>::infinity();
  cases.push_back(Case(ctx.op, "NaN and inf")
                      .Input(MakeTensor(ctx.dtype, {4}, {std::nan(""), 1, inf, 2}))
                      .Input(Scalar(ctx.dtype, 0.5))
                      .Input(MakeTensor(ctx.dtype, {4}, {1, std::nan(""), 1, -inf}))
                      .Attr("T", ctx.dtype));
  return cases;
}

PX_CONFORMANCE_CASES("_PlexusApplyMomentum")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!IsFloatType(ctx.dtype)) return cases;
  // var, accum, lr, grad, momentum.
  const std::vector<Hyper> hypers = {{{0.1, 0.9}, "lr 0.1, momentum 0.9"},
                                     {{0.01, 0}, "momentum 0"},
                                     {{0.5, 1.0}, "momentum 1"}};
  AddCases(ctx, {0, 1, 3}, hypers, 5, -1, cases);
  for (const Hyper& h : hypers) {
    cases.push_back(Update(ctx, std::string("use_nesterov, ") + h.label, {3, 7}, {0, 1, 3}, h.values, 5)
                        .Attr("use_nesterov", true));
  }
  return cases;
}

PX_CONFORMANCE_CASES("_PlexusApplyAdam")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!IsFloatType(ctx.dtype)) return cases;
  // var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad.
  const std::vector<Hyper> hypers = {
      {{0.9, 0.999, 0.001, 0.9, 0.999, 1e-7}, "first step, Keras defaults"},
      {{0.9 * 0.9 * 0.9, 0.999 * 0.999 * 0.999, 0.01, 0.9, 0.999, 1e-3}, "third step"},
      {{0.5, 0.25, 0.1, 0.5, 0.5, 1e-8}, "betas 0.5"},
      {{0.9, 0.999, 0.001, 0.9, 0.999, 1.0}, "epsilon 1"},
  };
  AddCases(ctx, {0, 1, 2, 9}, hypers, 10, 2, cases);
  for (const Hyper& h : hypers) {
    cases.push_back(Update(ctx, std::string("use_nesterov, ") + h.label, {3, 7}, {0, 1, 2, 9}, h.values, 10,
                           2)
                        .Attr("use_nesterov", true));
  }
  return cases;
}

PX_CONFORMANCE_CASES("_PlexusApplyAdamW")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!IsFloatType(ctx.dtype)) return cases;
  // var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon,
  // weight_decay, grad.
  const std::vector<Hyper> hypers = {
      {{0.9, 0.999, 0.001, 0.9, 0.999, 1e-7, 0.01}, "first step, weight decay 0.01"},
      {{0.9 * 0.9, 0.999 * 0.999, 0.01, 0.9, 0.999, 1e-3, 0}, "second step, no weight decay"},
      {{0.5, 0.25, 0.1, 0.5, 0.5, 1e-8, 0.5}, "betas 0.5, weight decay 0.5"},
  };
  AddCases(ctx, {0, 1, 2, 10}, hypers, 11, 2, cases);
  return cases;
}

PX_CONFORMANCE_CASES("_PlexusApplyRMSProp")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!IsFloatType(ctx.dtype)) return cases;
  // var, ms, mom, lr, rho, momentum, epsilon, grad. ms (the mean square)
  // is non-negative.
  const std::vector<Hyper> hypers = {
      {{0.001, 0.9, 0.0, 1e-7}, "Keras defaults"},
      {{0.01, 0.9, 0.9, 1e-3}, "momentum 0.9"},
      {{0.1, 0.0, 0.5, 1.0}, "rho 0, epsilon 1"},
  };
  AddCases(ctx, {0, 1, 2, 7}, hypers, 8, 1, cases);
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

// Gradients of the trigonometric and hyperbolic functions and their
// inverses, Atan2 and Expm1, written as TensorFlow's math_grad.py writes
// them (so that results match at the edges of the domains too). IsFinite,
// IsNan and IsInf have none.
#include "passes/gradients/grad_util.h"
#include "plexus/gradients.h"
#include "plexus/status.h"

namespace plexus {
namespace {

#define PX_G_ASSIGN(lhs, expr) PX_ASSIGN_OR_RETURN(lhs, expr)

// dy * f, dy / f: the shapes of the unary ops' gradients.
absl::Status Times(GradientContext& g, const GradientList& dy, const Endpoint& f, GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], g.Op("Mul", {*dy[0], f}));
  return absl::OkStatus();
}
absl::Status Over(GradientContext& g, const GradientList& dy, const Endpoint& f, GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], g.Op("RealDiv", {*dy[0], f}));
  return absl::OkStatus();
}

// 1 - x^2 and 1 + x^2.
absl::StatusOr<Endpoint> OneMinusSquare(GradientContext& g, const Endpoint& x, bool plus = false) {
  PX_G_ASSIGN(Endpoint one, g.Scalar(1.0, g.dtype(x)));
  PX_G_ASSIGN(Endpoint x2, g.Op("Square", {x}));
  return g.Op(plus ? "AddV2" : "Sub", {one, x2});
}

// d/dx tan(x) = sec(x)^2.
absl::Status TanGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN(Endpoint c, g.Op("Cos", {op.inputs[0]}));
  PX_G_ASSIGN(Endpoint sec, g.Op("Reciprocal", {c}));
  PX_G_ASSIGN(Endpoint sec2, g.Op("Square", {sec}));
  return Times(g, dy, sec2, dx);
}
PX_REGISTER_GRADIENT("Tan", TanGrad);

absl::Status SinhGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN(Endpoint c, g.Op("Cosh", {op.inputs[0]}));
  return Times(g, dy, c, dx);
}
PX_REGISTER_GRADIENT("Sinh", SinhGrad);

absl::Status CoshGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN(Endpoint s, g.Op("Sinh", {op.inputs[0]}));
  return Times(g, dy, s, dx);
}
PX_REGISTER_GRADIENT("Cosh", CoshGrad);

// d/dx asin(x) = 1 / sqrt(1 - x^2); acos is its negative.
absl::Status AsinGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN(Endpoint d, OneMinusSquare(g, op.inputs[0]));
  PX_G_ASSIGN(Endpoint den, g.Op("Sqrt", {d}));
  PX_G_ASSIGN(Endpoint inv, g.Op("Reciprocal", {den}));
  return Times(g, dy, inv, dx);
}
PX_REGISTER_GRADIENT("Asin", AsinGrad);

absl::Status AcosGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN(Endpoint d, OneMinusSquare(g, op.inputs[0]));
  PX_G_ASSIGN(Endpoint den, g.Op("Sqrt", {d}));
  PX_G_ASSIGN(Endpoint inv, g.Op("Reciprocal", {den}));
  PX_G_ASSIGN(Endpoint neg, g.Op("Neg", {*dy[0]}));
  PX_G_ASSIGN((*dx)[0], g.Op("Mul", {neg, inv}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Acos", AcosGrad);

// d/dx atan(x) = 1 / (1 + x^2).
absl::Status AtanGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN(Endpoint d, OneMinusSquare(g, op.inputs[0], /*plus=*/true));
  PX_G_ASSIGN(Endpoint inv, g.Op("Reciprocal", {d}));
  return Times(g, dy, inv, dx);
}
PX_REGISTER_GRADIENT("Atan", AtanGrad);

// The inverse hyperbolic functions through their outputs y:
// d/dx asinh(x) = 1 / cosh(y), d/dx acosh(x) = 1 / sinh(y).
absl::Status AsinhGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN(Endpoint c, g.Op("Cosh", {op.outputs[0]}));
  return Over(g, dy, c, dx);
}
PX_REGISTER_GRADIENT("Asinh", AsinhGrad);

absl::Status AcoshGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN(Endpoint s, g.Op("Sinh", {op.outputs[0]}));
  return Over(g, dy, s, dx);
}
PX_REGISTER_GRADIENT("Acosh", AcoshGrad);

// d/dx atanh(x) = 1 / (1 - x^2).
absl::Status AtanhGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN(Endpoint d, OneMinusSquare(g, op.inputs[0]));
  PX_G_ASSIGN(Endpoint inv, g.Op("Reciprocal", {d}));
  return Times(g, dy, inv, dx);
}
PX_REGISTER_GRADIENT("Atanh", AtanhGrad);

absl::Status Expm1Grad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN(Endpoint e, g.Op("Exp", {op.inputs[0]}));
  return Times(g, dy, e, dx);
}
PX_REGISTER_GRADIENT("Expm1", Expm1Grad);

// atan2(y, x): d/dy = x / (x^2 + y^2), d/dx = -y / (x^2 + y^2), each summed
// down to its input's shape where the inputs broadcast.
absl::Status Atan2Grad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const Endpoint& y = op.inputs[0];
  const Endpoint& x = op.inputs[1];
  PX_G_ASSIGN(Endpoint y2, g.Op("Square", {y}));
  PX_G_ASSIGN(Endpoint x2, g.Op("Square", {x}));
  PX_G_ASSIGN(Endpoint r2, g.Op("AddV2", {y2, x2}));
  PX_G_ASSIGN(Endpoint scaled, g.Op("RealDiv", {*dy[0], r2}));
  PX_G_ASSIGN(Endpoint gy, g.Op("Mul", {x, scaled}));
  PX_G_ASSIGN(Endpoint neg_y, g.Op("Neg", {y}));
  PX_G_ASSIGN(Endpoint gx, g.Op("Mul", {neg_y, scaled}));
  PX_G_ASSIGN((*dx)[0], g.SumToShapeOf(gy, y, x));
  PX_G_ASSIGN((*dx)[1], g.SumToShapeOf(gx, x, y));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Atan2", Atan2Grad);

PX_NO_GRADIENT("IsFinite");
PX_NO_GRADIENT("IsNan");
PX_NO_GRADIENT("IsInf");

}  // namespace
}  // namespace plexus

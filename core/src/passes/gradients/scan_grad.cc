// Gradients of the cumulative ops, as TensorFlow's math_grad.py computes
// them: Cumsum's is the cumulative sum of dy in the other direction;
// Cumprod's divides such a sum by x, giving 0 where x is 0 (div_no_nan), so
// it is exact only where x has no zeros, as in TensorFlow.
#include "passes/gradients/grad_util.h"
#include "plexus/gradients.h"
#include "plexus/status.h"

namespace plexus {
namespace {

#define PX_G_ASSIGN(lhs, expr) PX_ASSIGN_OR_RETURN(lhs, expr)

// Cumsum(t, axis) with the forward op's `exclusive` and the opposite `reverse`.
absl::StatusOr<Endpoint> BackwardCumsum(GradientContext& g, const GradientOp& op, const Endpoint& t) {
  AttrMap attrs = grad::With(grad::Attrs(), "exclusive", grad::AttrBool(op, "exclusive"));
  attrs = grad::With(attrs, "reverse", !grad::AttrBool(op, "reverse"));
  return g.Op("Cumsum", {t, op.inputs[1]}, attrs);
}

absl::Status CumsumGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], BackwardCumsum(g, op, *dy[0]));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Cumsum", CumsumGrad);

absl::Status CumprodGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const Endpoint& x = op.inputs[0];
  PX_G_ASSIGN(Endpoint weighted, g.Op("Mul", {op.outputs[0], *dy[0]}));
  PX_G_ASSIGN(Endpoint sum, BackwardCumsum(g, op, weighted));
  // div_no_nan(sum, x): 0 where x == 0.
  PX_G_ASSIGN(Endpoint zero, g.Scalar(0.0, g.dtype(x)));
  PX_G_ASSIGN(Endpoint is_zero, g.Op("Equal", {x, zero}));
  PX_G_ASSIGN(Endpoint quotient, g.Op("RealDiv", {sum, x}));
  PX_G_ASSIGN(Endpoint zeros, g.ZerosLike(quotient));
  PX_G_ASSIGN((*dx)[0], g.Op("SelectV2", {is_zero, zeros, quotient}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Cumprod", CumprodGrad);

}  // namespace
}  // namespace plexus

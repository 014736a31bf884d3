// Gradients of host math and array ops, as TensorFlow writes them: AddN and
// AccumulateNV2 (the gradient reaches every input), ClipByValue (to t where
// it is inside the bounds, else to the bound it was clipped to), Roll (the
// gradient rolled back), CheckNumerics (the gradient checked too). InTopK,
// InTopKV2, LowerBound, UpperBound and ApproximateEqual are not
// differentiable.
#include <string>

#include "absl/strings/str_cat.h"
#include "passes/gradients/grad_util.h"
#include "plexus/gradients.h"
#include "plexus/status.h"

namespace plexus {
namespace {

#define PX_G_ASSIGN(lhs, expr) PX_ASSIGN_OR_RETURN(lhs, expr)

absl::Status AddNGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  for (size_t i = 0; i < op.inputs.size(); ++i) (*dx)[i] = *dy[0];
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("AddN", AddNGrad);
PX_REGISTER_GRADIENT("AccumulateNV2", AddNGrad);

absl::Status ClipByValueGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const Endpoint& x = op.inputs[0];
  const Endpoint& lo = op.inputs[1];
  const Endpoint& hi = op.inputs[2];
  PX_G_ASSIGN(Endpoint zeros, g.ZerosLike(*dy[0]));
  PX_G_ASSIGN(Endpoint below, g.Op("Less", {x, lo}));
  PX_G_ASSIGN(Endpoint above, g.Op("Greater", {x, hi}));
  PX_G_ASSIGN(Endpoint outside, g.Op("LogicalOr", {below, above}));
  PX_G_ASSIGN((*dx)[0], g.Op("SelectV2", {outside, zeros, *dy[0]}));
  PX_G_ASSIGN(Endpoint to_lo, g.Op("SelectV2", {below, *dy[0], zeros}));
  PX_G_ASSIGN((*dx)[1], g.SumToShapeOf(to_lo, lo, x));
  PX_G_ASSIGN(Endpoint to_hi, g.Op("SelectV2", {above, *dy[0], zeros}));
  PX_G_ASSIGN((*dx)[2], g.SumToShapeOf(to_hi, hi, x));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("ClipByValue", ClipByValueGrad);

absl::Status RollGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN(Endpoint back, g.Op("Neg", {op.inputs[1]}));
  PX_G_ASSIGN((*dx)[0], g.Op("Roll", {*dy[0], back, op.inputs[2]}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Roll", RollGrad);

absl::Status CheckNumericsGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const std::string message = absl::StrCat(
      "Not a number (NaN) or infinity (Inf) values detected in gradient. ", grad::AttrString(op, "message"));
  AttrMap attrs;
  attrs["message"].set_s(message);
  PX_G_ASSIGN((*dx)[0], g.Op(op.op, {*dy[0]}, attrs));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("CheckNumerics", CheckNumericsGrad);
PX_REGISTER_GRADIENT("CheckNumericsV2", CheckNumericsGrad);

PX_NO_GRADIENT("InTopK");
PX_NO_GRADIENT("InTopKV2");
PX_NO_GRADIENT("LowerBound");
PX_NO_GRADIENT("UpperBound");
PX_NO_GRADIENT("ApproximateEqual");

}  // namespace
}  // namespace plexus

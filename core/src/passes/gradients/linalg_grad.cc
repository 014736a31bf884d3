// Gradients of the linear-algebra ops: MatrixSolve, and the matrix-diagonal
// ops (MatrixDiag, MatrixDiagPart, MatrixSetDiag in their three versions),
// after TensorFlow's linalg_grad.py and array_grad.py.
//
// The diagonal ops move elements, so their gradients move dy back: the
// gradient of MatrixDiag is MatrixDiagPart of dy (same k and align), and the
// other way round MatrixSetDiag of dy into zeros. V2 aligns short diagonals
// to the left (LEFT_LEFT), and its gradients use V3 with that alignment.
// num_rows, num_cols, padding_value and k get no gradient.
#include <string>

#include "passes/gradients/grad_util.h"
#include "plexus/gradients.h"
#include "plexus/status.h"

namespace plexus {
namespace {

using grad::Attrs;
using grad::AttrBool;
using grad::AttrString;
using grad::With;

#define PX_G_ASSIGN(lhs, expr) PX_ASSIGN_OR_RETURN(lhs, expr)

// x = solve(a, b): db = solve(a, dy, !adjoint); da = -db x^T (adjoint:
// -x db^T).
absl::Status MatrixSolveGrad(GradientContext& g, const GradientOp& op, const GradientList& dy,
                             GradientList* dx) {
  const bool adjoint = AttrBool(op, "adjoint");
  const Endpoint& a = op.inputs[0];
  const Endpoint& x = op.outputs[0];
  PX_G_ASSIGN(Endpoint db, g.Op("MatrixSolve", {a, *dy[0]}, With(Attrs(), "adjoint", !adjoint)));
  const AttrMap adj_y = With(With(Attrs(), "adj_x", false), "adj_y", true);
  PX_G_ASSIGN(Endpoint prod, adjoint ? g.Op("BatchMatMulV2", {x, db}, adj_y)
                                     : g.Op("BatchMatMulV2", {db, x}, adj_y));
  PX_G_ASSIGN((*dx)[0], g.Op("Neg", {prod}));
  (*dx)[1] = db;
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("MatrixSolve", MatrixSolveGrad);

// The align attribute of the V3 op that undoes a diagonal op: the forward
// op's (V3) or LEFT_LEFT (V2).
AttrMap AlignOf(const GradientOp& op) {
  AttrMap attrs;
  attrs["align"].set_s(op.op.back() == '3' ? AttrString(op, "align", "RIGHT_LEFT") : "LEFT_LEFT");
  return attrs;
}

// MatrixDiagPartV3(t, k, 0).
absl::StatusOr<Endpoint> DiagPartOf(GradientContext& g, const GradientOp& op, const Endpoint& t,
                                    const Endpoint& k) {
  PX_G_ASSIGN(Endpoint zero, g.Scalar(0, g.dtype(t)));
  return g.Op("MatrixDiagPartV3", {t, k, zero}, AlignOf(op));
}

absl::Status MatrixDiagGrad(GradientContext& g, const GradientOp& op, const GradientList& dy,
                            GradientList* dx) {
  if (op.op == "MatrixDiag") {
    PX_G_ASSIGN((*dx)[0], g.Op("MatrixDiagPart", {*dy[0]}));
  } else {
    PX_G_ASSIGN((*dx)[0], DiagPartOf(g, op, *dy[0], op.inputs[1]));
  }
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("MatrixDiag", MatrixDiagGrad);
PX_REGISTER_GRADIENT("MatrixDiagV2", MatrixDiagGrad);
PX_REGISTER_GRADIENT("MatrixDiagV3", MatrixDiagGrad);

// dy set into the diagonals of zeros shaped like the input.
absl::Status MatrixDiagPartGrad(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                GradientList* dx) {
  PX_G_ASSIGN(Endpoint zeros, g.ZerosLike(op.inputs[0]));
  if (op.op == "MatrixDiagPart") {
    PX_G_ASSIGN((*dx)[0], g.Op("MatrixSetDiag", {zeros, *dy[0]}));
  } else {
    PX_G_ASSIGN((*dx)[0], g.Op("MatrixSetDiagV3", {zeros, *dy[0], op.inputs[1]}, AlignOf(op)));
  }
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("MatrixDiagPart", MatrixDiagPartGrad);
PX_REGISTER_GRADIENT("MatrixDiagPartV2", MatrixDiagPartGrad);
PX_REGISTER_GRADIENT("MatrixDiagPartV3", MatrixDiagPartGrad);

// The input keeps dy off the diagonals; the diagonals get dy's diagonals.
absl::Status MatrixSetDiagGrad(GradientContext& g, const GradientOp& op, const GradientList& dy,
                               GradientList* dx) {
  PX_G_ASSIGN(Endpoint zeros, g.ZerosLike(op.inputs[1]));
  if (op.op == "MatrixSetDiag") {
    PX_G_ASSIGN((*dx)[0], g.Op("MatrixSetDiag", {*dy[0], zeros}));
    PX_G_ASSIGN((*dx)[1], g.Op("MatrixDiagPart", {*dy[0]}));
  } else {
    const Endpoint& k = op.inputs[2];
    PX_G_ASSIGN((*dx)[0], g.Op("MatrixSetDiagV3", {*dy[0], zeros, k}, AlignOf(op)));
    PX_G_ASSIGN((*dx)[1], DiagPartOf(g, op, *dy[0], k));
  }
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("MatrixSetDiag", MatrixSetDiagGrad);
PX_REGISTER_GRADIENT("MatrixSetDiagV2", MatrixSetDiagGrad);
PX_REGISTER_GRADIENT("MatrixSetDiagV3", MatrixSetDiagGrad);

}  // namespace
}  // namespace plexus

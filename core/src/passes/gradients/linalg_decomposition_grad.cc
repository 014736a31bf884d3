// Gradients of the matrix inverse, determinants and Cholesky factorization,
// as TensorFlow's linalg_grad.py writes them. Qr, Svd, SelfAdjointEigV2,
// MatrixTriangularSolve, MatrixSolveLs and Lu have no gradient here (their
// TensorFlow gradients need ops Plexus lacks, such as MatrixSetDiag).
#include "passes/gradients/grad_util.h"
#include "plexus/gradients.h"
#include "plexus/status.h"

namespace plexus {
namespace {

using grad::Attrs;
using grad::AttrBool;
using grad::With;

#define PX_G_ASSIGN(lhs, expr) PX_ASSIGN_OR_RETURN(lhs, expr)

// Batched a @ b with either side adjointed.
absl::StatusOr<Endpoint> MatMul(GradientContext& g, const Endpoint& a, const Endpoint& b, bool adj_a, bool adj_b) {
  return g.Op("BatchMatMulV2", {a, b}, With(With(Attrs(), "adj_x", adj_a), "adj_y", adj_b));
}

// The band of `x` with `lower` subdiagonals and `upper` superdiagonals
// (-1: all).
absl::StatusOr<Endpoint> Band(GradientContext& g, const Endpoint& x, int64_t lower, int64_t upper) {
  PX_G_ASSIGN(Endpoint lo, g.Scalar(static_cast<double>(lower), DataType::kInt64));
  PX_G_ASSIGN(Endpoint hi, g.Scalar(static_cast<double>(upper), DataType::kInt64));
  return g.Op("MatrixBandPart", {x, lo, hi});
}

// x of shape [...] as [..., 1, 1].
absl::StatusOr<Endpoint> AsMatrixScale(GradientContext& g, const Endpoint& x) {
  PX_G_ASSIGN(Endpoint minus_one, g.Scalar(-1, DataType::kInt32));
  PX_G_ASSIGN(Endpoint once, g.Op("ExpandDims", {x, minus_one}));
  return g.Op("ExpandDims", {once, minus_one});
}

// d(A^-1) = -A^-1 dA A^-1: dA = -A^-H dY A^-H (adjoint: the adjoint
// inverse's adjoint).
absl::Status MatrixInverseGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const Endpoint& ainv = op.outputs[0];
  const bool adjoint = AttrBool(op, "adjoint");
  PX_G_ASSIGN(Endpoint inner, MatMul(g, *dy[0], ainv, adjoint, !adjoint));
  PX_G_ASSIGN(Endpoint outer, MatMul(g, ainv, inner, !adjoint, false));
  PX_G_ASSIGN((*dx)[0], g.Op("Neg", {outer}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("MatrixInverse", MatrixInverseGrad);

// d det(A) / dA = det(A) A^-H.
absl::Status MatrixDeterminantGrad(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                   GradientList* dx) {
  PX_G_ASSIGN(Endpoint adj_inv, g.Op("MatrixInverse", {op.inputs[0]}, With(Attrs(), "adjoint", true)));
  PX_G_ASSIGN(Endpoint scaled, g.Op("Mul", {*dy[0], op.outputs[0]}));
  PX_G_ASSIGN(Endpoint multipliers, AsMatrixScale(g, scaled));
  PX_G_ASSIGN((*dx)[0], g.Op("Mul", {multipliers, adj_inv}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("MatrixDeterminant", MatrixDeterminantGrad);

// d log|det(A)| / dA = A^-H; the sign output has no gradient.
absl::Status LogMatrixDeterminantGrad(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                      GradientList* dx) {
  if (!dy[1]) return absl::OkStatus();
  PX_G_ASSIGN(Endpoint adj_inv, g.Op("MatrixInverse", {op.inputs[0]}, With(Attrs(), "adjoint", true)));
  PX_G_ASSIGN(Endpoint multipliers, AsMatrixScale(g, *dy[1]));
  PX_G_ASSIGN((*dx)[0], g.Op("Mul", {multipliers, adj_inv}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("LogMatrixDeterminant", LogMatrixDeterminantGrad);

// TensorFlow's Cholesky gradient (Murray, "Differentiation of the Cholesky
// decomposition", 2016): with L the factor and M = L^H dL, its lower
// triangle with the diagonal halved, Phi(M),
//   dA = 1/2 L^-H (Phi(M) + Phi(M)^H) L^-1.
// Phi(M)^H is written as the upper triangle of dL^H L with the diagonal
// halved, so that no transpose of unknown rank is needed.
absl::Status CholeskyGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const Endpoint& l = op.outputs[0];
  const DataType t = g.dtype(l);
  PX_G_ASSIGN(Endpoint ones, g.Op("OnesLike", {l}));
  PX_G_ASSIGN(Endpoint eye, Band(g, ones, 0, 0));
  PX_G_ASSIGN(Endpoint l_inv, g.Op("MatrixTriangularSolve", {l, eye},
                                   With(With(Attrs(), "lower", true), "adjoint", false)));
  PX_G_ASSIGN(Endpoint half, g.Scalar(0.5, t));
  // Phi(M) and Phi(M)^H.
  PX_G_ASSIGN(Endpoint m, MatMul(g, l, *dy[0], true, false));
  PX_G_ASSIGN(Endpoint m_lower, Band(g, m, -1, 0));
  PX_G_ASSIGN(Endpoint m_diag, Band(g, m, 0, 0));
  PX_G_ASSIGN(Endpoint m_half_diag, g.Op("Mul", {half, m_diag}));
  PX_G_ASSIGN(Endpoint phi, g.Op("Sub", {m_lower, m_half_diag}));
  PX_G_ASSIGN(Endpoint mh, MatMul(g, *dy[0], l, true, false));
  PX_G_ASSIGN(Endpoint mh_upper, Band(g, mh, 0, -1));
  PX_G_ASSIGN(Endpoint mh_diag, Band(g, mh, 0, 0));
  PX_G_ASSIGN(Endpoint mh_half_diag, g.Op("Mul", {half, mh_diag}));
  PX_G_ASSIGN(Endpoint phi_h, g.Op("Sub", {mh_upper, mh_half_diag}));
  PX_G_ASSIGN(Endpoint sym, g.Op("AddV2", {phi, phi_h}));
  PX_G_ASSIGN(Endpoint left, MatMul(g, l_inv, sym, true, false));
  PX_G_ASSIGN(Endpoint both, MatMul(g, left, l_inv, false, false));
  PX_G_ASSIGN((*dx)[0], g.Op("Mul", {both, half}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Cholesky", CholeskyGrad);

}  // namespace
}  // namespace plexus

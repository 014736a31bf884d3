// Matrix factorizations, inverses and solvers of tf.linalg: MatrixInverse,
// MatrixDeterminant, LogMatrixDeterminant, Cholesky, Qr, Svd,
// SelfAdjointEigV2, MatrixTriangularSolve, MatrixSolveLs and Lu, with
// TensorFlow's names, attributes, type lists and shape functions. Host ops,
// with kernels in host_kernels/linalg_inverse.cc, linalg_decompositions.cc,
// linalg_spectral.cc and linalg_solve.cc (on Eigen); every op takes a batch
// of matrices in the two innermost dimensions.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

constexpr char kLinalgTypes[] = "T: {double, float, half, complex64, complex128}";

// Two dimensions that must agree (-1 = unknown); the known one.
absl::Status MergeDim(InferenceContext& ctx, int64_t a, int64_t b, int64_t* out) {
  if (a >= 0 && b >= 0 && a != b) {
    return ctx.Error(absl::StrCat("Dimensions must be equal, but are ", a, " and ", b));
  }
  *out = a >= 0 ? a : b;
  return absl::OkStatus();
}

// Input `i` as a batch of matrices: rank >= 2 (unknown rank: false).
absl::StatusOr<bool> MatrixInput(InferenceContext& ctx, int i) {
  const PartialShape& s = ctx.input(i);
  if (!s.rank_known()) return false;
  if (s.rank() < 2) {
    return ctx.Error(absl::StrCat("Shape must be at least rank 2 but is rank ", s.rank(), " (input ", i, ", shape ",
                                  s.ToString(), ")"));
  }
  return true;
}

Shape Outer(const PartialShape& s) { return Shape(s.dims().begin(), s.dims().end() - 2); }

Shape With(Shape outer, std::initializer_list<int64_t> inner) {
  outer.insert(outer.end(), inner.begin(), inner.end());
  return outer;
}

// A batch of square matrices: the input's shape with its two inner
// dimensions merged; `n` gets their size.
absl::StatusOr<bool> SquareInput(InferenceContext& ctx, Shape* outer, int64_t* n) {
  PX_ASSIGN_OR_RETURN(bool known, MatrixInput(ctx, 0));
  if (!known) return false;
  const PartialShape& s = ctx.input(0);
  PX_RETURN_IF_ERROR(MergeDim(ctx, s.dim(s.rank() - 2), s.dim(s.rank() - 1), n));
  *outer = Outer(s);
  return true;
}

// MatrixInverse, Cholesky: square matrices in, the same shape out.
absl::Status SquareShape(InferenceContext& ctx) {
  Shape outer;
  int64_t n = -1;
  PX_ASSIGN_OR_RETURN(bool known, SquareInput(ctx, &outer, &n));
  ctx.set_output(0, known ? PartialShape(With(outer, {n, n})) : PartialShape::Unknown());
  return absl::OkStatus();
}

// MatrixDeterminant, LogMatrixDeterminant: one value per matrix.
absl::Status DeterminantShape(InferenceContext& ctx) {
  Shape outer;
  int64_t n = -1;
  PX_ASSIGN_OR_RETURN(bool known, SquareInput(ctx, &outer, &n));
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    ctx.set_output(i, known ? PartialShape(outer) : PartialShape::Unknown());
  }
  return absl::OkStatus();
}

absl::Status LuShape(InferenceContext& ctx) {
  Shape outer;
  int64_t n = -1;
  PX_ASSIGN_OR_RETURN(bool known, SquareInput(ctx, &outer, &n));
  ctx.set_output(0, known ? PartialShape(With(outer, {n, n})) : PartialShape::Unknown());
  ctx.set_output(1, known ? PartialShape(With(outer, {n})) : PartialShape::Unknown());
  return absl::OkStatus();
}

absl::Status SelfAdjointEigShape(InferenceContext& ctx) {
  Shape outer;
  int64_t n = -1;
  PX_ASSIGN_OR_RETURN(bool known, SquareInput(ctx, &outer, &n));
  PX_ASSIGN_OR_RETURN(bool compute_v, GetAttrBool(ctx.node(), "compute_v"));
  ctx.set_output(0, known ? PartialShape(With(outer, {n})) : PartialShape::Unknown());
  if (!compute_v) ctx.set_output(1, PartialShape(Shape{0}));
  else ctx.set_output(1, known ? PartialShape(With(outer, {n, n})) : PartialShape::Unknown());
  return absl::OkStatus();
}

int64_t MinDim(int64_t m, int64_t n) { return m >= 0 && n >= 0 ? std::min(m, n) : -1; }

// Qr: q [..., m, p] and r [..., p, n] with p = min(m, n), or q [..., m, m]
// and r [..., m, n] with full_matrices.
absl::Status QrShape(InferenceContext& ctx) {
  PX_ASSIGN_OR_RETURN(bool known, MatrixInput(ctx, 0));
  PX_ASSIGN_OR_RETURN(bool full, GetAttrBool(ctx.node(), "full_matrices"));
  if (!known) {
    ctx.set_output(0, PartialShape::Unknown());
    ctx.set_output(1, PartialShape::Unknown());
    return absl::OkStatus();
  }
  const PartialShape& s = ctx.input(0);
  const int64_t m = s.dim(s.rank() - 2), n = s.dim(s.rank() - 1);
  const int64_t p = full ? m : MinDim(m, n);
  ctx.set_output(0, PartialShape(With(Outer(s), {m, p})));
  ctx.set_output(1, PartialShape(With(Outer(s), {p, n})));
  return absl::OkStatus();
}

// Svd: s [..., p]; u [..., m, p] and v [..., n, p] (m x m and n x n with
// full_matrices), or empty vectors without compute_uv.
absl::Status SvdShape(InferenceContext& ctx) {
  PX_ASSIGN_OR_RETURN(bool known, MatrixInput(ctx, 0));
  PX_ASSIGN_OR_RETURN(bool compute_uv, GetAttrBool(ctx.node(), "compute_uv"));
  PX_ASSIGN_OR_RETURN(bool full, GetAttrBool(ctx.node(), "full_matrices"));
  for (int i = 0; i < 3; ++i) ctx.set_output(i, PartialShape::Unknown());
  if (!compute_uv) {
    ctx.set_output(1, PartialShape(Shape{0}));
    ctx.set_output(2, PartialShape(Shape{0}));
  }
  if (!known) return absl::OkStatus();
  const PartialShape& s = ctx.input(0);
  const int64_t m = s.dim(s.rank() - 2), n = s.dim(s.rank() - 1);
  const int64_t p = MinDim(m, n);
  ctx.set_output(0, PartialShape(With(Outer(s), {p})));
  if (compute_uv) {
    ctx.set_output(1, PartialShape(With(Outer(s), {m, full ? m : p})));
    ctx.set_output(2, PartialShape(With(Outer(s), {n, full ? n : p})));
  }
  return absl::OkStatus();
}

// MatrixTriangularSolve: the batch dimensions broadcast; [..., n, k] out.
absl::Status TriangularSolveShape(InferenceContext& ctx) {
  PX_ASSIGN_OR_RETURN(bool a_known, MatrixInput(ctx, 0));
  PX_ASSIGN_OR_RETURN(bool b_known, MatrixInput(ctx, 1));
  if (!a_known || !b_known) {
    ctx.set_output(0, PartialShape::Unknown());
    return absl::OkStatus();
  }
  const PartialShape& a = ctx.input(0);
  const PartialShape& b = ctx.input(1);
  int64_t n = -1, unused = -1;
  PX_RETURN_IF_ERROR(MergeDim(ctx, a.dim(a.rank() - 2), a.dim(a.rank() - 1), &n));
  PX_RETURN_IF_ERROR(MergeDim(ctx, n, b.dim(b.rank() - 2), &unused));
  auto outer = BroadcastShapes(PartialShape(Outer(a)), PartialShape(Outer(b)));
  if (!outer.ok()) return ctx.Error(outer.status().message());
  ctx.set_output(0, PartialShape(With(outer->dims(), {unused, b.dim(b.rank() - 1)})));
  return absl::OkStatus();
}

// MatrixSolveLs: equal batch dimensions and rows; [..., n, k] out.
absl::Status SolveLsShape(InferenceContext& ctx) {
  const PartialShape& l2 = ctx.input(2);
  if (l2.rank_known() && l2.rank() != 0) {
    return ctx.Error(absl::StrCat("l2_regularizer must be a scalar, got shape ", l2.ToString()));
  }
  PX_ASSIGN_OR_RETURN(bool a_known, MatrixInput(ctx, 0));
  PX_ASSIGN_OR_RETURN(bool b_known, MatrixInput(ctx, 1));
  if (!a_known || !b_known) {
    ctx.set_output(0, PartialShape::Unknown());
    return absl::OkStatus();
  }
  const PartialShape& a = ctx.input(0);
  const PartialShape& b = ctx.input(1);
  if (a.rank() != b.rank()) {
    return ctx.Error(absl::StrCat("Shapes must be equal rank, but are ", a.rank(), " and ", b.rank()));
  }
  Shape out(a.rank(), -1);
  for (int64_t d = 0; d + 2 < a.rank(); ++d) PX_RETURN_IF_ERROR(MergeDim(ctx, a.dim(d), b.dim(d), &out[d]));
  int64_t rows = -1;
  PX_RETURN_IF_ERROR(MergeDim(ctx, a.dim(a.rank() - 2), b.dim(b.rank() - 2), &rows));
  out[a.rank() - 2] = a.dim(a.rank() - 1);
  out[a.rank() - 1] = b.dim(b.rank() - 1);
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("MatrixInverse")
                   .Input("input: T")
                   .Output("output: T")
                   .Attr("adjoint: bool = false")
                   .Attr(kLinalgTypes)
                   .SetShapeFn(SquareShape));

PX_REGISTER_OP(OpDefBuilder("MatrixDeterminant")
                   .Input("input: T")
                   .Output("output: T")
                   .Attr("T: {half, float, double, complex64, complex128}")
                   .SetShapeFn(DeterminantShape));

PX_REGISTER_OP(OpDefBuilder("LogMatrixDeterminant")
                   .Input("input: T")
                   .Output("sign: T")
                   .Output("log_abs_determinant: T")
                   .Attr("T: {half, float, double, complex64, complex128}")
                   .SetShapeFn(DeterminantShape));

PX_REGISTER_OP(OpDefBuilder("Cholesky")
                   .Input("input: T")
                   .Output("output: T")
                   .Attr(kLinalgTypes)
                   .SetShapeFn(SquareShape));

PX_REGISTER_OP(OpDefBuilder("Qr")
                   .Input("input: T")
                   .Output("q: T")
                   .Output("r: T")
                   .Attr("full_matrices: bool = false")
                   .Attr(kLinalgTypes)
                   .SetShapeFn(QrShape));

PX_REGISTER_OP(OpDefBuilder("Svd")
                   .Input("input: T")
                   .Output("s: T")
                   .Output("u: T")
                   .Output("v: T")
                   .Attr("compute_uv: bool = true")
                   .Attr("full_matrices: bool = false")
                   .Attr(kLinalgTypes)
                   .SetShapeFn(SvdShape));

PX_REGISTER_OP(OpDefBuilder("SelfAdjointEigV2")
                   .Input("input: T")
                   .Output("e: T")
                   .Output("v: T")
                   .Attr("compute_v: bool = true")
                   .Attr(kLinalgTypes)
                   .SetShapeFn(SelfAdjointEigShape));

PX_REGISTER_OP(OpDefBuilder("MatrixTriangularSolve")
                   .Input("matrix: T")
                   .Input("rhs: T")
                   .Output("output: T")
                   .Attr("lower: bool = true")
                   .Attr("adjoint: bool = false")
                   .Attr("T: {bfloat16, double, float, half, complex64, complex128}")
                   .SetShapeFn(TriangularSolveShape));

PX_REGISTER_OP(OpDefBuilder("MatrixSolveLs")
                   .Input("matrix: T")
                   .Input("rhs: T")
                   .Input("l2_regularizer: double")
                   .Output("output: T")
                   .Attr(kLinalgTypes)
                   .Attr("fast: bool = true")
                   .SetShapeFn(SolveLsShape));

PX_REGISTER_OP(OpDefBuilder("Lu")
                   .Input("input: T")
                   .Output("lu: T")
                   .Output("p: output_idx_type")
                   .Attr(kLinalgTypes)
                   .Attr("output_idx_type: {int32, int64} = DT_INT32")
                   .SetShapeFn(LuShape));

}  // namespace
}  // namespace plexus

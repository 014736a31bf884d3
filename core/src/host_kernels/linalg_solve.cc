// Host kernels of MatrixTriangularSolve and MatrixSolveLs (schemas in
// ops/linalg_host_ops.cc), on Eigen, batched over the leading dimensions.
//
// As TensorFlow's CPU kernels:
//   - MatrixTriangularSolve reads the lower (or upper) triangle of each
//     matrix, solves with it or its adjoint, and broadcasts the batch
//     dimensions of matrix and rhs as BatchMatMulV2 does; a zero on the
//     diagonal gives infinities, not an error;
//   - MatrixSolveLs needs equal batch dimensions; `fast` solves the normal
//     equations (A^H A + l2 I) X = A^H B (or, for fewer rows than columns,
//     X = A^H (A A^H + l2 I)^-1 B) by Cholesky and fails when that is not
//     positive definite; otherwise a complete orthogonal decomposition gives
//     the minimum-norm solution even for rank-deficient matrices.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/QR>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "host_kernels/linalg_util.h"
#include "plexus/graph.h"
#include "plexus/status.h"

namespace plexus {
namespace {

using linalg::Matrix;

// For each output batch index, the batch index of an input of batch
// dimensions `in` broadcast to `out` (aligned to the right).
std::vector<int64_t> BatchIndex(const Shape& in, const Shape& out) {
  const size_t rank = out.size(), offset = rank - in.size();
  int64_t total = 1;
  for (int64_t d : out) total *= d;
  std::vector<int64_t> index(static_cast<size_t>(total), 0);
  std::vector<int64_t> pos(rank, 0);
  for (int64_t i = 0; i < total; ++i) {
    int64_t at = 0;
    for (size_t d = offset; d < rank; ++d) at = at * in[d - offset] + (in[d - offset] == 1 ? 0 : pos[d]);
    index[i] = at;
    for (size_t d = rank; d-- > 0;) {
      if (++pos[d] < out[d]) break;
      pos[d] = 0;
    }
  }
  return index;
}

template <typename S>
absl::Status TriangularSolve(HostOpContext& ctx, S) {
  const Tensor& a = ctx.input(0);
  const Tensor& rhs = ctx.input(1);
  PX_ASSIGN_OR_RETURN(bool lower, GetAttrBool(ctx.node(), "lower"));
  PX_ASSIGN_OR_RETURN(bool adjoint, GetAttrBool(ctx.node(), "adjoint"));
  const linalg::Batches ba = linalg::SplitBatches(a.shape());
  const linalg::Batches bb = linalg::SplitBatches(rhs.shape());
  // The batch dimensions broadcast.
  const size_t rank = std::max(ba.outer.size(), bb.outer.size());
  Shape outer(rank, 1);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t x = d + ba.outer.size() >= rank ? ba.outer[d + ba.outer.size() - rank] : 1;
    const int64_t y = d + bb.outer.size() >= rank ? bb.outer[d + bb.outer.size() - rank] : 1;
    if (x != y && x != 1 && y != 1) {
      return ctx.InvalidArgument(absl::StrCat("In[0] and In[1] must have compatible batch dimensions: ",
                                              ShapeToString(a.shape()), " vs. ", ShapeToString(rhs.shape())));
    }
    outer[d] = x == 1 ? y : x;
  }
  const int64_t n = ba.rows, cols = bb.cols;
  if (n != bb.rows) {
    return ctx.InvalidArgument(absl::StrCat("In[0] mismatch In[1] shape: ", n, " vs. ", bb.rows, ": ",
                                            ShapeToString(a.shape()), " ", ShapeToString(rhs.shape()), " ",
                                            lower ? 1 : 0, " ", adjoint ? 1 : 0));
  }
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(a.dtype(), linalg::Concat(outer, {n, cols})));
  if (out.num_elements() > 0) {
    const std::vector<int64_t> ia = BatchIndex(ba.outer, outer);
    const std::vector<int64_t> ib = BatchIndex(bb.outer, outer);
    for (size_t k = 0; k < ia.size(); ++k) {
      auto m = linalg::MatrixAt<S>(a, ba, ia[k]);
      auto b = linalg::MatrixAt<S>(rhs, bb, ib[k]);
      auto x = linalg::MutableMatrixAt<S>(&out, n, cols, static_cast<int64_t>(k));
      if (lower) {
        auto t = m.template triangularView<Eigen::Lower>();
        if (adjoint) x.noalias() = t.adjoint().solve(b);
        else x.noalias() = t.solve(b);
      } else {
        auto t = m.template triangularView<Eigen::Upper>();
        if (adjoint) x.noalias() = t.adjoint().solve(b);
        else x.noalias() = t.solve(b);
      }
    }
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status MatrixTriangularSolve(HostOpContext& ctx) {
  for (int i = 0; i < 2; ++i) {
    if (ctx.input(i).dims() < 2) {
      return ctx.InvalidArgument(absl::StrCat("In[", i, "] ndims must be >= 2: ", ctx.input(i).dims()));
    }
  }
  const Shape& s = ctx.input(0).shape();
  if (s[s.size() - 1] != s[s.size() - 2]) {
    return ctx.InvalidArgument(absl::StrCat("In[0] matrices in the last dimensions must be square (",
                                            s[s.size() - 1], " =/= ", s[s.size() - 2], ")"));
  }
  if (ctx.input(1).dtype() != ctx.input(0).dtype()) {
    return ctx.InvalidArgument("matrix and rhs must have the same type");
  }
  return linalg::Dispatch(ctx, ctx.input(0).dtype(), [](HostOpContext& c, auto v) { return TriangularSolve(c, v); });
}
PX_REGISTER_HOST_OP("MatrixTriangularSolve", MatrixTriangularSolve);

template <typename S>
absl::Status SolveLs(HostOpContext& ctx, S) {
  const Tensor& a = ctx.input(0);
  const Tensor& rhs = ctx.input(1);
  PX_ASSIGN_OR_RETURN(bool fast, GetAttrBool(ctx.node(), "fast"));
  const Tensor& l2 = ctx.input(2);
  if (l2.dims() != 0) {
    return ctx.InvalidArgument(absl::StrCat("l2_regularizer must be scalar, got shape ", ShapeToString(l2.shape())));
  }
  const double lambda = l2.data<double>()[0];
  if (!(lambda >= 0)) return ctx.InvalidArgument("l2_regularizer must be >= 0.");
  const linalg::Batches ba = linalg::SplitBatches(a.shape());
  const linalg::Batches bb = linalg::SplitBatches(rhs.shape());
  const int64_t rows = ba.rows, cols = ba.cols, k_rhs = bb.cols;
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(a.dtype(), linalg::Concat(ba.outer, {cols, k_rhs})));
  if (rows == 0 || cols == 0 || k_rhs == 0) {
    ctx.set_output(0, std::move(out));
    return absl::OkStatus();
  }
  using Col = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
  for (int64_t k = 0; k < ba.count; ++k) {
    const Col m = linalg::MatrixAt<S>(a, ba, k);
    const Col b = linalg::MatrixAt<S>(rhs, bb, k);
    auto x = linalg::MutableMatrixAt<S>(&out, cols, k_rhs, k);
    if (!fast) {
      x = m.completeOrthogonalDecomposition().solve(b);
      continue;
    }
    const bool over = rows >= cols;
    const int64_t size = over ? cols : rows;
    Col gram = Col::Zero(size, size);
    if (over) gram.template triangularView<Eigen::Lower>() = m.adjoint() * m;
    else gram.template triangularView<Eigen::Lower>() = m * m.adjoint();
    if (lambda > 0) gram.diagonal().array() += S(lambda);
    Eigen::LLT<Col, Eigen::Lower> llt(gram);
    if (llt.info() != Eigen::Success) {
      return ctx.InvalidArgument(over ? "Input matrix was rank deficient or ill-conditioned. Try setting "
                                        "fast=False or provide a larger l2_regularizer > 0."
                                      : "Input matrix was rank deficient or ill-conditioned. Try setting "
                                        "fast=False or provide an l2_regularizer > 0.");
    }
    if (over) {
      Col y = m.adjoint() * b;
      llt.solveInPlace(y);
      x = y;
    } else {
      x = m.adjoint() * llt.solve(b);
    }
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status MatrixSolveLs(HostOpContext& ctx) {
  PX_RETURN_IF_ERROR(linalg::CheckMatrixInput(ctx, 0, false));
  PX_RETURN_IF_ERROR(linalg::CheckMatrixInput(ctx, 1, false));
  const Shape& a = ctx.input(0).shape();
  const Shape& b = ctx.input(1).shape();
  if (a.size() != b.size()) return ctx.InvalidArgument("All input tensors must have the same rank.");
  for (size_t d = 0; d + 2 < a.size(); ++d) {
    if (a[d] != b[d]) return ctx.InvalidArgument("All input tensors must have the same outer dimensions.");
  }
  if (a[a.size() - 2] != b[b.size() - 2]) return ctx.InvalidArgument("Input matrix and rhs are incompatible.");
  if (ctx.input(2).dtype() != DataType::kDouble) {
    return ctx.InvalidArgument(absl::StrCat("l2_regularizer must be double, got ",
                                            DataTypeName(ctx.input(2).dtype())));
  }
  return linalg::Dispatch(ctx, ctx.input(0).dtype(), [](HostOpContext& c, auto v) { return SolveLs(c, v); });
}
PX_REGISTER_HOST_OP("MatrixSolveLs", MatrixSolveLs);

}  // namespace
}  // namespace plexus

// Host kernels of the matrix factorizations Cholesky, Qr and Lu (schemas in
// ops/linalg_host_ops.cc), on Eigen, batched over the leading dimensions.
//
// As TensorFlow's CPU kernels:
//   - Cholesky reads the lower triangle only; a matrix that is not
//     positive definite gets NaN in its lower triangle (no error: the
//     failure shows at run time in the values), zeros above;
//   - Qr is Householder QR; Q is m x min(m, n) and R min(m, n) x n, or
//     m x m and m x n with full_matrices;
//   - Lu packs L (unit diagonal, below) and U (on and above the diagonal)
//     of P * A = L * U into one matrix, with p[i] the row of A that is row
//     i of P * A; an exact zero pivot is "Input is not invertible.".
#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <Eigen/QR>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "host_kernels/linalg_util.h"
#include "plexus/graph.h"
#include "plexus/status.h"

namespace plexus {
namespace {

using linalg::Batches;
using linalg::Matrix;
using linalg::Real;

template <typename S>
absl::Status CholeskyOf(HostOpContext& ctx, S) {
  const Tensor& in = ctx.input(0);
  const Batches b = linalg::SplitBatches(in.shape());
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(in.dtype(), in.shape()));
  if (b.rows > 0) {
    for (int64_t k = 0; k < b.count; ++k) {
      Eigen::LLT<Matrix<S>, Eigen::Lower> llt(linalg::MatrixAt<S>(in, b, k));
      auto l = linalg::MutableMatrixAt<S>(&out, b.rows, b.cols, k);
      if (llt.info() == Eigen::Success) {
        l = llt.matrixL();
      } else {
        l.setZero();
        l.template triangularView<Eigen::Lower>().setConstant(std::numeric_limits<Real<S>>::quiet_NaN());
      }
    }
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status Cholesky(HostOpContext& ctx) {
  PX_RETURN_IF_ERROR(linalg::CheckMatrixInput(ctx, 0, true));
  return linalg::Dispatch(ctx, ctx.input(0).dtype(), [](HostOpContext& c, auto s) { return CholeskyOf(c, s); });
}
PX_REGISTER_HOST_OP("Cholesky", Cholesky);

template <typename S>
absl::Status QrOf(HostOpContext& ctx, S) {
  const Tensor& in = ctx.input(0);
  PX_ASSIGN_OR_RETURN(bool full, GetAttrBool(ctx.node(), "full_matrices"));
  const Batches b = linalg::SplitBatches(in.shape());
  const int64_t m = b.rows, n = b.cols, p = std::min(m, n);
  const int64_t q_cols = full ? m : p, r_rows = full ? m : p;
  PX_ASSIGN_OR_RETURN(Tensor q, Tensor::AllocateHost(in.dtype(), linalg::Concat(b.outer, {m, q_cols})));
  PX_ASSIGN_OR_RETURN(Tensor r, Tensor::AllocateHost(in.dtype(), linalg::Concat(b.outer, {r_rows, n})));
  if (m > 0 && n > 0) {
    for (int64_t k = 0; k < b.count; ++k) {
      Eigen::HouseholderQR<Matrix<S>> qr(linalg::MatrixAt<S>(in, b, k));
      Matrix<S> eye = Matrix<S>::Identity(m, q_cols);
      linalg::MutableMatrixAt<S>(&q, m, q_cols, k) = qr.householderQ() * eye;
      linalg::MutableMatrixAt<S>(&r, r_rows, n, k) =
          qr.matrixQR().topRows(r_rows).template triangularView<Eigen::Upper>();
    }
  } else if (m > 0 && full) {
    // An m x 0 matrix: Q is the identity (R is empty).
    for (int64_t k = 0; k < b.count; ++k) linalg::MutableMatrixAt<S>(&q, m, m, k).setIdentity();
  }
  ctx.set_output(0, std::move(q));
  ctx.set_output(1, std::move(r));
  return absl::OkStatus();
}

absl::Status Qr(HostOpContext& ctx) {
  PX_RETURN_IF_ERROR(linalg::CheckMatrixInput(ctx, 0, false));
  return linalg::Dispatch(ctx, ctx.input(0).dtype(), [](HostOpContext& c, auto s) { return QrOf(c, s); });
}
PX_REGISTER_HOST_OP("Qr", Qr);

template <typename S>
absl::Status LuOf(HostOpContext& ctx, S) {
  const Tensor& in = ctx.input(0);
  PX_ASSIGN_OR_RETURN(DataType idx_type, GetAttrType(ctx.node(), "output_idx_type"));
  const Batches b = linalg::SplitBatches(in.shape());
  const int64_t n = b.rows;
  PX_ASSIGN_OR_RETURN(Tensor lu_out, Tensor::AllocateHost(in.dtype(), in.shape()));
  PX_ASSIGN_OR_RETURN(Tensor perm, Tensor::AllocateHost(idx_type, linalg::Concat(b.outer, {n})));
  if (n > 0) {
    for (int64_t k = 0; k < b.count; ++k) {
      Eigen::PartialPivLU<Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>> lu(
          Matrix<S>(linalg::MatrixAt<S>(in, b, k)));
      linalg::MutableMatrixAt<S>(&lu_out, n, n, k) = lu.matrixLU();
      // permutationP() sends row i of A to row indices(i) of P * A; p
      // names, for each row of P * A, the row of A it came from.
      const auto& to = lu.permutationP().indices();
      for (int64_t i = 0; i < n; ++i) {
        const int64_t r = k * n + to(i);
        if (idx_type == DataType::kInt32) perm.data<int32_t>()[r] = static_cast<int32_t>(i);
        else perm.data<int64_t>()[r] = i;
      }
      const Real<S> min_pivot = lu.matrixLU().diagonal().cwiseAbs().minCoeff();
      if (!(min_pivot > Real<S>(0))) return ctx.InvalidArgument("Input is not invertible.");
    }
  }
  ctx.set_output(0, std::move(lu_out));
  ctx.set_output(1, std::move(perm));
  return absl::OkStatus();
}

absl::Status Lu(HostOpContext& ctx) {
  const Tensor& in = ctx.input(0);
  if (in.dims() < 2) {
    return ctx.InvalidArgument(absl::StrCat("Input tensor must have rank >= 2, got ", in.dims()));
  }
  PX_RETURN_IF_ERROR(linalg::CheckMatrixInput(ctx, 0, true));
  return linalg::Dispatch(ctx, in.dtype(), [](HostOpContext& c, auto s) { return LuOf(c, s); });
}
PX_REGISTER_HOST_OP("Lu", Lu);

}  // namespace
}  // namespace plexus

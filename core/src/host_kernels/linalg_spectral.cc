// Host kernels of the spectral decompositions Svd and SelfAdjointEigV2
// (schemas in ops/linalg_host_ops.cc), on Eigen's divide-and-conquer SVD
// and self-adjoint eigensolver, batched over the leading dimensions.
//
// As TensorFlow's CPU kernels: singular values come in decreasing order and
// eigenvalues in increasing order, both of the input's type (complex with
// zero imaginary parts for complex input); singular and eigenvectors are
// unique only up to sign (phase), so callers compare them through
// reconstructions. Without compute_uv / compute_v the vector outputs are
// empty ([0]). An SVD that does not converge gives NaNs; an eigensolver
// that does not converge is an error.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include <Eigen/Eigenvalues>
#include <Eigen/SVD>

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
absl::Status SvdOf(HostOpContext& ctx, S) {
  const Tensor& in = ctx.input(0);
  PX_ASSIGN_OR_RETURN(bool compute_uv, GetAttrBool(ctx.node(), "compute_uv"));
  PX_ASSIGN_OR_RETURN(bool full, GetAttrBool(ctx.node(), "full_matrices"));
  const Batches b = linalg::SplitBatches(in.shape());
  const int64_t m = b.rows, n = b.cols, p = std::min(m, n);
  const int64_t u_cols = full ? m : p, v_cols = full ? n : p;
  PX_ASSIGN_OR_RETURN(Tensor s, Tensor::AllocateHost(in.dtype(), linalg::Concat(b.outer, {p})));
  Tensor u, v;
  if (compute_uv) {
    PX_ASSIGN_OR_RETURN(u, Tensor::AllocateHost(in.dtype(), linalg::Concat(b.outer, {m, u_cols})));
    PX_ASSIGN_OR_RETURN(v, Tensor::AllocateHost(in.dtype(), linalg::Concat(b.outer, {n, v_cols})));
  } else {
    PX_ASSIGN_OR_RETURN(u, Tensor::AllocateHost(in.dtype(), Shape{0}));
    PX_ASSIGN_OR_RETURN(v, Tensor::AllocateHost(in.dtype(), Shape{0}));
  }
  const S nan(std::numeric_limits<Real<S>>::quiet_NaN());
  for (int64_t k = 0; k < b.count; ++k) {
    if (m == 0 || n == 0) {
      // An empty matrix: U or V of a nonzero dimension is the identity.
      if (compute_uv && full && m > 0) linalg::MutableMatrixAt<S>(&u, m, m, k).setIdentity();
      if (compute_uv && full && n > 0) linalg::MutableMatrixAt<S>(&v, n, n, k).setIdentity();
      continue;
    }
    const unsigned options = !compute_uv ? 0
                             : full     ? Eigen::ComputeFullU | Eigen::ComputeFullV
                                        : Eigen::ComputeThinU | Eigen::ComputeThinV;
    Eigen::BDCSVD<Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>> svd(Matrix<S>(linalg::MatrixAt<S>(in, b, k)),
                                                                         options);
    const bool ok = svd.info() == Eigen::Success;
    for (int64_t i = 0; i < p; ++i) s.data<S>()[k * p + i] = ok ? S(svd.singularValues()(i)) : nan;
    if (compute_uv) {
      auto um = linalg::MutableMatrixAt<S>(&u, m, u_cols, k);
      auto vm = linalg::MutableMatrixAt<S>(&v, n, v_cols, k);
      if (ok) {
        um = svd.matrixU();
        vm = svd.matrixV();
      } else {
        um.setConstant(nan);
        vm.setConstant(nan);
      }
    }
  }
  ctx.set_output(0, std::move(s));
  ctx.set_output(1, std::move(u));
  ctx.set_output(2, std::move(v));
  return absl::OkStatus();
}

absl::Status Svd(HostOpContext& ctx) {
  PX_RETURN_IF_ERROR(linalg::CheckMatrixInput(ctx, 0, false));
  return linalg::Dispatch(ctx, ctx.input(0).dtype(), [](HostOpContext& c, auto s) { return SvdOf(c, s); });
}
PX_REGISTER_HOST_OP("Svd", Svd);

template <typename S>
absl::Status EigOf(HostOpContext& ctx, S) {
  const Tensor& in = ctx.input(0);
  PX_ASSIGN_OR_RETURN(bool compute_v, GetAttrBool(ctx.node(), "compute_v"));
  const Batches b = linalg::SplitBatches(in.shape());
  const int64_t n = b.rows;
  PX_ASSIGN_OR_RETURN(Tensor e, Tensor::AllocateHost(in.dtype(), linalg::Concat(b.outer, {n})));
  Tensor v;
  if (compute_v) {
    PX_ASSIGN_OR_RETURN(v, Tensor::AllocateHost(in.dtype(), in.shape()));
  } else {
    PX_ASSIGN_OR_RETURN(v, Tensor::AllocateHost(in.dtype(), Shape{0}));
  }
  if (n > 0) {
    for (int64_t k = 0; k < b.count; ++k) {
      // Reads the lower triangle, as TensorFlow's kernel does.
      Eigen::SelfAdjointEigenSolver<Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>> eig(
          Matrix<S>(linalg::MatrixAt<S>(in, b, k)), compute_v ? Eigen::ComputeEigenvectors : Eigen::EigenvaluesOnly);
      if (eig.info() != Eigen::Success) {
        return ctx.InvalidArgument(
            "Self-adjoint eigen decomposition was not successful. The input might not be valid.");
      }
      for (int64_t i = 0; i < n; ++i) e.data<S>()[k * n + i] = S(eig.eigenvalues()(i));
      if (compute_v) linalg::MutableMatrixAt<S>(&v, n, n, k) = eig.eigenvectors();
    }
  }
  ctx.set_output(0, std::move(e));
  ctx.set_output(1, std::move(v));
  return absl::OkStatus();
}

absl::Status SelfAdjointEigV2(HostOpContext& ctx) {
  PX_RETURN_IF_ERROR(linalg::CheckMatrixInput(ctx, 0, true));
  return linalg::Dispatch(ctx, ctx.input(0).dtype(), [](HostOpContext& c, auto s) { return EigOf(c, s); });
}
PX_REGISTER_HOST_OP("SelfAdjointEigV2", SelfAdjointEigV2);

}  // namespace
}  // namespace plexus

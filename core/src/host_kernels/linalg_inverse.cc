// Host kernels of MatrixInverse, MatrixDeterminant and LogMatrixDeterminant
// (schemas in ops/linalg_host_ops.cc), on Eigen's partially pivoted LU
// factorization, batched over the leading dimensions.
//
// As TensorFlow's CPU kernels: MatrixInverse refuses a matrix with an exact
// zero pivot ("Input is not invertible."); the determinant is
// sign * exp(log|det|) with the sign the permutation's times the signs of
// U's diagonal, so a singular matrix gives a (signed) zero, log|det| = -inf
// and sign 0; an empty matrix has determinant 1.
#include <cmath>
#include <complex>
#include <cstdint>
#include <utility>

#include <Eigen/LU>

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
absl::Status Inverse(HostOpContext& ctx, S) {
  const Tensor& in = ctx.input(0);
  PX_ASSIGN_OR_RETURN(bool adjoint, GetAttrBool(ctx.node(), "adjoint"));
  const Batches b = linalg::SplitBatches(in.shape());
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(in.dtype(), in.shape()));
  if (b.rows > 0) {
    for (int64_t k = 0; k < b.count; ++k) {
      Matrix<S> a = linalg::MatrixAt<S>(in, b, k);
      if (adjoint) a = a.adjoint().eval();
      Eigen::PartialPivLU<Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>> lu(a);
      // PartialPivLU guarantees nothing about invertibility, but an exact
      // zero pivot is certainly singular (TensorFlow's check).
      const Real<S> min_pivot = lu.matrixLU().diagonal().cwiseAbs().minCoeff();
      if (!(min_pivot > Real<S>(0))) return ctx.InvalidArgument("Input is not invertible.");
      linalg::MutableMatrixAt<S>(&out, b.rows, b.cols, k) = lu.inverse();
    }
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status MatrixInverse(HostOpContext& ctx) {
  PX_RETURN_IF_ERROR(linalg::CheckMatrixInput(ctx, 0, true));
  return linalg::Dispatch(ctx, ctx.input(0).dtype(), [](HostOpContext& c, auto s) { return Inverse(c, s); });
}
PX_REGISTER_HOST_OP("MatrixInverse", MatrixInverse);

// The sign of a diagonal entry of U: -1, 0 or 1 for real numbers (NaN for
// NaN), z / |z| for complex ones (0 for 0).
template <typename S>
S SignOf(S d) {
  if constexpr (std::is_floating_point_v<S>) {
    if (d > 0) return S(1);
    if (d < 0) return S(-1);
    return d == 0 ? S(0) : d;
  } else {
    const Real<S> a = std::abs(d);
    return a == 0 ? S(0) : d / a;
  }
}

// sign and log|det| of a square matrix.
template <typename S>
void SignLogDet(const Matrix<S>& a, S* sign, Real<S>* log_abs_det) {
  *sign = S(1);
  *log_abs_det = 0;
  if (a.size() == 0) return;  // an empty matrix has determinant 1
  Eigen::PartialPivLU<Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>> lu(a);
  *sign = S(lu.permutationP().determinant());
  S diagonal_signs(1);
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    const S d = lu.matrixLU()(i, i);
    *log_abs_det += std::log(std::abs(d));
    diagonal_signs *= SignOf(d);
  }
  *sign *= diagonal_signs;
}

template <typename S>
absl::Status Determinant(HostOpContext& ctx, S) {
  const Tensor& in = ctx.input(0);
  const Batches b = linalg::SplitBatches(in.shape());
  const bool log_form = ctx.node().op == "LogMatrixDeterminant";
  PX_ASSIGN_OR_RETURN(Tensor first, Tensor::AllocateHost(in.dtype(), b.outer));
  Tensor second;
  if (log_form) {
    PX_ASSIGN_OR_RETURN(second, Tensor::AllocateHost(in.dtype(), b.outer));
  }
  for (int64_t k = 0; k < b.count; ++k) {
    S sign;
    Real<S> log_abs_det;
    SignLogDet<S>(Matrix<S>(linalg::MatrixAt<S>(in, b, k)), &sign, &log_abs_det);
    if (log_form) {
      first.data<S>()[k] = sign;
      second.data<S>()[k] = S(log_abs_det);
    } else {
      first.data<S>()[k] = sign * std::exp(log_abs_det);
    }
  }
  ctx.set_output(0, std::move(first));
  if (log_form) ctx.set_output(1, std::move(second));
  return absl::OkStatus();
}

absl::Status MatrixDeterminant(HostOpContext& ctx) {
  PX_RETURN_IF_ERROR(linalg::CheckMatrixInput(ctx, 0, true));
  return linalg::Dispatch(ctx, ctx.input(0).dtype(), [](HostOpContext& c, auto s) { return Determinant(c, s); });
}
PX_REGISTER_HOST_OP("MatrixDeterminant", MatrixDeterminant);
PX_REGISTER_HOST_OP("LogMatrixDeterminant", MatrixDeterminant);

}  // namespace
}  // namespace plexus

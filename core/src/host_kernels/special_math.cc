// Host kernels of elementwise special functions (schemas in
// ops/math_host_ops.cc): Xlogy, Xdivy and Xlog1py (x * log(y), x / y and
// x * log1p(y), but 0 wherever x is 0, NaN y included; broadcasting), Erfinv
// and Ndtri (the inverses of erf and of the standard normal CDF, on Eigen's
// ndtri, with erfinv(x) = ndtri((x + 1) / 2) / sqrt(2) as TensorFlow), and
// ApproximateEqual (|x - y| < tolerance, for tensors of one shape). The
// 16-bit floats compute in float.
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <unsupported/Eigen/SpecialFunctions>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "host_kernels/broadcast_index.h"
#include "host_kernels/host_dispatch.h"
#include "plexus/graph.h"
#include "plexus/status.h"

namespace plexus {
namespace {

enum class XOp { kLogy, kDivy, kLog1py };

template <typename C>
C Log1p(C y) {
  if constexpr (host::kIsComplex<C>) return std::log(C(1) + y);
  else return std::log1p(y);
}

template <typename T>
void XFunction(XOp f, const Tensor& x, const Tensor& y, const std::vector<int64_t>& ix,
               const std::vector<int64_t>& iy, Tensor* out) {
  using C = host::Compute<T>;
  for (size_t k = 0; k < ix.size(); ++k) {
    const C a = C(x.data<T>()[ix[k]]);
    const C b = C(y.data<T>()[iy[k]]);
    C r(0);
    if (a != C(0)) {
      switch (f) {
        case XOp::kLogy: r = a * std::log(b); break;
        case XOp::kDivy: r = a / b; break;
        case XOp::kLog1py: r = a * Log1p<C>(b); break;
      }
    }
    out->data<T>()[k] = T(r);
  }
}

absl::Status XBinary(HostOpContext& ctx) {
  const std::string& op = ctx.node().op;
  const XOp f = op == "Xlogy" ? XOp::kLogy : op == "Xdivy" ? XOp::kDivy : XOp::kLog1py;
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  auto shape = BroadcastShapes(PartialShape(x.shape()), PartialShape(y.shape()));
  if (!shape.ok()) {
    return ctx.InvalidArgument(
        absl::StrCat("Incompatible shapes: ", ShapeToString(x.shape()), " vs. ", ShapeToString(y.shape())));
  }
  const Shape out_shape = shape->dims();
  const std::vector<int64_t> ix = BroadcastIndex(x.shape(), out_shape);
  const std::vector<int64_t> iy = BroadcastIndex(y.shape(), out_shape);
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(x.dtype(), out_shape));
  if (!host::Visit<host::kFloats | host::kComplex>(x.dtype(),
                   [&](auto v) { XFunction<decltype(v)>(f, x, y, ix, iy, &out); })) {
    return ctx.InvalidArgument(absl::StrCat(op, " does not take ", DataTypeName(x.dtype()), " input"));
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("Xlogy", XBinary);
PX_REGISTER_HOST_OP("Xdivy", XBinary);
PX_REGISTER_HOST_OP("Xlog1py", XBinary);

template <typename T>
void Inverse(bool erf, const Tensor& x, Tensor* out) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const int64_t n = x.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    const C v = C(x.data<T>()[i]);
    // Outside [0, 1] (erfinv: [-1, 1]) the result is NaN, as in
    // TensorFlow's Eigen (this Eigen's ndtri gives infinities there).
    const C p = erf ? C(0.5) * v + C(0.5) : v;
    C r;
    if (!(p >= C(0) && p <= C(1))) r = std::numeric_limits<C>::quiet_NaN();
    else if (erf) r = Eigen::numext::ndtri(p) * C(M_SQRT1_2);
    else r = Eigen::numext::ndtri(p);
    out->data<T>()[i] = T(r);
  }
}

absl::Status InverseCdf(HostOpContext& ctx) {
  const Tensor& x = ctx.input(0);
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(x.dtype(), x.shape()));
  const bool erf = ctx.node().op == "Erfinv";
  if (!host::Visit<host::kFloats>(x.dtype(), [&](auto v) { Inverse<decltype(v)>(erf, x, &out); })) {
    return ctx.InvalidArgument(absl::StrCat(ctx.node().op, " does not take ", DataTypeName(x.dtype()), " input"));
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("Erfinv", InverseCdf);
PX_REGISTER_HOST_OP("Ndtri", InverseCdf);

template <typename T>
void Close(const Tensor& x, const Tensor& y, float tolerance, Tensor* out) {
  using C = host::Compute<T>;
  using R = typename Eigen::NumTraits<C>::Real;
  // The tolerance in the element type, as TensorFlow compares.
  R tol;
  if constexpr (host::kIsComplex<T>) tol = R(tolerance);
  else tol = R(C(T(C(tolerance))));
  const int64_t n = x.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    const T diff = T(C(x.data<T>()[i]) - C(y.data<T>()[i]));
    out->data<bool>()[i] = R(std::abs(C(diff))) < tol;
  }
}

absl::Status ApproximateEqual(HostOpContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  if (x.shape() != y.shape()) {
    return ctx.InvalidArgument(absl::StrCat("x and y must be of the same shape. x shape: ", ShapeToString(x.shape()),
                                            ". y shape: ", ShapeToString(y.shape())));
  }
  PX_ASSIGN_OR_RETURN(float tolerance, GetAttrFloat(ctx.node(), "tolerance"));
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(DataType::kBool, x.shape()));
  if (!host::Visit<host::kFloats | host::kComplex>(x.dtype(), [&](auto v) { Close<decltype(v)>(x, y, tolerance, &out); })) {
    return ctx.InvalidArgument(absl::StrCat("ApproximateEqual does not take ", DataTypeName(x.dtype()), " input"));
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("ApproximateEqual", ApproximateEqual);

}  // namespace
}  // namespace plexus

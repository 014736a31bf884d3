// Host kernel of Cross (schema in ops/math_host_ops.cc): the cross product
// of the 3-vectors in the innermost dimension of two tensors of one shape,
// in the element type (integers wrap as TensorFlow's do).
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "host_kernels/host_dispatch.h"
#include "plexus/graph.h"
#include "plexus/status.h"

namespace plexus {
namespace {

template <typename T>
void CrossOf(const Tensor& a, const Tensor& b, Tensor* out) {
  using host::Mul;
  using host::Sub;
  const int64_t n = a.num_elements() / 3;
  const T* x = a.data<T>();
  const T* y = b.data<T>();
  T* z = out->data<T>();
  for (int64_t i = 0; i < n; ++i) {
    const T x0 = x[3 * i], x1 = x[3 * i + 1], x2 = x[3 * i + 2];
    const T y0 = y[3 * i], y1 = y[3 * i + 1], y2 = y[3 * i + 2];
    // Each product rounds to the element type before the difference, as
    // Eigen's expression in the element type does; integers wrap.
    z[3 * i] = Sub(Mul(x1, y2), Mul(x2, y1));
    z[3 * i + 1] = Sub(Mul(x2, y0), Mul(x0, y2));
    z[3 * i + 2] = Sub(Mul(x0, y1), Mul(x1, y0));
  }
}

absl::Status Cross(HostOpContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.shape() != b.shape()) {
    return ctx.InvalidArgument(absl::StrCat("Both inputs must be of same shape: ", ShapeToString(a.shape()), " vs. ",
                                            ShapeToString(b.shape())));
  }
  if (a.dims() < 1) return ctx.InvalidArgument("Input must be at least 1D: []");
  if (a.shape()[a.dims() - 1] != 3) {
    return ctx.Error(absl::StatusCode::kFailedPrecondition, "Cross-products are only defined for 3-element vectors.");
  }
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(a.dtype(), a.shape()));
  if (!host::Visit<host::kReals>(a.dtype(), [&](auto v) { CrossOf<decltype(v)>(a, b, &out); })) {
    return ctx.InvalidArgument(absl::StrCat("Cross does not take ", DataTypeName(a.dtype()), " input"));
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("Cross", Cross);

}  // namespace
}  // namespace plexus

// Host fallback of ClipByValue (schema in ops/math_host_ops.cc), for devices
// whose plugin has no kernel: max(min(t, clip_value_max), clip_value_min)
// elementwise, the bounds scalars or of t's shape. As TensorFlow's Eigen
// kernel: a NaN in t stays NaN, a NaN bound is ignored, and a lower bound
// above the upper one wins.
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
void Clip(const Tensor& t, const Tensor& lo, const Tensor& hi, Tensor* out) {
  using C = host::Compute<T>;
  const int64_t n = t.num_elements();
  const bool lo_scalar = lo.num_elements() == 1 && lo.dims() == 0;
  const bool hi_scalar = hi.num_elements() == 1 && hi.dims() == 0;
  for (int64_t i = 0; i < n; ++i) {
    const C x = C(t.data<T>()[i]);
    const C l = C(lo.data<T>()[lo_scalar ? 0 : i]);
    const C h = C(hi.data<T>()[hi_scalar ? 0 : i]);
    const C below = h < x ? h : x;      // min(x, h), x when either is NaN
    out->data<T>()[i] = T(below < l ? l : below);  // max(below, l)
  }
}

absl::Status ClipByValue(HostOpContext& ctx) {
  const Tensor& t = ctx.input(0);
  const Tensor& lo = ctx.input(1);
  const Tensor& hi = ctx.input(2);
  const bool lo_ok = lo.shape() == t.shape() || lo.dims() == 0;
  const bool hi_ok = hi.shape() == t.shape() || hi.dims() == 0;
  if (!lo_ok || !hi_ok) {
    return ctx.InvalidArgument(absl::StrCat(
        "clip_value_min and clip_value_max must be either of the same shape as input, or a scalar. input shape: ",
        ShapeToString(t.shape()), "clip_value_min shape: ", ShapeToString(lo.shape()),
        "clip_value_max shape: ", ShapeToString(hi.shape())));
  }
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(t.dtype(), t.shape()));
  if (!host::Visit<host::kReals>(t.dtype(), [&](auto v) { Clip<decltype(v)>(t, lo, hi, &out); })) {
    return ctx.InvalidArgument(absl::StrCat("ClipByValue does not take ", DataTypeName(t.dtype()), " input"));
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_FALLBACK("ClipByValue", ClipByValue);

}  // namespace
}  // namespace plexus

// Host kernel of CumulativeLogsumexp (schema in ops/math_host_ops.cc), behind
// tf.math.cumulative_logsumexp: the running log(sum(exp(x))) along an axis,
// exclusive (starting from -inf) and reversed on request. Each step adds x
// to the running value a as TensorFlow's reducer does: with lo and hi the
// smaller and larger of the two, hi + log1p(exp(lo - hi)), or hi itself
// when hi is -inf; the 16-bit floats round to their type after each step.
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "host_kernels/host_dispatch.h"
#include "plexus/graph.h"
#include "plexus/status.h"

namespace plexus {
namespace {

template <typename C>
C LogAddExp(C a, C b) {
  const C lo = b < a ? b : a;
  const C hi = a < b ? b : a;
  if (hi < std::numeric_limits<C>::lowest()) return hi;
  return std::log1p(std::exp(lo - hi)) + hi;
}

template <typename T>
void Scan(const Tensor& in, int64_t axis, bool exclusive, bool reverse, Tensor* out) {
  using C = host::Compute<T>;
  const Shape& s = in.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= s[d];
  for (int64_t d = axis + 1; d < in.dims(); ++d) inner *= s[d];
  const int64_t n = s[axis];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      T acc = T(-std::numeric_limits<C>::infinity());
      for (int64_t k = 0; k < n; ++k) {
        const int64_t j = reverse ? n - 1 - k : k;
        const int64_t at = (o * n + j) * inner + i;
        const T x = in.data<T>()[at];
        if (exclusive) {
          out->data<T>()[at] = acc;
          acc = T(LogAddExp<C>(C(acc), C(x)));
        } else {
          acc = T(LogAddExp<C>(C(acc), C(x)));
          out->data<T>()[at] = acc;
        }
      }
    }
  }
}

absl::Status CumulativeLogsumexp(HostOpContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& axis_t = ctx.input(1);
  if (axis_t.dims() != 0) {
    return ctx.InvalidArgument(absl::StrCat("ScanOp: axis must be a scalar, not ", ShapeToString(axis_t.shape())));
  }
  const int64_t rank = x.dims();
  int64_t axis = host::IntAt(axis_t, 0);
  if (axis < -rank || axis >= rank) {
    return ctx.InvalidArgument(absl::StrCat("ScanOp: Expected scan axis in the range [", -rank, ", ", rank,
                                            "), but got ", axis));
  }
  if (axis < 0) axis += rank;
  PX_ASSIGN_OR_RETURN(bool exclusive, GetAttrBool(ctx.node(), "exclusive"));
  PX_ASSIGN_OR_RETURN(bool reverse, GetAttrBool(ctx.node(), "reverse"));
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(x.dtype(), x.shape()));
  if (!host::Visit<host::kFloats>(x.dtype(), [&](auto v) { Scan<decltype(v)>(x, axis, exclusive, reverse, &out); })) {
    return ctx.InvalidArgument(absl::StrCat("CumulativeLogsumexp does not take ", DataTypeName(x.dtype()), " input"));
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("CumulativeLogsumexp", CumulativeLogsumexp);

}  // namespace
}  // namespace plexus

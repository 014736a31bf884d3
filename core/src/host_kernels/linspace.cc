// Host kernel of LinSpace (schema in ops/array_host_ops.cc): `num` evenly
// spaced values from start to stop, both included, computed as TensorFlow
// does: start + i * ((stop - start) / (num - 1)) in the element type (the
// 16-bit floats round after each operation), with the last value stop.
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
void Fill(const Tensor& start_t, const Tensor& stop_t, int64_t num, Tensor* out) {
  using C = host::Compute<T>;
  const T start = start_t.data<T>()[0];
  const T stop = stop_t.data<T>()[0];
  T* o = out->data<T>();
  if (num == 1) {
    o[0] = start;
    return;
  }
  const T diff = T(C(stop) - C(start));
  const T step = T(C(diff) / C(T(static_cast<C>(num - 1))));
  for (int64_t i = 0; i < num - 1; ++i) o[i] = T(C(start) + C(T(C(step) * C(T(static_cast<C>(i))))));
  o[num - 1] = stop;
}

absl::Status LinSpace(HostOpContext& ctx) {
  const char* names[] = {"start", "stop", "num"};
  for (int i = 0; i < 3; ++i) {
    if (ctx.input(i).dims() != 0) {
      return ctx.InvalidArgument(
          absl::StrCat(names[i], " must be a scalar, not shape ", ShapeToString(ctx.input(i).shape())));
    }
  }
  const int64_t num = host::IntAt(ctx.input(2), 0);
  if (num <= 0) return ctx.InvalidArgument(absl::StrCat("Requires num > 0: ", num));
  const DataType t = ctx.input(0).dtype();
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(t, Shape{num}));
  const bool ok = host::Visit<host::kFloats>(t, [&](auto v) {
    Fill<decltype(v)>(ctx.input(0), ctx.input(1), num, &out);
  });
  if (!ok) return ctx.InvalidArgument(absl::StrCat("LinSpace does not take ", DataTypeName(t), " values"));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("LinSpace", LinSpace);

}  // namespace
}  // namespace plexus

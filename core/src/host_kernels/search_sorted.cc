// Host kernels of LowerBound and UpperBound (schemas in
// ops/array_host_ops.cc), behind tf.searchsorted: for each row of `values`,
// the insertion points into the same row of `sorted_inputs` (the first
// position not less than the value, or not less or equal), with the
// element type's own < (NaN is less than nothing).
#include <algorithm>
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
void Search(const Tensor& sorted, const Tensor& values, bool upper, Tensor* out) {
  const int64_t rows = sorted.shape()[0], n = sorted.shape()[1], m = values.shape()[1];
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = sorted.data<T>() + r * n;
    for (int64_t j = 0; j < m; ++j) {
      const T v = values.data<T>()[r * m + j];
      const T* at = upper ? std::upper_bound(row, row + n, v, [](const T& a, const T& b) { return a < b; })
                          : std::lower_bound(row, row + n, v, [](const T& a, const T& b) { return a < b; });
      const int64_t index = at - row;
      if (out->dtype() == DataType::kInt32) out->data<int32_t>()[r * m + j] = static_cast<int32_t>(index);
      else out->data<int64_t>()[r * m + j] = index;
    }
  }
}

absl::Status SearchSorted(HostOpContext& ctx) {
  const Tensor& sorted = ctx.input(0);
  const Tensor& values = ctx.input(1);
  if (sorted.dims() != 2) {
    return ctx.InvalidArgument(
        absl::StrCat("Shape must be rank 2 but is rank ", sorted.dims(), " for `sorted_inputs` argument"));
  }
  if (values.dims() != 2) {
    return ctx.InvalidArgument(
        absl::StrCat("Shape must be rank 2 but is rank ", values.dims(), " for `values` argument"));
  }
  if (sorted.shape()[0] != values.shape()[0]) {
    return ctx.InvalidArgument("Leading dim_size of both tensors must match.");
  }
  PX_ASSIGN_OR_RETURN(DataType out_type, GetAttrType(ctx.node(), "out_type"));
  if (out_type == DataType::kInt32 && sorted.shape()[1] > INT32_MAX) {
    return ctx.InvalidArgument("trying to use int32 output type with a sorted input that has more than 2^31 - 1 values");
  }
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(out_type, values.shape()));
  const bool upper = ctx.node().op == "UpperBound";
  const bool ok = host::Visit<host::kReals | host::kBool>(sorted.dtype(),
                              [&](auto v) { Search<decltype(v)>(sorted, values, upper, &out); });
  if (!ok) {
    return ctx.InvalidArgument(absl::StrCat(ctx.node().op, " does not take ", DataTypeName(sorted.dtype()), " values"));
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("LowerBound", SearchSorted);
PX_REGISTER_HOST_OP("UpperBound", SearchSorted);

}  // namespace
}  // namespace plexus

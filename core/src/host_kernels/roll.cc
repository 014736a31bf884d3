// Host kernel of Roll (schema in ops/array_host_ops.cc): every element moves
// `shift` places along `axis`, wrapping around; shifts of one axis add up.
// Any element type, strings included.
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "host_kernels/host_dispatch.h"
#include "plexus/graph.h"
#include "plexus/status.h"

namespace plexus {
namespace {

absl::Status Roll(HostOpContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& shift = ctx.input(1);
  const Tensor& axis = ctx.input(2);
  if (in.dims() < 1) return ctx.InvalidArgument("input must be 1-D or higher");
  if (shift.dims() > 1) {
    return ctx.InvalidArgument(
        absl::StrCat("shift must be a scalar or a 1-D vector. Found: ", ShapeToString(shift.shape())));
  }
  if (axis.dims() > 1) {
    return ctx.InvalidArgument(
        absl::StrCat("axis must be a scalar or a 1-D vector. Found: ", ShapeToString(axis.shape())));
  }
  if (shift.num_elements() != axis.num_elements()) {
    return ctx.InvalidArgument("shift and axis must have the same size");
  }
  std::vector<int64_t> shifts, axes;
  host::ReadInts(shift, &shifts);
  host::ReadInts(axis, &axes);
  const int64_t rank = in.dims();
  std::vector<int64_t> total(static_cast<size_t>(rank), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i];
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) return ctx.InvalidArgument(absl::StrCat("axis ", a, " is out of range"));
    total[a] += shifts[i];
  }
  const Shape& dims = in.shape();
  for (int64_t d = 0; d < rank; ++d) {
    if (dims[d] > 0) total[d] = ((total[d] % dims[d]) + dims[d]) % dims[d];
  }
  // The source of each output element: output position p reads input
  // position p - shift (mod size) along each axis.
  const int64_t n = in.num_elements();
  std::vector<int64_t> source(static_cast<size_t>(n));
  std::vector<int64_t> pos(static_cast<size_t>(rank), 0), strides(static_cast<size_t>(rank), 1);
  for (int64_t d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * dims[d + 1];
  for (int64_t i = 0; i < n; ++i) {
    int64_t at = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t p = pos[d] - total[d];
      if (p < 0) p += dims[d];
      at += p * strides[d];
    }
    source[i] = at;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++pos[d] < dims[d]) break;
      pos[d] = 0;
    }
  }
  if (in.dtype() == DataType::kString) {
    std::vector<std::string> out(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) out[i] = in.strings()[source[i]];
    ctx.set_output(0, Tensor::FromStrings(in.shape(), std::move(out)));
    return absl::OkStatus();
  }
  const size_t size = DataTypeSize(in.dtype());
  if (size == 0) {
    return ctx.InvalidArgument(absl::StrCat("Roll does not take ", DataTypeName(in.dtype()), " input"));
  }
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(in.dtype(), in.shape()));
  const char* src = static_cast<const char*>(in.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * size, src + source[i] * size, size);
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("Roll", Roll);

}  // namespace
}  // namespace plexus

// Host kernels of Diag and DiagPart (schemas in ops/array_host_ops.cc), the
// tensor diagonals of tf.linalg.tensor_diag and tensor_diag_part: Diag
// makes a tensor of shape s + s that is zero except output[i..., i...] =
// diagonal[i...]; DiagPart reads those entries back from a tensor whose
// first half of dimensions equals its second half.
#include <cstdint>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "plexus/graph.h"
#include "plexus/status.h"

namespace plexus {
namespace {

absl::Status CheckFixedSize(const HostOpContext& ctx, DataType t) {
  if (DataTypeSize(t) == 0) {
    return ctx.InvalidArgument(absl::StrCat(ctx.node().op, " does not take ", DataTypeName(t), " input"));
  }
  return absl::OkStatus();
}

absl::Status Diag(HostOpContext& ctx) {
  const Tensor& in = ctx.input(0);
  PX_RETURN_IF_ERROR(CheckFixedSize(ctx, in.dtype()));
  if (in.dims() < 1) return ctx.InvalidArgument(absl::StrCat("Input must be at least rank 1, got ", in.dims()));
  Shape shape = in.shape();
  shape.insert(shape.end(), in.shape().begin(), in.shape().end());
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(in.dtype(), shape));
  const int64_t n = in.num_elements();
  const size_t size = DataTypeSize(in.dtype());
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(static_cast<char*>(out.raw_data()) + (i * n + i) * size,
                static_cast<const char*>(in.raw_data()) + i * size, size);
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("Diag", Diag);

absl::Status DiagPart(HostOpContext& ctx) {
  const Tensor& in = ctx.input(0);
  PX_RETURN_IF_ERROR(CheckFixedSize(ctx, in.dtype()));
  const int64_t rank = in.dims();
  if (rank % 2 != 0) {
    return ctx.InvalidArgument(absl::StrCat("The rank of the tensor should be even and positive, got shape ",
                                            ShapeToString(in.shape())));
  }
  const int64_t half = rank / 2;
  for (int64_t d = 0; d < half; ++d) {
    if (in.shape()[d] != in.shape()[d + half]) {
      return ctx.InvalidArgument(absl::StrCat("Invalid shape ", ShapeToString(in.shape()), ": dimensions ", d,
                                              " and ", d + half, " do not match."));
    }
  }
  const Shape shape(in.shape().begin(), in.shape().begin() + half);
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(in.dtype(), shape));
  const int64_t n = NumElements(shape);
  const size_t size = DataTypeSize(in.dtype());
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(static_cast<char*>(out.raw_data()) + i * size,
                static_cast<const char*>(in.raw_data()) + (i * n + i) * size, size);
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("DiagPart", DiagPart);

}  // namespace
}  // namespace plexus

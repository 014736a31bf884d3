// Host kernel of ConcatOffset (schema in ops/array_grad_ops.cc), the shape
// arithmetic that the gradient of a concatenation emits: the offset of each
// input in the output.
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "ops/array_grad_util.h"
#include "plexus/graph.h"
#include "plexus/sdk/array_shapes.h"
#include "plexus/status.h"

namespace plexus {
namespace {

using array_shapes::Dims;
using array_grad_util::IntegerValues;

absl::Status ConcatOffset(HostOpContext& ctx) {
  const Tensor& dim_t = ctx.input(0);
  Dims dim;
  if (dim_t.dims() != 0 || !IntegerValues(dim_t, &dim)) {
    return ctx.InvalidArgument(absl::StrCat("concat_dim must be an integer scalar, got shape ",
                                            ShapeToString(dim_t.shape())));
  }
  const int n = ctx.num_inputs() - 1;
  Dims first;
  const Tensor& s0 = ctx.input(1);
  if (s0.dims() != 1 || !IntegerValues(s0, &first)) {
    return ctx.InvalidArgument(absl::StrCat("input 0 should be a 1-D integer tensor, got shape ",
                                            ShapeToString(s0.shape())));
  }
  const int64_t rank = static_cast<int64_t>(first.size());
  int64_t axis = dim[0];
  if (axis < -rank || axis >= rank) {
    return ctx.InvalidArgument(absl::StrCat("Concat dim is out of range: ", axis, " vs. ", rank));
  }
  if (axis < 0) axis += rank;
  int64_t offset = 0;
  for (int k = 0; k < n; ++k) {
    const Tensor& s = ctx.input(1 + k);
    Dims dims;
    if (s.dims() != 1 || !IntegerValues(s, &dims)) {
      return ctx.InvalidArgument(absl::StrCat("input ", k, " should be a 1-D integer tensor, got shape ",
                                              ShapeToString(s.shape())));
    }
    if (static_cast<int64_t>(dims.size()) != rank) {
      return ctx.InvalidArgument(absl::StrCat("input ", k, " should contain ", rank, " elements, but got ",
                                              dims.size()));
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis && dims[d] != first[d]) {
        return ctx.InvalidArgument(absl::StrCat("input[", k, ",", d, "] mismatch: ", dims[d], " vs. ", first[d]));
      }
    }
    PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(s.dtype(), Shape{rank}));
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t v = d == axis ? offset : 0;
      if (s.dtype() == DataType::kInt32) {
        out.data<int32_t>()[d] = static_cast<int32_t>(v);
      } else {
        out.data<int64_t>()[d] = v;
      }
    }
    offset += dims[axis];
    ctx.set_output(k, std::move(out));
  }
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("ConcatOffset", ConcatOffset);

}  // namespace
}  // namespace plexus

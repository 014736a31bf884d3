// Host kernel of ReduceJoin (schema in ops/string_ops.cc): joins the strings
// of each output position along the reduced axes with a separator. The
// reduced elements are visited with the first axis listed varying fastest,
// as TensorFlow; no axes leaves the input as it is.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

// The flat offset, in an array of `shape`, of the position that `linear`
// names among the dimensions `dims` (the last of `dims` varying fastest).
int64_t OffsetOf(int64_t linear, const std::vector<int64_t>& dims, const Shape& shape,
                 const std::vector<int64_t>& strides) {
  int64_t offset = 0;
  for (size_t k = dims.size(); k-- > 0;) {
    const int64_t size = shape[dims[k]];
    offset += strides[dims[k]] * (linear % size);
    linear /= size;
  }
  return offset;
}

absl::Status ReduceJoin(HostOpContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& axes_t = ctx.input(1);
  if (in.dtype() != DataType::kString) {
    return ctx.InvalidArgument(absl::StrCat("inputs is ", DataTypeName(in.dtype()), ", not string"));
  }
  if (axes_t.dtype() != DataType::kInt32 || axes_t.dims() > 1) {
    return ctx.InvalidArgument(
        absl::StrCat("reduction_indices must be an int32 scalar or vector, got ", axes_t.DebugString(0)));
  }
  PX_ASSIGN_OR_RETURN(bool keep_dims, GetAttrBool(ctx.node(), "keep_dims"));
  PX_ASSIGN_OR_RETURN(std::string separator, GetAttrString(ctx.node(), "separator"));
  const Shape& shape = in.shape();
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  std::vector<int64_t> reduce_dims;  // last listed first: the first listed varies fastest
  for (int64_t i = axes_t.num_elements(); i-- > 0;) {
    const int64_t axis = axes_t.data<int32_t>()[i];
    if (axis < -rank || axis >= rank) {
      return ctx.Error(absl::StatusCode::kOutOfRange,
                       absl::StrCat("Invalid reduction dimension ", axis, " for input with ", rank, " dimension(s)"));
    }
    const int64_t d = axis < 0 ? axis + rank : axis;
    if (reduced[d]) return ctx.InvalidArgument(absl::StrCat("Duplicate reduction dimension ", axis));
    reduced[d] = true;
    reduce_dims.push_back(d);
  }
  std::vector<int64_t> kept_dims, strides(static_cast<size_t>(rank));
  Shape out_shape;
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= shape[d];
  }
  int64_t per_output = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      per_output *= shape[d];
      if (keep_dims) out_shape.push_back(1);
    } else {
      kept_dims.push_back(d);
      out_shape.push_back(shape[d]);
    }
  }
  const int64_t n = NumElements(out_shape);
  std::vector<std::string> out(static_cast<size_t>(n));
  const auto& strings = in.strings();
  for (int64_t o = 0; o < n; ++o) {
    const int64_t base = OffsetOf(o, kept_dims, shape, strides);
    std::string& joined = out[o];
    for (int64_t r = 0; r < per_output; ++r) {
      if (r > 0) joined += separator;
      joined += strings[base + OffsetOf(r, reduce_dims, shape, strides)];
    }
  }
  ctx.set_output(0, Tensor::FromStrings(out_shape, std::move(out)));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("ReduceJoin", ReduceJoin);

}  // namespace
}  // namespace plexus

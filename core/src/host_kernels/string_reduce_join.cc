// Host kernels of ReduceJoin and UnsortedSegmentJoin (schemas in
// ops/string_ops.cc). ReduceJoin joins the strings of each output position
// along the reduced axes with a separator; the reduced elements are visited
// with the first axis listed varying fastest, as TensorFlow; no axes leaves
// the input as it is. UnsortedSegmentJoin joins the slices of each segment
// in the order they come (tf.strings.unsorted_segment_join).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "host_kernels/host_dispatch.h"
#include "devices/host_ops.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"
#include "devices/host_allocation.h"

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

absl::Status UnsortedSegmentJoin(HostOpContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& ids = ctx.input(1);
  const Tensor& num_t = ctx.input(2);
  if (in.dtype() != DataType::kString) {
    return ctx.InvalidArgument(absl::StrCat("inputs is ", DataTypeName(in.dtype()), ", not string"));
  }
  if (num_t.dims() != 0) return ctx.InvalidArgument("Number of segments must be a scalar");
  const int64_t num = host::IntAt(num_t, 0);
  if (num < 0) return ctx.InvalidArgument(absl::StrCat("Number of segments must be non-negative, got ", num));
  if (ids.dims() > in.dims()) {
    return ctx.InvalidArgument(absl::StrCat("segment_ids of rank ", ids.dims(), " must not have a higher rank than "
                                            "inputs, of rank ", in.dims()));
  }
  for (int64_t d = 0; d < ids.dims(); ++d) {
    if (ids.shape()[d] != in.shape()[d]) {
      return ctx.InvalidArgument(absl::StrCat("Segment dimension is ", ids.shape()[d], " while input dimension is ",
                                              in.dims(), " in rank ", d));
    }
  }
  PX_ASSIGN_OR_RETURN(std::string separator, GetAttrString(ctx.node(), "separator"));
  Shape out_shape(in.shape().begin() + ids.dims(), in.shape().end());
  const int64_t slice = NumElements(out_shape);
  out_shape.insert(out_shape.begin(), num);
  // As TensorFlow: a string joins its output with the separator only when
  // the output is not empty yet ("", "x", "" with ":" gives "x:").
  int64_t count = 0;
  if (__builtin_mul_overflow(num, slice, &count)) {
    return ctx.InvalidArgument(absl::StrCat("num_segments ", num, " times ", slice, " overflows int64"));
  }
  PX_RETURN_IF_ERROR(CheckHostAllocation(count, sizeof(std::string)));  // num comes from a value
  std::vector<std::string> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < ids.num_elements(); ++i) {
    const int64_t seg = host::IntAt(ids, i);
    if (seg < 0 || seg >= num) {
      return ctx.InvalidArgument("segment_ids are not allowed to exceed num_segments or to have negative values.");
    }
    for (int64_t k = 0; k < slice; ++k) {
      std::string& o = out[seg * slice + k];
      const std::string& piece = in.strings()[i * slice + k];
      if (o.empty()) o = piece;
      else absl::StrAppend(&o, separator, piece);
    }
  }
  ctx.set_output(0, Tensor::FromStrings(out_shape, std::move(out)));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("UnsortedSegmentJoin", UnsortedSegmentJoin);

}  // namespace
}  // namespace plexus

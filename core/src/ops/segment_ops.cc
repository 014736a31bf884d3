// Segment reductions (TensorFlow's math_ops.cc): the sorted ones
// SegmentSum, SegmentMean, SegmentMax, SegmentMin and SegmentProd, whose
// segment_ids are a sorted vector over data's first dimension, and the
// unsorted ones UnsortedSegmentSum, UnsortedSegmentMax, UnsortedSegmentMin
// and UnsortedSegmentProd, whose segment_ids cover a prefix of data's shape
// and whose num_segments lives in host memory. Shapes and id checks are
// plexus/sdk/index_shapes.h, shared with the kernels.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/sdk/index_shapes.h"
#include "plexus/status.h"
#include "plexus/tensor.h"

namespace plexus {
namespace {

// The sorted ops: the output's first dimension is the last id plus one, so it
// is known only when the ids' values are (constants, or host inputs at run
// time); the ids are checked then too.
absl::Status SortedSegmentShape(InferenceContext& ctx) {
  const PartialShape& data = ctx.input(0);
  const PartialShape& ids = ctx.input(1);
  if (ids.rank_known() && ids.rank() != 1) {
    return ctx.Error(absl::StrCat("segment_ids should be a vector, got shape ", ids.ToString()));
  }
  int64_t num_segments = -1;
  const Tensor* value = ctx.input_value(1);
  if (value != nullptr && value->host_readable() && value->shape().size() == 1) {
    std::string error;
    if (value->dtype() == DataType::kInt32) {
      error = index_shapes::SortedSegmentIds(value->data<int32_t>(), value->num_elements(), &num_segments);
    } else if (value->dtype() == DataType::kInt64) {
      error = index_shapes::SortedSegmentIds(value->data<int64_t>(), value->num_elements(), &num_segments);
    }
    if (!error.empty()) return ctx.Error(error);
  }
  if (!data.rank_known()) {
    ctx.set_output(0, PartialShape::Unknown());
    return absl::OkStatus();
  }
  std::vector<int64_t> out;
  const std::vector<int64_t> ids_dims = ids.rank_known() ? ids.dim_vector() : std::vector<int64_t>{-1};
  const std::string error = index_shapes::SortedSegment(data.dim_vector(), ids_dims, num_segments, &out);
  if (!error.empty()) return ctx.Error(error);
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

// The unsorted ops: [num_segments] + data.shape[rank(segment_ids):].
absl::Status UnsortedSegmentShape(InferenceContext& ctx) {
  const PartialShape& data = ctx.input(0);
  const PartialShape& ids = ctx.input(1);
  const PartialShape& num = ctx.input(2);
  if (num.rank_known() && num.rank() != 0) {
    return ctx.Error(absl::StrCat("num_segments must be a scalar, got shape ", num.ToString()));
  }
  int64_t num_segments = -1;
  bool num_known = false;
  const Tensor* value = ctx.input_value(2);
  if (value != nullptr && value->host_readable() && value->num_elements() == 1 &&
      (value->dtype() == DataType::kInt32 || value->dtype() == DataType::kInt64)) {
    num_segments = value->dtype() == DataType::kInt32 ? value->data<int32_t>()[0] : value->data<int64_t>()[0];
    num_known = true;
  }
  if (num_known && num_segments < 0) {
    return ctx.Error(absl::StrCat("Input num_segments == ", num_segments, " must not be negative."));
  }
  if (!data.rank_known() || !ids.rank_known()) {
    ctx.set_output(0, PartialShape::Unknown());
    return absl::OkStatus();
  }
  std::vector<int64_t> out;
  const std::string error =
      index_shapes::UnsortedSegment(data.dim_vector(), ids.dim_vector(), num_segments, num_known, &out);
  if (!error.empty()) return ctx.Error(error);
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

// Max and Min are defined on the real types only; the others on every
// number type (Plexus's kernels have no complex dtypes).
#define PX_SORTED_SEGMENT_OP(name, types)                    \
  PX_REGISTER_OP(OpDefBuilder(name)                          \
                     .Input("data: T")                       \
                     .Input("segment_ids: Tindices")         \
                     .Output("output: T")                    \
                     .Attr(types)                            \
                     .Attr("Tindices: {int32, int64}")       \
                     .SetShapeFn(SortedSegmentShape))

PX_SORTED_SEGMENT_OP("SegmentSum", kNumericTypes);
PX_SORTED_SEGMENT_OP("SegmentMean", kNumericTypes);
PX_SORTED_SEGMENT_OP("SegmentProd", kNumericTypes);
PX_SORTED_SEGMENT_OP("SegmentMax", kRealTypes);
PX_SORTED_SEGMENT_OP("SegmentMin", kRealTypes);

#undef PX_SORTED_SEGMENT_OP

#define PX_UNSORTED_SEGMENT_OP(name, types)                               \
  PX_REGISTER_OP(OpDefBuilder(name)                                       \
                     .Input("data: T")                                    \
                     .Input("segment_ids: Tindices")                      \
                     .Input("num_segments: Tnumsegments")                 \
                     .Output("output: T")                                 \
                     .Attr(types)                                         \
                     .Attr("Tindices: {int32, int64}")                    \
                     .Attr("Tnumsegments: {int32, int64} = DT_INT32")     \
                     .SetShapeFn(UnsortedSegmentShape))

// output[segment_ids[i...], ...] += data[i..., ...]; negative ids are
// dropped, an id >= num_segments is an error. Empty segments are 0 (Sum),
// the type's lowest value (Max), its highest (Min) or 1 (Prod).
PX_UNSORTED_SEGMENT_OP("UnsortedSegmentSum", kRealTypes);
PX_UNSORTED_SEGMENT_OP("UnsortedSegmentProd", kNumericTypes);
PX_UNSORTED_SEGMENT_OP("UnsortedSegmentMax", kRealTypes);
PX_UNSORTED_SEGMENT_OP("UnsortedSegmentMin", kRealTypes);

#undef PX_UNSORTED_SEGMENT_OP

}  // namespace
}  // namespace plexus

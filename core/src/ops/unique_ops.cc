// Unique and UniqueWithCounts: the distinct values of a vector in order of
// first appearance, with each element's index into them (and their counts);
// UniqueV2 and UniqueWithCountsV2: the same for the slices along an axis.
// Schemas and shape functions; the core runs them on the host
// (host_kernels/unique.cc): the output size depends on the values.
#include "absl/strings/str_cat.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

absl::Status UniqueShape(InferenceContext& ctx) {
  const PartialShape& in = ctx.input(0);
  if (in.rank_known() && in.rank() != 1) {
    return ctx.Error(absl::StrCat("x must be a vector, got shape ", in.ToString()));
  }
  ctx.set_output(0, PartialShape(Shape{-1}));
  ctx.set_output(1, in.rank_known() ? in : PartialShape(Shape{-1}));
  if (ctx.num_outputs() > 2) ctx.set_output(2, PartialShape(Shape{-1}));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("Unique")
                   .Input("x: T")
                   .Output("y: T")
                   .Output("idx: out_idx")
                   .Attr("T: type")
                   .Attr("out_idx: {int32, int64} = int32")
                   .SetShapeFn(UniqueShape));

PX_REGISTER_OP(OpDefBuilder("UniqueWithCounts")
                   .Input("x: T")
                   .Output("y: T")
                   .Output("idx: out_idx")
                   .Output("count: out_idx")
                   .Attr("T: type")
                   .Attr("out_idx: {int32, int64} = int32")
                   .SetShapeFn(UniqueShape));

// y keeps the input's rank (the axis dimension becomes the number of
// distinct slices); idx has one entry per slice.
absl::Status UniqueV2Shape(InferenceContext& ctx) {
  const PartialShape& in = ctx.input(0);
  ctx.set_output(0, in.rank_known() ? PartialShape::UnknownOfRank(in.rank()) : PartialShape::Unknown());
  ctx.set_output(1, PartialShape(Shape{-1}));
  if (ctx.num_outputs() > 2) ctx.set_output(2, PartialShape(Shape{-1}));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("UniqueV2")
                   .Input("x: T")
                   .Input("axis: Taxis")
                   .Output("y: T")
                   .Output("idx: out_idx")
                   .Attr("T: type")
                   .Attr("Taxis: {int32, int64} = DT_INT64")
                   .Attr("out_idx: {int32, int64} = int32")
                   .SetShapeFn(UniqueV2Shape));

PX_REGISTER_OP(OpDefBuilder("UniqueWithCountsV2")
                   .Input("x: T")
                   .Input("axis: Taxis")
                   .Output("y: T")
                   .Output("idx: out_idx")
                   .Output("count: out_idx")
                   .Attr("T: type")
                   .Attr("Taxis: {int32, int64} = DT_INT64")
                   .Attr("out_idx: {int32, int64} = int32")
                   .SetShapeFn(UniqueV2Shape));

}  // namespace
}  // namespace plexus

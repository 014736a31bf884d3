// Image ops the core runs on the host (the plugins have no kernels for
// them): ExtractImagePatches (tf.image.extract_patches) and
// CombinedNonMaxSuppression (tf.image.combined_non_max_suppression, the
// last step of exported detection models). Kernels in
// host_kernels/extract_patches.cc and combined_nms.cc.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

absl::Status PatchesShape(InferenceContext& ctx) {
  const PartialShape& in = ctx.input(0);
  if (in.rank_known() && in.rank() != 4) {
    return ctx.Error(absl::StrCat("images must be 4-dimensional, got shape ", in.ToString()));
  }
  PX_ASSIGN_OR_RETURN(std::vector<int64_t> k, GetAttrIntList(ctx.node(), "ksizes"));
  PX_ASSIGN_OR_RETURN(std::vector<int64_t> s, GetAttrIntList(ctx.node(), "strides"));
  PX_ASSIGN_OR_RETURN(std::vector<int64_t> r, GetAttrIntList(ctx.node(), "rates"));
  PX_ASSIGN_OR_RETURN(std::string padding, GetAttrString(ctx.node(), "padding"));
  for (const auto* v : {&k, &s, &r}) {
    if (v->size() != 4 || (*v)[0] != 1 || (*v)[3] != 1) {
      return ctx.Error("ksizes, strides and rates must be [1, rows, cols, 1]");
    }
    if ((*v)[1] <= 0 || (*v)[2] <= 0) return ctx.Error("ksizes, strides and rates must be positive");
  }
  if (padding != "SAME" && padding != "VALID") return ctx.Error("padding must be SAME or VALID, got '" + padding + "'");
  if (!in.rank_known()) {
    ctx.set_output(0, PartialShape::UnknownOfRank(4));
    return absl::OkStatus();
  }
  Shape out = {in.dim(0), -1, -1, -1};
  if (in.dim(3) >= 0) {
    PX_RETURN_IF_ERROR(CheckedMul(ctx, in.dim(3), k[1], "the patch depth", &out[3]));
    PX_RETURN_IF_ERROR(CheckedMul(ctx, out[3], k[2], "the patch depth", &out[3]));
  }
  for (int d = 1; d <= 2; ++d) {
    const int64_t size = in.dim(d);
    if (size < 0) continue;
    int64_t effective = 0;
    PX_RETURN_IF_ERROR(DilatedWindow(ctx, k[d], r[d], &effective));
    if (padding == "SAME") {
      out[d] = CeilDiv(size, s[d]);
    } else {
      out[d] = size < effective ? 0 : (size - effective) / s[d] + 1;
    }
  }
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("ExtractImagePatches")
                   .Input("images: T")
                   .Output("patches: T")
                   .Attr("ksizes: list(int) >= 4")
                   .Attr("strides: list(int) >= 4")
                   .Attr("rates: list(int) >= 4")
                   .Attr("T: {bfloat16, half, float, double, int8, int16, int32, int64, uint8, uint16, uint32, uint64, "
                         "complex64, complex128, bool}")
                   .Attr("padding: string")  // SAME or VALID
                   .SetShapeFn(PatchesShape));

PX_REGISTER_OP(OpDefBuilder("CombinedNonMaxSuppression")
                   .Input("boxes: float")
                   .Input("scores: float")
                   .Input("max_output_size_per_class: int32")
                   .Input("max_total_size: int32")
                   .Input("iou_threshold: float")
                   .Input("score_threshold: float")
                   .Output("nmsed_boxes: float")
                   .Output("nmsed_scores: float")
                   .Output("nmsed_classes: float")
                   .Output("valid_detections: int32")
                   .Attr("pad_per_class: bool = false")
                   .Attr("clip_boxes: bool = true")
                   .SetShapeFn([](InferenceContext& ctx) {
                     const PartialShape& boxes = ctx.input(0);
                     const PartialShape& scores = ctx.input(1);
                     if (boxes.rank_known() && (boxes.rank() != 4 || (boxes.dim(3) >= 0 && boxes.dim(3) != 4))) {
                       return ctx.Error(absl::StrCat("boxes must be [batch, num_boxes, q, 4], got shape ",
                                                     boxes.ToString()));
                     }
                     if (scores.rank_known() && scores.rank() != 3) {
                       return ctx.Error(absl::StrCat("scores must be [batch, num_boxes, num_classes], got shape ",
                                                     scores.ToString()));
                     }
                     const int64_t batch = boxes.rank_known() ? boxes.dim(0) : -1;
                     ctx.set_output(0, PartialShape(Shape{batch, -1, 4}));
                     ctx.set_output(1, PartialShape(Shape{batch, -1}));
                     ctx.set_output(2, PartialShape(Shape{batch, -1}));
                     ctx.set_output(3, PartialShape(Shape{batch}));
                     return absl::OkStatus();
                   }));

}  // namespace
}  // namespace plexus

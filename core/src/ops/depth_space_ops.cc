// DepthToSpace and SpaceToDepth: 4-D tensors whose depth moves into (or out
// of) block_size x block_size spatial blocks, NHWC or NCHW (TensorFlow's
// NCHW_VECT_C takes qint8 only: refused). The shape functions check the
// divisibility TensorFlow's kernels require where the dimensions are known.
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/array_util.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

// `d` divided by `by`, -1 when unknown; an error when it does not divide.
absl::Status Divide(const InferenceContext& ctx, int64_t d, int64_t by, const char* what,
                    int64_t* out) {
  if (d < 0) {
    *out = -1;
    return absl::OkStatus();
  }
  if (d % by != 0) {
    return ctx.Error(absl::StrCat(what, " ", d, " must be divisible by ", by));
  }
  *out = d / by;
  return absl::OkStatus();
}

absl::Status Times(const InferenceContext& ctx, int64_t d, int64_t by, int64_t* out) {
  if (d < 0) {
    *out = -1;
    return absl::OkStatus();
  }
  return CheckedMul(ctx, d, by, "the output dimension", out);
}

absl::Status DepthSpaceShape(InferenceContext& ctx, bool to_space) {
  PX_ASSIGN_OR_RETURN(int64_t block, GetAttrInt(ctx.node(), "block_size"));
  if (block < 2) return ctx.Error(absl::StrCat("block_size must be at least 2, got ", block));
  PX_ASSIGN_OR_RETURN(std::string format, GetAttrString(ctx.node(), "data_format"));
  if (format != "NHWC" && format != "NCHW") {
    return ctx.Error(absl::StrCat("data_format must be NHWC or NCHW, got '", format,
                                  "' (NCHW_VECT_C requires qint8)"));
  }
  PX_RETURN_IF_ERROR(array_util::CheckRank(ctx, 0, 4, "input"));
  const PartialShape& in = ctx.input(0);
  if (!in.rank_known()) {
    ctx.set_output(0, PartialShape::UnknownOfRank(4));
    return absl::OkStatus();
  }
  const bool nchw = format == "NCHW";
  const int64_t h = in.dim(nchw ? 2 : 1), w = in.dim(nchw ? 3 : 2), c = in.dim(nchw ? 1 : 3);
  int64_t oh, ow, oc, area;
  PX_RETURN_IF_ERROR(CheckedMul(ctx, block, block, "block_size squared", &area));
  if (to_space) {
    PX_RETURN_IF_ERROR(Divide(ctx, c, area, "Input depth dimension", &oc));
    PX_RETURN_IF_ERROR(Times(ctx, h, block, &oh));
    PX_RETURN_IF_ERROR(Times(ctx, w, block, &ow));
  } else {
    PX_RETURN_IF_ERROR(Divide(ctx, h, block, "Image height", &oh));
    PX_RETURN_IF_ERROR(Divide(ctx, w, block, "Image width", &ow));
    PX_RETURN_IF_ERROR(Times(ctx, c, area, &oc));
  }
  ctx.set_output(0, nchw ? PartialShape(Shape{in.dim(0), oc, oh, ow})
                         : PartialShape(Shape{in.dim(0), oh, ow, oc}));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("DepthToSpace")
                   .Input("input: T")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr("block_size: int >= 2")
                   .Attr("data_format: string = \"NHWC\"")
                   .SetShapeFn([](InferenceContext& ctx) { return DepthSpaceShape(ctx, true); }));

PX_REGISTER_OP(OpDefBuilder("SpaceToDepth")
                   .Input("input: T")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr("block_size: int >= 2")
                   .Attr("data_format: string = \"NHWC\"")
                   .SetShapeFn([](InferenceContext& ctx) { return DepthSpaceShape(ctx, false); }));

}  // namespace
}  // namespace plexus

// LRN (local response normalization across the depth of NHWC images) and
// its gradient LRNGrad: 4-D inputs, outputs of the same shape.
#include "absl/strings/str_cat.h"
#include "ops/array_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

constexpr char kLrnTypes[] = "T: {half, bfloat16, float} = DT_FLOAT";

PX_REGISTER_OP(OpDefBuilder("LRN")
                   .Input("input: T")
                   .Output("output: T")
                   .Attr("depth_radius: int = 5")
                   .Attr("bias: float = 1.0")
                   .Attr("alpha: float = 1.0")
                   .Attr("beta: float = 0.5")
                   .Attr(kLrnTypes)
                   .SetShapeFn([](InferenceContext& ctx) {
                     PX_RETURN_IF_ERROR(array_util::CheckRank(ctx, 0, 4, "input"));
                     ctx.set_output(0, ctx.input(0));
                     return absl::OkStatus();
                   }));

// LRNGrad: input_grads, input_image and output_image share one 4-D shape.
absl::Status LrnGradShape(InferenceContext& ctx) {
  static const char* const kNames[] = {"input_grads", "input_image", "output_image"};
  PartialShape out = ctx.input(0);
  for (int i = 0; i < 3; ++i) {
    PX_RETURN_IF_ERROR(array_util::CheckRank(ctx, i, 4, kNames[i]));
    const PartialShape& s = ctx.input(i);
    if (!s.rank_known()) continue;
    if (!out.rank_known()) {
      out = s;
      continue;
    }
    Shape dims = out.dims();
    for (int d = 0; d < 4; ++d) {
      if (dims[d] < 0) {
        dims[d] = s.dim(d);
      } else if (s.dim(d) >= 0 && s.dim(d) != dims[d]) {
        return ctx.Error(absl::StrCat("input_grads, input_image and output_image must have the "
                                      "same shape, got ", ctx.input(0).ToString(), ", ",
                                      ctx.input(1).ToString(), " and ", ctx.input(2).ToString()));
      }
    }
    out = PartialShape(dims);
  }
  ctx.set_output(0, out.rank_known() ? out : PartialShape::UnknownOfRank(4));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("LRNGrad")
                   .Input("input_grads: T")
                   .Input("input_image: T")
                   .Input("output_image: T")
                   .Output("output: T")
                   .Attr("depth_radius: int = 5")
                   .Attr("bias: float = 1.0")
                   .Attr("alpha: float = 1.0")
                   .Attr("beta: float = 0.5")
                   .Attr(kLrnTypes)
                   .SetShapeFn(LrnGradShape));

}  // namespace
}  // namespace plexus

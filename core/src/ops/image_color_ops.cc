// Colour ops on images whose last dimension is the channels: RGBToHSV and
// HSVToRGB (any rank >= 1, 3 channels), AdjustContrastv2 (rank >= 3),
// AdjustSaturation and AdjustHue (rank >= 3, 3 channels). The factor inputs
// are float scalars. Every output has the images' shape; the kernels check
// what the shape functions cannot know before a run.
#include "absl/strings/str_cat.h"
#include "ops/array_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

// Input 0 of rank >= min_rank whose last dimension (when known) is 3 if
// `rgb`; the output has its shape.
absl::Status ColorShape(InferenceContext& ctx, int64_t min_rank, bool rgb) {
  const PartialShape& s = ctx.input(0);
  if (s.rank_known()) {
    if (s.rank() < min_rank) {
      return ctx.Error(absl::StrCat("images must have rank at least ", min_rank, ", got shape ",
                                    s.ToString()));
    }
    if (rgb && s.dim(s.rank() - 1) >= 0 && s.dim(s.rank() - 1) != 3) {
      return ctx.Error(absl::StrCat("images must have 3 channels (the last dimension), got shape ",
                                    s.ToString()));
    }
  }
  ctx.set_output(0, s);
  return absl::OkStatus();
}

constexpr char kColorTypes[] = "T: {half, bfloat16, float, double} = DT_FLOAT";
constexpr char kAdjustTypes[] = "T: {half, float} = DT_FLOAT";

PX_REGISTER_OP(OpDefBuilder("RGBToHSV")
                   .Input("images: T")
                   .Output("output: T")
                   .Attr(kColorTypes)
                   .SetShapeFn([](InferenceContext& ctx) { return ColorShape(ctx, 1, true); }));

PX_REGISTER_OP(OpDefBuilder("HSVToRGB")
                   .Input("images: T")
                   .Output("output: T")
                   .Attr(kColorTypes)
                   .SetShapeFn([](InferenceContext& ctx) { return ColorShape(ctx, 1, true); }));

// The adjustments: images of rank >= 3 and a scalar factor input 1.
absl::Status AdjustShape(InferenceContext& ctx, bool rgb, const char* factor) {
  PX_RETURN_IF_ERROR(array_util::CheckRank(ctx, 1, 0, factor));
  return ColorShape(ctx, 3, rgb);
}

PX_REGISTER_OP(OpDefBuilder("AdjustContrastv2")
                   .Input("images: T")
                   .Input("contrast_factor: float")
                   .Output("output: T")
                   .Attr(kAdjustTypes)
                   .SetShapeFn([](InferenceContext& ctx) {
                     return AdjustShape(ctx, false, "contrast_factor");
                   }));

PX_REGISTER_OP(OpDefBuilder("AdjustSaturation")
                   .Input("images: T")
                   .Input("scale: float")
                   .Output("output: T")
                   .Attr(kAdjustTypes)
                   .SetShapeFn([](InferenceContext& ctx) { return AdjustShape(ctx, true, "scale"); }));

PX_REGISTER_OP(OpDefBuilder("AdjustHue")
                   .Input("images: T")
                   .Input("delta: float")
                   .Output("output: T")
                   .Attr(kAdjustTypes)
                   .SetShapeFn([](InferenceContext& ctx) { return AdjustShape(ctx, true, "delta"); }));

}  // namespace
}  // namespace plexus

// Gradients of the image resize ops, as TensorFlow's image_grad.py:
// ResizeBilinear through ResizeBilinearGrad (against the original image),
// ResizeNearestNeighbor through ResizeNearestNeighborGrad (with the
// original height and width as its size), ScaleAndTranslate through
// ScaleAndTranslateGrad (float images only, as TensorFlow's kernel). The
// size, scale and translation inputs have no gradient. ResizeBicubic,
// CropAndResize, RGBToHSV and ImageProjectiveTransformV2/V3 have none
// either: their gradients are not implemented. Non-max suppression selects indices: not differentiable,
// as in TensorFlow.
#include "passes/gradients/grad_util.h"
#include "plexus/gradients.h"
#include "plexus/status.h"

namespace plexus {
namespace {

using grad::Attrs;
using grad::Copy;

#define PX_G_ASSIGN(lhs, expr) PX_ASSIGN_OR_RETURN(lhs, expr)

absl::Status ResizeBilinearGradFn(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                  GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], g.Op("ResizeBilinearGrad", {*dy[0], op.inputs[0]},
                             Copy(Attrs(), op, {"T", "align_corners", "half_pixel_centers"})));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("ResizeBilinear", ResizeBilinearGradFn);

// The [height, width] of an NHWC image: a constant when its shape is known.
absl::StatusOr<Endpoint> ImageSize(GradientContext& g, const Endpoint& image) {
  const PartialShape& s = g.shape(image);
  if (s.rank_known() && s.rank() == 4 && s.dim(1) >= 0 && s.dim(2) >= 0) {
    return g.IntVector({s.dim(1), s.dim(2)});
  }
  PX_G_ASSIGN(Endpoint shape, g.ShapeOf(image));
  PX_G_ASSIGN(Endpoint begin, g.IntVector({1}));
  PX_G_ASSIGN(Endpoint size, g.IntVector({2}));
  return g.Op("Slice", {shape, begin, size});
}

absl::Status ResizeNearestNeighborGradFn(GradientContext& g, const GradientOp& op,
                                         const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN(Endpoint size, ImageSize(g, op.inputs[0]));
  PX_G_ASSIGN((*dx)[0], g.Op("ResizeNearestNeighborGrad", {*dy[0], size},
                             Copy(Attrs(), op, {"T", "align_corners", "half_pixel_centers"})));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("ResizeNearestNeighbor", ResizeNearestNeighborGradFn);

absl::Status ScaleAndTranslateGradFn(GradientContext& g, const GradientOp& op,
                                     const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], g.Op("ScaleAndTranslateGrad",
                             {*dy[0], op.inputs[0], op.inputs[2], op.inputs[3]},
                             Copy(Attrs(), op, {"T", "kernel_type", "antialias"})));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("ScaleAndTranslate", ScaleAndTranslateGradFn);

PX_NO_GRADIENT("NonMaxSuppressionV3");
PX_NO_GRADIENT("NonMaxSuppressionV4");
PX_NO_GRADIENT("NonMaxSuppressionV5");

}  // namespace
}  // namespace plexus

// Image ops: ResizeBilinear, ResizeNearestNeighbor, ResizeBicubic,
// ResizeArea, ScaleAndTranslate and the gradients ResizeBilinearGrad,
// ResizeNearestNeighborGrad and ScaleAndTranslateGrad, on NHWC images;
// ImageProjectiveTransformV2 and V3; CropAndResize; NonMaxSuppressionV3, V4
// and V5. The size inputs
// ([new_height, new_width], int32) and NMS's scalars are read on the host;
// the kernels check the values (positive sizes, nonempty images, thresholds)
// and the attributes as TensorFlow's do, and the shape functions check what
// is known before a run. NMS selects a number of boxes known only when it
// has run: its outputs have an unknown size (unless padded), and the
// kernels allocate them (plugin_api.h: an output of ndim -1).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/array_util.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

constexpr char kResizeTypes[] =
    "T: {int8, uint8, int16, uint16, int32, int64, half, float, double, bfloat16}";

// Fails unless input i has rank 4 (when its rank is known).
absl::Status CheckImage(const InferenceContext& ctx, int i, const char* what) {
  const PartialShape& s = ctx.input(i);
  if (s.rank_known() && s.rank() != 4) {
    return ctx.Error(absl::StrCat(what, " must be 4-D [batch, height, width, channels], got shape ",
                                  s.ToString()));
  }
  return absl::OkStatus();
}

// The [batch, size[0], size[1], channels] output of a resize (and of
// ResizeNearestNeighborGrad), input 0 the images and input `size_input`
// (1 unless given) the size.
absl::Status SizedImageShape(InferenceContext& ctx, const char* images, int size_input = 1) {
  PX_RETURN_IF_ERROR(CheckImage(ctx, 0, images));
  const PartialShape& size = ctx.input(size_input);
  if (size.rank_known() && (size.rank() != 1 || (size.dim(0) >= 0 && size.dim(0) != 2))) {
    return ctx.Error(absl::StrCat("size must be a vector of 2 elements, got shape ",
                                  size.ToString()));
  }
  int64_t height = -1, width = -1;
  array_util::Dims values;
  if (array_util::KnownInts(ctx, size_input, &values)) {
    if (values.size() != 2) {
      return ctx.Error(absl::StrCat("size must have 2 elements, got ", values.size()));
    }
    if (values[0] <= 0 || values[1] <= 0) {
      return ctx.Error(absl::StrCat("output dimensions must be positive, got [", values[0], ", ",
                                    values[1], "]"));
    }
    height = values[0];
    width = values[1];
  }
  const PartialShape& in = ctx.input(0);
  const int64_t batch = in.rank_known() ? in.dim(0) : -1;
  const int64_t channels = in.rank_known() ? in.dim(3) : -1;
  ctx.set_output(0, PartialShape(Shape{batch, height, width, channels}));
  return absl::OkStatus();
}

// ResizeBilinearGrad: the original image's shape.
absl::Status ResizeBilinearGradShape(InferenceContext& ctx) {
  PX_RETURN_IF_ERROR(CheckImage(ctx, 0, "grads"));
  PX_RETURN_IF_ERROR(CheckImage(ctx, 1, "original_image"));
  ctx.set_output(0, ctx.input(1));
  return absl::OkStatus();
}

#define PX_RESIZE_OP(NAME, OUTPUT)                                                          \
  PX_REGISTER_OP(OpDefBuilder(NAME)                                                         \
                     .Input("images: T")                                                    \
                     .Input("size: int32")                                                  \
                     .Output(OUTPUT)                                                        \
                     .Attr(kResizeTypes)                                                    \
                     .Attr("align_corners: bool = false")                                   \
                     .Attr("half_pixel_centers: bool = false")                              \
                     .SetShapeFn([](InferenceContext& ctx) {                                \
                       return SizedImageShape(ctx, "images");                               \
                     }))

PX_RESIZE_OP("ResizeBilinear", "resized_images: float");
PX_RESIZE_OP("ResizeNearestNeighbor", "resized_images: T");
PX_RESIZE_OP("ResizeBicubic", "resized_images: float");

PX_REGISTER_OP(OpDefBuilder("ResizeBilinearGrad")
                   .Input("grads: float")
                   .Input("original_image: T")
                   .Output("output: T")
                   .Attr("T: {float, bfloat16, half, double}")
                   .Attr("align_corners: bool = false")
                   .Attr("half_pixel_centers: bool = false")
                   .SetShapeFn(ResizeBilinearGradShape));

PX_REGISTER_OP(OpDefBuilder("ResizeNearestNeighborGrad")
                   .Input("grads: T")
                   .Input("size: int32")
                   .Output("output: T")
                   .Attr("T: {uint8, int8, int32, half, float, double, bfloat16}")
                   .Attr("align_corners: bool = false")
                   .Attr("half_pixel_centers: bool = false")
                   .SetShapeFn([](InferenceContext& ctx) { return SizedImageShape(ctx, "grads"); }));

PX_REGISTER_OP(OpDefBuilder("ResizeArea")
                   .Input("images: T")
                   .Input("size: int32")
                   .Output("resized_images: float")
                   .Attr(kResizeTypes)
                   .Attr("align_corners: bool = false")
                   .SetShapeFn([](InferenceContext& ctx) { return SizedImageShape(ctx, "images"); }));

// Fails unless input i is a vector of two elements (when known).
absl::Status CheckPair(const InferenceContext& ctx, int i, const char* what) {
  const PartialShape& s = ctx.input(i);
  if (s.rank_known() && (s.rank() != 1 || (s.dim(0) >= 0 && s.dim(0) != 2))) {
    return ctx.Error(absl::StrCat(what, " must be a vector of 2 elements, got shape ",
                                  s.ToString()));
  }
  return absl::OkStatus();
}

// ScaleAndTranslate(Grad)'s kernel_type, one of TensorFlow's sampling
// kernels (the spec parser has no string sets).
absl::Status CheckKernelType(const InferenceContext& ctx) {
  PX_ASSIGN_OR_RETURN(std::string kernel, GetAttrString(ctx.node(), "kernel_type"));
  for (const char* k : {"lanczos1", "lanczos3", "lanczos5", "gaussian", "box", "triangle",
                        "keyscubic", "mitchellcubic"}) {
    if (kernel == k) return absl::OkStatus();
  }
  return ctx.Error(absl::StrCat("Unrecognized kernel type: ", kernel));
}

PX_REGISTER_OP(OpDefBuilder("ScaleAndTranslate")
                   .Input("images: T")
                   .Input("size: int32")
                   .Input("scale: float")
                   .Input("translation: float")
                   .Output("resized_images: float")
                   .Attr("T: {int8, uint8, int16, uint16, int32, int64, bfloat16, half, float, "
                         "double}")
                   .Attr("kernel_type: string = \"lanczos3\"")
                   .Attr("antialias: bool = true")
                   .SetShapeFn([](InferenceContext& ctx) {
                     PX_RETURN_IF_ERROR(CheckKernelType(ctx));
                     PX_RETURN_IF_ERROR(CheckPair(ctx, 2, "scale"));
                     PX_RETURN_IF_ERROR(CheckPair(ctx, 3, "translation"));
                     return SizedImageShape(ctx, "images");
                   }));

// ScaleAndTranslateGrad: the original image's shape.
PX_REGISTER_OP(OpDefBuilder("ScaleAndTranslateGrad")
                   .Input("grads: T")
                   .Input("original_image: T")
                   .Input("scale: float")
                   .Input("translation: float")
                   .Output("output: T")
                   .Attr("T: {float}")
                   .Attr("kernel_type: string = \"lanczos3\"")
                   .Attr("antialias: bool = true")
                   .SetShapeFn([](InferenceContext& ctx) {
                     PX_RETURN_IF_ERROR(CheckKernelType(ctx));
                     PX_RETURN_IF_ERROR(CheckImage(ctx, 0, "grads"));
                     PX_RETURN_IF_ERROR(CheckImage(ctx, 1, "original_image"));
                     PX_RETURN_IF_ERROR(CheckPair(ctx, 2, "scale"));
                     PX_RETURN_IF_ERROR(CheckPair(ctx, 3, "translation"));
                     ctx.set_output(0, ctx.input(1));
                     return absl::OkStatus();
                   }));

// ImageProjectiveTransformV2/V3: [batch, output_shape[0], output_shape[1],
// channels]; transforms [1 or batch, 8]; V3's fill_value a scalar.
absl::Status ProjectiveTransformShape(InferenceContext& ctx, bool v3) {
  PX_ASSIGN_OR_RETURN(std::string interpolation, GetAttrString(ctx.node(), "interpolation"));
  if (interpolation != "NEAREST" && interpolation != "BILINEAR") {
    return ctx.Error(absl::StrCat("interpolation must be NEAREST or BILINEAR, got '",
                                  interpolation, "'"));
  }
  PX_ASSIGN_OR_RETURN(std::string mode, GetAttrString(ctx.node(), "fill_mode"));
  if (mode != "REFLECT" && mode != "WRAP" && mode != "CONSTANT" && mode != "NEAREST") {
    return ctx.Error(absl::StrCat("fill_mode must be REFLECT, WRAP, CONSTANT or NEAREST, got '",
                                  mode, "'"));
  }
  PX_RETURN_IF_ERROR(array_util::CheckRank(ctx, 1, 2, "transforms"));
  const PartialShape& t = ctx.input(1);
  if (t.rank_known() && t.dim(1) >= 0 && t.dim(1) != 8) {
    return ctx.Error(absl::StrCat("transforms must have 8 columns, got shape ", t.ToString()));
  }
  if (v3) PX_RETURN_IF_ERROR(array_util::CheckRank(ctx, 3, 0, "fill_value"));
  return SizedImageShape(ctx, "images", 2);
}

constexpr char kProjectiveTypes[] =
    "dtype: {uint8, int32, int64, half, bfloat16, float, double}";

PX_REGISTER_OP(OpDefBuilder("ImageProjectiveTransformV2")
                   .Input("images: dtype")
                   .Input("transforms: float")
                   .Input("output_shape: int32")
                   .Output("transformed_images: dtype")
                   .Attr(kProjectiveTypes)
                   .Attr("interpolation: string")
                   .Attr("fill_mode: string = \"CONSTANT\"")
                   .SetShapeFn([](InferenceContext& ctx) {
                     return ProjectiveTransformShape(ctx, false);
                   }));

PX_REGISTER_OP(OpDefBuilder("ImageProjectiveTransformV3")
                   .Input("images: dtype")
                   .Input("transforms: float")
                   .Input("output_shape: int32")
                   .Input("fill_value: float")
                   .Output("transformed_images: dtype")
                   .Attr(kProjectiveTypes)
                   .Attr("interpolation: string")
                   .Attr("fill_mode: string = \"CONSTANT\"")
                   .SetShapeFn([](InferenceContext& ctx) {
                     return ProjectiveTransformShape(ctx, true);
                   }));

// CropAndResize: [num_boxes, crop_height, crop_width, depth] floats.
absl::Status CropAndResizeShape(InferenceContext& ctx) {
  PX_RETURN_IF_ERROR(CheckImage(ctx, 0, "image"));
  PX_RETURN_IF_ERROR(array_util::CheckRank(ctx, 1, 2, "boxes"));
  PX_RETURN_IF_ERROR(array_util::CheckRank(ctx, 2, 1, "box_ind"));
  PX_RETURN_IF_ERROR(array_util::CheckRank(ctx, 3, 1, "crop_size"));
  PX_ASSIGN_OR_RETURN(std::string method, GetAttrString(ctx.node(), "method"));
  if (method != "bilinear" && method != "nearest") {
    return ctx.Error(absl::StrCat("method must be 'bilinear' or 'nearest', got '", method, "'"));
  }
  const PartialShape& boxes = ctx.input(1);
  if (boxes.rank_known() && boxes.dim(1) >= 0 && boxes.dim(1) != 4) {
    return ctx.Error(absl::StrCat("boxes must have 4 columns, got shape ", boxes.ToString()));
  }
  int64_t crop_h = -1, crop_w = -1;
  array_util::Dims crop;
  if (array_util::KnownInts(ctx, 3, &crop)) {
    if (crop.size() != 2) {
      return ctx.Error(absl::StrCat("crop_size must have 2 elements, got ", crop.size()));
    }
    if (crop[0] <= 0 || crop[1] <= 0) return ctx.Error("crop dimensions must be positive");
    crop_h = crop[0];
    crop_w = crop[1];
  }
  const PartialShape& image = ctx.input(0);
  const int64_t num_boxes = boxes.rank_known() ? boxes.dim(0) : -1;
  ctx.set_output(0, PartialShape(Shape{num_boxes, crop_h, crop_w,
                                       image.rank_known() ? image.dim(3) : -1}));
  return absl::OkStatus();
}

// NonMaxSuppressionV3/V4/V5: selected_indices (and V5's selected_scores)
// of max_output_size elements when padded and known, else of unknown size;
// valid_outputs a scalar.
absl::Status NmsShape(InferenceContext& ctx, int version) {
  PX_RETURN_IF_ERROR(array_util::CheckRank(ctx, 0, 2, "boxes"));
  PX_RETURN_IF_ERROR(array_util::CheckRank(ctx, 1, 1, "scores"));
  static const char* const kScalars[] = {"max_output_size", "iou_threshold", "score_threshold",
                                         "soft_nms_sigma"};
  for (int i = 2; i < (version == 5 ? 6 : 5); ++i) {
    PX_RETURN_IF_ERROR(array_util::CheckRank(ctx, i, 0, kScalars[i - 2]));
  }
  const PartialShape& boxes = ctx.input(0);
  if (boxes.rank_known() && boxes.dim(1) >= 0 && boxes.dim(1) != 4) {
    return ctx.Error(absl::StrCat("boxes must have 4 columns, got shape ", boxes.ToString()));
  }
  int64_t size = -1;
  bool pad = false;
  if (version >= 4) {
    PX_ASSIGN_OR_RETURN(pad, GetAttrBool(ctx.node(), "pad_to_max_output_size"));
  }
  int64_t max_output = 0;
  if (pad && array_util::KnownScalarInt(ctx, 2, &max_output)) {
    if (max_output < 0) return ctx.Error("max_output_size must be non-negative");
    size = max_output;
  }
  ctx.set_output(0, PartialShape(Shape{size}));
  if (version == 5) ctx.set_output(1, PartialShape(Shape{size}));
  if (version >= 4) ctx.set_output(version == 5 ? 2 : 1, PartialShape(Shape{}));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("CropAndResize")
                   .Input("image: T")
                   .Input("boxes: float")
                   .Input("box_ind: int32")
                   .Input("crop_size: int32")
                   .Output("crops: float")
                   .Attr("T: {uint8, uint16, int8, int16, int32, int64, half, float, double}")
                   .Attr("method: string = \"bilinear\"")
                   .Attr("extrapolation_value: float = 0")
                   .SetShapeFn(CropAndResizeShape));

PX_REGISTER_OP(OpDefBuilder("NonMaxSuppressionV3")
                   .Input("boxes: T")
                   .Input("scores: T")
                   .Input("max_output_size: int32")
                   .Input("iou_threshold: T_threshold")
                   .Input("score_threshold: T_threshold")
                   .Output("selected_indices: int32")
                   .Attr("T: {half, float} = DT_FLOAT")
                   .Attr("T_threshold: {half, float} = DT_FLOAT")
                   .SetShapeFn([](InferenceContext& ctx) { return NmsShape(ctx, 3); }));

PX_REGISTER_OP(OpDefBuilder("NonMaxSuppressionV4")
                   .Input("boxes: T")
                   .Input("scores: T")
                   .Input("max_output_size: int32")
                   .Input("iou_threshold: T_threshold")
                   .Input("score_threshold: T_threshold")
                   .Output("selected_indices: int32")
                   .Output("valid_outputs: int32")
                   .Attr("T: {half, float} = DT_FLOAT")
                   .Attr("T_threshold: {half, float} = DT_FLOAT")
                   .Attr("pad_to_max_output_size: bool = false")
                   .SetShapeFn([](InferenceContext& ctx) { return NmsShape(ctx, 4); }));

PX_REGISTER_OP(OpDefBuilder("NonMaxSuppressionV5")
                   .Input("boxes: T")
                   .Input("scores: T")
                   .Input("max_output_size: int32")
                   .Input("iou_threshold: T")
                   .Input("score_threshold: T")
                   .Input("soft_nms_sigma: T")
                   .Output("selected_indices: int32")
                   .Output("selected_scores: T")
                   .Output("valid_outputs: int32")
                   .Attr("T: {half, float} = DT_FLOAT")
                   .Attr("pad_to_max_output_size: bool = false")
                   .SetShapeFn([](InferenceContext& ctx) { return NmsShape(ctx, 5); }));

}  // namespace
}  // namespace plexus

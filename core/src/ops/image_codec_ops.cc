// Image decoding and encoding (tf.io.decode_jpeg/png/image, encode_jpeg/png,
// extract_jpeg_shape), as serving signatures that take image bytes use them.
// Host ops, with kernels in host_kernels/image_decode.cc.
#include "absl/strings/str_cat.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

absl::Status ScalarContents(InferenceContext& ctx) {
  if (ctx.input(0).rank_known() && ctx.input(0).rank() != 0) {
    return ctx.Error(absl::StrCat("contents must be a scalar, got shape ", ctx.input(0).ToString()));
  }
  return absl::OkStatus();
}

// [height, width, channels], channels known when the attribute fixes it.
absl::Status DecodedShape(InferenceContext& ctx) {
  PX_RETURN_IF_ERROR(ScalarContents(ctx));
  int64_t channels = 0;
  if (ctx.node().FindAttr("channels") != nullptr) {
    PX_ASSIGN_OR_RETURN(channels, GetAttrInt(ctx.node(), "channels"));
  }
  ctx.set_output(0, PartialShape(Shape{-1, -1, channels > 0 ? channels : -1}));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("DecodeJpeg")
                   .Input("contents: string")
                   .Output("image: uint8")
                   .Attr("channels: int = 0")
                   .Attr("ratio: int = 1")
                   .Attr("fancy_upscaling: bool = true")
                   .Attr("try_recover_truncated: bool = false")
                   .Attr("acceptable_fraction: float = 1.0")
                   .Attr("dct_method: string = \"\"")
                   .SetShapeFn(DecodedShape));

PX_REGISTER_OP(OpDefBuilder("DecodeAndCropJpeg")
                   .Input("contents: string")
                   .Input("crop_window: int32")
                   .Output("image: uint8")
                   .Attr("channels: int = 0")
                   .Attr("ratio: int = 1")
                   .Attr("fancy_upscaling: bool = true")
                   .Attr("try_recover_truncated: bool = false")
                   .Attr("acceptable_fraction: float = 1.0")
                   .Attr("dct_method: string = \"\"")
                   .SetShapeFn(DecodedShape));

PX_REGISTER_OP(OpDefBuilder("DecodePng")
                   .Input("contents: string")
                   .Output("image: dtype")
                   .Attr("channels: int = 0")
                   .Attr("dtype: {uint8, uint16} = DT_UINT8")
                   .SetShapeFn(DecodedShape));

PX_REGISTER_OP(OpDefBuilder("DecodeImage")
                   .Input("contents: string")
                   .Output("image: dtype")
                   .Attr("channels: int = 0")
                   .Attr("dtype: {uint8, uint16, float} = DT_UINT8")
                   .Attr("expand_animations: bool = true")
                   .SetShapeFn([](InferenceContext& ctx) {
                     PX_RETURN_IF_ERROR(ScalarContents(ctx));
                     ctx.set_output(0, PartialShape::Unknown());  // 4-D for animations
                     return absl::OkStatus();
                   }));

PX_REGISTER_OP(OpDefBuilder("ExtractJpegShape")
                   .Input("contents: string")
                   .Output("image_shape: output_type")
                   .Attr("output_type: {int32, int64} = DT_INT32")
                   .SetShapeFn([](InferenceContext& ctx) {
                     PX_RETURN_IF_ERROR(ScalarContents(ctx));
                     ctx.set_output(0, PartialShape(Shape{3}));
                     return absl::OkStatus();
                   }));

absl::Status EncodedShape(InferenceContext& ctx) {
  if (ctx.input(0).rank_known() && ctx.input(0).rank() != 3) {
    return ctx.Error(absl::StrCat("image must be 3-dimensional, got shape ", ctx.input(0).ToString()));
  }
  ctx.set_output(0, PartialShape(Shape{}));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("EncodePng")
                   .Input("image: T")
                   .Output("contents: string")
                   .Attr("compression: int = -1")
                   .Attr("T: {uint8, uint16} = DT_UINT8")
                   .SetShapeFn(EncodedShape));

PX_REGISTER_OP(OpDefBuilder("EncodeJpeg")
                   .Input("image: uint8")
                   .Output("contents: string")
                   .Attr("format: string = \"\"")
                   .Attr("quality: int = 95")
                   .Attr("progressive: bool = false")
                   .Attr("optimize_size: bool = false")
                   .Attr("chroma_downsampling: bool = true")
                   .Attr("density_unit: string = \"in\"")
                   .Attr("x_density: int = 300")
                   .Attr("y_density: int = 300")
                   .Attr("xmp_metadata: string = \"\"")
                   .SetShapeFn(EncodedShape));

PX_REGISTER_OP(OpDefBuilder("EncodeJpegVariableQuality")
                   .Input("images: uint8")
                   .Input("quality: int32")
                   .Output("contents: string")
                   .SetShapeFn(EncodedShape));

}  // namespace
}  // namespace plexus

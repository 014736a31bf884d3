// Host kernels of the image decoding and encoding ops (schemas in
// ops/image_codec_ops.cc), on image_codecs.h. As TensorFlow, DecodeJpeg,
// DecodePng and DecodeImage each decode JPEG and PNG alike (found by their
// first bytes); DecodeImage converts to uint16 (x256 from 8 bits) or float
// (x1/255, or x1/65535 from PNG's 16 bits). GIF, BMP and WebP are refused
// with a message saying so.
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "host_kernels/image_codecs.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

enum class Format { kJpeg, kPng, kGif, kBmp, kWebp, kUnknown };

Format FormatOf(absl::string_view data) {
  if (absl::StartsWith(data, "\xff\xd8\xff")) return Format::kJpeg;
  if (absl::StartsWith(data, "\x89PNG\r\n\x1a\n")) return Format::kPng;
  if (absl::StartsWith(data, "GIF8")) return Format::kGif;
  if (absl::StartsWith(data, "BM")) return Format::kBmp;
  if (absl::StartsWith(data, "RIFF") && data.size() > 12 && data.substr(8, 4) == "WEBP") return Format::kWebp;
  return Format::kUnknown;
}

absl::StatusOr<absl::string_view> Contents(HostOpContext& ctx) {
  const Tensor& t = ctx.input(0);
  if (t.dtype() != DataType::kString || t.dims() != 0) {
    return ctx.InvalidArgument(absl::StrCat("`contents` must be a string scalar, got ", t.DebugString(0)));
  }
  if (t.strings()[0].empty()) return ctx.InvalidArgument("Input is empty.");
  return absl::string_view(t.strings()[0]);
}

absl::StatusOr<image::JpegOptions> JpegOptionsOf(HostOpContext& ctx, int channels) {
  image::JpegOptions o;
  o.channels = channels;
  const Node& node = ctx.node();
  if (node.FindAttr("ratio") == nullptr) return o;  // DecodeImage: TensorFlow's defaults
  PX_ASSIGN_OR_RETURN(int64_t ratio, GetAttrInt(node, "ratio"));
  if (ratio != 1 && ratio != 2 && ratio != 4 && ratio != 8) {
    return ctx.InvalidArgument(absl::StrCat("ratio must be 1, 2, 4, or 8, got ", ratio));
  }
  o.ratio = static_cast<int>(ratio);
  PX_ASSIGN_OR_RETURN(o.fancy_upscaling, GetAttrBool(node, "fancy_upscaling"));
  PX_ASSIGN_OR_RETURN(o.try_recover_truncated, GetAttrBool(node, "try_recover_truncated"));
  PX_ASSIGN_OR_RETURN(o.acceptable_fraction, GetAttrFloat(node, "acceptable_fraction"));
  PX_ASSIGN_OR_RETURN(std::string dct, GetAttrString(node, "dct_method"));
  if (!dct.empty() && dct != "INTEGER_FAST" && dct != "INTEGER_ACCURATE") {
    return ctx.InvalidArgument("dct_method must be one of {'', 'INTEGER_FAST', 'INTEGER_ACCURATE'}");
  }
  o.accurate_dct = dct == "INTEGER_ACCURATE";
  if (node.op == "DecodeAndCropJpeg") {
    const Tensor& window = ctx.input(1);
    if (window.dtype() != DataType::kInt32 || window.dims() != 1 || window.num_elements() != 4) {
      return ctx.InvalidArgument(absl::StrCat("crop_window must be 4 int32 values, got ", window.DebugString(0)));
    }
    o.crop = true;
    o.crop_y = window.data<int32_t>()[0];
    o.crop_x = window.data<int32_t>()[1];
    o.crop_height = window.data<int32_t>()[2];
    o.crop_width = window.data<int32_t>()[3];
  }
  return o;
}

// The decoded pixels as a tensor of `dtype` (uint8, uint16 or float).
absl::StatusOr<Tensor> ToTensor(image::Decoded d, DataType dtype) {
  const Shape shape = {d.height, d.width, d.channels};
  const int64_t n = d.height * d.width * d.channels;
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(dtype, shape));
  const auto* wide = reinterpret_cast<const uint16_t*>(d.data.data());
  switch (dtype) {
    case DataType::kUInt8:
      std::memcpy(out.data<uint8_t>(), d.data.data(), static_cast<size_t>(n));
      break;
    case DataType::kUInt16:
      for (int64_t i = 0; i < n; ++i) {
        out.data<uint16_t>()[i] = d.bits == 16 ? wide[i] : static_cast<uint16_t>(d.data[i] * 256);
      }
      break;
    default: {  // float
      const float scale = d.bits == 16 ? 1.0f / 65535 : 1.0f / 255;
      for (int64_t i = 0; i < n; ++i) {
        out.data<float>()[i] = static_cast<float>(d.bits == 16 ? wide[i] : d.data[i]) * scale;
      }
    }
  }
  return out;
}

absl::Status Decode(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(absl::string_view data, Contents(ctx));
  const std::string& op = ctx.node().op;
  PX_ASSIGN_OR_RETURN(int64_t channels, GetAttrInt(ctx.node(), "channels"));
  if (channels != 0 && channels != 1 && channels != 3 && channels != 4) {
    return ctx.InvalidArgument(absl::StrCat("`channels` must be 0, 1, 3 or 4 but got ", channels));
  }
  DataType dtype = DataType::kUInt8;
  if (ctx.node().FindAttr("dtype") != nullptr) {
    PX_ASSIGN_OR_RETURN(dtype, GetAttrType(ctx.node(), "dtype"));
  }
  const Format format = FormatOf(data);
  absl::StatusOr<image::Decoded> decoded;
  if (format == Format::kJpeg) {
    if (channels == 4) return ctx.InvalidArgument("JPEG does not support 4 channels");
    PX_ASSIGN_OR_RETURN(image::JpegOptions options, JpegOptionsOf(ctx, static_cast<int>(channels)));
    decoded = image::DecodeJpeg(data, options);
  } else if (format == Format::kPng) {
    if (op == "DecodeAndCropJpeg") {
      return ctx.InvalidArgument("DecodeAndCropJpeg operation can run on JPEG only, but detected PNG.");
    }
    const int bits = dtype == DataType::kUInt8 ? 8 : 16;
    decoded = image::DecodePng(data, static_cast<int>(channels), bits);
  } else if (format == Format::kUnknown) {
    return ctx.InvalidArgument("Unknown image file format. One of JPEG, PNG, GIF, BMP, WebP required.");
  } else {
    const char* name = format == Format::kGif ? "GIF" : format == Format::kBmp ? "BMP" : "WebP";
    return ctx.Error(absl::StatusCode::kUnimplemented,
                     absl::StrCat("the image is ", name, "; Plexus decodes JPEG and PNG only"));
  }
  if (!decoded.ok()) return ctx.InvalidArgument(decoded.status().message());
  PX_ASSIGN_OR_RETURN(Tensor out, ToTensor(std::move(*decoded), dtype));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("DecodeJpeg", Decode);
PX_REGISTER_HOST_OP("DecodeAndCropJpeg", Decode);
PX_REGISTER_HOST_OP("DecodePng", Decode);
PX_REGISTER_HOST_OP("DecodeImage", Decode);

absl::Status ExtractJpegShape(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(absl::string_view data, Contents(ctx));
  auto shape = image::JpegShape(data);
  if (!shape.ok()) return ctx.InvalidArgument(shape.status().message());
  PX_ASSIGN_OR_RETURN(DataType dtype, GetAttrType(ctx.node(), "output_type"));
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(dtype, {3}));
  for (int i = 0; i < 3; ++i) {
    if (dtype == DataType::kInt32) out.data<int32_t>()[i] = static_cast<int32_t>((*shape)[i]);
    else out.data<int64_t>()[i] = (*shape)[i];
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("ExtractJpegShape", ExtractJpegShape);

absl::Status CheckImage(HostOpContext& ctx, const Tensor& image) {
  if (image.dims() != 3) {
    return ctx.InvalidArgument(absl::StrCat("image must be 3-dimensional, got shape ", ShapeToString(image.shape())));
  }
  return absl::OkStatus();
}

absl::Status EncodePng(HostOpContext& ctx) {
  const Tensor& image = ctx.input(0);
  PX_RETURN_IF_ERROR(CheckImage(ctx, image));
  if (image.dtype() != DataType::kUInt8 && image.dtype() != DataType::kUInt16) {
    return ctx.InvalidArgument(absl::StrCat("image is ", DataTypeName(image.dtype()), ", not uint8 or uint16"));
  }
  PX_ASSIGN_OR_RETURN(int64_t compression, GetAttrInt(ctx.node(), "compression"));
  const int bits = image.dtype() == DataType::kUInt8 ? 8 : 16;
  auto png = image::EncodePng(image.raw_data(), image.shape()[0], image.shape()[1],
                              static_cast<int>(image.shape()[2]), bits, static_cast<int>(compression));
  if (!png.ok()) return ctx.InvalidArgument(png.status().message());
  ctx.set_output(0, Tensor::FromStrings({}, {std::move(*png)}));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("EncodePng", EncodePng);

absl::Status EncodeJpeg(HostOpContext& ctx) {
  const Tensor& image = ctx.input(0);
  PX_RETURN_IF_ERROR(CheckImage(ctx, image));
  if (image.dtype() != DataType::kUInt8) {
    return ctx.InvalidArgument(absl::StrCat("image is ", DataTypeName(image.dtype()), ", not uint8"));
  }
  image::JpegEncodeOptions o;
  int channels = static_cast<int>(image.shape()[2]);
  const Node& node = ctx.node();
  if (node.op == "EncodeJpegVariableQuality") {
    const Tensor& q = ctx.input(1);
    if (q.dtype() != DataType::kInt32 || q.dims() != 0) {
      return ctx.InvalidArgument(absl::StrCat("quality must be an int32 scalar, got ", q.DebugString(0)));
    }
    o.quality = q.data<int32_t>()[0];
  } else {
    PX_ASSIGN_OR_RETURN(std::string format, GetAttrString(node, "format"));
    if (!format.empty() && format != "grayscale" && format != "rgb") {
      return ctx.InvalidArgument(absl::StrCat("format must be '', grayscale or rgb, got '", format, "'"));
    }
    const int want = format == "grayscale" ? 1 : format == "rgb" ? 3 : channels;
    if (want != channels) {
      return ctx.InvalidArgument(absl::StrCat("format '", format, "' needs ", want, " channels, got ", channels));
    }
    PX_ASSIGN_OR_RETURN(int64_t quality, GetAttrInt(node, "quality"));
    o.quality = static_cast<int>(quality);
    PX_ASSIGN_OR_RETURN(o.progressive, GetAttrBool(node, "progressive"));
    PX_ASSIGN_OR_RETURN(o.optimize_size, GetAttrBool(node, "optimize_size"));
    PX_ASSIGN_OR_RETURN(o.chroma_downsampling, GetAttrBool(node, "chroma_downsampling"));
    PX_ASSIGN_OR_RETURN(std::string unit, GetAttrString(node, "density_unit"));
    if (unit != "in" && unit != "cm") return ctx.InvalidArgument("density_unit must be 'in' or 'cm', got '" + unit + "'");
    o.density_unit = unit == "in" ? 1 : 2;
    PX_ASSIGN_OR_RETURN(int64_t xd, GetAttrInt(node, "x_density"));
    PX_ASSIGN_OR_RETURN(int64_t yd, GetAttrInt(node, "y_density"));
    o.x_density = static_cast<int>(xd);
    o.y_density = static_cast<int>(yd);
    PX_ASSIGN_OR_RETURN(o.xmp_metadata, GetAttrString(node, "xmp_metadata"));
  }
  if (o.quality < 0 || o.quality > 100) {
    return ctx.InvalidArgument(absl::StrCat("quality must be in [0,100], got ", o.quality));
  }
  auto jpeg = image::EncodeJpeg(image.data<uint8_t>(), image.shape()[0], image.shape()[1], channels, o);
  if (!jpeg.ok()) return ctx.InvalidArgument(jpeg.status().message());
  ctx.set_output(0, Tensor::FromStrings({}, {std::move(*jpeg)}));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("EncodeJpeg", EncodeJpeg);
PX_REGISTER_HOST_OP("EncodeJpegVariableQuality", EncodeJpeg);

}  // namespace
}  // namespace plexus

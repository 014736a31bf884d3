// JPEG decoding and encoding on libjpeg-turbo (image_codecs.h), with
// TensorFlow's decoder settings: the fast integer DCT unless asked for the
// accurate one, fancy upsampling, scaling by 1/ratio, CMYK converted to RGB
// as TensorFlow does (Adobe's inverted CMYK too), and a truncated file an
// error unless try_recover_truncated.
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>
#include <string>
#include <vector>

#include <jpeglib.h>
#include <jerror.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "host_kernels/image_codecs.h"

namespace plexus::image {
namespace {

struct ErrorManager {
  jpeg_error_mgr pub;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX] = {0};
  bool truncated = false;
};

void OnError(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  longjmp(err->jump, 1);
}

void OnMessage(j_common_ptr cinfo, int level) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  if (level < 0) {
    ++cinfo->err->num_warnings;
    if (cinfo->err->msg_code == JWRN_JPEG_EOF) err->truncated = true;
  }
}

void SetUpErrors(ErrorManager* err, jpeg_common_struct* cinfo) {
  cinfo->err = jpeg_std_error(&err->pub);
  err->pub.error_exit = OnError;
  err->pub.emit_message = OnMessage;
}

absl::Status Invalid(const ErrorManager& err, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("Invalid JPEG data or crop window (", what, err.message[0] ? ": " : "", err.message, ")"));
}

// Writes CMYK samples as RGB (or gray), TensorFlow's conversion.
void CmykToRgb(const uint8_t* cmyk, int64_t pixels, bool adobe, int out_channels, uint8_t* out) {
  for (int64_t i = 0; i < pixels; ++i) {
    int c = cmyk[4 * i], m = cmyk[4 * i + 1], y = cmyk[4 * i + 2], k = cmyk[4 * i + 3];
    if (!adobe) {
      c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k;
    }
    const int r = c * k / 255, g = m * k / 255, b = y * k / 255;
    if (out_channels == 1) {
      out[i] = static_cast<uint8_t>((r * 77 + g * 150 + b * 29 + 128) >> 8);
    } else {
      out[3 * i] = static_cast<uint8_t>(r);
      out[3 * i + 1] = static_cast<uint8_t>(g);
      out[3 * i + 2] = static_cast<uint8_t>(b);
    }
  }
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> JpegShape(absl::string_view data) {
  jpeg_decompress_struct cinfo;
  ErrorManager err;
  SetUpErrors(&err, reinterpret_cast<jpeg_common_struct*>(&cinfo));
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return Invalid(err, "header");
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(data.data()), data.size());
  jpeg_read_header(&cinfo, TRUE);
  std::vector<int64_t> shape = {cinfo.image_height, cinfo.image_width, cinfo.num_components};
  jpeg_destroy_decompress(&cinfo);
  return shape;
}

absl::StatusOr<Decoded> DecodeJpeg(absl::string_view data, const JpegOptions& options) {
  jpeg_decompress_struct cinfo;
  ErrorManager err;
  SetUpErrors(&err, reinterpret_cast<jpeg_common_struct*>(&cinfo));
  // Everything that changes after setjmp lives behind a pointer that does
  // not, so a longjmp leaves no local in an indeterminate state.
  struct Buffers {
    Decoded out;
    std::vector<uint8_t> row;
  };
  const auto buffers = std::make_unique<Buffers>();
  Decoded& out = buffers->out;
  std::vector<uint8_t>& row = buffers->row;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return Invalid(err, "decoding");
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(data.data()), data.size());
  jpeg_read_header(&cinfo, TRUE);
  const bool cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
  int channels = options.channels;
  if (channels == 0) channels = cinfo.num_components == 1 ? 1 : 3;
  cinfo.out_color_space = cmyk ? JCS_CMYK : channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  cinfo.do_fancy_upsampling = options.fancy_upscaling ? TRUE : FALSE;
  cinfo.scale_num = 1;
  cinfo.scale_denom = static_cast<unsigned int>(options.ratio);
  cinfo.dct_method = options.accurate_dct ? JDCT_ISLOW : JDCT_IFAST;
  jpeg_start_decompress(&cinfo);
  const int64_t height = cinfo.output_height, width = cinfo.output_width;
  int64_t out_height = height, out_width = width, skip_left = 0;
  if (options.crop) {
    if (options.crop_y < 0 || options.crop_x < 0 || options.crop_height <= 0 || options.crop_width <= 0 ||
        options.crop_y + static_cast<int64_t>(options.crop_height) > height ||
        options.crop_x + static_cast<int64_t>(options.crop_width) > width) {
      jpeg_destroy_decompress(&cinfo);
      return absl::InvalidArgumentError(absl::StrCat("crop window [", options.crop_y, ", ", options.crop_x, ", ",
                                                     options.crop_height, ", ", options.crop_width,
                                                     "] does not fit the ", height, "x", width, " image"));
    }
    // As TensorFlow: libjpeg-turbo decodes only the columns from the iMCU
    // boundary at or left of the window (upsampling at its edges as it
    // does), and skips the rows above it.
    JDIMENSION x = static_cast<JDIMENSION>(options.crop_x), w = static_cast<JDIMENSION>(options.crop_width);
    jpeg_crop_scanline(&cinfo, &x, &w);
    skip_left = options.crop_x - static_cast<int64_t>(x);
    if (options.crop_y > 0) jpeg_skip_scanlines(&cinfo, static_cast<JDIMENSION>(options.crop_y));
    out_height = options.crop_height;
    out_width = options.crop_width;
  }
  const int components = cinfo.output_components;
  out.height = out_height;
  out.width = out_width;
  out.channels = channels;
  out.data.resize(static_cast<size_t>(out_height * out_width * channels));
  row.resize(static_cast<size_t>(cinfo.output_width) * components);
  for (int64_t y = 0; y < out_height; ++y) {
    JSAMPROW rows[1] = {row.data()};
    jpeg_read_scanlines(&cinfo, rows, 1);
    uint8_t* dst = &out.data[static_cast<size_t>(y * out_width * channels)];
    if (cmyk) {
      CmykToRgb(row.data() + skip_left * 4, out_width, cinfo.saw_Adobe_marker, channels, dst);
    } else {
      std::memcpy(dst, row.data() + skip_left * components, static_cast<size_t>(out_width * components));
    }
  }
  if (cinfo.output_scanline < cinfo.output_height) {
    jpeg_skip_scanlines(&cinfo, cinfo.output_height - cinfo.output_scanline);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  if (err.truncated && !options.try_recover_truncated) {
    return absl::InvalidArgumentError("Invalid JPEG data or crop window (premature end of data: the file is truncated)");
  }
  return std::move(out);
}

absl::StatusOr<std::string> EncodeJpeg(const uint8_t* pixels, int64_t height, int64_t width, int channels,
                                       const JpegEncodeOptions& options) {
  if (channels != 1 && channels != 3) {
    return absl::InvalidArgumentError(absl::StrCat("image must have 1 or 3 channels, got ", channels));
  }
  if (height <= 0 || width <= 0 || height > 65535 || width > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("image of ", height, "x", width, " cannot be a JPEG"));
  }
  jpeg_compress_struct cinfo;
  ErrorManager err;
  SetUpErrors(&err, reinterpret_cast<jpeg_common_struct*>(&cinfo));
  // libjpeg's output buffer, behind a pointer fixed before setjmp.
  struct Output {
    unsigned char* buffer = nullptr;
    unsigned long size = 0;  // NOLINT(runtime/int): libjpeg's type
  };
  const auto output = std::make_unique<Output>();
  unsigned char*& buffer = output->buffer;
  unsigned long& size = output->size;  // NOLINT(runtime/int)
  if (setjmp(err.jump)) {
    jpeg_destroy_compress(&cinfo);
    std::free(buffer);
    return absl::InvalidArgumentError(absl::StrCat("JPEG encoding failed: ", err.message));
  }
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = static_cast<JDIMENSION>(width);
  cinfo.image_height = static_cast<JDIMENSION>(height);
  cinfo.input_components = channels;
  cinfo.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  cinfo.optimize_coding = options.optimize_size ? TRUE : FALSE;
  cinfo.density_unit = static_cast<UINT8>(options.density_unit);
  cinfo.X_density = static_cast<UINT16>(options.x_density);
  cinfo.Y_density = static_cast<UINT16>(options.y_density);
  jpeg_set_quality(&cinfo, options.quality, TRUE);
  if (options.progressive) jpeg_simple_progression(&cinfo);
  if (!options.chroma_downsampling) {
    for (int i = 0; i < cinfo.num_components; ++i) {
      cinfo.comp_info[i].h_samp_factor = 1;
      cinfo.comp_info[i].v_samp_factor = 1;
    }
  }
  jpeg_start_compress(&cinfo, TRUE);
  if (!options.xmp_metadata.empty()) {
    const std::string marker = std::string("http://ns.adobe.com/xap/1.0/") + '\0' + options.xmp_metadata;
    jpeg_write_marker(&cinfo, JPEG_APP0 + 1, reinterpret_cast<const JOCTET*>(marker.data()),
                      static_cast<unsigned int>(marker.size()));
  }
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW rows[1] = {const_cast<JSAMPLE*>(pixels + static_cast<int64_t>(cinfo.next_scanline) * width * channels)};
    jpeg_write_scanlines(&cinfo, rows, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::string out(reinterpret_cast<const char*>(buffer), size);
  std::free(buffer);
  return out;
}

}  // namespace plexus::image

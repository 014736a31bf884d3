// PNG decoding and encoding on libpng (image_codecs.h), with TensorFlow's
// transformations: alpha added (opaque), taken from tRNS or stripped as the
// channel count asks, 16-bit samples cut to 8 or 8-bit ones widened to 16
// (v * 257), palettes expanded, and colour made gray with libpng's
// rgb_to_gray (Rec. 601 weights) or gray made RGB.
#include <csetjmp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <png.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "host_kernels/image_codecs.h"

namespace plexus::image {
namespace {

struct Reader {
  const uint8_t* data = nullptr;
  size_t left = 0;
  std::string error;
};

void ReadBytes(png_structp png, png_bytep out, png_size_t n) {
  auto* r = static_cast<Reader*>(png_get_io_ptr(png));
  if (n > r->left) png_error(png, "the PNG data ends early");
  std::memcpy(out, r->data, n);
  r->data += n;
  r->left -= n;
}

void OnError(png_structp png, png_const_charp message) {
  auto* r = static_cast<Reader*>(png_get_error_ptr(png));
  if (r != nullptr) r->error = message;
  png_longjmp(png, 1);
}

void OnWarning(png_structp, png_const_charp) {}

void WriteBytes(png_structp png, png_bytep data, png_size_t n) {
  static_cast<std::string*>(png_get_io_ptr(png))->append(reinterpret_cast<const char*>(data), n);
}
void Flush(png_structp) {}

}  // namespace

absl::StatusOr<Decoded> DecodePng(absl::string_view data, int channels, int bits) {
  // State changed after setjmp lives on the heap, behind a fixed pointer.
  struct State {
    Reader reader;
    Decoded out;
    png_structp png = nullptr;
    png_infop info = nullptr;
  };
  const auto state = std::make_unique<State>();
  state->reader.data = reinterpret_cast<const uint8_t*>(data.data());
  state->reader.left = data.size();
  state->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &state->reader, OnError, OnWarning);
  if (state->png == nullptr) return absl::ResourceExhaustedError("cannot create a PNG reader");
  state->info = png_create_info_struct(state->png);
  if (setjmp(png_jmpbuf(state->png))) {
    png_destroy_read_struct(&state->png, &state->info, nullptr);
    return absl::InvalidArgumentError(absl::StrCat("Invalid PNG data, size ", data.size(), ": ", state->reader.error));
  }
  png_structp png = state->png;
  png_infop info = state->info;
  png_set_read_fn(png, &state->reader, ReadBytes);
  png_read_info(png, info);
  png_uint_32 width = 0, height = 0;
  int bit_depth = 0, color_type = 0;
  png_get_IHDR(png, info, &width, &height, &bit_depth, &color_type, nullptr, nullptr, nullptr);
  if (width == 0 || height == 0 || width >= (1u << 27) || height >= (1u << 27) ||
      static_cast<uint64_t>(width) * height >= (1ull << 29)) {
    png_error(png, "PNG size too large or empty");
  }
  const bool has_trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
  if (channels == 0) {
    channels = color_type == PNG_COLOR_TYPE_PALETTE ? (has_trns ? 4 : 3) : png_get_channels(png, info);
  }
  const bool has_alpha = (color_type & PNG_COLOR_MASK_ALPHA) != 0;
  if ((channels & 1) == 0) {  // alpha wanted
    if (!has_alpha) {
      if (has_trns) png_set_tRNS_to_alpha(png);
      else png_set_add_alpha(png, (1u << bit_depth) - 1, PNG_FILLER_AFTER);
    }
  } else if (has_alpha || has_trns) {
    png_set_strip_alpha(png);
  }
  if (bit_depth > 8 && bits <= 8) png_set_strip_16(png);
  const bool widen = bit_depth <= 8 && bits == 16;
  png_set_packing(png);
  const int passes = png_set_interlace_handling(png);
  if (bits > 8) png_set_swap(png);  // little-endian hosts
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  const bool is_gray = (color_type & PNG_COLOR_MASK_COLOR) == 0;
  if (is_gray && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (channels < 3) {
    if (!is_gray) png_set_rgb_to_gray(png, 1, 0.299, 0.587);
  } else if (is_gray) {
    png_set_gray_to_rgb(png);
  }
  png_read_update_info(png, info);
  Decoded& out = state->out;
  out.height = height;
  out.width = width;
  out.channels = channels;
  out.bits = bits;
  const size_t row_bytes = static_cast<size_t>(width) * channels * (bits / 8);
  out.data.resize(row_bytes * height);
  // Rows are decoded at 8 bits and widened afterwards when 16 are wanted
  // from an 8-bit file: each row holds them in its first half.
  for (int p = 0; p < passes; ++p) {
    for (png_uint_32 y = 0; y < height; ++y) png_read_row(png, out.data.data() + y * row_bytes, nullptr);
  }
  png_read_end(png, nullptr);
  png_destroy_read_struct(&state->png, &state->info, nullptr);
  if (widen) {
    for (png_uint_32 y = 0; y < height; ++y) {
      uint8_t* row = out.data.data() + y * row_bytes;
      auto* wide = reinterpret_cast<uint16_t*>(row);
      for (size_t i = static_cast<size_t>(width) * channels; i-- > 0;) wide[i] = static_cast<uint16_t>(row[i] * 257);
    }
  }
  return std::move(out);
}

absl::StatusOr<std::string> EncodePng(const void* pixels, int64_t height, int64_t width, int channels, int bits,
                                      int compression) {
  if (channels < 1 || channels > 4) {
    return absl::InvalidArgumentError(absl::StrCat("image must have 1 to 4 channels, got ", channels));
  }
  if (height <= 0 || width <= 0 || height >= (1 << 27) || width >= (1 << 27)) {
    return absl::InvalidArgumentError(absl::StrCat("image of ", height, "x", width, " cannot be a PNG"));
  }
  if (compression < -1 || compression > 9) {
    return absl::InvalidArgumentError(absl::StrCat("compression must be -1 to 9, got ", compression));
  }
  struct State {
    Reader errors;
    std::string out;
    png_structp png = nullptr;
    png_infop info = nullptr;
  };
  const auto state = std::make_unique<State>();
  state->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &state->errors, OnError, OnWarning);
  if (state->png == nullptr) return absl::ResourceExhaustedError("cannot create a PNG writer");
  state->info = png_create_info_struct(state->png);
  if (setjmp(png_jmpbuf(state->png))) {
    png_destroy_write_struct(&state->png, &state->info);
    return absl::InvalidArgumentError(absl::StrCat("PNG encoding failed: ", state->errors.error));
  }
  static const int kColorTypes[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                    PNG_COLOR_TYPE_RGB_ALPHA};
  png_set_write_fn(state->png, &state->out, WriteBytes, Flush);
  png_set_compression_level(state->png, compression < 0 ? 6 : compression);
  png_set_IHDR(state->png, state->info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), bits,
               kColorTypes[channels - 1], PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(state->png, state->info);
  if (bits > 8) png_set_swap(state->png);
  const size_t row_bytes = static_cast<size_t>(width) * channels * (bits / 8);
  const auto* row = static_cast<const uint8_t*>(pixels);
  for (int64_t y = 0; y < height; ++y, row += row_bytes) png_write_row(state->png, const_cast<png_bytep>(row));
  png_write_end(state->png, nullptr);
  png_destroy_write_struct(&state->png, &state->info);
  return std::move(state->out);
}

}  // namespace plexus::image

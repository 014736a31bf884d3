// JPEG and PNG coding for the image ops (host_kernels/image_decode.cc), on
// the libraries TensorFlow uses (libjpeg-turbo, libpng) with TensorFlow's
// settings and colour conversions, so decoded pixels match TensorFlow's.
// Errors never abort: both libraries' error exits are trapped.
#ifndef PLEXUS_CORE_SRC_HOST_KERNELS_IMAGE_CODECS_H_
#define PLEXUS_CORE_SRC_HOST_KERNELS_IMAGE_CODECS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace plexus::image {

// Pixels row-major [height, width, channels], 8 bits a sample, or 16 bits
// (native byte order) when bits == 16.
struct Decoded {
  int64_t height = 0, width = 0, channels = 0;
  int bits = 8;
  std::vector<uint8_t> data;
};

struct JpegOptions {
  int channels = 0;  // 0: as the file (1 or 3); 1 or 3
  int ratio = 1;     // downscale by 1, 2, 4 or 8
  bool fancy_upscaling = true;
  bool try_recover_truncated = false;
  float acceptable_fraction = 1.0f;
  bool accurate_dct = false;  // TensorFlow's default is the fast integer DCT
  bool crop = false;
  int crop_y = 0, crop_x = 0, crop_height = 0, crop_width = 0;
};

absl::StatusOr<Decoded> DecodeJpeg(absl::string_view data, const JpegOptions& options);
// [height, width, components] from the header only.
absl::StatusOr<std::vector<int64_t>> JpegShape(absl::string_view data);

// channels 0 (as the file), 1, 2, 3 or 4; bits 8 or 16.
absl::StatusOr<Decoded> DecodePng(absl::string_view data, int channels, int bits);

struct JpegEncodeOptions {
  int quality = 95;
  bool progressive = false, optimize_size = false, chroma_downsampling = true;
  int density_unit = 1;  // 1 inches, 2 centimetres
  int x_density = 300, y_density = 300;
  std::string xmp_metadata;
};
// pixels: 8-bit [height, width, channels], channels 1 or 3.
absl::StatusOr<std::string> EncodeJpeg(const uint8_t* pixels, int64_t height, int64_t width, int channels,
                                       const JpegEncodeOptions& options);
// pixels: 8- or 16-bit [height, width, channels], channels 1 to 4.
absl::StatusOr<std::string> EncodePng(const void* pixels, int64_t height, int64_t width, int channels, int bits,
                                      int compression);

}  // namespace plexus::image

#endif  // PLEXUS_CORE_SRC_HOST_KERNELS_IMAGE_CODECS_H_

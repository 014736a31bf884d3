// CPU kernels: the colour family. RGBToHSV, HSVToRGB, AdjustContrastv2,
// AdjustSaturation and AdjustHue with TensorFlow's arithmetic
// (plexus/sdk/image_color.h): the colour-space conversions in the image
// type (half and bfloat16 rounded after every operation, as Eigen does),
// the adjustments in float. Pixels run in parallel (OpenMP); the contrast
// means are one fold per image, images in parallel.
#include <cstdint>
#include <vector>

#include "kernels/register_kernels.h"
#include "plexus/sdk/image_color.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

bool Parallel(int64_t items, int64_t work) { return items > 1 && work > (int64_t{1} << 14); }

template <bool kToHsv>
class ColorspaceKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const sdk::Shape shape = call.input_shape(0);
    const int64_t pixels = sdk::ColorPixelsOf(shape);
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      T* y = call.AllocateOutput<T>(0, shape);
#pragma omp parallel for schedule(static) if (Parallel(pixels, pixels * 16))
      for (int64_t p = 0; p < pixels; ++p) {
        if constexpr (kToHsv) {
          sdk::RgbToHsv(x + 3 * p, y + 3 * p);
        } else {
          sdk::HsvToRgb(x + 3 * p, y + 3 * p);
        }
      }
    });
  }
};

template <typename T>
float ToFloat(T v) {
  return static_cast<float>(v);
}

// AdjustContrastv2: per image, the channel means, then each element.
template <typename T>
void AdjustContrast(const T* x, const sdk::AdjustShape& s, float factor, T* y) {
  const int64_t image = s.pixels * s.channels;
#pragma omp parallel for schedule(static) if (Parallel(s.images, s.images * image))
  for (int64_t i = 0; i < s.images; ++i) {
    std::vector<float> in(static_cast<size_t>(image)), scratch(static_cast<size_t>(image));
    std::vector<float> means(static_cast<size_t>(s.channels));
    const T* src = x + i * image;
    for (int64_t k = 0; k < image; ++k) in[k] = ToFloat(src[k]);
    sdk::ContrastMeans(in.data(), s.pixels, s.channels, scratch.data(), means.data());
    T* dst = y + i * image;
    for (int64_t p = 0; p < s.pixels; ++p) {
      for (int64_t c = 0; c < s.channels; ++c) {
        const float mean = means[c], v = in[p * s.channels + c];
        dst[p * s.channels + c] = static_cast<T>(mean + factor * (v - mean));
      }
    }
  }
}

enum class Adjust { kContrast, kSaturation, kHue };

template <Adjust kAdjust>
class AdjustKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    static const char* const kFactor[] = {"contrast_factor", "scale", "delta"};
    const sdk::Shape shape = call.input_shape(0);
    const sdk::AdjustShape s = sdk::AdjustShapeOf(shape, call.input_shape(1),
                                                  kFactor[static_cast<int>(kAdjust)],
                                                  kAdjust != Adjust::kContrast);
    const float factor = *call.input<float>(1);
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      T* y = call.AllocateOutput<T>(0, shape);
      if constexpr (kAdjust == Adjust::kContrast) {
        AdjustContrast(x, s, factor, y);
      } else {
        const int64_t pixels = s.images * s.pixels;
#pragma omp parallel for schedule(static) if (Parallel(pixels, pixels * 16))
        for (int64_t p = 0; p < pixels; ++p) {
          const T* in = x + 3 * p;
          float out[3];
          if constexpr (kAdjust == Adjust::kSaturation) {
            sdk::AdjustSaturationPixel(ToFloat(in[0]), ToFloat(in[1]), ToFloat(in[2]), factor, out);
          } else {
            sdk::AdjustHuePixel(ToFloat(in[0]), ToFloat(in[1]), ToFloat(in[2]), factor, out);
          }
          for (int k = 0; k < 3; ++k) y[3 * p + k] = static_cast<T>(out[k]);
        }
      }
    });
  }
};

}  // namespace

PX_Status* RegisterImageColorFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  namespace sig = sdk::sig;
  const std::vector<PX_DataType> adjust = {PX_DT_HALF, PX_DT_FLOAT};
  PX_Status* s = nullptr;
  if ((s = sdk::RegisterKernel<ColorspaceKernel<true>>(info, registrar, sig::kRGBToHSV,
                                                       {sdk::FloatTypes()})) ||
      (s = sdk::RegisterKernel<ColorspaceKernel<false>>(info, registrar, sig::kHSVToRGB,
                                                        {sdk::FloatTypes()})) ||
      (s = sdk::RegisterKernel<AdjustKernel<Adjust::kContrast>>(info, registrar,
                                                                sig::kAdjustContrastv2, {adjust})) ||
      (s = sdk::RegisterKernel<AdjustKernel<Adjust::kSaturation>>(
           info, registrar, sig::kAdjustSaturation, {adjust})) ||
      (s = sdk::RegisterKernel<AdjustKernel<Adjust::kHue>>(info, registrar, sig::kAdjustHue,
                                                           {adjust}))) {
    return s;
  }
  return nullptr;
}

}  // namespace plexus::cpu

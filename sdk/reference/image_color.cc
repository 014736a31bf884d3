// Reference kernels: the colour family (see reference_kernels.h): RGBToHSV,
// HSVToRGB, AdjustContrastv2, AdjustSaturation and AdjustHue, one pixel at a
// time with TensorFlow's arithmetic (plexus/sdk/image_color.h). The
// adjustments compute in float, as TensorFlow's CPU kernels do; half images
// are converted to float and the results rounded back.
#include <cstdint>
#include <vector>

#include "plexus/sdk/image_color.h"
#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

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
      const int64_t n = s.images * s.pixels * s.channels;
      std::vector<float> in(static_cast<size_t>(n)), out(static_cast<size_t>(n));
      for (int64_t k = 0; k < n; ++k) in[k] = static_cast<float>(x[k]);
      if constexpr (kAdjust == Adjust::kContrast) {
        const int64_t image = s.pixels * s.channels;
        std::vector<float> scratch(static_cast<size_t>(image)), means(static_cast<size_t>(s.channels));
        for (int64_t i = 0; i < s.images; ++i) {
          const float* src = in.data() + i * image;
          sdk::ContrastMeans(src, s.pixels, s.channels, scratch.data(), means.data());
          for (int64_t k = 0; k < image; ++k) {
            const float mean = means[k % s.channels];
            out[i * image + k] = mean + factor * (src[k] - mean);
          }
        }
      } else {
        for (int64_t k = 0; k < n; k += 3) {
          if constexpr (kAdjust == Adjust::kSaturation) {
            sdk::AdjustSaturationPixel(in[k], in[k + 1], in[k + 2], factor, &out[k]);
          } else {
            sdk::AdjustHuePixel(in[k], in[k + 1], in[k + 2], factor, &out[k]);
          }
        }
      }
      for (int64_t k = 0; k < n; ++k) y[k] = static_cast<T>(out[k]);
    });
  }
};

}  // namespace

PX_Status* RegisterImageColorKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
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

}  // namespace plexus::reference

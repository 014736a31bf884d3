// TensorFlow's colour adjustments, pixel by pixel, to the rounding its CPU
// kernels use; shared by the cpu and reference plugins and usable by a
// vendor's.
//
// - RGBToHSV / HSVToRGB: TensorFlow evaluates them as Eigen expressions in
//   the image type, so half and bfloat16 round after every operation;
//   RgbToHsv<T> and HsvToRgb<T> do the same (float and double: plain).
// - AdjustSaturation and AdjustHue: TensorFlow's float kernels (their own
//   HSV conversions, with H in [0, 6) for the hue); other types are
//   converted to float and back.
// - AdjustContrastv2: each channel's mean over the image, summed by
//   repeatedly folding the image in half as TensorFlow does, then
//   mean + factor * (x - mean).
// Conversions of NaN to int follow x86 (INT32_MIN), so NaN pixels come out
// as TensorFlow's do.
#ifndef PLEXUS_SDK_IMAGE_COLOR_H_
#define PLEXUS_SDK_IMAGE_COLOR_H_

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "plexus/sdk/image_transform.h"
#include "plexus/sdk/kernel.h"

namespace plexus::sdk {

// A value of T's compute type rounded to T (a no-op for float and double).
template <typename T>
inline ComputeType<T> RoundTo(ComputeType<T> v) {
  if constexpr (std::is_same_v<ComputeType<T>, T>) {
    return v;
  } else {
    return static_cast<ComputeType<T>>(static_cast<T>(v));
  }
}

// One pixel, rgb -> hsv (H in [0, 1)), each operation rounded to T.
template <typename T>
void RgbToHsv(const T* rgb, T* hsv) {
  using C = ComputeType<T>;
  auto r = [](C v) { return RoundTo<T>(v); };
  const C red = static_cast<C>(rgb[0]), green = static_cast<C>(rgb[1]), blue = static_cast<C>(rgb[2]);
  const C value = std::max(std::max(red, green), blue);
  const C range = r(value - std::min(std::min(red, green), blue));
  const C saturation = value > C(0) ? r(range / value) : C(0);
  const C norm = r(r(C(1) / range) * r(C(1) / C(6)));
  C hue;
  if (red == value) {
    hue = r(norm * r(green - blue));
  } else if (green == value) {
    hue = r(r(norm * r(blue - red)) + r(C(2) / C(6)));
  } else {
    hue = r(r(norm * r(red - green)) + r(C(4) / C(6)));
  }
  if (!(range > C(0))) hue = C(0);
  if (hue < C(0)) hue = r(hue + C(1));
  hsv[0] = static_cast<T>(hue);
  hsv[1] = static_cast<T>(saturation);
  hsv[2] = static_cast<T>(value);
}

// One pixel, hsv -> rgb, each operation rounded to T.
template <typename T>
void HsvToRgb(const T* hsv, T* rgb) {
  using C = ComputeType<T>;
  auto r = [](C v) { return RoundTo<T>(v); };
  auto clamp01 = [](C v) { return std::min(std::max(v, C(0)), C(1)); };
  const C hue = static_cast<C>(hsv[0]), saturation = static_cast<C>(hsv[1]),
          value = static_cast<C>(hsv[2]);
  const C dh = r(hue * C(6));
  const C dr = clamp01(r(std::abs(r(dh - C(3))) - C(1)));
  const C dg = clamp01(r(-std::abs(r(dh - C(2))) + C(2)));
  const C db = clamp01(r(-std::abs(r(dh - C(4))) + C(2)));
  const C one_s = r(-saturation + C(1));
  rgb[0] = static_cast<T>(r(r(one_s + r(saturation * dr)) * value));
  rgb[1] = static_cast<T>(r(r(one_s + r(saturation * dg)) * value));
  rgb[2] = static_cast<T>(r(r(one_s + r(saturation * db)) * value));
}

// static_cast<int>(float) as on x86 (INT32_MIN for NaN and out of range).
inline int FloatToIntLikeX86(float v) { return TruncateToInt32(v); }

// AdjustSaturation's float pixel: to HSV, saturation scaled and clamped to
// [0, 1], back to RGB.
inline void AdjustSaturationPixel(float red, float green, float blue, float scale, float* out) {
  const float v = std::max(red, std::max(green, blue));
  const float range = v - std::min(red, std::min(green, blue));
  float s = v > 0 ? range / v : 0;
  const float norm = 1.0f / (6.0f * range);
  float h;
  if (red == v) {
    h = norm * (green - blue);
  } else if (green == v) {
    h = static_cast<float>(norm * (blue - red) + 2.0 / 6.0);
  } else {
    h = static_cast<float>(norm * (red - green) + 4.0 / 6.0);
  }
  if (range <= 0.0) h = 0;
  if (h < 0.0) h = h + 1;
  s = std::min(1.0f, std::max(0.0f, s * scale));
  // Back to RGB (Wikipedia's HSV to RGB, as TensorFlow writes it).
  const float c = s * v;
  const float m = v - c;
  const float dh = h * 6;
  const int category = FloatToIntLikeX86(dh);
  float fmodu = dh;
  if (std::isfinite(fmodu)) {
    while (fmodu <= 0) fmodu += 2.0f;
    while (fmodu >= 2.0f) fmodu -= 2.0f;
  }
  const float x = c * (1 - std::abs(fmodu - 1));
  float rr = 0, gg = 0, bb = 0;
  switch (category) {
    case 0: rr = c; gg = x; break;
    case 1: rr = x; gg = c; break;
    case 2: gg = c; bb = x; break;
    case 3: gg = x; bb = c; break;
    case 4: rr = x; bb = c; break;
    case 5: rr = c; bb = x; break;
    default: break;
  }
  out[0] = rr + m;
  out[1] = gg + m;
  out[2] = bb + m;
}

// AdjustHue's float pixel: RGB to (hue in [0, 6), min, max), the hue
// shifted by delta * 6 and wrapped into [0, 6), back to RGB.
inline void AdjustHuePixel(float red, float green, float blue, float delta, float* out) {
  float v_max, v_mid, v_min;
  int category;
  if (red < green) {
    if (blue < red) {
      v_max = green, v_mid = red, v_min = blue, category = 1;
    } else if (blue > green) {
      v_max = blue, v_mid = green, v_min = red, category = 3;
    } else {
      v_max = green, v_mid = blue, v_min = red, category = 2;
    }
  } else {
    if (blue < green) {
      v_max = red, v_mid = green, v_min = blue, category = 0;
    } else if (blue > red) {
      v_max = blue, v_mid = red, v_min = green, category = 4;
    } else {
      v_max = red, v_mid = blue, v_min = green, category = 5;
    }
  }
  float h = 0;
  if (v_max != v_min) {
    const float ratio = (v_mid - v_min) / (v_max - v_min);
    h = static_cast<float>(category) + ((category & 1) == 0 ? ratio : 1 - ratio);
  }
  constexpr int kRange = 6;
  h += delta * kRange;
  if (std::isinf(h)) {  // an infinite delta: the stepping below would never end
    out[0] = out[1] = out[2] = std::numeric_limits<float>::quiet_NaN();
    return;
  }
  // TensorFlow steps by 6 (which never ends for a hue too large for a float
  // step): a huge hue is first brought near the range.
  if (std::isfinite(h) && std::abs(h) > 1e6f) h = std::fmod(h, 6.0f);
  while (h < 0) h += kRange;
  while (h >= kRange) h -= kRange;
  // Back to RGB.
  const int hc = FloatToIntLikeX86(h);
  float ratio = h - static_cast<float>(hc);
  if ((hc & 1) != 0) ratio = 1 - ratio;
  const float mid = v_min + ratio * (v_max - v_min);
  switch (hc) {
    case 0: out[0] = v_max, out[1] = mid, out[2] = v_min; break;
    case 1: out[0] = mid, out[1] = v_max, out[2] = v_min; break;
    case 2: out[0] = v_min, out[1] = v_max, out[2] = mid; break;
    case 3: out[0] = v_min, out[1] = mid, out[2] = v_max; break;
    case 4: out[0] = mid, out[1] = v_min, out[2] = v_max; break;
    default: out[0] = v_max, out[1] = v_min, out[2] = mid; break;
  }
}

// AdjustContrastv2: the mean of each channel over one image (pixels x
// channels floats), summed as TensorFlow folds the image: the second half
// added onto the first until one pixel is left. `scratch` holds pixels x
// channels floats.
inline void ContrastMeans(const float* image, int64_t pixels, int64_t channels, float* scratch,
                          float* means) {
  int64_t remaining = pixels;
  bool first = true;
  do {
    const int64_t right = remaining / 2, left = remaining - right;
    if (first) {
      for (int64_t k = 0; k < right * channels; ++k) {
        scratch[k] = image[left * channels + k] + image[k];
      }
      if (left > right) {
        std::copy_n(image + right * channels, channels, scratch + right * channels);
      }
    } else {
      for (int64_t k = 0; k < right * channels; ++k) scratch[k] += scratch[left * channels + k];
    }
    remaining = left;
    first = false;
  } while (remaining > 1);
  const float scaling = 1.0f / static_cast<float>(pixels);
  for (int64_t c = 0; c < channels; ++c) means[c] = scratch[c] * scaling;
}

// RGBToHSV/HSVToRGB's images, checked (rank >= 1, 3 channels as the last
// dimension): the number of pixels.
inline int64_t ColorPixelsOf(const Shape& shape) {
  PX_SDK_CHECK(!shape.empty(), "input must be at least 1D, got shape %s",
               ShapeString(shape).c_str());
  if (shape.back() != 3) {
    throw KernelError(PX_CODE_FAILED_PRECONDITION,
                      Format("input must have 3 channels but input only has %lld channels.",
                             static_cast<long long>(shape.back())));
  }
  return NumElements(shape) / 3;
}

// The [.., height, width, channels] images of an adjustment op, checked:
// rank >= 3 (and 3 channels when `rgb`), a scalar factor.
struct AdjustShape {
  int64_t images, pixels, channels;  // images of pixels x channels
};

inline AdjustShape AdjustShapeOf(const Shape& shape, const Shape& factor, const char* factor_name,
                                 bool rgb) {
  PX_SDK_CHECK(shape.size() >= 3, "input must be at least 3-D, got shape %s",
               ShapeString(shape).c_str());
  PX_SDK_CHECK(factor.empty(), "%s must be scalar: %s", factor_name, ShapeString(factor).c_str());
  const int64_t channels = shape.back();
  PX_SDK_CHECK(!rgb || channels == 3, "input must have 3 channels but instead has %lld channels.",
               static_cast<long long>(channels));
  const int64_t pixels = shape[shape.size() - 3] * shape[shape.size() - 2];
  const int64_t n = NumElements(shape);
  return AdjustShape{n == 0 ? 0 : n / (pixels * channels), pixels, channels};
}

}  // namespace plexus::sdk

#endif  // PLEXUS_SDK_IMAGE_COLOR_H_

// TensorFlow's ImageProjectiveTransformV2/V3 rules, to the float rounding its
// CPU kernel uses, shared by the cpu and reference plugins (and usable by a
// vendor's) so that every plugin samples the same source pixels and refuses
// the same inputs with the same messages.
//
// Output pixel (y, x) of image b is read from the input at
//   ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k),  k = c0 x + c1 y + 1
// with transform row [a0 a1 a2 b0 b1 b2 c0 c1] (one row for every image, or
// one per image); k == 0 gives the fill value. A source coordinate outside
// the image is mapped back by fill_mode (REFLECT: dcba|abcd|dcba, WRAP as
// TensorFlow's, which wraps by len after dividing by len - 1, NEAREST:
// clamped, CONSTANT: kept). NEAREST interpolation rounds half away from
// zero; BILINEAR blends the four neighbours in float; either reads
// fill_value for a neighbour outside the image (so a sample far outside is
// fill_value blended with itself, rounded as TensorFlow rounds it). The
// result is converted to the image type as a C++ cast on x86 does.
//
// Float-to-integer conversions follow x86's (truncation; NaN and values out
// of range become the lowest integer), so NaN and infinite coordinates
// sample what TensorFlow's CPU kernel samples.
#ifndef PLEXUS_SDK_IMAGE_TRANSFORM_H_
#define PLEXUS_SDK_IMAGE_TRANSFORM_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "plexus/sdk/kernel.h"

namespace plexus::sdk {

// x86's float to int64 conversion (cvttss2si): truncation toward zero, and
// INT64_MIN for NaN and for values outside the int64 range.
inline int64_t TruncateToInt64(float v) {
  constexpr float kLimit = 9223372036854775808.0f;  // 2^63
  if (!(v >= -kLimit && v < kLimit)) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

// The same to int32 (INT32_MIN for NaN and out of range).
inline int32_t TruncateToInt32(float v) {
  constexpr float kLimit = 2147483648.0f;  // 2^31
  if (!(v >= -kLimit && v < kLimit)) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(v);
}

// static_cast<T>(float) as TensorFlow's x86 build computes it: narrow
// integers through int32, int64 directly, floating types rounded.
template <typename T>
T FromFloatLikeX86(float v) {
  if constexpr (std::is_integral_v<T>) {
    if constexpr (sizeof(T) == 8) {
      return static_cast<T>(TruncateToInt64(v));
    } else {
      return static_cast<T>(TruncateToInt32(v));
    }
  } else {
    return static_cast<T>(v);
  }
}

// Two's-complement int64 product and sum (TensorFlow's arithmetic on
// coordinates that overflow wraps).
inline int64_t WrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

enum class FillMode { kReflect, kWrap, kConstant, kNearest };

// The interpolation and fill_mode attributes, checked.
struct ProjectiveMode {
  bool bilinear = true;
  FillMode fill = FillMode::kConstant;

  void Read(const Attrs& attrs) {
    const std::string interpolation = attrs.String("interpolation");
    PX_SDK_CHECK(interpolation == "NEAREST" || interpolation == "BILINEAR",
                 "interpolation must be NEAREST or BILINEAR, got '%s'", interpolation.c_str());
    bilinear = interpolation == "BILINEAR";
    const std::string mode = attrs.String("fill_mode", "CONSTANT");
    if (mode == "REFLECT") {
      fill = FillMode::kReflect;
    } else if (mode == "WRAP") {
      fill = FillMode::kWrap;
    } else if (mode == "CONSTANT") {
      fill = FillMode::kConstant;
    } else if (mode == "NEAREST") {
      fill = FillMode::kNearest;
    } else {
      PX_SDK_CHECK(false, "fill_mode must be REFLECT, WRAP, CONSTANT or NEAREST, got '%s'",
                   mode.c_str());
    }
  }
};

// std::clamp without its precondition: NaN stays NaN (Eigen's clamp).
inline float ClampCoordinate(float v, float hi) { return std::min(std::max(v, 0.0f), hi); }

// A source coordinate mapped into [0, len - 1] by the fill mode (CONSTANT
// leaves it where it is).
inline float MapCoordinate(FillMode mode, float in, int64_t len) {
  const float last = static_cast<float>(len - 1);
  switch (mode) {
    case FillMode::kReflect:
      if (in < 0) {
        if (len <= 1) {
          in = 0;
        } else {
          const int64_t sz2 = 2 * len;
          const float fsz2 = static_cast<float>(sz2);
          if (in < fsz2) in = static_cast<float>(WrapMul(sz2, TruncateToInt64(-in / fsz2))) + in;
          in = in < static_cast<float>(-len) ? in + fsz2 : -in - 1;
        }
      } else if (in > last) {
        if (len <= 1) {
          in = 0;
        } else {
          const int64_t sz2 = 2 * len;
          const float fsz2 = static_cast<float>(sz2);
          in -= static_cast<float>(WrapMul(sz2, TruncateToInt64(in / fsz2)));
          if (in >= static_cast<float>(len)) in = fsz2 - in - 1;
        }
      }
      return ClampCoordinate(in, last);
    case FillMode::kWrap:
      if (in < 0) {
        if (len <= 1) {
          in = 0;
        } else {
          const float sz = static_cast<float>(len - 1);
          const int64_t turns =
              static_cast<int64_t>(static_cast<uint64_t>(TruncateToInt64(-in / sz)) + 1);
          in += static_cast<float>(WrapMul(len, turns));
        }
      } else if (in > last) {
        if (len <= 1) {
          in = 0;
        } else {
          const float sz = static_cast<float>(len - 1);
          in -= static_cast<float>(WrapMul(len, TruncateToInt64(in / sz)));
        }
      }
      return ClampCoordinate(in, last);
    case FillMode::kNearest:
      return ClampCoordinate(in, last);
    case FillMode::kConstant:
      break;
  }
  return in;
}

// Where output pixel (y, x) samples: `fill` when it takes the fill value
// whatever the channel (a projection of 0).
struct ProjectiveSource {
  bool fill;
  float y, x;
};

inline ProjectiveSource ProjectiveSourceOf(const float* t, int64_t out_y, int64_t out_x,
                                           FillMode mode, int64_t in_h, int64_t in_w) {
  const float fx = static_cast<float>(out_x), fy = static_cast<float>(out_y);
  const float projection = t[6] * fx + t[7] * fy + 1.f;
  if (projection == 0) return ProjectiveSource{true, 0, 0};
  const float in_x = (t[0] * fx + t[1] * fy + t[2]) / projection;
  const float in_y = (t[3] * fx + t[4] * fy + t[5]) / projection;
  // Outside the image (CONSTANT only) the neighbours read the fill value:
  // a bilinear sample within a pixel of the border blends with it.
  return ProjectiveSource{false, MapCoordinate(mode, in_y, in_h), MapCoordinate(mode, in_x, in_w)};
}

// Channel c of the sample at `s` from one image (h x w x channels).
template <typename T>
T ProjectiveValue(const T* image, int64_t h, int64_t w, int64_t channels, int64_t c,
                  const ProjectiveSource& s, bool bilinear, T fill) {
  if (s.fill) return fill;
  auto read = [&](int64_t y, int64_t x) -> T {
    return (0 <= y && y < h && 0 <= x && x < w) ? image[(y * w + x) * channels + c] : fill;
  };
  auto as_float = [](T v) { return static_cast<float>(static_cast<ComputeType<T>>(v)); };
  if (!bilinear) return read(TruncateToInt64(std::round(s.y)), TruncateToInt64(std::round(s.x)));
  const float y_floor = std::floor(s.y), x_floor = std::floor(s.x);
  const float y_ceil = y_floor + 1, x_ceil = x_floor + 1;
  const int64_t y0 = TruncateToInt64(y_floor), y1 = TruncateToInt64(y_ceil);
  const int64_t x0 = TruncateToInt64(x_floor), x1 = TruncateToInt64(x_ceil);
  const float top = (x_ceil - s.x) * as_float(read(y0, x0)) + (s.x - x_floor) * as_float(read(y0, x1));
  const float bottom =
      (x_ceil - s.x) * as_float(read(y1, x0)) + (s.x - x_floor) * as_float(read(y1, x1));
  return FromFloatLikeX86<T>((y_ceil - s.y) * top + (s.y - y_floor) * bottom);
}

// The inputs of ImageProjectiveTransformV2/V3, checked: images [batch, h,
// w, channels], transforms [1 or batch, 8] floats, output_shape (values
// [out_h, out_w]).
struct ProjectiveShape {
  int64_t batch, in_h, in_w, channels, out_h, out_w;
  bool shared_transform;  // one transform row for every image
};

inline ProjectiveShape ProjectiveShapeOf(const Shape& images, const Shape& transforms,
                                         const Shape& output_shape,
                                         const std::vector<int64_t>& size) {
  PX_SDK_CHECK(images.size() == 4, "Input images must have rank 4, got %s",
               ShapeString(images).c_str());
  PX_SDK_CHECK(transforms.size() == 2 && (transforms[0] == images[0] || transforms[0] == 1) &&
                   transforms[1] == 8,
               "Input transform should be num_images x 8 or 1 x 8, got %s for %lld images",
               ShapeString(transforms).c_str(), static_cast<long long>(images[0]));
  PX_SDK_CHECK(output_shape.size() == 1, "output shape must be 1-dimensional, got %s",
               ShapeString(output_shape).c_str());
  PX_SDK_CHECK(size.size() == 2, "output shape must have two elements, got %s",
               ShapeString(output_shape).c_str());
  PX_SDK_CHECK(size[0] > 0 && size[1] > 0, "output dimensions must be positive, got [%lld, %lld]",
               static_cast<long long>(size[0]), static_cast<long long>(size[1]));
  return ProjectiveShape{images[0], images[1], images[2], images[3], size[0], size[1],
                         transforms[0] == 1};
}

}  // namespace plexus::sdk

#endif  // PLEXUS_SDK_IMAGE_TRANSFORM_H_

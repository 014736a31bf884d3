// Shared helpers of the PoCL tests of the XPU plugin's linear-algebra,
// convolution and data-movement kernels (pocl_linalg_test.cc,
// pocl_conv_test.cc, pocl_movement_test.cc): the floating dtypes as the
// kernels store them, and random test data.
#ifndef PLEXUS_TESTS_XPU_POCL_XPU_TEST_UTIL_H_
#define PLEXUS_TESTS_XPU_POCL_XPU_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "pocl_harness.h"

namespace plexus::xpu::test {

// The floating dtypes of the kernels: the kernel-name suffix, the element
// size, and conversions from float (rounding as the kernels store) and back.
enum class FloatType { kF32, kF16, kBF16 };

inline const char* Suffix(FloatType t) {
  switch (t) {
    case FloatType::kF32: return "f32";
    case FloatType::kF16: return "f16";
    default: return "bf16";
  }
}

inline size_t ElementSize(FloatType t) { return t == FloatType::kF32 ? 4 : 2; }

inline uint16_t FloatToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

inline float Bf16ToFloat(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// What a tensor of dtype t can hold of `value`.
inline float RoundTo(FloatType t, float value) {
  switch (t) {
    case FloatType::kF32: return value;
    case FloatType::kF16: return RoundToHalf(value);
    default: return Bf16ToFloat(FloatToBf16(value));
  }
}

// The relative rounding error of storing one result in dtype t.
inline double StoreEpsilon(FloatType t) {
  switch (t) {
    case FloatType::kF32: return 6e-8;
    case FloatType::kF16: return 4.9e-4;  // 2^-11
    default: return 3.9e-3;               // 2^-8
  }
}

// Device buffer of `values` stored as dtype t.
inline ClBuffer UploadAs(PoclHarness* h, FloatType t, const std::vector<float>& values) {
  if (t == FloatType::kF32) return h->Upload(values);
  std::vector<uint16_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    bits[i] = t == FloatType::kF16 ? FloatToHalf(values[i]) : FloatToBf16(values[i]);
  }
  return h->Upload(bits);
}

// `count` elements of dtype t from a device buffer, as floats.
inline std::vector<float> DownloadAs(PoclHarness* h, FloatType t, const ClBuffer& buffer,
                                     size_t count) {
  if (t == FloatType::kF32) return h->Download<float>(buffer, count);
  const std::vector<uint16_t> bits = h->Download<uint16_t>(buffer, count);
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) {
    out[i] = t == FloatType::kF16 ? HalfToFloat(bits[i]) : Bf16ToFloat(bits[i]);
  }
  return out;
}

// `count` uniform values in [lo, hi), already rounded to dtype t (so the
// double-precision expectation sees exactly what the kernel reads).
inline std::vector<float> RandomValues(std::mt19937& rng, FloatType t, size_t count,
                                       float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(count);
  for (float& x : v) x = RoundTo(t, dist(rng));
  return v;
}

inline const std::vector<FloatType>& AllFloatTypes() {
  static const std::vector<FloatType> types = {FloatType::kF32, FloatType::kF16,
                                               FloatType::kBF16};
  return types;
}

inline std::string Name(FloatType t) { return Suffix(t); }

}  // namespace plexus::xpu::test

#endif  // PLEXUS_TESTS_XPU_POCL_XPU_TEST_UTIL_H_

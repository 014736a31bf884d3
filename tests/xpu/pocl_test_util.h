// Helpers shared by the PoCL kernel tests: element encodings of the float
// types (f32, f16, bf16), tolerances, random data and NumPy-broadcast
// indexing for the expected values (computed in double precision here rather
// than through sdk/reference: the reference kernels run behind the plugin
// ABI on host tensors, while these tests drive single OpenCL kernels with
// their raw arguments, so plain loops are simpler and as independent).
#ifndef PLEXUS_TESTS_XPU_POCL_TEST_UTIL_H_
#define PLEXUS_TESTS_XPU_POCL_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plexus/sdk/float16.h"
#include "pocl_harness.h"

namespace plexus::xpu::test {

enum class FloatType { kF32, kF16, kBF16 };
inline const char* Suffix(FloatType t) {
  return t == FloatType::kF32 ? "f32" : t == FloatType::kF16 ? "f16" : "bf16";
}
inline size_t ElementSize(FloatType t) { return t == FloatType::kF32 ? 4 : 2; }

// The value `v` becomes when stored as `t`.
inline float Stored(float v, FloatType t) {
  switch (t) {
    case FloatType::kF16: return static_cast<float>(sdk::half(v));
    case FloatType::kBF16: return static_cast<float>(sdk::bfloat16(v));
    default: return v;
  }
}

inline std::vector<unsigned char> Encode(const std::vector<float>& values, FloatType t) {
  std::vector<unsigned char> bytes(values.size() * ElementSize(t));
  for (size_t i = 0; i < values.size(); ++i) {
    if (t == FloatType::kF32) {
      std::memcpy(&bytes[i * 4], &values[i], 4);
    } else {
      uint16_t bits = t == FloatType::kF16 ? sdk::half(values[i]).bits : sdk::bfloat16(values[i]).bits;
      std::memcpy(&bytes[i * 2], &bits, 2);
    }
  }
  return bytes;
}

inline std::vector<float> Decode(const std::vector<unsigned char>& bytes, FloatType t) {
  const size_t n = bytes.size() / ElementSize(t);
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) {
    if (t == FloatType::kF32) {
      std::memcpy(&values[i], &bytes[i * 4], 4);
    } else {
      uint16_t bits;
      std::memcpy(&bits, &bytes[i * 2], 2);
      if (t == FloatType::kF16) {
        sdk::half h;
        h.bits = bits;
        values[i] = h;
      } else {
        sdk::bfloat16 b;
        b.bits = bits;
        values[i] = b;
      }
    }
  }
  return values;
}

inline ClBuffer UploadFloats(PoclHarness* h, const std::vector<float>& values, FloatType t) {
  return h->Upload(Encode(values, t));
}
inline std::vector<float> DownloadFloats(PoclHarness* h, const ClBuffer& buffer, size_t n,
                                         FloatType t) {
  return Decode(h->Download<unsigned char>(buffer, n * ElementSize(t)), t);
}

// Tolerances: float32 a few ulp of the libm result computed in float (PoCL's
// built-ins are within 4 ulp); the 16-bit types: one unit in the last place
// of the stored result (the kernels compute in float and round once).
struct Tolerance {
  double rel;
  double abs;
};
inline Tolerance DefaultTolerance(FloatType t) {
  switch (t) {
    case FloatType::kF16: return {2e-3, 1e-3};
    case FloatType::kBF16: return {1.6e-2, 1e-2};
    default: return {2e-6, 1e-6};
  }
}

// Whether `got` matches `expected` (both NaN, the same infinity, or close).
inline bool Close(double got, double expected, Tolerance tol) {
  if (std::isnan(expected)) return std::isnan(got);
  if (std::isinf(expected)) return got == expected;
  return std::fabs(got - expected) <= tol.abs + tol.rel * std::fabs(expected);
}

inline std::vector<float> RandomFloats(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

inline int64_t NumElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// The flat index into an input of `shape` of output element `i` of
// `out_shape` under NumPy broadcasting.
inline int64_t BroadcastIndex(const std::vector<int64_t>& out_shape,
                              const std::vector<int64_t>& shape, int64_t i) {
  int64_t index = 0, stride = 1;
  for (int d = static_cast<int>(out_shape.size()) - 1; d >= 0; --d) {
    const int64_t c = i % out_shape[d];
    i /= out_shape[d];
    const int sd = d - static_cast<int>(out_shape.size() - shape.size());
    if (sd >= 0) {
      if (shape[sd] != 1) index += c * stride;
      stride *= shape[sd];
    }
  }
  return index;
}

}  // namespace plexus::xpu::test

#endif  // PLEXUS_TESTS_XPU_POCL_TEST_UTIL_H_

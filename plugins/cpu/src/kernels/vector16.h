// 16-float GCC vectors for the cpu plugin's direct float kernels (the
// depthwise convolution in depthwise_conv.cc, the one-channel convolution in
// conv_small_depth.cc), the part of a fused epilogue they run on the
// registers before storing. vector_isa.h chooses the instruction set. Everything here is always inlined, so it takes
// the instruction set of the function it is inlined into (those kernels
// compile their loops for AVX-512, AVX2 + FMA and the baseline, and choose
// one at run time); the compiler splits a vector into the target's
// registers.
#ifndef PLEXUS_PLUGINS_CPU_KERNELS_VECTOR16_H_
#define PLEXUS_PLUGINS_CPU_KERNELS_VECTOR16_H_

#include <cstdint>
#include <cstring>

#include "kernels/vector_isa.h"
#include "plexus/sdk/fused.h"

namespace plexus::cpu {

#define PX_V16_INLINE inline __attribute__((always_inline))

typedef float V16 __attribute__((vector_size(64)));

PX_V16_INLINE V16 LoadV16(const float* p) {
  V16 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
PX_V16_INLINE void StoreV16(float* p, V16 v) { std::memcpy(p, &v, sizeof(v)); }

// The per-channel step (a bias, or inference batch norm) and a
// piecewise-linear activation (Relu, Relu6, LeakyRelu), in the order and
// with the expressions of fused_epilogue.h's ChannelStep. Other activations
// are left to run over the output afterwards (IsPiecewiseLinear).
struct RegisterEpilogue {
  const float* shift = nullptr;   // the bias, or the batch norm's offset; null: none
  const float* mean = nullptr;    // batch norm (with factor); null: a bias
  const float* factor = nullptr;  // batch norm: scale / sqrt(variance + epsilon)
  sdk::FusedActivation act = sdk::FusedActivation::kNone;
  float alpha = 0.2f;

  // Whether ApplyEach and Apply do the whole activation.
  static bool IsPiecewiseLinear(sdk::FusedActivation act) {
    return act == sdk::FusedActivation::kNone || act == sdk::FusedActivation::kRelu ||
           act == sdk::FusedActivation::kRelu6 || act == sdk::FusedActivation::kLeakyRelu;
  }

  // Apply on N vectors of the same channels [c, c + 16), v[0], v[S],
  // v[2 * S] and so on, with each choice made once for all of them (a
  // kernel's block of pixels: the branches stay out of the vector code).
  template <int N, int S>
  PX_V16_INLINE void ApplyEach(V16* v, int64_t c) const {
    if (mean != nullptr) {
      const V16 m = LoadV16(mean + c), f = LoadV16(factor + c), s = LoadV16(shift + c);
      for (int i = 0; i < N; ++i) v[i * S] = (v[i * S] - m) * f + s;
    } else if (shift != nullptr) {
      const V16 s = LoadV16(shift + c);
      for (int i = 0; i < N; ++i) v[i * S] += s;
    }
    const V16 zero = {};
    if (act == sdk::FusedActivation::kRelu) {
      for (int i = 0; i < N; ++i) v[i * S] = v[i * S] < zero ? zero : v[i * S];
    } else if (act == sdk::FusedActivation::kRelu6) {
      const V16 six = zero + 6.0f;
      for (int i = 0; i < N; ++i) v[i * S] = v[i * S] < zero ? zero : (v[i * S] > six ? six : v[i * S]);
    } else if (act == sdk::FusedActivation::kLeakyRelu) {
      for (int i = 0; i < N; ++i) v[i * S] = v[i * S] < zero ? v[i * S] * alpha : v[i * S];
    }
  }

  // Channel c.
  PX_V16_INLINE float Apply(float v, int64_t c) const {
    if (mean != nullptr) {
      v = (v - mean[c]) * factor[c] + shift[c];
    } else if (shift != nullptr) {
      v += shift[c];
    }
    switch (act) {
      case sdk::FusedActivation::kRelu: return v < 0.f ? 0.f : v;
      case sdk::FusedActivation::kRelu6: return v < 0.f ? 0.f : (v > 6.f ? 6.f : v);
      case sdk::FusedActivation::kLeakyRelu: return v < 0.f ? v * alpha : v;
      default: return v;
    }
  }
};

}  // namespace plexus::cpu

#endif  // PLEXUS_PLUGINS_CPU_KERNELS_VECTOR16_H_

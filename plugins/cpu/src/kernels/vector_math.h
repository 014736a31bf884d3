// Float exp, log, expm1, tanh and sigmoid over arrays, through SLEEF's
// vectorized functions (Debian's libsleef: the 1.0-ULP variants, tanh's
// 3.5-ULP one, twice as fast and within TensorFlow's own error) for the widest
// vectors the CPU has: AVX-512, AVX2 with FMA, or SSE2, chosen once at run
// time. The plugin's other code is built for baseline x86-64, where Eigen's
// exp takes about 4 ns an element; these take 0.3-1 ns. Used by the float
// unary kernels, softmax and the fused elementwise kernel (so a fused and
// an unfused graph give the same values).
//
// Available() is false when the plugin was built without SLEEF or for
// another architecture; callers then keep their Eigen code.
#ifndef PLEXUS_PLUGINS_CPU_KERNELS_VECTOR_MATH_H_
#define PLEXUS_PLUGINS_CPU_KERNELS_VECTOR_MATH_H_

#include <cstdint>

namespace plexus::cpu::vmath {

enum class Fn { kExp, kLog, kExpm1, kTanh, kSigmoid };

bool Available();
// y[i] = fn(x[i]) for i < n; x and y may be the same array.
void Apply(Fn fn, const float* x, float* y, int64_t n);

// The per-width loops, in translation units built for those instruction
// sets (vector_math_avx512.cc, vector_math_avx2.cc, vector_math.cc); only
// Apply calls them, after checking the CPU.
void ApplyAvx512(Fn fn, const float* x, float* y, int64_t n);
void ApplyAvx2(Fn fn, const float* x, float* y, int64_t n);
void ApplySse2(Fn fn, const float* x, float* y, int64_t n);

}  // namespace plexus::cpu::vmath

#endif  // PLEXUS_PLUGINS_CPU_KERNELS_VECTOR_MATH_H_

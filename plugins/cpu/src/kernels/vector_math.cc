// vmath (vector_math.h): the CPU check, and the SSE2 loop that every x86-64
// CPU runs (this file is built for the baseline, like the rest of the
// plugin).
#include "kernels/vector_math.h"

#if defined(PX_CPU_HAVE_SLEEF)
#include <immintrin.h>
#include <sleef.h>
#endif

namespace plexus::cpu::vmath {

#if defined(PX_CPU_HAVE_SLEEF)
namespace {

enum class Width { kSse2, kAvx2, kAvx512 };

Width Detect() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return Width::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Width::kAvx2;
  return Width::kSse2;
}

const Width kWidth = Detect();

inline __m128 Eval(Fn fn, __m128 v) {
  switch (fn) {
    case Fn::kExp: return Sleef_expf4_u10sse2(v);
    case Fn::kLog: return Sleef_logf4_u10sse2(v);
    case Fn::kExpm1: return Sleef_expm1f4_u10sse2(v);
    case Fn::kTanh: return Sleef_tanhf4_u35sse2(v);
    case Fn::kSigmoid: {
      // 1 / (1 + exp(-x)): 0 for large negative x (exp overflows to inf).
      const __m128 one = _mm_set1_ps(1.0f);
      const auto e = Sleef_expf4_u10sse2(_mm_sub_ps(_mm_set1_ps(0.0f), v));
      return _mm_div_ps(one, _mm_add_ps(one, e));
    }
  }
  return v;
}

}  // namespace

void ApplySse2(Fn fn, const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(y + i, Eval(fn, _mm_loadu_ps(x + i)));
  if (i < n) {
    float in[4] = {0}, out[4];
    for (int64_t k = 0; k < n - i; ++k) in[k] = x[i + k];
    _mm_storeu_ps(out, Eval(fn, _mm_loadu_ps(in)));
    for (int64_t k = 0; k < n - i; ++k) y[i + k] = out[k];
  }
}

bool Available() { return true; }

void Apply(Fn fn, const float* x, float* y, int64_t n) {
  switch (kWidth) {
    case Width::kAvx512: return ApplyAvx512(fn, x, y, n);
    case Width::kAvx2: return ApplyAvx2(fn, x, y, n);
    case Width::kSse2: return ApplySse2(fn, x, y, n);
  }
}

#else  // !PX_CPU_HAVE_SLEEF

bool Available() { return false; }
void Apply(Fn, const float*, float*, int64_t) {}

#endif  // PX_CPU_HAVE_SLEEF

}  // namespace plexus::cpu::vmath

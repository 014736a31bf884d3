// vmath::ApplyAvx512 (vector_math.h): SLEEF's 16-float functions. This file is
// built with -mavx512f -mfma and must stay free of templates and inline library code
// that other files also instantiate (they could be merged into code that
// runs on CPUs without these instructions): only intrinsics and SLEEF.
#include <immintrin.h>
#include <sleef.h>

#include "kernels/vector_math.h"

namespace plexus::cpu::vmath {
namespace {

inline __m512 Eval(Fn fn, __m512 v) {
  switch (fn) {
    case Fn::kExp: return Sleef_expf16_u10avx512f(v);
    case Fn::kLog: return Sleef_logf16_u10avx512f(v);
    case Fn::kExpm1: return Sleef_expm1f16_u10avx512f(v);
    case Fn::kTanh: return Sleef_tanhf16_u35avx512f(v);
    case Fn::kSigmoid: {
      // 1 / (1 + exp(-x)): 0 for large negative x (exp overflows to inf).
      const __m512 one = _mm512_set1_ps(1.0f);
      const auto e = Sleef_expf16_u10avx512f(_mm512_sub_ps(_mm512_set1_ps(0.0f), v));
      return _mm512_div_ps(one, _mm512_add_ps(one, e));
    }
  }
  return v;
}

}  // namespace

void ApplyAvx512(Fn fn, const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, Eval(fn, _mm512_loadu_ps(x + i)));
  if (i < n) {
    float in[16] = {0}, out[16];
    for (int64_t k = 0; k < n - i; ++k) in[k] = x[i + k];
    _mm512_storeu_ps(out, Eval(fn, _mm512_loadu_ps(in)));
    for (int64_t k = 0; k < n - i; ++k) y[i + k] = out[k];
  }
}

}  // namespace plexus::cpu::vmath

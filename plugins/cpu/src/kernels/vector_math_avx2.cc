// vmath::ApplyAvx2 (vector_math.h): SLEEF's 8-float functions. This file is
// built with -mavx2 -mfma and must stay free of templates and inline library code
// that other files also instantiate (they could be merged into code that
// runs on CPUs without these instructions): only intrinsics and SLEEF.
#include <immintrin.h>
#include <sleef.h>

#include "kernels/vector_math.h"

namespace plexus::cpu::vmath {
namespace {

inline __m256 Eval(Fn fn, __m256 v) {
  switch (fn) {
    case Fn::kExp: return Sleef_expf8_u10avx2(v);
    case Fn::kLog: return Sleef_logf8_u10avx2(v);
    case Fn::kExpm1: return Sleef_expm1f8_u10avx2(v);
    case Fn::kTanh: return Sleef_tanhf8_u35avx2(v);
    case Fn::kSigmoid: {
      // 1 / (1 + exp(-x)): 0 for large negative x (exp overflows to inf).
      const __m256 one = _mm256_set1_ps(1.0f);
      const auto e = Sleef_expf8_u10avx2(_mm256_sub_ps(_mm256_set1_ps(0.0f), v));
      return _mm256_div_ps(one, _mm256_add_ps(one, e));
    }
  }
  return v;
}

}  // namespace

void ApplyAvx2(Fn fn, const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, Eval(fn, _mm256_loadu_ps(x + i)));
  if (i < n) {
    float in[8] = {0}, out[8];
    for (int64_t k = 0; k < n - i; ++k) in[k] = x[i + k];
    _mm256_storeu_ps(out, Eval(fn, _mm256_loadu_ps(in)));
    for (int64_t k = 0; k < n - i; ++k) y[i + k] = out[k];
  }
}

}  // namespace plexus::cpu::vmath

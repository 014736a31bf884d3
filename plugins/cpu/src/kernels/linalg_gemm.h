// Dense row-major matrix products for the cpu kernels, Eigen-free to
// include. float (and double) go to the GEMM library chosen at configure
// time when there is one (PX_CPU_GEMM_*, see plugins/cpu/README.md), else to
// Eigen; int32 and int64 are Eigen products; each of these has its own TU
// (linalg_gemm_<dtype>.cc). The 16-bit floats compute in float and the
// small integers in int32 (linalg_gemm.cc).
#ifndef PLEXUS_PLUGINS_CPU_KERNELS_LINALG_GEMM_H_
#define PLEXUS_PLUGINS_CPU_KERNELS_LINALG_GEMM_H_

#include <cstdint>

#include "plexus/sdk/kernel.h"

namespace plexus::cpu {

// c[m, n] = op(a) * op(b), every matrix dense and row-major: a is [m, k]
// ([k, m] when transpose_a), b is [k, n] ([n, k] when transpose_b). c may
// share memory with an input (the input is then copied first); k == 0
// gives zeros.
template <typename T>
void Gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, const T* a,
          const T* b, T* c);

// c = op(a) * op(b) on float matrices with leading dimensions (row-major:
// element (i, j) of a is a[i * lda + j], of [m, k], or of [k, m] when
// transpose_a), for views into larger tensors; c must not overlap a or b,
// and k > 0. HaveStridedGemm() is false when the build has no GEMM library
// that takes leading dimensions (then use Gemm on contiguous copies);
// GemmStrided returns false (nothing written) then, or on arguments the
// library refuses.
bool HaveStridedGemm();
bool GemmStrided(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, const float* a,
                 int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc);

// Every supported type is an explicit specialization, defined in
// linalg_gemm_<dtype>.cc (float, double, int32, int64) or linalg_gemm.cc.
#define PX_CPU_SPECIALIZE_GEMM(T) \
  template <>                     \
  void Gemm<T>(bool, bool, int64_t, int64_t, int64_t, const T*, const T*, T*)
PX_CPU_SPECIALIZE_GEMM(float);
PX_CPU_SPECIALIZE_GEMM(double);
PX_CPU_SPECIALIZE_GEMM(int32_t);
PX_CPU_SPECIALIZE_GEMM(int64_t);
PX_CPU_SPECIALIZE_GEMM(sdk::half);
PX_CPU_SPECIALIZE_GEMM(sdk::bfloat16);
PX_CPU_SPECIALIZE_GEMM(int16_t);
PX_CPU_SPECIALIZE_GEMM(int8_t);
PX_CPU_SPECIALIZE_GEMM(uint8_t);

}  // namespace plexus::cpu

#endif  // PLEXUS_PLUGINS_CPU_KERNELS_LINALG_GEMM_H_

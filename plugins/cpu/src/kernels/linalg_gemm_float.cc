// Gemm<float>: the GEMM library chosen at configure time (PX_CPU_SGEMM_ONEDNN
// or PX_CPU_SGEMM_OPENBLAS, see plugins/cpu/README.md for the measurements
// behind the choice), else Eigen. In a TU of its own to keep Eigen compile
// times short.
#include <climits>

#include "kernels/linalg_gemm_impl.h"

#if defined(PX_CPU_SGEMM_ONEDNN)
#include <oneapi/dnnl/dnnl.h>
#elif defined(PX_CPU_SGEMM_OPENBLAS)
#include <cblas.h>
#endif

namespace plexus::cpu {

template <>
void Gemm<float>(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
                 const float* a, const float* b, float* c) {
  PreparedGemm(m, n, k, a, b, c, [&](const float* pa, const float* pb) {
    const int64_t lda = transpose_a ? m : k, ldb = transpose_b ? k : n;
#if defined(PX_CPU_SGEMM_ONEDNN)
    // Row-major like ours; beta = 0 never reads c.
    if (dnnl_sgemm(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', m, n, k, 1.0f, pa, lda, pb,
                   ldb, 0.0f, c, n) == dnnl_success) {
      return;
    }
    // It fails only on arguments it cannot take (or out of memory): Eigen
    // then does the product.
#elif defined(PX_CPU_SGEMM_OPENBLAS)
    // CBLAS takes int sizes (Debian's OpenBLAS is LP64): Eigen does larger.
    if (m <= INT_MAX && n <= INT_MAX && k <= INT_MAX) {
      cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans,
                  transpose_b ? CblasTrans : CblasNoTrans, static_cast<int>(m),
                  static_cast<int>(n), static_cast<int>(k), 1.0f, pa, static_cast<int>(lda), pb,
                  static_cast<int>(ldb), 0.0f, c, static_cast<int>(n));
      return;
    }
#else
    (void)lda;
    (void)ldb;
#endif
    EigenProduct(transpose_a, transpose_b, m, n, k, pa, pb, c);
  });
}

bool HaveStridedGemm() {
#if defined(PX_CPU_SGEMM_ONEDNN) || defined(PX_CPU_SGEMM_OPENBLAS)
  return true;
#else
  return false;
#endif
}

bool GemmStrided(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, const float* a,
                 int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
#if defined(PX_CPU_SGEMM_ONEDNN)
  return dnnl_sgemm(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c,
                    ldc) == dnnl_success;
#elif defined(PX_CPU_SGEMM_OPENBLAS)
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX) return false;
  cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans, transpose_b ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a, static_cast<int>(lda), b,
              static_cast<int>(ldb), 0.0f, c, static_cast<int>(ldc));
  return true;
#else
  (void)transpose_a, (void)transpose_b, (void)m, (void)n, (void)k, (void)a, (void)lda, (void)b, (void)ldb;
  (void)c, (void)ldc;
  return false;
#endif
}

}  // namespace plexus::cpu

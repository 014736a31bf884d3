// Gemm<double>: OpenBLAS's cblas_dgemm when the plugin is built with it
// (PX_CPU_DGEMM_OPENBLAS, see plugins/cpu/README.md), else Eigen. In a TU
// of its own to keep Eigen compile times short.
#include <climits>

#include "kernels/linalg_gemm_impl.h"

#if defined(PX_CPU_DGEMM_OPENBLAS)
#include <cblas.h>
#endif

namespace plexus::cpu {

template <>
void Gemm<double>(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
                  const double* a, const double* b, double* c) {
  PreparedGemm(m, n, k, a, b, c, [&](const double* pa, const double* pb) {
#if defined(PX_CPU_DGEMM_OPENBLAS)
    // CBLAS takes int sizes (Debian's OpenBLAS is LP64): Eigen does larger.
    if (m <= INT_MAX && n <= INT_MAX && k <= INT_MAX) {
      const int64_t lda = transpose_a ? m : k, ldb = transpose_b ? k : n;
      cblas_dgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans,
                  transpose_b ? CblasTrans : CblasNoTrans, static_cast<int>(m),
                  static_cast<int>(n), static_cast<int>(k), 1.0, pa, static_cast<int>(lda), pb,
                  static_cast<int>(ldb), 0.0, c, static_cast<int>(n));
      return;
    }
#endif
    EigenProduct(transpose_a, transpose_b, m, n, k, pa, pb, c);
  });
}

}  // namespace plexus::cpu

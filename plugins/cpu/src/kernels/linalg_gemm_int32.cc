// Gemm<int32_t>, an Eigen product in a TU of its own to keep Eigen compile times
// short.
#include "kernels/linalg_gemm_impl.h"

namespace plexus::cpu {

template <>
void Gemm<int32_t>(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
                   const int32_t* a, const int32_t* b, int32_t* c) {
  EigenGemm(transpose_a, transpose_b, m, n, k, a, b, c);
}

}  // namespace plexus::cpu

// Gemm<int32_t>, an Eigen product in a TU of its own to keep Eigen compile times
// short.
#include "kernels/linalg_gemm_impl.h"

namespace plexus::cpu {

template <>
void Gemm<int32_t>(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
                   const int32_t* a, const int32_t* b, int32_t* c) {
  // In uint32: the same bits as int32's wrapping product (TensorFlow's
  // result), where signed arithmetic would overflow (undefined behaviour).
  EigenGemm(transpose_a, transpose_b, m, n, k, reinterpret_cast<const uint32_t*>(a),
            reinterpret_cast<const uint32_t*>(b), reinterpret_cast<uint32_t*>(c));
}

}  // namespace plexus::cpu

// What the per-dtype Gemm TUs (linalg_gemm_<dtype>.cc) share: the cases
// every product leaves to us (empty output, k == 0, operands that share
// memory with the output) and the Eigen product.
#ifndef PLEXUS_PLUGINS_CPU_KERNELS_LINALG_GEMM_IMPL_H_
#define PLEXUS_PLUGINS_CPU_KERNELS_LINALG_GEMM_IMPL_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include "kernels/linalg_gemm.h"

namespace plexus::cpu {

// True when [x, x + x_size) and [y, y + y_size) share memory (compared as
// integers: < between unrelated pointers is unspecified).
template <typename T>
bool Overlaps(const T* x, int64_t x_size, const T* y, int64_t y_size) {
  const auto xb = reinterpret_cast<uintptr_t>(x);
  const auto yb = reinterpret_cast<uintptr_t>(y);
  return x_size > 0 && y_size > 0 && xb < yb + y_size * sizeof(T) &&
         yb < xb + x_size * sizeof(T);
}

// Calls product(a, b) to write c = op(a) * op(b) when there is something
// to multiply, with operands that do not share memory with c: an empty c is
// left alone, k == 0 gives zeros, and an operand that overlaps c (the ABI
// does not promise that an output never shares memory with an input) is
// copied first.
template <typename T, typename Product>
void PreparedGemm(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c,
                  Product&& product) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    std::fill(c, c + m * n, T(0));
    return;
  }
  std::vector<T> a_copy, b_copy;
  if (Overlaps(a, m * k, c, m * n)) {
    a_copy.assign(a, a + m * k);
    a = a_copy.data();
  }
  if (Overlaps(b, k * n, c, m * n)) {
    b_copy.assign(b, b + k * n);
    b = b_copy.data();
  }
  product(a, b);
}

// The Eigen product, on operands prepared as above. noalias: c overlaps
// neither operand, so Eigen writes the product straight into it (a single
// row or column goes through Eigen's GEMV). Single-threaded: the plugin is
// built without OpenMP.
template <typename T>
void EigenProduct(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
                  const T* a, const T* b, T* c) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<Matrix> out(c, m, n);
  Eigen::Map<const Matrix> am(a, transpose_a ? k : m, transpose_a ? m : k);
  Eigen::Map<const Matrix> bm(b, transpose_b ? n : k, transpose_b ? k : n);
  if (!transpose_a && !transpose_b) {
    out.noalias() = am * bm;
  } else if (transpose_a && !transpose_b) {
    out.noalias() = am.transpose() * bm;
  } else if (!transpose_a && transpose_b) {
    out.noalias() = am * bm.transpose();
  } else {
    out.noalias() = am.transpose() * bm.transpose();
  }
}

template <typename T>
void EigenGemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, const T* a,
               const T* b, T* c) {
  PreparedGemm(m, n, k, a, b, c, [&](const T* pa, const T* pb) {
    EigenProduct(transpose_a, transpose_b, m, n, k, pa, pb, c);
  });
}

}  // namespace plexus::cpu

#endif  // PLEXUS_PLUGINS_CPU_KERNELS_LINALG_GEMM_IMPL_H_

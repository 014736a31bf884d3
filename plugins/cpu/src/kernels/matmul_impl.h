// Eigen implementation of MatMulCompute, included only by the per-dtype TUs
// matmul_<dtype>.cc.
#ifndef PLEXUS_PLUGINS_CPU_KERNELS_MATMUL_IMPL_H_
#define PLEXUS_PLUGINS_CPU_KERNELS_MATMUL_IMPL_H_

#include <cstdint>

#include <Eigen/Core>

#include "kernels/matmul.h"

namespace plexus::cpu {
namespace matmul_impl {

template <typename T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <typename T>
bool Overlaps(const T* x, int64_t x_size, const T* y, int64_t y_size) {
  // Compared as integers: < between unrelated pointers is unspecified.
  const auto xb = reinterpret_cast<uintptr_t>(x);
  const auto yb = reinterpret_cast<uintptr_t>(y);
  return x_size > 0 && y_size > 0 && xb < yb + y_size * sizeof(T) &&
         yb < xb + x_size * sizeof(T);
}

template <typename T>
void Run(const MatMulLaunch& l, bool transpose_a, bool transpose_b) {
  const T* a_data = static_cast<const T*>(l.a);
  const T* b_data = static_cast<const T*>(l.b);
  T* out_data = static_cast<T*>(l.out);
  // The ABI does not promise that an output never shares memory with an
  // input; copy such an input so the product below can use noalias().
  Matrix<T> a_copy, b_copy;
  if (Overlaps<T>(a_data, l.a_rows * l.a_cols, out_data, l.m * l.n)) {
    a_copy = Eigen::Map<const Matrix<T>>(a_data, l.a_rows, l.a_cols);
    a_data = a_copy.data();
  }
  if (Overlaps<T>(b_data, l.b_rows * l.b_cols, out_data, l.m * l.n)) {
    b_copy = Eigen::Map<const Matrix<T>>(b_data, l.b_rows, l.b_cols);
    b_data = b_copy.data();
  }
  Eigen::Map<const Matrix<T>> a(a_data, l.a_rows, l.a_cols);
  Eigen::Map<const Matrix<T>> b(b_data, l.b_rows, l.b_cols);
  Eigen::Map<Matrix<T>> out(out_data, l.m, l.n);
  // An empty contraction is all zeros; say so rather than rely on how Eigen
  // treats a zero inner dimension.
  if (l.k == 0) {
    out.setZero();
    return;
  }
  // noalias: the output does not overlap the inputs (see above), so Eigen
  // writes the product straight into it instead of through a temporary.
  if (!transpose_a && !transpose_b) {
    out.noalias() = a * b;
  } else if (transpose_a && !transpose_b) {
    out.noalias() = a.transpose() * b;
  } else if (!transpose_a && transpose_b) {
    out.noalias() = a * b.transpose();
  } else {
    out.noalias() = a.transpose() * b.transpose();
  }
}

}  // namespace matmul_impl

template <typename T>
PX_Status* MatMulCompute(void* kernel, PX_KernelContext* ctx,
                         const DLTensor* inputs, size_t num_inputs,
                         DLTensor* outputs, size_t num_outputs,
                         PX_Stream* stream) {
  const auto& state =
      static_cast<const MatMulState&>(*static_cast<const KernelState*>(kernel));
  return GuardCall(state.host, [&]() -> PX_Status* {
    MatMulLaunch launch;
    if (PX_Status* s = PrepareMatMul(state, ctx, inputs, num_inputs, outputs,
                                     num_outputs, DlTypeOf<T>(), &launch)) {
      return s;
    }
    matmul_impl::Run<T>(launch, state.transpose_a, state.transpose_b);
    return nullptr;
  });
}

}  // namespace plexus::cpu

#endif  // PLEXUS_PLUGINS_CPU_KERNELS_MATMUL_IMPL_H_

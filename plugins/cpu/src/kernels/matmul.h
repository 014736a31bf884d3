// MatMul of two rank-2 tensors, with optional transposes. The per-dtype Eigen
// contractions live in matmul_<dtype>.cc; this header is Eigen-free.
#ifndef PLEXUS_PLUGINS_CPU_KERNELS_MATMUL_H_
#define PLEXUS_PLUGINS_CPU_KERNELS_MATMUL_H_

#include "kernels/kernel_util.h"

namespace plexus::cpu {

// The node's transpose_a / transpose_b, read once at create.
struct MatMulState : KernelState {
  using KernelState::KernelState;
  bool transpose_a = false;
  bool transpose_b = false;
};

// One launch after its checks: out[m,n] = op(a) [m,k] * op(b) [k,n].
struct MatMulLaunch {
  int64_t m, k, n;
  int64_t a_rows, a_cols, b_rows, b_cols;  // as stored, before transposes
  const void* a;
  const void* b;
  void* out;
};

// Checks arity, dtypes, ranks and the inner dimension, and prepares the
// output.
PX_Status* PrepareMatMul(const MatMulState& state, PX_KernelContext* ctx,
                         const DLTensor* inputs, size_t num_inputs,
                         DLTensor* outputs, size_t num_outputs,
                         DLDataType dtype, MatMulLaunch* launch);

// The compute slot for one dtype; instantiated in matmul_<dtype>.cc.
template <typename T>
PX_Status* MatMulCompute(void* kernel, PX_KernelContext* ctx,
                         const DLTensor* inputs, size_t num_inputs,
                         DLTensor* outputs, size_t num_outputs,
                         PX_Stream* stream);

#define PX_CPU_DECLARE_MATMUL(T, extern_kw)                                  \
  extern_kw template PX_Status* MatMulCompute<T>(                           \
      void*, PX_KernelContext*, const DLTensor*, size_t, DLTensor*, size_t, \
      PX_Stream*)

PX_CPU_DECLARE_MATMUL(float, extern);
PX_CPU_DECLARE_MATMUL(double, extern);
PX_CPU_DECLARE_MATMUL(int32_t, extern);

}  // namespace plexus::cpu

#endif  // PLEXUS_PLUGINS_CPU_KERNELS_MATMUL_H_

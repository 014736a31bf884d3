// Plexus's own matrix product for GPUs without a vendor BLAS (the ROCm
// plugin) or instead of cuBLASLt (the CUDA plugin with
// PX_CUDA_KERNELS=native): a batched, strided GEMM with a per-column
// epilogue (bias or inference batch norm, then an activation). Plain C++
// between the kernel classes (native_matmul.cc, native_conv.cc) and the
// device code (gemm.cu, conv_direct.cu).
#ifndef PLEXUS_PLUGINS_GPU_KERNELS_GEMM_LAUNCH_H_
#define PLEXUS_PLUGINS_GPU_KERNELS_GEMM_LAUNCH_H_

#include "gpu_runtime.h"

#include <cstdint>

#include "kernels/elementwise_launch.h"

namespace plexus::cuda::gemm {

// The most batch dimensions (after merging) one launch takes.
constexpr int kMaxBatchRank = 8;

// The fused activations (the values of sdk::FusedActivation).
enum class Activation : int { kNone, kRelu, kRelu6, kElu, kLeakyRelu, kTanh, kSigmoid };

// What happens to each output value v of column (channel) ch before it is
// stored, computed in float (double for double):
//   bias:       v = v + args[0][ch]
//   batch_norm: v = (v - args[2][ch]) * args[0][ch] / sqrt(args[3][ch] + epsilon) + args[1][ch]
//               (args: scale, offset, mean, variance)
// then v = act(v). args are device pointers of the output's dtype.
struct Epilogue {
  bool bias = false;
  bool batch_norm = false;
  Activation act = Activation::kNone;
  float alpha = 0.2f;     // LeakyRelu
  float epsilon = 1e-4f;  // batch norm
  const void* args[4] = {nullptr, nullptr, nullptr, nullptr};
};

// C[z] = op(A[z]) * op(B[z]) for every output matrix z < batch, with
// element strides (transposes are strides):
//   A[z](i, l) = a[a_off(z) + i * a_sm + l * a_sk]   (i < m, l < k)
//   B[z](l, j) = b[b_off(z) + l * b_sk + j * b_sn]   (l < k, j < n)
//   C[z](i, j) = c[z * c_sb + i * c_sm + j]
// z is decomposed row-major over batch_dims[0 .. batch_rank); a_off(z) =
// sum of index[d] * a_batch_strides[d] (0 for a broadcast dimension), the
// same for b. batch is the product of batch_dims (1 with batch_rank 0).
// k may be 0 (the output is the epilogue of zeros); m, n, batch > 0.
struct GemmPlan {
  int64_t m = 0, n = 0, k = 0;
  int64_t a_sm = 0, a_sk = 0, b_sk = 0, b_sn = 0, c_sm = 0, c_sb = 0;
  int64_t batch = 1;
  int batch_rank = 0;
  int64_t batch_dims[kMaxBatchRank] = {};
  int64_t a_batch_strides[kMaxBatchRank] = {};
  int64_t b_batch_strides[kMaxBatchRank] = {};
};

// Launch errors are left for GetLastError (the caller's CheckLaunch).
void LaunchGemm(ew::Dtype dtype, const void* a, const void* b, void* c, const GemmPlan& plan,
                const Epilogue& epilogue, px_gpu::Stream stream);

}  // namespace plexus::cuda::gemm

#endif  // PLEXUS_PLUGINS_GPU_KERNELS_GEMM_LAUNCH_H_

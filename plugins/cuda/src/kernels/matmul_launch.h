// The matmul kernels' own device code (matmul_epilogue.cu), called from
// matmul.cc: the bias and activation epilogues cuBLASLt does not do.
#ifndef PLEXUS_PLUGINS_CUDA_KERNELS_MATMUL_LAUNCH_H_
#define PLEXUS_PLUGINS_CUDA_KERNELS_MATMUL_LAUNCH_H_

#include "gpu_runtime.h"

#include <cstdint>

#include "kernels/elementwise_launch.h"

namespace plexus::cuda::mm {

// The activations of _FusedMatMul (the values of sdk::FusedActivation).
enum class Activation : int { kNone, kRelu, kRelu6, kElu, kLeakyRelu, kTanh, kSigmoid };

// y[r, c] = act(y[r, c] + bias[c]) in place over a row-major [rows, cols]
// matrix (rows * cols > 0); bias may be null (activation only). 16-bit
// types compute in float. Launch errors are left for cudaGetLastError.
void LaunchBiasActivation(ew::Dtype dtype, void* y, const void* bias, int64_t rows, int64_t cols,
                          Activation act, float alpha, px_gpu::Stream stream);

}  // namespace plexus::cuda::mm

#endif  // PLEXUS_PLUGINS_CUDA_KERNELS_MATMUL_LAUNCH_H_

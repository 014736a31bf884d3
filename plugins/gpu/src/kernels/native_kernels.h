// Plexus's own matrix products and convolutions (no vendor library): the
// ROCm plugin registers them for every MatMul and convolution; the CUDA
// plugin registers them instead of the cuBLASLt and cuDNN kernels when the
// environment has PX_CUDA_KERNELS=native at plugin load (cuda_plugin.cc).
#ifndef PLEXUS_PLUGINS_GPU_KERNELS_NATIVE_KERNELS_H_
#define PLEXUS_PLUGINS_GPU_KERNELS_NATIVE_KERNELS_H_

#include "plexus/plugin_api.h"
#include "plexus/sdk/kernel.h"

namespace plexus::cuda {

// MatMul, BatchMatMul, BatchMatMulV2, BatchMatMulV3 and _FusedMatMul for
// float, double, half and bfloat16 (native_matmul.cc, gemm.cu): the ops,
// attributes and shapes matmul.cc registers.
PX_Status* RegisterNativeMatMulKernels(sdk::RegistrationInfo* info,
                                       PX_KernelRegistrar* registrar);

// Conv2D, DepthwiseConv2dNative, _FusedConv2D and _FusedDepthwiseConv2dNative
// for float, double, half and bfloat16 (native_conv.cc, conv_direct.cu): the
// ops, attributes and fused epilogues conv.cc registers.
PX_Status* RegisterNativeConvKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

}  // namespace plexus::cuda

#endif  // PLEXUS_PLUGINS_GPU_KERNELS_NATIVE_KERNELS_H_

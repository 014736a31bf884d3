// The CUDA plugin's own kernel families, on NVIDIA's libraries: registered
// from cuda_plugin.cc next to the shared GPU families
// (plugins/gpu/src/kernels/register_kernels.h), unless PX_CUDA_KERNELS=native
// selects the native matrix products and convolutions instead.
#ifndef PLEXUS_PLUGINS_CUDA_KERNELS_VENDOR_KERNELS_H_
#define PLEXUS_PLUGINS_CUDA_KERNELS_VENDOR_KERNELS_H_

#include "plexus/plugin_api.h"
#include "plexus/sdk/kernel.h"

namespace plexus::cuda {

// MatMul, BatchMatMul(V2, V3) and _FusedMatMul through cuBLASLt (matmul.cc).
PX_Status* RegisterMatMulKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

// Conv2D, DepthwiseConv2dNative, _FusedConv2D and _FusedDepthwiseConv2dNative
// through cuDNN (conv.cc).
PX_Status* RegisterConvKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

// Conv2DBackpropInput, Conv2DBackpropFilter and the depthwise gradients
// through cuDNN (conv_backprop.cc).
PX_Status* RegisterConvBackpropKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

}  // namespace plexus::cuda

#endif  // PLEXUS_PLUGINS_CUDA_KERNELS_VENDOR_KERNELS_H_

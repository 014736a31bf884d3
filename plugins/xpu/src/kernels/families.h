// The XPU plugin's kernel families, each registered by its own source in
// this folder; register_kernels.cc calls them all (RegisterXpuKernels).
#ifndef PLEXUS_PLUGINS_XPU_KERNELS_FAMILIES_H_
#define PLEXUS_PLUGINS_XPU_KERNELS_FAMILIES_H_

#include "plexus/plugin_api.h"
#include "plexus/sdk/kernel.h"

namespace plexus::xpu {

// Unary math and activations, Cast, binary arithmetic, comparisons and
// logical ops with broadcasting, Select and SelectV2 (elementwise.cc;
// kernels in kernels/elementwise.cl).
PX_Status* RegisterXpuElementwiseKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

// Sum, Mean, Max, Min, Prod, ArgMax, ArgMin, All, Any, Softmax, LogSoftmax
// and BiasAdd (reduce.cc; kernels/reduce.cl).
PX_Status* RegisterXpuReductionKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

// MatMul and BatchMatMul (the matmul family's source).
PX_Status* RegisterXpuMatMulKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

// Conv2D, DepthwiseConv2dNative, MaxPool, AvgPool and FusedBatchNorm(V2, V3)
// (the conv family's source).
PX_Status* RegisterXpuConvKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

// Data movement: reshapes, transposes, concatenation, slicing, gathers,
// padding, ... (the movement family's source).
PX_Status* RegisterXpuMovementKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

}  // namespace plexus::xpu

#endif  // PLEXUS_PLUGINS_XPU_KERNELS_FAMILIES_H_

// The GPU kernel families, registered from the plugins' RegisterKernels:
// the CUDA plugin (cuda_plugin.cc) and the ROCm plugin
// (plugins/rocm/src/rocm_plugin.cc), which builds these sources for HIP.
#ifndef PLEXUS_PLUGINS_CUDA_KERNELS_REGISTER_KERNELS_H_
#define PLEXUS_PLUGINS_CUDA_KERNELS_REGISTER_KERNELS_H_

#include "plexus/plugin_api.h"
#include "plexus/sdk/kernel.h"

namespace plexus::cuda {

// Unary math, activations and binary arithmetic with broadcasting (elementwise.cc).
PX_Status* RegisterElementwiseKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

// MatMul, BatchMatMul(V2, V3) and _FusedMatMul through cuBLASLt (matmul.cc).
PX_Status* RegisterMatMulKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

// Sum, Mean, Max, Min, Prod, Softmax, LogSoftmax and BiasAdd (reduce.cc).
PX_Status* RegisterReductionKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

// Transpose, ConcatV2, Concat, Cast, Gather, GatherV2, Pad, PadV2 (array.cc).
PX_Status* RegisterArrayKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

// Slice and StridedSlice (slice.cc).
PX_Status* RegisterSliceKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

// MaxPool and AvgPool (pool.cc).
PX_Status* RegisterPoolKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

// Reshape, ExpandDims, Squeeze, Shape, ShapeN, Size, Rank, Fill, ZerosLike,
// OnesLike, Range, OneHot, Tile, BroadcastTo, MirrorPad, Split, SplitV,
// Unpack, Pack, GatherNd, SpaceToBatchND, BatchToSpaceND (movement.cc).
PX_Status* RegisterMovementKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

// Conv2D, DepthwiseConv2dNative, _FusedConv2D and _FusedDepthwiseConv2dNative
// through cuDNN (conv.cc).
PX_Status* RegisterConvKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

// FusedBatchNorm, FusedBatchNormV2, FusedBatchNormV3 inference (batchnorm.cc).
PX_Status* RegisterBatchNormKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

// ArgMax, ArgMin, All and Any (reduce2.cc).
PX_Status* RegisterArgReduceKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

// The families both plugins build from the same sources. Matrix products
// and convolutions are not among them: the CUDA plugin has cuBLASLt and
// cuDNN (matmul.cc, conv.cc) or Plexus's own kernels (plexus_kernels.h),
// which are the ROCm plugin's only ones.
inline PX_Status* RegisterSharedGpuKernels(sdk::RegistrationInfo* info,
                                           PX_KernelRegistrar* registrar) {
  PX_Status* s = RegisterElementwiseKernels(info, registrar);
  if (s == nullptr) s = RegisterReductionKernels(info, registrar);
  if (s == nullptr) s = RegisterArrayKernels(info, registrar);
  if (s == nullptr) s = RegisterSliceKernels(info, registrar);
  if (s == nullptr) s = RegisterPoolKernels(info, registrar);
  if (s == nullptr) s = RegisterMovementKernels(info, registrar);
  if (s == nullptr) s = RegisterBatchNormKernels(info, registrar);
  if (s == nullptr) s = RegisterArgReduceKernels(info, registrar);
  return s;
}

}  // namespace plexus::cuda

#endif  // PLEXUS_PLUGINS_CUDA_KERNELS_REGISTER_KERNELS_H_

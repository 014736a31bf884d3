// The CUDA plugin's kernel families, registered from the plugin's
// RegisterKernels (cuda_plugin.cc).
#ifndef PLEXUS_PLUGINS_CUDA_KERNELS_REGISTER_KERNELS_H_
#define PLEXUS_PLUGINS_CUDA_KERNELS_REGISTER_KERNELS_H_

#include "fused/fused_elementwise.h"
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

// Every family: the elementwise kernels and the fused elementwise one,
// compiled at run time with NVRTC (fused/fused_elementwise.h).
inline PX_Status* RegisterCudaKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  PX_Status* s = RegisterElementwiseKernels(info, registrar);
  if (s == nullptr) s = RegisterMatMulKernels(info, registrar);
  if (s == nullptr) s = RegisterReductionKernels(info, registrar);
  if (s == nullptr) s = RegisterArrayKernels(info, registrar);
  if (s == nullptr) s = RegisterSliceKernels(info, registrar);
  if (s == nullptr) s = RegisterPoolKernels(info, registrar);
  if (s == nullptr) s = RegisterMovementKernels(info, registrar);
#if defined(PX_CUDA_HAVE_CUDNN)
  if (s == nullptr) s = RegisterConvKernels(info, registrar);
#endif
  if (s == nullptr) s = RegisterBatchNormKernels(info, registrar);
  if (s == nullptr) s = RegisterArgReduceKernels(info, registrar);
  return s != nullptr ? s : RegisterFusedElementwise(info, registrar);
}

}  // namespace plexus::cuda

#endif  // PLEXUS_PLUGINS_CUDA_KERNELS_REGISTER_KERNELS_H_

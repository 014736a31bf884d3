// The GPU kernel families both GPU plugins build from these sources,
// registered from their RegisterKernels: the CUDA plugin
// (plugins/cuda/src/cuda_plugin.cc) and the ROCm plugin
// (plugins/rocm/src/rocm_plugin.cc), which builds them for HIP. The CUDA
// plugin's cuBLASLt and cuDNN families are declared in its own
// kernels/vendor_kernels.h.
#ifndef PLEXUS_PLUGINS_GPU_KERNELS_REGISTER_KERNELS_H_
#define PLEXUS_PLUGINS_GPU_KERNELS_REGISTER_KERNELS_H_

#include "plexus/plugin_api.h"
#include "plexus/sdk/kernel.h"

namespace plexus::cuda {

// Unary math, activations and binary arithmetic with broadcasting (elementwise.cc).
PX_Status* RegisterElementwiseKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

// Sum, Mean, Max, Min, Prod, Softmax, LogSoftmax, BiasAdd and BiasAddGrad
// (reduce.cc).
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

// FusedBatchNorm, FusedBatchNormV2, FusedBatchNormV3 inference (batchnorm.cc).
PX_Status* RegisterBatchNormKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

// ArgMax, ArgMin, All and Any (arg_reduce.cc).
PX_Status* RegisterArgReduceKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

// _PlexusApplyGradientDescent, _PlexusApplyMomentum, _PlexusApplyAdam,
// _PlexusApplyAdamW and _PlexusApplyRMSProp (optimizer.cc).
PX_Status* RegisterOptimizerKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

// The activation gradients, SoftmaxCrossEntropyWithLogits and its sparse
// form, MaxPoolGrad, MaxPoolGradV2 and AvgPoolGrad (nn_grad.cc).
PX_Status* RegisterNnGradKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

// The families both plugins build from the same sources. Matrix products
// and convolutions are not among them: the CUDA plugin has cuBLASLt and
// cuDNN (its kernels/vendor_kernels.h) or the native kernels (native_kernels.h),
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
  if (s == nullptr) s = RegisterOptimizerKernels(info, registrar);
  if (s == nullptr) s = RegisterNnGradKernels(info, registrar);
  return s;
}

}  // namespace plexus::cuda

#endif  // PLEXUS_PLUGINS_GPU_KERNELS_REGISTER_KERNELS_H_

// The launch function of FusedBatchNorm (V1, V2, V3) inference: plain C++
// between the kernel class (batchnorm.cc) and the device code (batchnorm.cu).
#ifndef PLEXUS_PLUGINS_GPU_KERNELS_BATCHNORM_LAUNCH_H_
#define PLEXUS_PLUGINS_GPU_KERNELS_BATCHNORM_LAUNCH_H_

#include "gpu_runtime.h"

#include <cstdint>

#include "kernels/elementwise_launch.h"

namespace plexus::cuda::bn {

// y = (x - mean[c]) * (scale[c] / sqrt(variance[c] + epsilon)) + offset[c]
// over `total` elements (> 0) of x (float, half or bfloat16), where the
// channel of element i is (i / inner) % channels: inner 1 for NHWC, H * W
// for NCHW. Computed in double, like the cpu plugin.
void LaunchBatchNormInference(ew::Dtype dtype, const void* x, const float* scale,
                              const float* offset, const float* mean, const float* variance,
                              float epsilon, void* y, int64_t total, int64_t channels,
                              int64_t inner, px_gpu::Stream stream);

}  // namespace plexus::cuda::bn

#endif  // PLEXUS_PLUGINS_GPU_KERNELS_BATCHNORM_LAUNCH_H_

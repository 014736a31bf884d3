// FusedBatchNorm inference: one thread per element in a grid-stride loop,
// y = (x - mean) * factor + offset in double (the cpu plugin's arithmetic),
// with factor = scale / sqrt(variance + epsilon) per channel. Up to
// kSharedChannels channels, each block first computes every channel's factor
// into shared memory; with more, each element computes its own. 32-bit
// index arithmetic below 2^31 elements.
#include <cstdint>

#include "gpu_portability.h"
#include "kernels/batchnorm_launch.h"
#include "kernels/launch_util.h"

namespace plexus::cuda {
namespace {

constexpr int64_t kSharedChannels = 4096;  // 32 KiB of doubles

__device__ __forceinline__ double Factor(const float* scale, const float* variance, float epsilon,
                                         int64_t c) {
  return 1.0 / sqrt(static_cast<double>(variance[c]) + static_cast<double>(epsilon)) *
         static_cast<double>(scale[c]);
}

template <typename T>
__device__ __forceinline__ T FromDouble(double v) {
  // double -> float -> T, as the cpu plugin (static_cast through float).
  return px_gpu::FromFloat<T>(static_cast<float>(v));
}

template <typename T, typename Index>
__global__ void BatchNormKernel(const T* __restrict__ x, const float* __restrict__ scale,
                                const float* __restrict__ offset, const float* __restrict__ mean,
                                const float* __restrict__ variance, float epsilon,
                                T* __restrict__ y, Index total, Index channels, Index inner,
                                bool shared) {
  extern __shared__ double factors[];
  if (shared) {
    for (Index c = threadIdx.x; c < channels; c += blockDim.x) {
      factors[c] = Factor(scale, variance, epsilon, c);
    }
    __syncthreads();
  }
  const Index stride = static_cast<Index>(blockDim.x) * gridDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    const Index c = (inner == 1 ? i : i / inner) % channels;
    const double f = shared ? factors[c] : Factor(scale, variance, epsilon, c);
    const double v = static_cast<double>(px_gpu::ToFloat(x[i]));
    y[i] = FromDouble<T>((v - static_cast<double>(mean[c])) * f + static_cast<double>(offset[c]));
  }
}

template <typename T>
void Launch(const void* x, const float* scale, const float* offset, const float* mean,
            const float* variance, float epsilon, void* y, int64_t total, int64_t channels,
            int64_t inner, px_gpu::Stream stream) {
  const bool shared = channels <= kSharedChannels;
  const size_t smem = shared ? static_cast<size_t>(channels) * sizeof(double) : 0;
  const T* xt = static_cast<const T*>(x);
  T* yt = static_cast<T*>(y);
  if (total < (int64_t{1} << 31)) {
    PX_GPU_LAUNCH((BatchNormKernel<T, uint32_t>), GridFor(total), kBlockSize, smem, stream)(
        xt, scale, offset, mean, variance, epsilon, yt, static_cast<uint32_t>(total),
        static_cast<uint32_t>(channels), static_cast<uint32_t>(inner), shared);
  } else {
    PX_GPU_LAUNCH((BatchNormKernel<T, int64_t>), GridFor(total), kBlockSize, smem, stream)(
        xt, scale, offset, mean, variance, epsilon, yt, total, channels, inner, shared);
  }
}

}  // namespace

void bn::LaunchBatchNormInference(ew::Dtype dtype, const void* x, const float* scale,
                                  const float* offset, const float* mean, const float* variance,
                                  float epsilon, void* y, int64_t total, int64_t channels,
                                  int64_t inner, px_gpu::Stream stream) {
  switch (dtype) {
    case ew::Dtype::kFloat:
      Launch<float>(x, scale, offset, mean, variance, epsilon, y, total, channels, inner, stream);
      return;
    case ew::Dtype::kHalf:
      Launch<px_gpu::half>(x, scale, offset, mean, variance, epsilon, y, total, channels, inner,
                           stream);
      return;
    case ew::Dtype::kBFloat16:
      Launch<px_gpu::bfloat16>(x, scale, offset, mean, variance, epsilon, y, total, channels,
                               inner, stream);
      return;
    default: return;  // not registered
  }
}

}  // namespace plexus::cuda

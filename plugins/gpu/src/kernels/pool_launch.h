// The launch function of the pooling kernels (MaxPool, AvgPool): plain C++
// between the kernel class (pool.cc, host compiler) and the device code
// (pool.cu, nvcc).
#ifndef PLEXUS_PLUGINS_GPU_KERNELS_POOL_LAUNCH_H_
#define PLEXUS_PLUGINS_GPU_KERNELS_POOL_LAUNCH_H_

#include "gpu_runtime.h"

#include <cstdint>

#include "kernels/elementwise_launch.h"
#include "plexus/sdk/pool_geometry.h"

namespace plexus::cuda::pool {

// One 2-D pooling (the SDK's plain geometry, see its header).
using PoolPlan = sdk::PoolGeometry;

// Whether 32-bit index arithmetic is safe for a plan: the input and output
// element counts plus the widest grid-stride step, and every window
// parameter and their sums, stay well below 2^31.
inline bool FitsInt32(const PoolPlan& p) {
  constexpr int64_t kLimit = int64_t{1} << 30;
  const int64_t in = p.n * p.c * p.h * p.w, out = p.n * p.c * p.oh * p.ow;
  const int64_t window = p.h + p.w + p.kh + p.kw + p.sh + p.sw + p.top + p.left;
  return in < kLimit && out < kLimit && window < kLimit && p.oh * p.sh < kLimit &&
         p.ow * p.sw < kLimit;
}

// max: the largest in-bounds element (NaN never wins; -inf for an empty
// window); otherwise their mean (the sum times 1 / count). Output elements
// n * c * oh * ow > 0.
void LaunchPool(bool max, ew::Dtype dtype, const void* x, void* y, const PoolPlan& plan,
                px_gpu::Stream stream);

}  // namespace plexus::cuda::pool

#endif  // PLEXUS_PLUGINS_GPU_KERNELS_POOL_LAUNCH_H_

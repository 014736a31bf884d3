// The launch function of the pooling kernels (MaxPool, AvgPool): plain C++
// between the kernel class (pool.cc, host compiler) and the device code
// (pool.cu, nvcc).
#ifndef PLEXUS_PLUGINS_GPU_KERNELS_POOL_LAUNCH_H_
#define PLEXUS_PLUGINS_GPU_KERNELS_POOL_LAUNCH_H_

#include "gpu_runtime.h"

#include <cstdint>

#include "kernels/elementwise_launch.h"

namespace plexus::cuda::pool {

// One 2-D pooling: input [n, h, w, c] (NHWC) or [n, c, h, w] (NCHW), output
// [n, oh, ow, c] or [n, c, oh, ow]. Output pixel (i, j) covers input rows
// i * sh - top ... + kh - 1 and columns j * sw - left ... + kw - 1; the
// positions outside the input are skipped.
struct PoolPlan {
  bool nchw = false;
  int64_t n = 0, c = 0, h = 0, w = 0;
  int64_t oh = 0, ow = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1;
  int64_t top = 0, left = 0;
};

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

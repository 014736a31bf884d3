// Device code of MaxPool and AvgPool: one thread per output element
// (grid-stride), NHWC or NCHW by the same index math with the layout's
// strides. half and bfloat16 compute in float. 32-bit index arithmetic
// where pool::FitsInt32 allows.
#include <cstdint>

#include "gpu_portability.h"
#include "kernels/launch_util.h"
#include "kernels/pool_launch.h"

namespace plexus::cuda {
namespace {

using pool::PoolPlan;

template <bool kMax, typename T, typename I>
__global__ void PoolKernel(const T* __restrict__ x, T* __restrict__ y, const PoolPlan p) {
  using C = px_gpu::ComputeType<T>;
  const I c = static_cast<I>(p.c), h = static_cast<I>(p.h), w = static_cast<I>(p.w);
  const I oh = static_cast<I>(p.oh), ow = static_cast<I>(p.ow);
  const I total = static_cast<I>(p.n) * c * oh * ow;
  // Strides of the input's h and w dimensions (elements).
  const I stride_h = p.nchw ? w : w * c;
  const I stride_w = p.nchw ? I(1) : c;
  const I grid = static_cast<I>(blockDim.x) * gridDim.x;
  for (I k = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; k < total; k += grid) {
    I b, ch, i, j, r = k;
    if (p.nchw) {
      j = r % ow;
      r /= ow;
      i = r % oh;
      r /= oh;
      ch = r % c;
      b = r / c;
    } else {
      ch = r % c;
      r /= c;
      j = r % ow;
      r /= ow;
      i = r % oh;
      b = r / oh;
    }
    // The input element (b, 0, 0, ch).
    const I base = p.nchw ? (b * c + ch) * h * w : b * h * w * c + ch;
    const I h0 = i * static_cast<I>(p.sh) - static_cast<I>(p.top);
    const I w0 = j * static_cast<I>(p.sw) - static_cast<I>(p.left);
    const I hs = h0 < 0 ? I(0) : h0;
    const I he = h0 + static_cast<I>(p.kh) < h ? h0 + static_cast<I>(p.kh) : h;
    const I ws = w0 < 0 ? I(0) : w0;
    const I we = w0 + static_cast<I>(p.kw) < w ? w0 + static_cast<I>(p.kw) : w;
    C acc = kMax ? -C(INFINITY) : C(0);
    for (I ih = hs; ih < he; ++ih) {
      const T* row = x + base + ih * stride_h;
      for (I iw = ws; iw < we; ++iw) {
        const C v = px_gpu::ToFloat(row[iw * stride_w]);
        if (kMax) {
          acc = v > acc ? v : acc;  // NaN never wins, as on the cpu plugin
        } else {
          acc += v;
        }
      }
    }
    if (!kMax) {
      const I count = (he > hs ? he - hs : I(0)) * (we > ws ? we - ws : I(0));
      acc = acc * (C(1) / static_cast<C>(count));
    }
    y[k] = px_gpu::FromCompute<T>(acc);
  }
}

}  // namespace

void pool::LaunchPool(bool max, ew::Dtype dtype, const void* x, void* y, const PoolPlan& plan,
                      px_gpu::Stream stream) {
  const int64_t total = plan.n * plan.c * plan.oh * plan.ow;
  const bool small = pool::FitsInt32(plan);
  VisitDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* src = static_cast<const T*>(x);
    T* dst = static_cast<T*>(y);
    auto launch = [&](auto index_tag) {
      using I = decltype(index_tag);
      if (max) {
        PX_GPU_LAUNCH((PoolKernel<true, T, I>), GridFor(total), kBlockSize, 0, stream)(src, dst,
                                                                                       plan);
      } else {
        PX_GPU_LAUNCH((PoolKernel<false, T, I>), GridFor(total), kBlockSize, 0, stream)(src, dst,
                                                                                        plan);
      }
    };
    if (small) {
      launch(int32_t{});
    } else {
      launch(int64_t{});
    }
  });
}

}  // namespace plexus::cuda

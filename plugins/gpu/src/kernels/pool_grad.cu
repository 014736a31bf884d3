// Device code of MaxPoolGrad and AvgPoolGrad, gathered rather than
// scattered: one thread per input element (grid-stride) sums the gradient
// of every output window that covers it, so no atomics are needed and the
// result does not depend on thread order. MaxPoolGrad finds each covering
// window's maximum again (kh * kw reads) and takes the gradient only where
// that maximum is this element. half and bfloat16 accumulate in float.
// 32-bit index arithmetic where pool::FitsInt32 allows.
#include <cstdint>

#include "gpu_portability.h"
#include "kernels/launch_util.h"
#include "kernels/nn_grad_launch.h"

namespace plexus::cuda {
namespace {

using pool::PoolPlan;

// The index arithmetic of one layout (NHWC or NCHW) in index type I.
template <typename I>
struct Geometry {
  I n, c, h, w, oh, ow, kh, kw, sh, sw, top, left;
  bool nchw;

  __device__ explicit Geometry(const PoolPlan& p)
      : n(static_cast<I>(p.n)), c(static_cast<I>(p.c)), h(static_cast<I>(p.h)),
        w(static_cast<I>(p.w)), oh(static_cast<I>(p.oh)), ow(static_cast<I>(p.ow)),
        kh(static_cast<I>(p.kh)), kw(static_cast<I>(p.kw)), sh(static_cast<I>(p.sh)),
        sw(static_cast<I>(p.sw)), top(static_cast<I>(p.top)), left(static_cast<I>(p.left)),
        nchw(p.nchw) {}

  // Input element k as (b, ch, ih, iw).
  __device__ void Split(I k, I* b, I* ch, I* ih, I* iw) const {
    if (nchw) {
      *iw = k % w;
      k /= w;
      *ih = k % h;
      k /= h;
      *ch = k % c;
      *b = k / c;
    } else {
      *ch = k % c;
      k /= c;
      *iw = k % w;
      k /= w;
      *ih = k % h;
      *b = k / h;
    }
  }
  __device__ I In(I b, I ch, I ih, I iw) const {
    return nchw ? ((b * c + ch) * h + ih) * w + iw : ((b * h + ih) * w + iw) * c + ch;
  }
  __device__ I Out(I b, I ch, I i, I j) const {
    return nchw ? ((b * c + ch) * oh + i) * ow + j : ((b * oh + i) * ow + j) * c + ch;
  }
  // The output rows (or columns) whose windows cover input row x:
  // [*first, *last], possibly empty.
  __device__ static void Covering(I x, I pad, I k, I s, I outs, I* first, I* last) {
    const I hi = x + pad;  // o * s <= hi
    const I lo = hi - k + 1;  // o * s >= lo
    *first = lo <= 0 ? I(0) : (lo - 1) / s + 1;  // ceil(lo / s) without overflow
    *last = hi < 0 ? I(-1) : hi / s;
    if (*last > outs - 1) *last = outs - 1;
  }
};

template <bool kMax, typename T, typename I>
__global__ void PoolGradKernel(const T* __restrict__ x, const T* __restrict__ g,
                               T* __restrict__ dx, const PoolPlan plan) {
  using C = px_gpu::ComputeType<T>;
  const Geometry<I> p(plan);
  const I total = p.n * p.c * p.h * p.w;
  const I grid = static_cast<I>(blockDim.x) * gridDim.x;
  for (I k = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; k < total; k += grid) {
    I b, ch, ih, iw;
    p.Split(k, &b, &ch, &ih, &iw);
    I i0, i1, j0, j1;
    Geometry<I>::Covering(ih, p.top, p.kh, p.sh, p.oh, &i0, &i1);
    Geometry<I>::Covering(iw, p.left, p.kw, p.sw, p.ow, &j0, &j1);
    C acc = C(0);
    for (I i = i0; i <= i1; ++i) {
      const I h0 = i * p.sh - p.top;
      const I hs = h0 < 0 ? I(0) : h0;
      const I he = h0 + p.kh < p.h ? h0 + p.kh : p.h;
      for (I j = j0; j <= j1; ++j) {
        const I w0 = j * p.sw - p.left;
        const I ws = w0 < 0 ? I(0) : w0;
        const I we = w0 + p.kw < p.w ? w0 + p.kw : p.w;
        const C gv = static_cast<C>(px_gpu::ToFloat(g[p.Out(b, ch, i, j)]));
        if constexpr (kMax) {
          // The window's first largest element, as the reference plugin
          // picks it: the first in-bounds one unless a later one is larger.
          I best_h = hs, best_w = ws;
          C best = static_cast<C>(px_gpu::ToFloat(x[p.In(b, ch, hs, ws)]));
          for (I a = hs; a < he; ++a) {
            for (I e = ws; e < we; ++e) {
              const C v = static_cast<C>(px_gpu::ToFloat(x[p.In(b, ch, a, e)]));
              if (v > best) {
                best = v;
                best_h = a;
                best_w = e;
              }
            }
          }
          if (best_h == ih && best_w == iw) acc += gv;
        } else {
          const I count = (he - hs) * (we - ws);
          acc += gv / static_cast<C>(count);
        }
      }
    }
    dx[k] = px_gpu::FromCompute<T>(acc);
  }
}

template <bool kMax>
void LaunchPoolGrad(ew::Dtype dtype, const void* x, const void* g, void* dx,
                    const PoolPlan& plan, px_gpu::Stream stream) {
  const int64_t total = plan.n * plan.c * plan.h * plan.w;
  const bool small = pool::FitsInt32(plan);
  VisitDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* xt = static_cast<const T*>(x);
    const T* gt = static_cast<const T*>(g);
    T* out = static_cast<T*>(dx);
    if (small) {
      PX_GPU_LAUNCH((PoolGradKernel<kMax, T, int32_t>), GridFor(total), kBlockSize, 0, stream)(
          xt, gt, out, plan);
    } else {
      PX_GPU_LAUNCH((PoolGradKernel<kMax, T, int64_t>), GridFor(total), kBlockSize, 0, stream)(
          xt, gt, out, plan);
    }
  });
}

}  // namespace

void grad::LaunchMaxPoolGrad(ew::Dtype dtype, const void* x, const void* grad, void* dx,
                             const pool::PoolPlan& plan, px_gpu::Stream stream) {
  LaunchPoolGrad<true>(dtype, x, grad, dx, plan, stream);
}

void grad::LaunchAvgPoolGrad(ew::Dtype dtype, const void* grad, void* dx,
                             const pool::PoolPlan& plan, px_gpu::Stream stream) {
  LaunchPoolGrad<false>(dtype, nullptr, grad, dx, plan, stream);
}

}  // namespace plexus::cuda

// Device code of the convolutions' helpers (conv_launch.h): the filter
// reorder from TensorFlow's HWIO to cuDNN's KRSC or KCRS and back, the zero
// padding of the input where cuDNN's symmetric padding does not fit (and
// its inverse, a crop, for the input gradient), and the fused
// epilogue (bias or inference batch norm per channel, then the activation).
// One thread per output element, grid-stride loops; half and bfloat16
// compute in float.
#include <cstdint>

#include "gpu_portability.h"
#include "kernels/conv_launch.h"
#include "kernels/launch_util.h"

namespace plexus::cuda {
namespace {

using conv::Activation;
using conv::EpiloguePlan;
using conv::PadPlan;

constexpr int64_t kInt32Limit = int64_t{1} << 31;

// out[o, r, i] (KRSC) or out[o, i, r] (KCRS) = in[r, i, o]; kToHwio: the
// other way, out[r, i, o] = in[o, r, i] or in[o, i, r].
template <typename T, bool kToHwio>
__global__ void FilterReorderKernel(const T* __restrict__ in, T* __restrict__ out, int64_t r,
                                    int64_t i, int64_t o, bool kcrs) {
  const int64_t total = r * i * o;
  const int64_t grid = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < total;
       k += grid) {
    int64_t oo, rr, ii;
    if (kcrs) {
      rr = k % r;
      ii = (k / r) % i;
      oo = k / (r * i);
    } else {
      ii = k % i;
      rr = (k / i) % r;
      oo = k / (i * r);
    }
    if (kToHwio) {
      out[(rr * i + ii) * o + oo] = in[k];
    } else {
      out[k] = in[(rr * i + ii) * o + oo];
    }
  }
}

template <typename T>
__global__ void PadInputKernel(const T* __restrict__ x, T* __restrict__ y, const PadPlan p) {
  const int64_t ph = p.top + p.h + p.bottom, pw = p.left + p.w + p.right;
  const int64_t total = p.n * p.c * ph * pw;
  const int64_t grid = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < total;
       k += grid) {
    int64_t b, ch, i, j, rest = k;
    if (p.nchw) {
      j = rest % pw;
      rest /= pw;
      i = rest % ph;
      rest /= ph;
      ch = rest % p.c;
      b = rest / p.c;
    } else {
      ch = rest % p.c;
      rest /= p.c;
      j = rest % pw;
      rest /= pw;
      i = rest % ph;
      b = rest / ph;
    }
    const int64_t si = i - p.top, sj = j - p.left;
    if (si < 0 || si >= p.h || sj < 0 || sj >= p.w) {
      y[k] = px_gpu::FromCompute<T>(px_gpu::ComputeType<T>(0));
    } else {
      y[k] = p.nchw ? x[((b * p.c + ch) * p.h + si) * p.w + sj]
                    : x[((b * p.h + si) * p.w + sj) * p.c + ch];
    }
  }
}

// The inverse of PadInputKernel: x[b, ch, i, j] = y[b, ch, i + top, j + left]
// over the n * c * h * w elements of x (the gradient of the padding).
template <typename T>
__global__ void CropInputKernel(const T* __restrict__ y, T* __restrict__ x, const PadPlan p) {
  const int64_t ph = p.top + p.h + p.bottom, pw = p.left + p.w + p.right;
  const int64_t total = p.n * p.c * p.h * p.w;
  const int64_t grid = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < total;
       k += grid) {
    int64_t b, ch, i, j, rest = k;
    if (p.nchw) {
      j = rest % p.w;
      rest /= p.w;
      i = rest % p.h;
      rest /= p.h;
      ch = rest % p.c;
      b = rest / p.c;
      x[k] = y[((b * p.c + ch) * ph + i + p.top) * pw + j + p.left];
    } else {
      ch = rest % p.c;
      rest /= p.c;
      j = rest % p.w;
      rest /= p.w;
      i = rest % p.h;
      b = rest / p.h;
      x[k] = y[((b * ph + i + p.top) * pw + j + p.left) * p.c + ch];
    }
  }
}

__device__ __forceinline__ float Expm1(float x) { return expm1f(x); }
__device__ __forceinline__ double Expm1(double x) { return expm1(x); }

// NaN passes through the piecewise activations (comparisons are false).
template <typename C>
__device__ __forceinline__ C Activate(Activation act, C v, C alpha) {
  switch (act) {
    case Activation::kNone: return v;
    case Activation::kRelu: return v < C(0) ? C(0) : v;
    case Activation::kRelu6: return v < C(0) ? C(0) : (v > C(6) ? C(6) : v);
    case Activation::kElu: return v < C(0) ? Expm1(v) : v;
    case Activation::kLeakyRelu: return v < C(0) ? alpha * v : v;
    case Activation::kTanh: return px_gpu::Tanh(v);
    case Activation::kSigmoid: return C(1) / (C(1) + px_gpu::Exp(-v));
  }
  return v;
}

template <typename T, typename I>
__global__ void EpilogueKernel(T* __restrict__ y, const T* __restrict__ a0,
                               const T* __restrict__ a1, const T* __restrict__ a2,
                               const T* __restrict__ a3, const EpiloguePlan p) {
  using C = px_gpu::ComputeType<T>;
  const I total = static_cast<I>(p.total), channels = static_cast<I>(p.channels);
  const I spatial = static_cast<I>(p.spatial);
  const C alpha = static_cast<C>(p.alpha), epsilon = static_cast<C>(p.epsilon);
  const I grid = static_cast<I>(blockDim.x) * gridDim.x;
  for (I k = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; k < total; k += grid) {
    const I ch = p.nchw ? (k / spatial) % channels : k % channels;
    C v = px_gpu::ToFloat(y[k]);
    if (p.batch_norm) {
      // args: scale, offset, mean, variance.
      const C factor = px_gpu::ToFloat(a0[ch]) / px_gpu::Sqrt(px_gpu::ToFloat(a3[ch]) + epsilon);
      v = (v - px_gpu::ToFloat(a2[ch])) * factor + px_gpu::ToFloat(a1[ch]);
    } else if (a0 != nullptr) {
      v = v + px_gpu::ToFloat(a0[ch]);
    }
    y[k] = px_gpu::FromCompute<T>(Activate<C>(p.act, v, alpha));
  }
}

}  // namespace

void conv::LaunchFilterReorder(ew::Dtype dtype, const void* in, void* out, int64_t r, int64_t i,
                               int64_t o, bool kcrs, px_gpu::Stream stream) {
  VisitDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    PX_GPU_LAUNCH((FilterReorderKernel<T, false>), GridFor(r * i * o), kBlockSize, 0, stream)(
        static_cast<const T*>(in), static_cast<T*>(out), r, i, o, kcrs);
  });
}

void conv::LaunchFilterToHwio(ew::Dtype dtype, const void* in, void* out, int64_t r, int64_t i,
                              int64_t o, bool kcrs, px_gpu::Stream stream) {
  VisitDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    PX_GPU_LAUNCH((FilterReorderKernel<T, true>), GridFor(r * i * o), kBlockSize, 0, stream)(
        static_cast<const T*>(in), static_cast<T*>(out), r, i, o, kcrs);
  });
}

void conv::LaunchCropInput(ew::Dtype dtype, const void* y, void* x, const PadPlan& plan,
                           px_gpu::Stream stream) {
  VisitDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    PX_GPU_LAUNCH(CropInputKernel<T>, GridFor(plan.n * plan.c * plan.h * plan.w), kBlockSize, 0,
                  stream)(static_cast<const T*>(y), static_cast<T*>(x), plan);
  });
}

void conv::LaunchPadInput(ew::Dtype dtype, const void* x, void* y, const PadPlan& plan,
                          px_gpu::Stream stream) {
  const int64_t total =
      plan.n * plan.c * (plan.top + plan.h + plan.bottom) * (plan.left + plan.w + plan.right);
  VisitDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    PX_GPU_LAUNCH(PadInputKernel<T>, GridFor(total), kBlockSize, 0, stream)(
        static_cast<const T*>(x), static_cast<T*>(y), plan);
  });
}

void conv::LaunchEpilogue(ew::Dtype dtype, void* y, const void* const args[4],
                          const EpiloguePlan& plan, px_gpu::Stream stream) {
  VisitDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* a[4];
    for (int k = 0; k < 4; ++k) a[k] = static_cast<const T*>(args[k]);
    if (plan.total < kInt32Limit) {
      PX_GPU_LAUNCH((EpilogueKernel<T, int32_t>), GridFor(plan.total), kBlockSize, 0, stream)(
          static_cast<T*>(y), a[0], a[1], a[2], a[3], plan);
    } else {
      PX_GPU_LAUNCH((EpilogueKernel<T, int64_t>), GridFor(plan.total), kBlockSize, 0, stream)(
          static_cast<T*>(y), a[0], a[1], a[2], a[3], plan);
    }
  });
}

}  // namespace plexus::cuda

// Unary elementwise kernels: y = op(x) over n contiguous elements, with
// 128-bit loads and stores when both pointers allow, in a grid-stride loop.
// 16-bit types compute in float.
#include <cstdint>

#include "gpu_portability.h"
#include "kernels/elementwise_launch.h"
#include "kernels/launch_util.h"

namespace plexus::cuda {
namespace {

using ew::Unary;

// NaN passes through every op (comparisons with NaN are false).
template <Unary kOp, typename C>
__device__ __forceinline__ C ApplyUnary(C x) {
  if constexpr (kOp == Unary::kNeg) {
    return -x;
  } else if constexpr (kOp == Unary::kAbs) {
    return px_gpu::Abs(x);
  } else if constexpr (kOp == Unary::kExp) {
    return px_gpu::Exp(x);
  } else if constexpr (kOp == Unary::kLog) {
    return px_gpu::Log(x);
  } else if constexpr (kOp == Unary::kSqrt) {
    return px_gpu::Sqrt(x);
  } else if constexpr (kOp == Unary::kRsqrt) {
    return px_gpu::Rsqrt(x);
  } else if constexpr (kOp == Unary::kSquare) {
    return x * x;
  } else if constexpr (kOp == Unary::kRelu) {
    return x < C(0) ? C(0) : x;
  } else if constexpr (kOp == Unary::kRelu6) {
    return x < C(0) ? C(0) : (x > C(6) ? C(6) : x);
  } else if constexpr (kOp == Unary::kSigmoid) {
    return C(1) / (C(1) + px_gpu::Exp(-x));
  } else {
    static_assert(kOp == Unary::kTanh, "unhandled unary op");
    return px_gpu::Tanh(x);
  }
}

template <Unary kOp, typename T>
__device__ __forceinline__ T Apply(T x) {
  return px_gpu::FromCompute<T>(ApplyUnary<kOp>(px_gpu::ToFloat(x)));
}

// vectorized: x and y are 16-byte aligned; the first n / kLanes * kLanes
// elements go 16 bytes at a time, the rest one by one.
template <Unary kOp, typename T>
__global__ void UnaryKernel(const T* __restrict__ x, T* __restrict__ y, int64_t n,
                            bool vectorized) {
  using V = px_gpu::Vec16<T>;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t done = 0;
  if (vectorized) {
    const int64_t nv = n / V::kLanes;
    const V* xv = reinterpret_cast<const V*>(x);
    V* yv = reinterpret_cast<V*>(y);
    for (int64_t i = tid; i < nv; i += stride) {
      V v = xv[i];
#pragma unroll
      for (int k = 0; k < V::kLanes; ++k) v.v[k] = Apply<kOp>(v.v[k]);
      yv[i] = v;
    }
    done = nv * V::kLanes;
  }
  for (int64_t i = done + tid; i < n; i += stride) y[i] = Apply<kOp>(x[i]);
}

template <Unary kOp, typename T>
void Launch(const void* x, void* y, int64_t n, px_gpu::Stream stream) {
  const bool vectorized = Aligned16(x) && Aligned16(y);
  const int64_t work = vectorized ? n / px_gpu::Vec16<T>::kLanes + 1 : n;
  PX_GPU_LAUNCH((UnaryKernel<kOp, T>), GridFor(work), kBlockSize, 0, stream)(
      static_cast<const T*>(x), static_cast<T*>(y), n, vectorized);
}

template <typename T>
void LaunchTyped(Unary op, const void* x, void* y, int64_t n, px_gpu::Stream stream) {
  switch (op) {
#define PX_UNARY_CASE(name) \
  case Unary::name: Launch<Unary::name, T>(x, y, n, stream); return;
    PX_UNARY_CASE(kNeg)
    PX_UNARY_CASE(kAbs)
    PX_UNARY_CASE(kExp)
    PX_UNARY_CASE(kLog)
    PX_UNARY_CASE(kSqrt)
    PX_UNARY_CASE(kRsqrt)
    PX_UNARY_CASE(kSquare)
    PX_UNARY_CASE(kRelu)
    PX_UNARY_CASE(kRelu6)
    PX_UNARY_CASE(kSigmoid)
    PX_UNARY_CASE(kTanh)
#undef PX_UNARY_CASE
  }
}

}  // namespace

void ew::LaunchUnary(Unary op, Dtype dtype, const void* x, void* y, int64_t n,
                     cudaStream_t stream) {
  VisitDtype(dtype, [&](auto tag) { LaunchTyped<decltype(tag)>(op, x, y, n, stream); });
}

}  // namespace plexus::cuda

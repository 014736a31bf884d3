// Device code shared by the elementwise .cu files (included only by them):
// the dtype visitor of ew::Type, conversions to the compute type, math
// overloads, wrapping integer arithmetic, and the generic grid-stride
// kernels that apply a functor over n contiguous elements (unary) or over a
// collapsed broadcast plan (binary). Everything is in an unnamed namespace:
// each .cu file instantiates its own kernels.
#ifndef PLEXUS_PLUGINS_GPU_KERNELS_ELEMENTWISE_DEVICE_H_
#define PLEXUS_PLUGINS_GPU_KERNELS_ELEMENTWISE_DEVICE_H_

#include <cstdint>
#include <type_traits>

#include "gpu_portability.h"
#include "kernels/elementwise_launch.h"
#include "kernels/launch_util.h"

namespace plexus::cuda {
namespace {

// ---------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------

template <typename T>
constexpr bool kIs16BitFloat =
    std::is_same_v<T, px_gpu::half> || std::is_same_v<T, px_gpu::bfloat16>;
template <typename T>
constexpr bool kIsFloating = kIs16BitFloat<T> || std::is_floating_point_v<T>;

// The arithmetic type of T: float for the 16-bit floats, T otherwise.
template <typename T>
using Compute = std::conditional_t<kIs16BitFloat<T>, float, T>;

template <typename T>
__device__ __forceinline__ Compute<T> ToC(T x) {
  if constexpr (kIs16BitFloat<T>) {
    return px_gpu::ToFloat(x);
  } else {
    return x;
  }
}
template <typename T>
__device__ __forceinline__ T FromC(Compute<T> x) {
  if constexpr (kIs16BitFloat<T>) {
    return px_gpu::FromFloat<T>(x);
  } else {
    return x;
  }
}

// Calls f(T{}) with the storage type of a floating-point ew::Type.
template <typename F>
void VisitFloatType(ew::Type type, F&& f) {
  switch (type) {
    case ew::Type::kFloat: f(float{}); return;
    case ew::Type::kDouble: f(double{}); return;
    case ew::Type::kHalf: f(px_gpu::half{}); return;
    case ew::Type::kBFloat16: f(px_gpu::bfloat16{}); return;
    default: return;
  }
}

// Calls f(T{}) with the storage type of an integer ew::Type.
template <typename F>
void VisitIntType(ew::Type type, F&& f) {
  switch (type) {
    case ew::Type::kInt8: f(int8_t{}); return;
    case ew::Type::kInt16: f(int16_t{}); return;
    case ew::Type::kInt32: f(int32_t{}); return;
    case ew::Type::kInt64: f(int64_t{}); return;
    case ew::Type::kUInt8: f(uint8_t{}); return;
    default: return;
  }
}

// ---------------------------------------------------------------------------
// Math on float and double (the C library's names, on both CUDA and HIP)
// ---------------------------------------------------------------------------

__device__ __forceinline__ float Floor(float x) { return floorf(x); }
__device__ __forceinline__ double Floor(double x) { return floor(x); }
__device__ __forceinline__ float Ceil(float x) { return ceilf(x); }
__device__ __forceinline__ double Ceil(double x) { return ceil(x); }
// Round half to even (the current rounding mode), as TensorFlow's Round.
__device__ __forceinline__ float Rint(float x) { return rintf(x); }
__device__ __forceinline__ double Rint(double x) { return rint(x); }
__device__ __forceinline__ float Erf(float x) { return erff(x); }
__device__ __forceinline__ double Erf(double x) { return erf(x); }
__device__ __forceinline__ float Log1p(float x) { return log1pf(x); }
__device__ __forceinline__ double Log1p(double x) { return log1p(x); }
__device__ __forceinline__ float Expm1(float x) { return expm1f(x); }
__device__ __forceinline__ double Expm1(double x) { return expm1(x); }
__device__ __forceinline__ float Pow(float x, float y) { return powf(x, y); }
__device__ __forceinline__ double Pow(double x, double y) { return pow(x, y); }
__device__ __forceinline__ float Fmod(float x, float y) { return fmodf(x, y); }
__device__ __forceinline__ double Fmod(double x, double y) { return fmod(x, y); }

// ---------------------------------------------------------------------------
// Integers: two's-complement wrapping (no signed overflow), as the cpu plugin
// ---------------------------------------------------------------------------

template <typename C>
__device__ __forceinline__ bool IsNeg(C x) {
  if constexpr (std::is_signed_v<C>) {
    return x < 0;
  } else {
    return false;
  }
}
template <typename C>
__device__ __forceinline__ C WrapAdd(C x, C y) {
  using U = std::make_unsigned_t<C>;
  return static_cast<C>(static_cast<U>(static_cast<U>(x) + static_cast<U>(y)));
}
template <typename C>
__device__ __forceinline__ C WrapSub(C x, C y) {
  using U = std::make_unsigned_t<C>;
  return static_cast<C>(static_cast<U>(static_cast<U>(x) - static_cast<U>(y)));
}
template <typename C>
__device__ __forceinline__ C WrapMul(C x, C y) {
  using U = std::make_unsigned_t<C>;
  using W = std::conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, U>;
  return static_cast<C>(static_cast<U>(static_cast<W>(static_cast<U>(x)) *
                                       static_cast<W>(static_cast<U>(y))));
}
// Truncating division and remainder; min / -1 wraps to min. The kernel
// classes refuse zero divisors before launching; a zero that slips through
// gives 0 here instead of the hardware's undefined value.
template <typename C>
__device__ __forceinline__ C IntDiv(C x, C y) {
  if (y == C(0)) return C(0);
  if constexpr (std::is_signed_v<C>) {
    if (y == C(-1)) return WrapSub(C(0), x);
  }
  return static_cast<C>(x / y);
}
template <typename C>
__device__ __forceinline__ C IntMod(C x, C y) {
  if (y == C(0)) return C(0);
  if constexpr (std::is_signed_v<C>) {
    if (y == C(-1)) return C(0);
  }
  return static_cast<C>(x % y);
}

// ---------------------------------------------------------------------------
// Generic kernels
// ---------------------------------------------------------------------------

// L values of T, aligned to their size (at most 16 bytes), for wide loads
// and stores.
template <typename T, int L>
struct alignas(sizeof(T) * L) VecOf {
  T v[L];
};

// y[i] = f(x[i]) over n contiguous elements. vectorized: x and y are
// 16-byte aligned; the first n / L * L elements go L at a time (16 bytes of
// In), the rest one by one.
template <typename In, typename Out, typename F>
__global__ void MapKernel(const In* __restrict__ x, Out* __restrict__ y, int64_t n,
                          bool vectorized, F f) {
  constexpr int L = 16 / sizeof(In);
  using VI = VecOf<In, L>;
  using VO = VecOf<Out, L>;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t done = 0;
  if (vectorized) {
    const int64_t nv = n / L;
    const VI* xv = reinterpret_cast<const VI*>(x);
    VO* yv = reinterpret_cast<VO*>(y);
    for (int64_t i = tid; i < nv; i += stride) {
      const VI v = xv[i];
      VO o;
#pragma unroll
      for (int k = 0; k < L; ++k) o.v[k] = f(v.v[k]);
      yv[i] = o;
    }
    done = nv * L;
  }
  for (int64_t i = done + tid; i < n; i += stride) y[i] = f(x[i]);
}

template <typename In, typename Out, typename F>
void LaunchMap(const void* x, void* y, int64_t n, F f, px_gpu::Stream stream) {
  const bool vectorized = Aligned16(x) && Aligned16(y);
  const int64_t work = vectorized ? n / (16 / sizeof(In)) + 1 : n;
  PX_GPU_LAUNCH((MapKernel<In, Out, F>), GridFor(work), kBlockSize, 0, stream)(
      static_cast<const In*>(x), static_cast<Out*>(y), n, vectorized, f);
}

// out[i] = f(a[i * a_step], b[i * b_step]) with steps 1 (contiguous) or 0
// (a scalar). vectorized: every pointer read with a step of 1, and out, is
// 16-byte aligned.
template <typename In, typename Out, typename F>
__global__ void FlatKernel(const In* __restrict__ a, const In* __restrict__ b,
                           Out* __restrict__ out, int64_t n, int a_step, int b_step,
                           bool vectorized, F f) {
  constexpr int L = 16 / sizeof(In);
  using VI = VecOf<In, L>;
  using VO = VecOf<Out, L>;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t done = 0;
  if (vectorized) {
    const int64_t nv = n / L;
    const In a0 = a[0], b0 = b[0];
    for (int64_t i = tid; i < nv; i += stride) {
      VI va, vb;
      VO vo;
      if (a_step != 0) va = reinterpret_cast<const VI*>(a)[i];
      if (b_step != 0) vb = reinterpret_cast<const VI*>(b)[i];
#pragma unroll
      for (int k = 0; k < L; ++k) {
        vo.v[k] = f(a_step != 0 ? va.v[k] : a0, b_step != 0 ? vb.v[k] : b0);
      }
      reinterpret_cast<VO*>(out)[i] = vo;
    }
    done = nv * L;
  }
  for (int64_t i = done + tid; i < n; i += stride) out[i] = f(a[i * a_step], b[i * b_step]);
}

// A plan in the kernel's index type.
template <int N, typename Index>
struct Geometry {
  int rank;
  Index num_elements;
  Index dims[ew::kMaxBroadcastRank];
  Index strides[N][ew::kMaxBroadcastRank];
};

template <int N, typename Index>
Geometry<N, Index> MakeGeometry(const ew::PlanN<N>& plan) {
  Geometry<N, Index> g{};
  g.rank = plan.rank;
  g.num_elements = static_cast<Index>(plan.num_elements);
  for (int d = 0; d < plan.rank; ++d) {
    g.dims[d] = static_cast<Index>(plan.dims[d]);
    for (int k = 0; k < N; ++k) g.strides[k][d] = static_cast<Index>(plan.strides[k][d]);
  }
  return g;
}

template <typename In, typename Out, typename F, typename Index>
__global__ void BroadcastKernel(const In* __restrict__ a, const In* __restrict__ b,
                                Out* __restrict__ out, Geometry<2, Index> g, F f) {
  const Index stride = static_cast<Index>(blockDim.x) * gridDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < g.num_elements;
       i += stride) {
    Index rest = i, ia = 0, ib = 0;
    for (int d = g.rank - 1; d > 0; --d) {
      const Index coord = rest % g.dims[d];
      rest /= g.dims[d];
      ia += coord * g.strides[0][d];
      ib += coord * g.strides[1][d];
    }
    ia += rest * g.strides[0][0];
    ib += rest * g.strides[1][0];
    out[i] = f(a[ia], b[ib]);
  }
}

// out = f(a, b) over a two-input plan (num_elements > 0): the flat kernel for
// rank 0 and for same shapes or a scalar operand, else the broadcast kernel
// in 32-bit index arithmetic below 2^31 elements.
template <typename In, typename Out, typename F>
void LaunchPlan2(const void* a_raw, const void* b_raw, void* out_raw, const ew::BroadcastPlan& plan,
                 F f, px_gpu::Stream stream) {
  const In* a = static_cast<const In*>(a_raw);
  const In* b = static_cast<const In*>(b_raw);
  Out* out = static_cast<Out*>(out_raw);
  const int64_t n = plan.num_elements;
  const bool flat = plan.rank == 0 || (plan.rank == 1 && plan.strides[0][0] <= 1 &&
                                       plan.strides[1][0] <= 1);
  if (flat) {
    const int a_step = plan.rank == 0 ? 0 : static_cast<int>(plan.strides[0][0]);
    const int b_step = plan.rank == 0 ? 0 : static_cast<int>(plan.strides[1][0]);
    const bool vectorized = Aligned16(out) && (a_step == 0 || Aligned16(a)) &&
                            (b_step == 0 || Aligned16(b));
    const int64_t work = vectorized ? n / (16 / sizeof(In)) + 1 : n;
    PX_GPU_LAUNCH((FlatKernel<In, Out, F>), GridFor(work), kBlockSize, 0, stream)(
        a, b, out, n, a_step, b_step, vectorized, f);
  } else if (n < (int64_t{1} << 31)) {
    PX_GPU_LAUNCH((BroadcastKernel<In, Out, F, uint32_t>), GridFor(n), kBlockSize, 0, stream)(
        a, b, out, MakeGeometry<2, uint32_t>(plan), f);
  } else {
    PX_GPU_LAUNCH((BroadcastKernel<In, Out, F, int64_t>), GridFor(n), kBlockSize, 0, stream)(
        a, b, out, MakeGeometry<2, int64_t>(plan), f);
  }
}

}  // namespace
}  // namespace plexus::cuda

#endif  // PLEXUS_PLUGINS_GPU_KERNELS_ELEMENTWISE_DEVICE_H_

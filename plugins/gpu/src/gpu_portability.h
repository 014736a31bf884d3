// The few names GPU kernel code needs that differ between CUDA and HIP, so
// that the kernels under kernels/*.cu compile with nvcc for the CUDA plugin
// and with hipcc for the ROCm plugin. Kernel code uses only these names and plain C++
// (no CUDA-only intrinsics where a portable form does as well):
//
//   PX_GPU_LAUNCH(kernel, grid, block, shared_bytes, stream)(args...);
//   px_gpu::half, px_gpu::bfloat16       16-bit storage types
//   px_gpu::ToFloat(h), px_gpu::FromFloat<T>(f)
//   px_gpu::Stream, px_gpu::Error, px_gpu::kSuccess, px_gpu::GetLastError()
//   px_gpu::kWarpSize, px_gpu::ShuffleDown(v, offset), px_gpu::Shuffle(v, lane)
//
// The CUDA branch is built by nvcc for the CUDA plugin; the HIP branch
// (PX_GPU_HIP, defined by plugins/rocm's build for hipcc) maps the same
// names to hip_runtime.h, hip_fp16.h and hip_bfloat16.h. Host-side runtime
// names (Stream, Error, MemcpyAsync, ...) are in gpu_runtime.h.
#ifndef PLEXUS_PLUGINS_GPU_GPU_PORTABILITY_H_
#define PLEXUS_PLUGINS_GPU_GPU_PORTABILITY_H_

#include "gpu_runtime.h"

#if defined(PX_GPU_HIP)
#include <hip/hip_bfloat16.h>
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>

// hipcc accepts the triple-chevron launch of CUDA.
#define PX_GPU_LAUNCH(kernel, grid, block, shared_bytes, stream) \
  kernel<<<(grid), (block), (shared_bytes), (stream)>>>

namespace px_gpu {
using half = __half;
using bfloat16 = hip_bfloat16;

// A wavefront: 64 lanes on the CDNA GPUs this plugin is built for (gfx90a,
// gfx940). HIP's shuffles take no lane mask.
constexpr int kWarpSize = 64;
template <typename V>
__device__ __forceinline__ V ShuffleDown(V v, int offset) {
  return __shfl_down(v, offset);
}
template <typename V>
__device__ __forceinline__ V Shuffle(V v, int lane) {
  return __shfl(v, lane);
}

__device__ __forceinline__ float ToFloat(half x) { return __half2float(x); }
__device__ __forceinline__ float ToFloat(bfloat16 x) { return static_cast<float>(x); }
__device__ __forceinline__ float ToFloat(float x) { return x; }
__device__ __forceinline__ double ToFloat(double x) { return x; }

template <typename T>
__device__ __forceinline__ T FromFloat(float x);
template <>
__device__ __forceinline__ half FromFloat<half>(float x) { return __float2half_rn(x); }
template <>
__device__ __forceinline__ bfloat16 FromFloat<bfloat16>(float x) { return bfloat16(x); }
template <>
__device__ __forceinline__ float FromFloat<float>(float x) { return x; }

}  // namespace px_gpu
#else
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

// Kernel launch: PX_GPU_LAUNCH(k, grid, block, smem, stream)(a, b, c); a
// template kernel goes in parentheses: PX_GPU_LAUNCH((k<T, U>), ...).
#define PX_GPU_LAUNCH(kernel, grid, block, shared_bytes, stream) \
  kernel<<<(grid), (block), (shared_bytes), (stream)>>>

namespace px_gpu {
using half = __half;
using bfloat16 = __nv_bfloat16;

// Threads per warp (HIP: 64 on most AMD GPUs) and a shuffle over the whole
// warp: lane i receives v of lane i + offset (its own v where that lane is
// past the warp's end). Every lane of the warp must call it.
constexpr int kWarpSize = 32;
template <typename V>
__device__ __forceinline__ V ShuffleDown(V v, int offset) {
  return __shfl_down_sync(0xffffffffu, v, offset);
}
// Every lane receives v of lane `lane`.
template <typename V>
__device__ __forceinline__ V Shuffle(V v, int lane) {
  return __shfl_sync(0xffffffffu, v, lane);
}

__device__ __forceinline__ float ToFloat(half x) { return __half2float(x); }
__device__ __forceinline__ float ToFloat(bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float ToFloat(float x) { return x; }
__device__ __forceinline__ double ToFloat(double x) { return x; }

template <typename T>
__device__ __forceinline__ T FromFloat(float x);
template <>
__device__ __forceinline__ half FromFloat<half>(float x) { return __float2half_rn(x); }
template <>
__device__ __forceinline__ bfloat16 FromFloat<bfloat16>(float x) { return __float2bfloat16_rn(x); }
template <>
__device__ __forceinline__ float FromFloat<float>(float x) { return x; }

}  // namespace px_gpu
#endif

namespace px_gpu {

// The type arithmetic on T runs in: float for the 16-bit types.
template <typename T> struct ComputeTypeOf { using type = T; };
template <> struct ComputeTypeOf<half> { using type = float; };
template <> struct ComputeTypeOf<bfloat16> { using type = float; };
template <typename T>
using ComputeType = typename ComputeTypeOf<T>::type;

template <typename T>
__device__ __forceinline__ T FromCompute(ComputeType<T> x) {
  if constexpr (sizeof(T) == 2) {
    return FromFloat<T>(x);
  } else {
    return x;
  }
}

// Math on float and double by overloading (the C library's names, which
// both CUDA and HIP provide on the device).
__device__ __forceinline__ float Exp(float x) { return expf(x); }
__device__ __forceinline__ double Exp(double x) { return exp(x); }
__device__ __forceinline__ float Log(float x) { return logf(x); }
__device__ __forceinline__ double Log(double x) { return log(x); }
__device__ __forceinline__ float Sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double Sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float Rsqrt(float x) { return rsqrtf(x); }
__device__ __forceinline__ double Rsqrt(double x) { return rsqrt(x); }
__device__ __forceinline__ float Tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double Tanh(double x) { return tanh(x); }
__device__ __forceinline__ float Abs(float x) { return fabsf(x); }
__device__ __forceinline__ double Abs(double x) { return fabs(x); }
template <typename C>
__device__ __forceinline__ bool IsNan(C x) { return x != x; }

// 16 bytes of T, for 128-bit loads and stores.
template <typename T>
struct alignas(16) Vec16 {
  static constexpr int kLanes = 16 / sizeof(T);
  T v[kLanes];
};

}  // namespace px_gpu

#endif  // PLEXUS_PLUGINS_GPU_GPU_PORTABILITY_H_

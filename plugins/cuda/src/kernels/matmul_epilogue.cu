// The _FusedMatMul epilogue kernels cuBLASLt's epilogues do not cover:
// Relu6, Elu, LeakyRelu, Tanh and Sigmoid after the GEMM (whose epilogue
// already added the bias), and bias plus activation where the GEMM ran
// without an epilogue (double, or no cuBLASLt algorithm for the epilogue).
// A grid-stride loop over the output; 16-bit types compute in float.
#include <cstdint>

#include "gpu_portability.h"
#include "kernels/launch_util.h"
#include "kernels/matmul_launch.h"

namespace plexus::cuda {
namespace {

using mm::Activation;

__device__ __forceinline__ float Expm1(float x) { return expm1f(x); }
__device__ __forceinline__ double Expm1(double x) { return expm1(x); }

// NaN passes through (the comparisons are false), as in sdk/fused.h.
template <Activation kAct, typename C>
__device__ __forceinline__ C Activate(C x, C alpha) {
  if constexpr (kAct == Activation::kNone) {
    return x;
  } else if constexpr (kAct == Activation::kRelu) {
    return x < C(0) ? C(0) : x;
  } else if constexpr (kAct == Activation::kRelu6) {
    return x < C(0) ? C(0) : (x > C(6) ? C(6) : x);
  } else if constexpr (kAct == Activation::kElu) {
    return x < C(0) ? Expm1(x) : x;
  } else if constexpr (kAct == Activation::kLeakyRelu) {
    return x < C(0) ? alpha * x : x;
  } else if constexpr (kAct == Activation::kTanh) {
    return px_gpu::Tanh(x);
  } else {
    static_assert(kAct == Activation::kSigmoid, "unhandled activation");
    return C(1) / (C(1) + px_gpu::Exp(-x));
  }
}

template <Activation kAct, typename T>
__global__ void BiasActivationKernel(T* __restrict__ y, const T* __restrict__ bias, int64_t n,
                                     int64_t cols, px_gpu::ComputeType<T> alpha) {
  using C = px_gpu::ComputeType<T>;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    C v = px_gpu::ToFloat(y[i]);
    if (bias != nullptr) v += static_cast<C>(px_gpu::ToFloat(bias[i % cols]));
    y[i] = px_gpu::FromCompute<T>(Activate<kAct>(v, alpha));
  }
}

template <Activation kAct, typename T>
void Launch(void* y, const void* bias, int64_t rows, int64_t cols, float alpha,
            px_gpu::Stream stream) {
  const int64_t n = rows * cols;
  PX_GPU_LAUNCH((BiasActivationKernel<kAct, T>), GridFor(n), kBlockSize, 0, stream)(
      static_cast<T*>(y), static_cast<const T*>(bias), n, cols,
      static_cast<px_gpu::ComputeType<T>>(alpha));
}

template <typename T>
void LaunchTyped(void* y, const void* bias, int64_t rows, int64_t cols, Activation act,
                 float alpha, px_gpu::Stream stream) {
  switch (act) {
#define PX_ACT_CASE(name) \
  case Activation::name: Launch<Activation::name, T>(y, bias, rows, cols, alpha, stream); return;
    PX_ACT_CASE(kNone)
    PX_ACT_CASE(kRelu)
    PX_ACT_CASE(kRelu6)
    PX_ACT_CASE(kElu)
    PX_ACT_CASE(kLeakyRelu)
    PX_ACT_CASE(kTanh)
    PX_ACT_CASE(kSigmoid)
#undef PX_ACT_CASE
  }
}

}  // namespace

void mm::LaunchBiasActivation(ew::Dtype dtype, void* y, const void* bias, int64_t rows,
                              int64_t cols, Activation act, float alpha, px_gpu::Stream stream) {
  VisitDtype(dtype, [&](auto tag) {
    LaunchTyped<decltype(tag)>(y, bias, rows, cols, act, alpha, stream);
  });
}

}  // namespace plexus::cuda

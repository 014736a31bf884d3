// The fused optimizer updates: one thread per element in a grid-stride loop,
// reading var, its slots and the gradient once and writing their new values,
// in the compute type (float for half, bfloat16 and float; double for
// double), with the reference kernels' formulas (sdk/reference/optimizer.cc).
// Each thread first reads the hyperparameter scalars from device memory (the
// same few addresses for every thread: cached). 32-bit index arithmetic below
// 2^31 elements.
#include <cstdint>
#include <type_traits>

#include "gpu_portability.h"
#include "kernels/launch_util.h"
#include "kernels/optimizer_launch.h"

namespace plexus::cuda {
namespace {

using opt::Update;

template <typename T>
using Compute = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename T>
__device__ __forceinline__ Compute<T> Load(const T* p, int64_t i) {
  return static_cast<Compute<T>>(px_gpu::ToFloat(p[i]));
}

template <typename T>
__device__ __forceinline__ void Store(T* p, int64_t i, Compute<T> v) {
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
    p[i] = v;
  } else {
    p[i] = px_gpu::FromFloat<T>(v);
  }
}

// The hyperparameters in the compute type C.
template <typename C>
struct HyperC {
  C lr, momentum, beta1, beta2, epsilon, lr_t, decay, step_size, bias2_sqrt, rho;
};

// Reads the update's scalars from device memory and combines them as the
// reference kernels do (sdk/reference/optimizer.cc), in C.
template <Update U, typename T>
__device__ __forceinline__ HyperC<Compute<T>> ReadHyper(const opt::Scalars& s) {
  using C = Compute<T>;
  auto at = [&](int k) { return Load(static_cast<const T*>(s.p[k]), 0); };
  HyperC<C> h{};
  if constexpr (U == Update::kGradientDescent) {
    h.lr = at(0);
  } else if constexpr (U == Update::kMomentum) {
    h.lr = at(0);
    h.momentum = at(1);
  } else if constexpr (U == Update::kAdam) {
    const C beta1_power = at(0), beta2_power = at(1), lr = at(2);
    h.beta1 = at(3);
    h.beta2 = at(4);
    h.epsilon = at(5);
    h.lr_t = lr * sqrt(C(1) - beta2_power) / (C(1) - beta1_power);
  } else if constexpr (U == Update::kAdamW) {
    const C beta1_power = at(0), beta2_power = at(1), lr = at(2), weight_decay = at(6);
    h.beta1 = at(3);
    h.beta2 = at(4);
    h.epsilon = at(5);
    h.decay = C(1) - lr * weight_decay;
    h.step_size = lr / (C(1) - beta1_power);
    h.bias2_sqrt = sqrt(C(1) - beta2_power);
  } else {  // RMSProp
    h.lr = at(0);
    h.rho = at(1);
    h.momentum = at(2);
    h.epsilon = at(3);
  }
  return h;
}

template <Update U, typename T, typename Index>
__global__ void ApplyKernel(const T* __restrict__ var, const T* __restrict__ s1, const T* __restrict__ s2,
                            const T* __restrict__ grad, T* __restrict__ var_out, T* __restrict__ s1_out,
                            T* __restrict__ s2_out, Index n, opt::Scalars scalars) {
  using C = Compute<T>;
  const HyperC<C> h = ReadHyper<U, T>(scalars);
  const bool nesterov = scalars.nesterov;
  const Index stride = static_cast<Index>(blockDim.x) * gridDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const C g = Load(grad, i);
    const C w = Load(var, i);
    if constexpr (U == Update::kGradientDescent) {
      Store(var_out, i, w - h.lr * g);
    } else if constexpr (U == Update::kMomentum) {
      const C a = Load(s1, i) * h.momentum + g;
      Store(var_out, i, nesterov ? w - (g * h.lr + a * h.momentum * h.lr) : w - a * h.lr);
      Store(s1_out, i, a);
    } else if constexpr (U == Update::kAdam) {
      C m = Load(s1, i), v = Load(s2, i);
      m += (g - m) * (C(1) - h.beta1);
      v += (g * g - v) * (C(1) - h.beta2);
      const C step = nesterov ? (m * h.beta1 + (C(1) - h.beta1) * g) : m;
      Store(var_out, i, w - h.lr_t * step / (sqrt(v) + h.epsilon));
      Store(s1_out, i, m);
      Store(s2_out, i, v);
    } else if constexpr (U == Update::kAdamW) {
      const C m0 = Load(s1, i);
      const C m = m0 + (C(1) - h.beta1) * (g - m0);
      const C v = Load(s2, i) * h.beta2 + (C(1) - h.beta2) * g * g;
      const C denom = sqrt(v) / h.bias2_sqrt + h.epsilon;
      Store(var_out, i, w * h.decay - h.step_size * (m / denom));
      Store(s1_out, i, m);
      Store(s2_out, i, v);
    } else {  // RMSProp
      C ms = Load(s1, i);
      ms += (g * g - ms) * (C(1) - h.rho);
      const C mom = Load(s2, i) * h.momentum + (g * h.lr) / sqrt(ms + h.epsilon);
      Store(var_out, i, w - mom);
      Store(s1_out, i, ms);
      Store(s2_out, i, mom);
    }
  }
}

template <Update U, typename T>
void Launch(const void* var, const void* s1, const void* s2, const void* grad, void* var_out,
            void* s1_out, void* s2_out, int64_t n, const opt::Scalars& h, px_gpu::Stream stream) {
  const auto* v = static_cast<const T*>(var);
  const auto* a = static_cast<const T*>(s1);
  const auto* b = static_cast<const T*>(s2);
  const auto* g = static_cast<const T*>(grad);
  auto* vo = static_cast<T*>(var_out);
  auto* ao = static_cast<T*>(s1_out);
  auto* bo = static_cast<T*>(s2_out);
  if (n < (int64_t{1} << 31)) {
    PX_GPU_LAUNCH((ApplyKernel<U, T, uint32_t>), GridFor(n), kBlockSize, 0, stream)(
        v, a, b, g, vo, ao, bo, static_cast<uint32_t>(n), h);
  } else {
    PX_GPU_LAUNCH((ApplyKernel<U, T, int64_t>), GridFor(n), kBlockSize, 0, stream)(v, a, b, g, vo, ao, bo, n, h);
  }
}

template <Update U>
void LaunchType(ew::Dtype dtype, const void* var, const void* s1, const void* s2, const void* grad,
                void* var_out, void* s1_out, void* s2_out, int64_t n, const opt::Scalars& h,
                px_gpu::Stream stream) {
  switch (dtype) {
    case ew::Dtype::kFloat: return Launch<U, float>(var, s1, s2, grad, var_out, s1_out, s2_out, n, h, stream);
    case ew::Dtype::kDouble: return Launch<U, double>(var, s1, s2, grad, var_out, s1_out, s2_out, n, h, stream);
    case ew::Dtype::kHalf:
      return Launch<U, px_gpu::half>(var, s1, s2, grad, var_out, s1_out, s2_out, n, h, stream);
    case ew::Dtype::kBFloat16:
      return Launch<U, px_gpu::bfloat16>(var, s1, s2, grad, var_out, s1_out, s2_out, n, h, stream);
  }
}

}  // namespace

void opt::LaunchApply(Update update, ew::Dtype dtype, const void* var, const void* s1, const void* s2,
                      const void* grad, void* var_out, void* s1_out, void* s2_out, int64_t n,
                      const Scalars& h, px_gpu::Stream stream) {
  switch (update) {
    case Update::kGradientDescent:
      return LaunchType<Update::kGradientDescent>(dtype, var, s1, s2, grad, var_out, s1_out, s2_out, n, h,
                                                  stream);
    case Update::kMomentum:
      return LaunchType<Update::kMomentum>(dtype, var, s1, s2, grad, var_out, s1_out, s2_out, n, h, stream);
    case Update::kAdam:
      return LaunchType<Update::kAdam>(dtype, var, s1, s2, grad, var_out, s1_out, s2_out, n, h, stream);
    case Update::kAdamW:
      return LaunchType<Update::kAdamW>(dtype, var, s1, s2, grad, var_out, s1_out, s2_out, n, h, stream);
    case Update::kRMSProp:
      return LaunchType<Update::kRMSProp>(dtype, var, s1, s2, grad, var_out, s1_out, s2_out, n, h, stream);
  }
}

}  // namespace plexus::cuda

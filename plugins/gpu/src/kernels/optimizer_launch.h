// The launch function of the fused optimizer updates (_PlexusApplyGradientDescent,
// _PlexusApplyMomentum, _PlexusApplyAdam, _PlexusApplyAdamW,
// _PlexusApplyRMSProp): plain C++ between the kernel classes (optimizer.cc)
// and the device code (optimizer.cu).
#ifndef PLEXUS_PLUGINS_GPU_KERNELS_OPTIMIZER_LAUNCH_H_
#define PLEXUS_PLUGINS_GPU_KERNELS_OPTIMIZER_LAUNCH_H_

#include "gpu_runtime.h"

#include <cstdint>

#include "kernels/elementwise_launch.h"

namespace plexus::cuda::opt {

enum class Update : int { kGradientDescent, kMomentum, kAdam, kAdamW, kRMSProp };

// The hyperparameters: scalars of the var's dtype in device memory (a
// training step computes beta1_power and beta2_power on the device each
// step; reading them on the host would wait for the device and copy them
// back every step). The device code reads them and combines them in the
// compute type (float for half, bfloat16 and float; double for double) as
// the reference kernels combine them. In each update's input order:
//   GradientDescent: alpha
//   Momentum:        lr, momentum
//   Adam:            beta1_power, beta2_power, lr, beta1, beta2, epsilon
//   AdamW:           the same, then weight_decay
//   RMSProp:         lr, rho, momentum, epsilon
constexpr int kMaxScalars = 7;
struct Scalars {
  const void* p[kMaxScalars] = {};
  bool nesterov = false;  // Momentum, Adam
};

// Writes the new var (and the new slots s1, s2, as many as the update has:
// Momentum's accum; Adam's m and v; RMSProp's ms and mom) from var, the
// slots and grad, n > 0 elements each of `dtype`, on `stream`.
void LaunchApply(Update update, ew::Dtype dtype, const void* var, const void* s1, const void* s2,
                 const void* grad, void* var_out, void* s1_out, void* s2_out, int64_t n,
                 const Scalars& scalars, px_gpu::Stream stream);

}  // namespace plexus::cuda::opt

#endif  // PLEXUS_PLUGINS_GPU_KERNELS_OPTIMIZER_LAUNCH_H_

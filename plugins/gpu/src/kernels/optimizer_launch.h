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

// The hyperparameters, read from their host-memory scalars and combined on
// the host in the compute type (float for half, bfloat16 and float; double
// for double), as the reference kernels combine them; the device code
// rounds each to that type again, which leaves them unchanged.
struct Hyper {
  double lr = 0;         // alpha (GradientDescent), lr (Momentum, RMSProp, AdamW)
  double momentum = 0;   // Momentum, RMSProp
  double beta1 = 0, beta2 = 0, epsilon = 0;
  double lr_t = 0;       // Adam: lr * sqrt(1 - beta2_power) / (1 - beta1_power)
  double decay = 0;      // AdamW: 1 - lr * weight_decay
  double step_size = 0;  // AdamW: lr / (1 - beta1_power)
  double bias2_sqrt = 0; // AdamW: sqrt(1 - beta2_power)
  double rho = 0;        // RMSProp
  bool nesterov = false; // Momentum, Adam
};

// Writes the new var (and the new slots s1, s2, as many as the update has:
// Momentum's accum; Adam's m and v; RMSProp's ms and mom) from var, the
// slots and grad, n > 0 elements each of `dtype`, on `stream`.
void LaunchApply(Update update, ew::Dtype dtype, const void* var, const void* s1, const void* s2,
                 const void* grad, void* var_out, void* s1_out, void* s2_out, int64_t n,
                 const Hyper& h, px_gpu::Stream stream);

}  // namespace plexus::cuda::opt

#endif  // PLEXUS_PLUGINS_GPU_KERNELS_OPTIMIZER_LAUNCH_H_

// The launch functions of the training kernels of the GPU plugins: the
// activation gradients (activation_grad.cu), the softmax cross entropy
// (xent.cu) and the pooling gradients (pool_grad.cu). Plain C++ between the
// kernel classes (nn_grad.cc, host compiler) and the device code (nvcc or
// hipcc).
#ifndef PLEXUS_PLUGINS_GPU_KERNELS_NN_GRAD_LAUNCH_H_
#define PLEXUS_PLUGINS_GPU_KERNELS_NN_GRAD_LAUNCH_H_

#include "gpu_runtime.h"

#include <cstdint>

#include "kernels/elementwise_launch.h"
#include "kernels/pool_launch.h"

namespace plexus::cuda::grad {

// The gradients of the activations and of the unary math ops. With
// (a, b) the op's two inputs:
//   ReluGrad .. SoftsignGrad take (gradients, features) and
//   SigmoidGrad .. ReciprocalGrad take (y, dy).
// kRelu and kRelu6 have every real type; the others the floating types.
enum class Activation : int {
  kRelu, kRelu6, kElu, kSelu, kLeakyRelu, kSoftplus, kSoftsign,
  kSigmoid, kTanh, kRsqrt, kSqrt, kReciprocal,
};

// out[i] = grad(a[i], b[i]) for i < n (n > 0); `alpha` is LeakyReluGrad's.
void LaunchActivationGrad(Activation op, ew::Type type, const void* a, const void* b, void* out,
                          int64_t n, float alpha, px_gpu::Stream stream);

// SoftmaxCrossEntropyWithLogits over `batch` rows of `classes`: features
// element (r, k) is features[r * f_row + k * f_col], labels element (r, k)
// labels[r * l_row + k * l_col] (a step of 0 broadcasts). loss[r] =
// sum_k labels(r, k) * (logsumexp(f(r, .)) - f(r, k)), backprop (r, k) =
// softmax(f(r, .))[k] - labels(r, k), row-major [batch, classes].
struct XentPlan {
  int64_t batch = 0, classes = 0;
  int64_t f_row = 0, f_col = 1, l_row = 0, l_col = 1;
};
void LaunchSoftmaxXent(ew::Dtype dtype, const void* features, const void* labels, void* loss,
                       void* backprop, const XentPlan& plan, px_gpu::Stream stream);

// SparseSoftmaxCrossEntropyWithLogits: features [batch, classes] (classes
// > 0), labels [batch] of int32 (int64_labels false) or int64. A row whose
// label is outside [0, classes) gets NaN loss and backprop, and the
// smallest such row is folded into *bad_row with an atomic min (device
// memory, set to UINT32_MAX before; batch < 2^32).
void LaunchSparseSoftmaxXent(ew::Dtype dtype, bool int64_labels, const void* features,
                             const void* labels, void* loss, void* backprop, int64_t batch,
                             int64_t classes, unsigned* bad_row, px_gpu::Stream stream);

// MaxPoolGrad: dx has the shape of orig_input x (the plan's input); each
// element of grad (the plan's output shape) goes to the first largest
// element of its window in x (row-major window order; the first in-bounds
// element when no later one is larger, NaN included), as the reference
// plugin does. Input elements n * c * h * w > 0.
void LaunchMaxPoolGrad(ew::Dtype dtype, const void* x, const void* grad, void* dx,
                       const pool::PoolPlan& plan, px_gpu::Stream stream);

// AvgPoolGrad: each grad element spread evenly over the in-bounds part of
// its window. Input elements n * c * h * w > 0.
void LaunchAvgPoolGrad(ew::Dtype dtype, const void* grad, void* dx, const pool::PoolPlan& plan,
                       px_gpu::Stream stream);

}  // namespace plexus::cuda::grad

#endif  // PLEXUS_PLUGINS_GPU_KERNELS_NN_GRAD_LAUNCH_H_

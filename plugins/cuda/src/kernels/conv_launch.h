// The convolution kernels' own device code (conv.cu), called from conv.cc
// and conv_backprop.cc around cuDNN's convolutions: the filter reorders, the
// input padding cuDNN's symmetric padding cannot express (and its crop),
// and the fused epilogue.
#ifndef PLEXUS_PLUGINS_CUDA_KERNELS_CONV_LAUNCH_H_
#define PLEXUS_PLUGINS_CUDA_KERNELS_CONV_LAUNCH_H_

#include "gpu_runtime.h"

#include <cstdint>

#include "kernels/elementwise_launch.h"

namespace plexus::cuda::conv {

// TensorFlow's filter [r, i, o] (HWIO with r = kh * kw; a depthwise filter
// [kh, kw, c, m] is the same with i = 1 and o = c * m) to cuDNN's
// [o, r, i] (KRSC, kcrs false) or [o, i, r] (KCRS). Elements r * i * o > 0.
void LaunchFilterReorder(ew::Dtype dtype, const void* in, void* out, int64_t r, int64_t i,
                         int64_t o, bool kcrs, px_gpu::Stream stream);

// The inverse: a filter gradient from cuDNN's KRSC (kcrs false) or KCRS
// back to TensorFlow's HWIO [r, i, o]. Elements r * i * o > 0.
void LaunchFilterToHwio(ew::Dtype dtype, const void* in, void* out, int64_t r, int64_t i,
                        int64_t o, bool kcrs, px_gpu::Stream stream);

// A 4-D input [n, h, w, c] (NHWC) or [n, c, h, w] (NCHW) copied into the
// middle of a zeroed [n, top + h + bottom, left + w + right, c] (or NCHW)
// buffer; every output element is written.
struct PadPlan {
  bool nchw = false;
  int64_t n = 0, c = 0, h = 0, w = 0;
  int64_t top = 0, bottom = 0, left = 0, right = 0;
};
void LaunchPadInput(ew::Dtype dtype, const void* x, void* y, const PadPlan& plan,
                    px_gpu::Stream stream);
// The inverse: x = the middle [n, h, w, c] (or NCHW) of the padded y
// (n * c * h * w > 0), the input gradient of a padded convolution.
void LaunchCropInput(ew::Dtype dtype, const void* y, void* x, const PadPlan& plan,
                     px_gpu::Stream stream);

// The activations of the fused convolutions (the values of sdk::FusedActivation).
enum class Activation : int { kNone, kRelu, kRelu6, kElu, kLeakyRelu, kTanh, kSigmoid };

// y = act(y + bias[ch]) or, with batch_norm,
// y = act((y - mean[ch]) * scale[ch] / sqrt(variance[ch] + epsilon) + offset[ch])
// in place over `total` (> 0) output elements with `channels` channels:
// ch = i % channels (NHWC) or (i / spatial) % channels (NCHW). args are
// device pointers of the output's dtype: {bias} or {scale, offset, mean,
// variance}. 16-bit types compute in float. Launch errors are left for
// cudaGetLastError.
struct EpiloguePlan {
  bool nchw = false;
  int64_t total = 0, channels = 1, spatial = 1;
  bool batch_norm = false;
  Activation act = Activation::kNone;
  float alpha = 0.2f;
  float epsilon = 1e-4f;
};
void LaunchEpilogue(ew::Dtype dtype, void* y, const void* const args[4], const EpiloguePlan& plan,
                    px_gpu::Stream stream);

}  // namespace plexus::cuda::conv

#endif  // PLEXUS_PLUGINS_CUDA_KERNELS_CONV_LAUNCH_H_

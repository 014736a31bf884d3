// Plexus's own convolutions for GPUs without a vendor DNN library (the ROCm
// plugin) or instead of cuDNN (the CUDA plugin with PX_CUDA_KERNELS=native):
// Conv2D as an implicit GEMM and a direct depthwise kernel, both with the
// per-channel epilogue of gemm_launch.h. Plain C++ between the kernel class
// (native_conv.cc) and the device code (conv_direct.cu).
#ifndef PLEXUS_PLUGINS_GPU_KERNELS_CONV_DIRECT_LAUNCH_H_
#define PLEXUS_PLUGINS_GPU_KERNELS_CONV_DIRECT_LAUNCH_H_

#include "gpu_runtime.h"

#include <cstdint>

#include "kernels/elementwise_launch.h"
#include "kernels/gemm_launch.h"

namespace plexus::cuda::conv_direct {

// One 2-D convolution. Input element (b, y, x, ch) lies at
//   x_sn * b + x_sh * y + x_sw * x + x_sc * ch,
// output element (b, oy, ox, ch) at y_sn * b + y_sh * oy + y_sw * ox + y_sc * ch
// (element strides: NHWC or NCHW are only other strides). The filter is
// TensorFlow's [kh, kw, filter_in, out_c] (HWIO), contiguous.
//
// Conv2D: filter_in = c / groups input channels per group, out_c / groups
// output channels per group; output channel ch of group g = ch / (out_c /
// groups) reads input channels g * filter_in .. + filter_in.
// Depthwise: filter [kh, kw, c, multiplier], out_c = c * multiplier; output
// channel ch reads input channel ch / multiplier.
//
// Output (oy, ox) reads input rows oy * sh - pad_top + r * dh (r < kh) and
// columns ox * sw - pad_left + s * dw (s < kw); positions outside the input
// count as zeros. Sums in float (double for double); the epilogue's channel
// is the output channel.
struct ConvPlan {
  int64_t n = 0, h = 0, w = 0, c = 0;
  int64_t oh = 0, ow = 0, out_c = 0;
  int64_t kh = 0, kw = 0, sh = 1, sw = 1, dh = 1, dw = 1, pad_top = 0, pad_left = 0;
  int64_t groups = 1, filter_in = 0;  // Conv2D
  int64_t multiplier = 1;             // depthwise
  int64_t x_sn = 0, x_sh = 0, x_sw = 0, x_sc = 0;
  int64_t y_sn = 0, y_sh = 0, y_sw = 0, y_sc = 0;
};

// Output elements n * oh * ow * out_c > 0. Launch errors are left for
// GetLastError (the caller's CheckLaunch).
void LaunchConv2D(ew::Dtype dtype, const void* x, const void* filter, void* y,
                  const ConvPlan& plan, const gemm::Epilogue& epilogue, px_gpu::Stream stream);
void LaunchDepthwise(ew::Dtype dtype, const void* x, const void* filter, void* y,
                     const ConvPlan& plan, const gemm::Epilogue& epilogue,
                     px_gpu::Stream stream);

}  // namespace plexus::cuda::conv_direct

#endif  // PLEXUS_PLUGINS_GPU_KERNELS_CONV_DIRECT_LAUNCH_H_

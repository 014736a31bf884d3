// A direct float convolution for inputs of few channels (a network's first
// layer on one channel of audio features or gray pixels), where the patch
// matrix of im2col is narrow and oneDNN's kernels, built for channel blocks
// of 16, spend most of their work on padding. Each output pixel is a sum of
// kh*kw*c broadcast input values times a vector of output channels; a
// block of output pixels accumulates in registers for up to four vectors of
// output channels at once, as ONNX Runtime's MLAS does for its NCHW-input
// convolution. conv_small_depth.cc has the details and the measurements.
#ifndef PLEXUS_PLUGINS_CPU_KERNELS_CONV_SMALL_DEPTH_H_
#define PLEXUS_PLUGINS_CPU_KERNELS_CONV_SMALL_DEPTH_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "kernels/conv_im2col.h"
#include "kernels/fused_epilogue.h"

namespace plexus::cpu {

// One per kernel instance; Run may be called from several threads at once.
class SmallDepthConv {
 public:
  // y = epilogue(conv(x, f)) for NHWC x and y and an HWIO filter f
  // (`epilogue` null for a plain convolution). False (nothing written) when
  // the kernel is not the one for the geometry (see Prefer).
  bool Run(const ConvGeometry& g, const float* x, const float* f, const Epilogue<float>* epilogue,
           float* y);

  // Whether g is a convolution this kernel can take: one group, at most 4
  // input channels, at least 8 output channels.
  static bool Suits(const ConvGeometry& g);
  // Whether it is the kernel to use for g: one input channel, where it was
  // faster than oneDNN on every shape measured (1.02x to 2.3x); with 2 or 3
  // channels oneDNN was ahead (conv_small_depth.cc). PX_CPU_CONV=small
  // takes it for every geometry it suits, any other PX_CPU_CONV for none.
  static bool Prefer(const ConvGeometry& g);

  // The filter is a constant of the graph: packed once and kept (keyed by
  // its address and shape). Otherwise it is packed on every call.
  void set_constant_filter(bool constant) { constant_filter_ = constant; }

 private:
  bool constant_filter_ = false;
  // The constant filter's packed copy (replaced, never changed, so a run
  // keeps using the copy it took while another packs a new one).
  std::mutex mu_;
  const float* packed_for_ = nullptr;
  int64_t packed_shape_[4] = {0, 0, 0, 0};
  std::shared_ptr<const std::vector<float>> packed_;
};

}  // namespace plexus::cpu

#endif  // PLEXUS_PLUGINS_CPU_KERNELS_CONV_SMALL_DEPTH_H_

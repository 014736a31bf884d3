// Float NHWC convolutions through oneDNN's convolution primitive, for
// Conv2D (nn_conv.cc) and _FusedConv2D (fused_conv.cc), and the depthwise
// ones (depthwise_conv.cc) as grouped convolutions: the bias or the
// inference batch norm and the activation run as the primitive's post-ops,
// so the whole layer is one pass (and one OpenMP parallel region) instead of
// im2col + GEMM + epilogue.
//
// Built only when oneDNN is the float GEMM library (PX_CPU_SGEMM_ONEDNN, see
// plugins/cpu/README.md); otherwise, or when oneDNN refuses a shape, Run
// returns false and the caller takes the im2col path (conv_im2col.h).
#ifndef PLEXUS_PLUGINS_CPU_KERNELS_CONV_ONEDNN_H_
#define PLEXUS_PLUGINS_CPU_KERNELS_CONV_ONEDNN_H_

#include <memory>

#include "plexus/sdk/kernel.h"

#include "kernels/conv_im2col.h"
#include "kernels/fused_epilogue.h"

namespace plexus::cpu {

// One per kernel instance: primitives are created once per input shape and
// kept, and the filter is reordered to oneDNN's blocked layout once per
// filter contents. Run may be called from several threads at once.
class OneDnnConv {
 public:
  OneDnnConv();
  ~OneDnnConv();
  OneDnnConv(const OneDnnConv&) = delete;
  OneDnnConv& operator=(const OneDnnConv&) = delete;

  // y = epilogue(conv(x, f)) for NHWC x and y and an HWIO filter f, with
  // `epilogue` null for a plain convolution. False (nothing written) when
  // the geometry is better served by im2col, or oneDNN is not built in or
  // cannot take it.
  bool Run(const ConvGeometry& g, const float* x, const float* f, const Epilogue<float>* epilogue,
           float* y);

  // The same for a depthwise convolution: f is TF's [kh, kw, c, multiplier]
  // filter (g.f_out is the multiplier) and y has c * multiplier channels.
  // It runs as a convolution with c groups of one input channel each. False
  // when the direct kernel is preferred for the geometry (see
  // PreferOneDnnDepthwise in the .cc) or oneDNN cannot take it.
  bool RunDepthwise(const ConvGeometry& g, const float* x, const float* f,
                    const Epilogue<float>* epilogue, float* y);

  // y[m, n] = epilogue(a[m, k] * b[k, n]) for row-major float matrices:
  // oneDNN's matmul with b packed once, as the 1x1 convolution it is (the
  // matmul form below). For products whose b is a constant of the graph
  // (set_constant_filter): Dense layers, most of all the classifiers at
  // small batches, where dnnl_sgemm repacks all of b on every call. False
  // when oneDNN is not built in or refuses the shape.
  bool RunProduct(int64_t m, int64_t k, int64_t n, const float* a, const float* b,
                  const Epilogue<float>* epilogue, float* y);

  // The filter is a constant of the graph (the optimizer's
  // `_plexus_const_inputs`, read by sdk::ConstantInput): it is reordered
  // once per layout the primitives ask for (geometries that want the same
  // layout share the copy) and never compared again. Otherwise the last filter
  // seen is kept and compared with each call's (exact, and cheaper than a
  // reorder, but it reads the filter twice per call). Set before the first
  // Run.
  void set_constant_filter(bool constant) { constant_filter_ = constant; }

 private:
  struct Impl;
  bool Execute(const ConvGeometry& g, bool depthwise, const float* x, const float* f,
               const Epilogue<float>* epilogue, float* y);
  std::unique_ptr<Impl> impl_;
  bool constant_filter_ = false;
};

}  // namespace plexus::cpu

#endif  // PLEXUS_PLUGINS_CPU_KERNELS_CONV_ONEDNN_H_

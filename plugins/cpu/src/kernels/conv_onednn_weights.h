// TensorFlow's convolution filters as oneDNN weight descriptors, shared by
// the forward (conv_onednn.cc) and backward (conv_grad_onednn.cc)
// primitives. Include only where PX_CPU_SGEMM_ONEDNN is defined.
//
// A plain HWIO filter [kh, kw, c, f_out] is oneDNN's hwio over the dims
// (f_out, c, kh, kw). A grouped one [kh, kw, c / groups, f_out], whose
// output channel k * (f_out / groups) + o belongs to group k, is hwigo over
// (groups, f_out / groups, c / groups, kh, kw): the same bytes, since hwigo
// stores the group index just above the output index. A depthwise filter
// [kh, kw, c, multiplier] is the grouped one with c groups of one input
// channel and `multiplier` outputs each.
#ifndef PLEXUS_PLUGINS_CPU_KERNELS_CONV_ONEDNN_WEIGHTS_H_
#define PLEXUS_PLUGINS_CPU_KERNELS_CONV_ONEDNN_WEIGHTS_H_

#include <oneapi/dnnl/dnnl.hpp>

#include "kernels/conv_im2col.h"

namespace plexus::cpu {

// The filter of g (depthwise: g.f_out is the multiplier) in TF's layout
// (`any` false) or with the layout left to the primitive (`any` true).
inline dnnl::memory::desc OneDnnWeightsDesc(const ConvGeometry& g, bool depthwise, bool any) {
  using dnnl::memory;
  const memory::data_type f32 = memory::data_type::f32;
  const int64_t groups = depthwise ? g.c : g.groups;
  if (groups == 1 && !depthwise) {
    return memory::desc({g.f_out, g.c, g.kh, g.kw}, f32,
                        any ? memory::format_tag::any : memory::format_tag::hwio);
  }
  const int64_t out_per_group = depthwise ? g.f_out : g.f_out / groups;
  return memory::desc({groups, out_per_group, g.c / groups, g.kh, g.kw}, f32,
                      any ? memory::format_tag::any : memory::format_tag::hwigo);
}

// The number of output channels of g.
inline int64_t OutputChannels(const ConvGeometry& g, bool depthwise) {
  return depthwise ? g.c * g.f_out : g.f_out;
}

}  // namespace plexus::cpu

#endif  // PLEXUS_PLUGINS_CPU_KERNELS_CONV_ONEDNN_WEIGHTS_H_

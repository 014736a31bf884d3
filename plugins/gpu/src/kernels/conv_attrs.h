// What Conv2D, DepthwiseConv2dNative, _FusedConv2D and
// _FusedDepthwiseConv2dNative read from their attributes, once, when the
// kernel is created: the base of the cuDNN kernel (conv.cc) and of Plexus's
// own (native_conv.cc).
#ifndef PLEXUS_PLUGINS_GPU_KERNELS_CONV_ATTRS_H_
#define PLEXUS_PLUGINS_GPU_KERNELS_CONV_ATTRS_H_

#include <string>

#include "plexus/sdk/fused.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/window.h"

namespace plexus::cuda {

class ConvKernelBase : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    op_ = attrs.op();
    depthwise_ = op_ == "DepthwiseConv2dNative" || op_ == "_FusedDepthwiseConv2dNative";
    fused_ = op_ == "_FusedConv2D" || op_ == "_FusedDepthwiseConv2dNative";
    if (fused_) spec_ = sdk::ReadFusedSpec(attrs, op_.c_str(), /*allow_batch_norm=*/true);
    if (op_ == "_FusedConv2D") {
      const std::string filter_format = attrs.String("filter_format", "HWIO");
      if (filter_format != "HWIO") {
        throw sdk::KernelError(
            PX_CODE_UNIMPLEMENTED,
            sdk::Format("_FusedConv2D supports filter_format HWIO only, got '%s'",
                        filter_format.c_str()));
      }
    }
    window_.Read(attrs, false);
  }

 protected:
  std::string op_;
  bool depthwise_ = false, fused_ = false;
  sdk::FusedSpec spec_;
  sdk::Window window_;
};

}  // namespace plexus::cuda

#endif  // PLEXUS_PLUGINS_GPU_KERNELS_CONV_ATTRS_H_

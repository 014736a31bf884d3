// CPU kernels: _FusedConv2D (Conv2D + BiasAdd or inference FusedBatchNorm
// [+ activation], created by the graph optimizer), and _PlexusFusedConv2DAdd
// (the same with a residual Add before the activation; float, NHWC).
//
// float: oneDNN's convolution with the bias / batch norm and the activation
// as post-ops (conv_onednn.h), when the plugin is built with oneDNN.
// Otherwise, and for the other types, the convolution is Conv2D's
// (nn_conv.cc): NHWC im2col patches a block of output rows at a time,
// multiplied by the [kh*kw*c, f_out] filter with the shared Gemm (1x1,
// stride 1 and no padding skip the patches: one GEMM over the whole input).
// The epilogue (fused_epilogue.h) follows each block's product; oneDNN
// adds _PlexusFusedConv2DAdd's addend with a sum post-op. A grouped
// convolution is one oneDNN primitive too; otherwise one im2col convolution
// per group (conv_groups.h), then the epilogue over the whole output.
// NCHW inputs are transposed to NHWC and the result back.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/conv_groups.h"
#include "kernels/conv_im2col.h"
#include "kernels/conv_onednn.h"
#include "kernels/conv_small_depth.h"
#include "kernels/fused_epilogue.h"
#include "kernels/linalg_gemm.h"
#include "kernels/nn_window.h"
#include "plexus/sdk/const_inputs.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

// y = epilogue(patches * filter) (conv_im2col.h), a block of output rows at
// a time: at most 2^18 patch elements, so the block's output is still in
// cache when the epilogue reads it.
template <typename T>
void FusedConvNhwc(const T* x, const T* f, const ConvGeometry& g,
                   const Epilogue<sdk::ComputeType<T>>& epilogue, T* y) {
  if (g.groups > 1) {
    ForEachGroup(g, ConvOperand::kInput, x, ConvOperand::kFilter, f, ConvOperand::kOutput, y,
                 [](const ConvGeometry& sub, const T* xg, const T* fg, T* yg) {
                   ConvNhwcBlocks(xg, fg, sub, yg, int64_t{1} << 20, [](T*, int64_t) {});
                 });
    ApplyEpilogue<T>(epilogue, y, g.n * g.oh * g.ow, g.f_out);
    return;
  }
  ConvNhwcBlocks(x, f, g, y, int64_t{1} << 18, [&](T* y_block, int64_t rows) {
    ApplyEpilogue<T>(epilogue, y_block, rows, g.f_out, (y_block - y) / g.f_out);
  });
}

class FusedConv2DKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    add_ = std::string(attrs.op()) == sdk::sig::kPlexusFusedConv2DAdd.op;
    spec_ = sdk::ReadFusedSpec(attrs, "_FusedConv2D", /*allow_batch_norm=*/true);
    const std::string filter_format = attrs.String("filter_format", "HWIO");
    if (filter_format != "HWIO") {
      throw sdk::KernelError(
          PX_CODE_UNIMPLEMENTED,
          sdk::Format("_FusedConv2D supports filter_format HWIO only, got '%s'",
                      filter_format.c_str()));
    }
    window_.Read(attrs, false);
    if (add_ && window_.nchw) {
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED, "_PlexusFusedConv2DAdd supports data_format NHWC only");
    }
    onednn_.set_constant_filter(sdk::ConstantInput(attrs, 1));
    small_.set_constant_filter(sdk::ConstantInput(attrs, 1));
  }

  void Compute(sdk::Call& call) override {
    const sdk::Shape xs = call.input_shape(0), fs = call.input_shape(1);
    const ConvGeometry g = ConvGeometryOf("_FusedConv2D", xs, fs, window_, false);
    const bool nchw = window_.nchw;
    const sdk::Shape out_shape =
        nchw ? sdk::Shape{g.n, g.f_out, g.oh, g.ow} : sdk::Shape{g.n, g.oh, g.ow, g.f_out};
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      auto epilogue = Epilogue<C>::template Make<T>(spec_, call, g.f_out, "_FusedConv2D");
      if (add_) {
        // Registered for float only, where T is the compute type.
        if constexpr (std::is_same_v<T, C>) {
          epilogue.addend = call.input<T>(sdk::FusedConvAddendInput(call, spec_, out_shape));
        }
      }
      const T* x = call.input<T>(0);
      const T* f = call.input<T>(1);
      T* y = call.AllocateOutput<T>(0, out_shape);
      const int64_t out_size = sdk::NumElements(out_shape);
      // Blocks write y while later blocks still read x: an output that
      // shares memory with the input is computed in scratch.
      // Float goes to the direct kernel for few input channels
      // (conv_small_depth.h), else to oneDNN's convolution when it takes
      // the geometry (conv_onednn.h), else im2col.
      auto conv = [&](const T* in, const T* filter, T* out) {
        if constexpr (std::is_same_v<T, float>) {
          if (small_.Run(g, in, filter, &epilogue, out)) return;
          if (onednn_.Run(g, in, filter, &epilogue, out)) return;
        }
        FusedConvNhwc<T>(in, filter, g, epilogue, out);
      };
      if (!nchw && !BuffersOverlap(x, sdk::NumElements(xs), y, out_size) &&
          !BuffersOverlap(f, sdk::NumElements(fs), y, out_size)) {
        conv(x, f, y);
        return;
      }
      std::vector<T> x_nhwc = nchw ? NchwToNhwc(x, g.n, g.c, g.h, g.w)
                                   : std::vector<T>(x, x + sdk::NumElements(xs));
      const std::vector<T> filter(f, f + sdk::NumElements(fs));
      std::vector<T> y_nhwc(static_cast<size_t>(out_size));
      conv(x_nhwc.data(), filter.data(), y_nhwc.data());
      if (nchw) {
        NhwcToNchw(y_nhwc.data(), g.n, g.oh, g.ow, g.f_out, y);
      } else {
        std::copy(y_nhwc.begin(), y_nhwc.end(), y);
      }
    });
  }

 private:
  sdk::FusedSpec spec_;
  sdk::Window window_;
  OneDnnConv onednn_;
  SmallDepthConv small_;
  bool add_ = false;
};

}  // namespace

PX_Status* RegisterFusedConvKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  PX_Status* s = sdk::RegisterKernel<FusedConv2DKernel>(info, registrar, sdk::sig::kFusedConv2D,
                                                        {sdk::FloatTypes()});
  if (s != nullptr) return s;
  return sdk::RegisterKernel<FusedConv2DKernel>(info, registrar, sdk::sig::kPlexusFusedConv2DAdd,
                                                {{PX_DT_FLOAT}});
}

}  // namespace plexus::cpu

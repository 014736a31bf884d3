// CPU kernels: Conv2D. float goes to oneDNN's convolution primitive when the
// plugin is built with oneDNN (conv_onednn.h); otherwise, and for the other
// types, im2col + Gemm, with a direct product for 1x1 convolutions
// (conv_im2col.h). Grouped convolutions (a filter of input depth c / groups)
// run as one oneDNN primitive, or as one im2col convolution per group
// (conv_groups.h). NCHW inputs are transposed to NHWC and the result back.
// DepthwiseConv2dNative is in depthwise_conv.cc, registered from here.
#include <algorithm>
#include <vector>

#include "kernels/conv_groups.h"
#include "kernels/conv_im2col.h"
#include "kernels/conv_onednn.h"
#include "kernels/conv_small_depth.h"
#include "kernels/fused_epilogue.h"
#include "kernels/linalg_gemm.h"
#include "kernels/nn_internal.h"
#include "kernels/nn_window.h"
#include "plexus/sdk/const_inputs.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

template <typename T>
constexpr bool kIsFloat = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                          std::is_same_v<T, sdk::half> || std::is_same_v<T, sdk::bfloat16>;

// y[n*oh*ow, f_out] = patches * filter (conv_im2col.h), in blocks of at most
// 2^20 patch elements; a grouped convolution one group at a time.
template <typename T>
void ConvNhwc(const T* x, const T* f, const ConvGeometry& g, T* y) {
  if (g.groups > 1) {
    ForEachGroup(g, ConvOperand::kInput, x, ConvOperand::kFilter, f, ConvOperand::kOutput, y,
                 [](const ConvGeometry& sub, const T* xg, const T* fg, T* yg) {
                   ConvNhwc<T>(xg, fg, sub, yg);
                 });
    return;
  }
  ConvNhwcBlocks(x, f, g, y, int64_t{1} << 20, [](T*, int64_t) {});
}

class ConvKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    window_.Read(attrs, false);
    onednn_.set_constant_filter(sdk::ConstantInput(attrs, 1));
    small_.set_constant_filter(sdk::ConstantInput(attrs, 1));
  }
  void Compute(sdk::Call& call) override {
    const sdk::Shape xs = call.input_shape(0), fs = call.input_shape(1);
    const ConvGeometry g = ConvGeometryOf("Conv2D", xs, fs, window_, false);
    const bool nchw = window_.nchw;
    const int64_t out_c = g.f_out;
    const sdk::Shape out_shape =
        nchw ? sdk::Shape{g.n, out_c, g.oh, g.ow} : sdk::Shape{g.n, g.oh, g.ow, out_c};
    auto run = [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      const T* f = call.input<T>(1);
      T* y = call.AllocateOutput<T>(0, out_shape);
      // Float goes to the direct kernel for few input channels
      // (conv_small_depth.h), else to oneDNN's convolution when it takes
      // the geometry (conv_onednn.h), else im2col.
      auto conv = [&](const T* in, T* out) {
        if constexpr (std::is_same_v<T, float>) {
          if (!BuffersOverlap(in, sdk::NumElements(xs), out, sdk::NumElements(out_shape)) &&
              !BuffersOverlap(f, sdk::NumElements(fs), out, sdk::NumElements(out_shape)) &&
              (small_.Run(g, in, f, nullptr, out) || onednn_.Run(g, in, f, nullptr, out))) {
            return;
          }
        }
        ConvNhwc<T>(in, f, g, out);
      };
      if (!nchw) {
        conv(x, y);
        return;
      }
      const std::vector<T> x_nhwc = NchwToNhwc(x, g.n, g.c, g.h, g.w);
      std::vector<T> y_nhwc(static_cast<size_t>(sdk::NumElements(out_shape)));
      conv(x_nhwc.data(), y_nhwc.data());
      NhwcToNchw(y_nhwc.data(), g.n, g.oh, g.ow, out_c, y);
    };
    const PX_DataType t = call.input_dtype(0);
    if (t == PX_DT_INT32) {
      run(sdk::TypeTag<int32_t>{});
    } else {
      sdk::VisitFloat(t, run);
    }
  }

 private:
  Window window_;
  OneDnnConv onednn_;
  SmallDepthConv small_;
};

}  // namespace

PX_Status* RegisterConvKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  std::vector<PX_DataType> conv = sdk::FloatTypes();
  conv.push_back(PX_DT_INT32);
  PX_Status* s = nullptr;
  if ((s = sdk::RegisterKernel<ConvKernel>(info, registrar, sdk::sig::kConv2D, {conv})) ||
      (s = RegisterDepthwiseKernels(info, registrar))) {
    return s;
  }
  return nullptr;
}

}  // namespace plexus::cpu

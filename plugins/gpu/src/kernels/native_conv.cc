// Plexus's own convolutions on the GPU (conv_direct.cu; no vendor DNN
// library): Conv2D, DepthwiseConv2dNative, _FusedConv2D and
// _FusedDepthwiseConv2dNative for float, double, half and bfloat16, with the
// ops, attributes and checks of conv.cc: NHWC and NCHW, strides, dilations,
// SAME, VALID and EXPLICIT padding (sdk::Window), grouped Conv2D (input
// depth a multiple of the filter's), fused BiasAdd or inference
// FusedBatchNorm plus an optional activation.
//
// One launch per call, nothing reordered or padded in scratch memory:
// Conv2D is an implicit GEMM that reads TensorFlow's HWIO filter as it is
// and gathers the input with NHWC or NCHW strides (padding positions read
// as zeros); the depthwise kernel is direct. The fused epilogue runs in the
// kernel before the one rounding to the output type. An empty window (a
// filter of height or width 0) gives zeros plus the epilogue.
//
// Host code shared by the CUDA and ROCm plugins: only the px_gpu names of
// gpu_runtime.h, never cuda* or hip*.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu_error.h"
#include "gpu_stream.h"
#include "kernels/conv_attrs.h"
#include "kernels/conv_direct_launch.h"
#include "kernels/dtype_map.h"
#include "kernels/elementwise_launch.h"
#include "kernels/gemm_launch.h"
#include "kernels/native_kernels.h"
#include "plexus/sdk/fused.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/plugin.h"
#include "plexus/sdk/window.h"

namespace plexus::cuda {
namespace {

using sdk::Shape;


class PlexusConvKernel : public ConvKernelBase {
 public:
  void Compute(sdk::Call& call) override {
    const char* op = op_.c_str();
    const Shape xs = call.input_shape(0), fs = call.input_shape(1);
    const PX_DataType dtype = call.input_dtype(0);
    PX_SDK_CHECK(call.input_dtype(1) == dtype && call.output_dtype(0) == dtype,
                 "%s: input %s, filter %s, output %s", op, sdk::DtypeName(dtype),
                 sdk::DtypeName(call.input_dtype(1)), sdk::DtypeName(call.output_dtype(0)));
    const ew::Dtype ew_dtype = ToDtype(dtype, op);
    PX_SDK_CHECK(xs.size() == 4, "%s input must be 4-D, got %s", op, sdk::ShapeString(xs).c_str());
    PX_SDK_CHECK(fs.size() == 4, "%s filter must be 4-D, got %s", op,
                 sdk::ShapeString(fs).c_str());
    const bool nchw = window_.nchw;
    const int64_t n = xs[0], c = xs[nchw ? 1 : 3], h = xs[nchw ? 2 : 1], w = xs[nchw ? 3 : 2];
    const int64_t kh = fs[0], kw = fs[1];
    int64_t out_c, groups = 1, filter_in = 0, multiplier = 1;
    if (depthwise_) {
      PX_SDK_CHECK(c == fs[2], "input depth %lld must equal the filter depth %lld",
                   static_cast<long long>(c), static_cast<long long>(fs[2]));
      multiplier = fs[3];
      out_c = c * multiplier;
    } else {
      PX_SDK_CHECK(fs[2] > 0 && c % fs[2] == 0 && c >= fs[2],
                   "input depth %lld must be a multiple of the filter input depth %lld",
                   static_cast<long long>(c), static_cast<long long>(fs[2]));
      out_c = fs[3];
      filter_in = fs[2];
      groups = c / fs[2];
      PX_SDK_CHECK(out_c % groups == 0,
                   "%s: the filter's %lld output channels must be a multiple of the %lld groups "
                   "(input depth %lld / filter input depth %lld)",
                   op, static_cast<long long>(out_c), static_cast<long long>(groups),
                   static_cast<long long>(c), static_cast<long long>(fs[2]));
    }
    PX_SDK_CHECK(kh >= 0 && kw >= 0, "%s filter %s has a negative size", op,
                 sdk::ShapeString(fs).c_str());
    int64_t oh, ow, top, left;
    window_.Output(h, kh, window_.sh, window_.dh, window_.pad_top, window_.pad_bottom, &oh, &top);
    window_.Output(w, kw, window_.sw, window_.dw, window_.pad_left, window_.pad_right, &ow, &left);

    // The fused op's per-channel arguments.
    gemm::Epilogue epilogue;
    if (fused_) {
      static const char* kBnNames[] = {"scale", "offset", "mean", "variance"};
      PX_SDK_CHECK(static_cast<int64_t>(call.num_inputs()) == 2 + spec_.num_args,
                   "%s needs %lld args, got %zu inputs", op,
                   static_cast<long long>(spec_.num_args), call.num_inputs());
      for (int64_t i = 0; i < spec_.num_args; ++i) {
        const Shape s = call.input_shape(2 + i);
        PX_SDK_CHECK(s.size() == 1 && s[0] == out_c, "%s %s must be 1-D with %lld elements, got %s",
                     op, spec_.batch_norm ? kBnNames[i] : "bias", static_cast<long long>(out_c),
                     sdk::ShapeString(s).c_str());
        PX_SDK_CHECK(call.input_dtype(2 + i) == dtype, "%s %s is %s, expected %s", op,
                     spec_.batch_norm ? kBnNames[i] : "bias",
                     sdk::DtypeName(call.input_dtype(2 + i)), sdk::DtypeName(dtype));
        epilogue.args[i] = call.input_data(2 + i);
      }
      epilogue.batch_norm = spec_.batch_norm;
      epilogue.bias = !spec_.batch_norm;
      epilogue.act = static_cast<gemm::Activation>(static_cast<int>(spec_.activation));
      epilogue.alpha = spec_.leakyrelu_alpha;
      epilogue.epsilon = spec_.epsilon;
    }
    for (size_t i = 0; i < call.num_inputs(); ++i) {
      PX_SDK_CHECK(px_sdk_is_contiguous(&call.input(i)), "%s: input %zu is not contiguous", op, i);
    }

    // The implicit GEMM decomposes its reduction index in 32 bits.
    if (!depthwise_ && kh * kw * filter_in > INT32_MAX) {
      throw sdk::KernelError(
          PX_CODE_UNIMPLEMENTED,
          sdk::Format("%s on the GPU: a window of %lld x %lld x %lld input channels is too deep "
                      "(at most 2^31 - 1 terms per output)",
                      op, static_cast<long long>(kh), static_cast<long long>(kw),
                      static_cast<long long>(filter_in)));
    }
    const Shape out_shape = nchw ? Shape{n, out_c, oh, ow} : Shape{n, oh, ow, out_c};
    void* y = call.AllocateOutputRaw(0, out_shape);
    if (sdk::NumElements(out_shape) == 0) return;
    GpuStream& stream = StreamOf(call);

    conv_direct::ConvPlan p;
    p.n = n;
    p.h = h;
    p.w = w;
    p.c = c;
    p.oh = oh;
    p.ow = ow;
    p.out_c = out_c;
    p.kh = kh;
    p.kw = kw;
    p.sh = window_.sh;
    p.sw = window_.sw;
    p.dh = window_.dh;
    p.dw = window_.dw;
    p.pad_top = top;
    p.pad_left = left;
    p.groups = groups;
    p.filter_in = filter_in;
    p.multiplier = multiplier;
    if (nchw) {
      p.x_sw = 1;
      p.x_sh = w;
      p.x_sc = h * w;
      p.x_sn = c * h * w;
      p.y_sw = 1;
      p.y_sh = ow;
      p.y_sc = oh * ow;
      p.y_sn = out_c * oh * ow;
    } else {
      p.x_sc = 1;
      p.x_sw = c;
      p.x_sh = w * c;
      p.x_sn = h * w * c;
      p.y_sc = 1;
      p.y_sw = out_c;
      p.y_sh = ow * out_c;
      p.y_sn = oh * ow * out_c;
    }
    if (depthwise_) {
      conv_direct::LaunchDepthwise(ew_dtype, call.input_data(0), call.input_data(1), y, p,
                                   epilogue, stream.get());
    } else {
      conv_direct::LaunchConv2D(ew_dtype, call.input_data(0), call.input_data(1), y, p, epilogue,
                                stream.get());
    }
    CheckLaunch(stream, op);
  }

};

}  // namespace

PX_Status* RegisterNativeConvKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> types = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF, PX_DT_BFLOAT16};
  for (const sdk::OpSignature* op :
       {&sdk::sig::kConv2D, &sdk::sig::kDepthwiseConv2dNative, &sdk::sig::kFusedConv2D,
        &sdk::sig::kFusedDepthwiseConv2dNative}) {
    PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<PlexusConvKernel>(info, registrar, *op, {types}));
  }
  return nullptr;
}

}  // namespace plexus::cuda

// The XPU plugin's convolution family: Conv2D, DepthwiseConv2dNative,
// _FusedConv2D and _FusedDepthwiseConv2dNative (NHWC or NCHW; strides,
// dilations; SAME, VALID and EXPLICIT padding; grouped Conv2D when the input
// depth is a multiple of the filter's), MaxPool and AvgPool, and
// FusedBatchNorm/V2/V3 inference; float, half and bfloat16 (kernels/conv.cl).
//
// The convolution is direct: one work-item per output element, accumulating
// in float, with the fused epilogue (bias or inference batch norm, then the
// activation) in the same kernel. A depthwise filter [kh, kw, c, m] is an
// HWIO filter with depth 1 and c * m outputs in c groups. Window attributes
// are read and checked by the SDK's Window, like the other plugins.
#include <cstdint>
#include <string>
#include <vector>

#include "abi.h"
#include "kernels/families.h"
#include "plexus/sdk/fused.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/plugin.h"
#include "plexus/sdk/window.h"
#include "xpu_stream.h"

namespace plexus::xpu {
namespace {

using sdk::Shape;

// The geometries are abi.h's, shared with conv.cl and passed by value: all
// 64-bit fields, so no padding on either side.
static_assert(sizeof(px_xpu_conv_geom) == 18 * sizeof(px_i64), "px_xpu_conv_geom: conv.cl's layout");
static_assert(sizeof(px_xpu_pool_geom) == 13 * sizeof(px_i64), "px_xpu_pool_geom: conv.cl's layout");

// The kernel-name suffix of a floating dtype.
const char* FloatSuffix(PX_DataType t, const char* op) {
  switch (t) {
    case PX_DT_FLOAT: return "f32";
    case PX_DT_HALF: return "f16";
    case PX_DT_BFLOAT16: return "bf16";
    default:
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                             sdk::Format("%s on XPU does not support dtype %s", op,
                                         sdk::DtypeName(t)));
  }
}

// ---------------------------------------------------------------------------
// Convolutions
// ---------------------------------------------------------------------------

class ConvKernel : public sdk::OpKernel {
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

  void Compute(sdk::Call& call) override {
    const char* op = op_.c_str();
    const Shape xs = call.input_shape(0), fs = call.input_shape(1);
    const PX_DataType dtype = call.input_dtype(0);
    PX_SDK_CHECK(call.input_dtype(1) == dtype && call.output_dtype(0) == dtype,
                 "%s: input %s, filter %s, output %s", op, sdk::DtypeName(dtype),
                 sdk::DtypeName(call.input_dtype(1)), sdk::DtypeName(call.output_dtype(0)));
    const std::string kernel = std::string("px_conv2d_") + FloatSuffix(dtype, op);
    PX_SDK_CHECK(xs.size() == 4, "%s input must be 4-D, got %s", op, sdk::ShapeString(xs).c_str());
    PX_SDK_CHECK(fs.size() == 4, "%s filter must be 4-D, got %s", op,
                 sdk::ShapeString(fs).c_str());
    PX_SDK_CHECK(px_sdk_is_contiguous(&call.input(0)) && px_sdk_is_contiguous(&call.input(1)),
                 "%s: the input or the filter is not contiguous", op);
    const bool nchw = window_.nchw;
    px_xpu_conv_geom g{};
    g.nchw = nchw ? 1 : 0;
    g.n = xs[0];
    g.c = xs[nchw ? 1 : 3];
    g.h = xs[nchw ? 2 : 1];
    g.w = xs[nchw ? 3 : 2];
    g.kh = fs[0];
    g.kw = fs[1];
    int64_t groups = 1;
    if (depthwise_) {
      PX_SDK_CHECK(g.c == fs[2], "input depth %lld must equal the filter depth %lld",
                   static_cast<long long>(g.c), static_cast<long long>(fs[2]));
      g.oc = g.c * fs[3];
      groups = g.c;
      g.cpg = 1;
    } else {
      PX_SDK_CHECK(fs[2] > 0 && g.c % fs[2] == 0,
                   "input depth %lld must be a multiple of the filter input depth %lld",
                   static_cast<long long>(g.c), static_cast<long long>(fs[2]));
      g.oc = fs[3];
      groups = g.c / fs[2];
      g.cpg = fs[2];
      PX_SDK_CHECK(groups == 0 || g.oc % groups == 0,
                   "%s: the filter's %lld output channels must be a multiple of the %lld groups "
                   "(input depth %lld / filter input depth %lld)",
                   op, static_cast<long long>(g.oc), static_cast<long long>(groups),
                   static_cast<long long>(g.c), static_cast<long long>(fs[2]));
    }
    g.ocpg = groups > 0 ? g.oc / groups : 1;
    if (g.ocpg == 0) g.ocpg = 1;  // no output channels: nothing runs
    PX_SDK_CHECK(g.kh >= 0 && g.kw >= 0, "%s filter %s has a negative size", op,
                 sdk::ShapeString(fs).c_str());
    g.sh = window_.sh;
    g.sw = window_.sw;
    g.dh = window_.dh;
    g.dw = window_.dw;
    window_.Output(g.h, g.kh, g.sh, g.dh, window_.pad_top, window_.pad_bottom, &g.oh, &g.top);
    window_.Output(g.w, g.kw, g.sw, g.dw, window_.pad_left, window_.pad_right, &g.ow, &g.left);

    // The fused op's per-channel arguments (unused ones point at the input).
    const void* args[4] = {call.input_data(0), call.input_data(0), call.input_data(0),
                           call.input_data(0)};
    if (fused_) {
      static const char* kBnNames[] = {"scale", "offset", "mean", "variance"};
      PX_SDK_CHECK(static_cast<int64_t>(call.num_inputs()) == 2 + spec_.num_args,
                   "%s needs %lld args, got %zu inputs", op,
                   static_cast<long long>(spec_.num_args), call.num_inputs());
      for (int64_t i = 0; i < spec_.num_args; ++i) {
        const Shape s = call.input_shape(2 + i);
        PX_SDK_CHECK(s.size() == 1 && s[0] == g.oc,
                     "%s %s must be 1-D with %lld elements, got %s", op,
                     spec_.batch_norm ? kBnNames[i] : "bias", static_cast<long long>(g.oc),
                     sdk::ShapeString(s).c_str());
        PX_SDK_CHECK(call.input_dtype(2 + i) == dtype, "%s %s is %s, expected %s", op,
                     spec_.batch_norm ? kBnNames[i] : "bias",
                     sdk::DtypeName(call.input_dtype(2 + i)), sdk::DtypeName(dtype));
        args[i] = call.input_data(2 + i);
      }
    }
    const Shape out_shape = nchw ? Shape{g.n, g.oc, g.oh, g.ow} : Shape{g.n, g.oh, g.ow, g.oc};
    void* y = call.AllocateOutputRaw(0, out_shape);
    const int64_t total = sdk::NumElements(out_shape);
    if (total == 0) return;
    XpuStream& stream = StreamOf(call);
    // conv.cl's epilogue modes: 0 none, 1 bias, 2 batch norm.
    const int32_t epi = fused_ ? (spec_.batch_norm ? 2 : 1) : 0;
    const int32_t act = static_cast<int32_t>(spec_.activation);
    const float alpha = spec_.leakyrelu_alpha, eps = spec_.epsilon;
    const size_t global = static_cast<size_t>(total);
    Launch(stream, kernel.c_str(), 1, &global, nullptr,
           {Arg(call.input_data(0)), Arg(call.input_data(1)), Arg(y), Arg(g), Arg(total),
            Arg(epi), Arg(act), Arg(alpha), Arg(eps), Arg(args[0]), Arg(args[1]), Arg(args[2]),
            Arg(args[3])});
  }

 private:
  std::string op_;
  bool depthwise_ = false, fused_ = false;
  sdk::FusedSpec spec_;
  sdk::Window window_;
};

// ---------------------------------------------------------------------------
// MaxPool, AvgPool
// ---------------------------------------------------------------------------

template <bool kMax>
class PoolKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { window_.Read(attrs, true); }

  void Compute(sdk::Call& call) override {
    const char* op = kMax ? "MaxPool" : "AvgPool";
    const Shape xs = call.input_shape(0);
    PX_SDK_CHECK(xs.size() == 4, "%s input must be 4-D, got %s", op,
                 sdk::ShapeString(xs).c_str());
    PX_SDK_CHECK(px_sdk_is_contiguous(&call.input(0)), "%s: the input is not contiguous", op);
    const std::string kernel = std::string("px_pool_") + FloatSuffix(call.input_dtype(0), op);
    px_xpu_pool_geom g{};
    const bool nchw = window_.nchw;
    g.nchw = nchw ? 1 : 0;
    g.n = xs[0];
    g.c = xs[nchw ? 1 : 3];
    g.h = xs[nchw ? 2 : 1];
    g.w = xs[nchw ? 3 : 2];
    g.kh = window_.kh;
    g.kw = window_.kw;
    g.sh = window_.sh;
    g.sw = window_.sw;
    window_.Output(g.h, g.kh, g.sh, 1, window_.pad_top, window_.pad_bottom, &g.oh, &g.top);
    window_.Output(g.w, g.kw, g.sw, 1, window_.pad_left, window_.pad_right, &g.ow, &g.left);
    const Shape out = nchw ? Shape{g.n, g.c, g.oh, g.ow} : Shape{g.n, g.oh, g.ow, g.c};
    void* y = call.AllocateOutputRaw(0, out);
    const int64_t total = sdk::NumElements(out);
    if (total == 0) return;
    XpuStream& stream = StreamOf(call);
    const size_t global = static_cast<size_t>(total);
    const int32_t is_max = kMax ? 1 : 0;
    Launch(stream, kernel.c_str(), 1, &global, nullptr,
           {Arg(call.input_data(0)), Arg(y), Arg(g), Arg(total), Arg(is_max)});
  }

 private:
  sdk::Window window_;
};

// ---------------------------------------------------------------------------
// FusedBatchNorm, V2, V3 (inference)
// ---------------------------------------------------------------------------

// y from x and the float per-channel scale, offset, mean and variance;
// batch_mean and batch_variance and the reserve spaces 1 and 2 are copies of
// mean and variance, V3's reserve_space_3 a scalar 0 (as the CUDA plugin).
// is_training = true is UNIMPLEMENTED.
class FusedBatchNormKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    op_ = attrs.op();
    nchw_ = sdk::ReadNchw(attrs);
    epsilon_ = attrs.Float("epsilon", 1e-4f);
    training_ = attrs.Bool("is_training", true);
  }

  void Compute(sdk::Call& call) override {
    const char* op = op_.c_str();
    if (training_) {
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                             sdk::Format("%s with is_training=true is not supported; only "
                                         "inference (is_training=false) is",
                                         op));
    }
    const Shape shape = call.input_shape(0);
    PX_SDK_CHECK(shape.size() == 4, "x must be 4-D, got %s", sdk::ShapeString(shape).c_str());
    const int64_t channels = shape[nchw_ ? 1 : 3];
    static const char* kNames[] = {"", "scale", "offset", "mean", "variance"};
    for (size_t i = 1; i <= 4; ++i) {
      const Shape s = call.input_shape(i);
      PX_SDK_CHECK(s.size() == 1 && s[0] == channels,
                   "%s must be 1-D with the %lld channels of x %s, got %s", kNames[i],
                   static_cast<long long>(channels), sdk::ShapeString(shape).c_str(),
                   sdk::ShapeString(s).c_str());
      PX_SDK_CHECK(call.input_dtype(i) == PX_DT_FLOAT, "%s: %s is %s, expected float", op,
                   kNames[i], sdk::DtypeName(call.input_dtype(i)));
    }
    const std::string kernel = std::string("px_batch_norm_") + FloatSuffix(call.input_dtype(0), op);
    for (size_t i = 0; i <= 4; ++i) {
      PX_SDK_CHECK(px_sdk_is_contiguous(&call.input(i)), "%s: input %zu is not contiguous", op, i);
    }
    void* y = call.AllocateOutputRaw(0, shape);
    const int64_t total = sdk::NumElements(shape);
    XpuStream& stream = StreamOf(call);
    if (total > 0) {
      const int64_t inner = nchw_ ? shape[2] * shape[3] : 1;
      const size_t global = static_cast<size_t>(total);
      Launch(stream, kernel.c_str(), 1, &global, nullptr,
             {Arg(call.input_data(0)), Arg(call.input_data(1)), Arg(call.input_data(2)),
              Arg(call.input_data(3)), Arg(call.input_data(4)), Arg(y), Arg(total),
              Arg(channels), Arg(inner), Arg(epsilon_)});
    }
    // batch_mean, batch_variance, reserve_space_1, reserve_space_2.
    const Shape stats{channels};
    const void* pass[] = {call.input_data(3), call.input_data(4), call.input_data(3),
                          call.input_data(4)};
    for (size_t o = 1; o <= 4 && o < call.num_outputs(); ++o) {
      void* out = call.AllocateOutputRaw(o, stats);
      if (channels > 0) {
        CopyAsync(stream, out, pass[o - 1], static_cast<size_t>(channels) * sizeof(float));
      }
    }
    if (call.num_outputs() > 5) {
      void* out = call.AllocateOutputRaw(5, Shape{});
      FillAsync(stream, out, 0, sizeof(float));
    }
  }

 private:
  std::string op_;
  bool nchw_ = false;
  float epsilon_ = 1e-4f;
  bool training_ = true;
};

}  // namespace

PX_Status* RegisterXpuConvKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> types = {PX_DT_FLOAT, PX_DT_HALF, PX_DT_BFLOAT16};
  for (const sdk::OpSignature* op :
       {&sdk::sig::kConv2D, &sdk::sig::kDepthwiseConv2dNative, &sdk::sig::kFusedConv2D,
        &sdk::sig::kFusedDepthwiseConv2dNative}) {
    PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<ConvKernel>(info, registrar, *op, {types}));
  }
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<PoolKernel<true>>(info, registrar, sdk::sig::kMaxPool, {types}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<PoolKernel<false>>(info, registrar, sdk::sig::kAvgPool, {types}));
  const std::vector<PX_DataType> f32 = {PX_DT_FLOAT};
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<FusedBatchNormKernel>(info, registrar, sdk::sig::kFusedBatchNorm, {f32}));
  for (const sdk::OpSignature* op : {&sdk::sig::kFusedBatchNormV2, &sdk::sig::kFusedBatchNormV3}) {
    PX_SDK_RETURN_IF_ERROR(
        sdk::RegisterKernel<FusedBatchNormKernel>(info, registrar, *op, {types, f32}));
  }
  return nullptr;
}

}  // namespace plexus::xpu

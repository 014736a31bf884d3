// Neural-network ops: BiasAdd, convolution, pooling, batch normalization.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/conv_util.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

absl::Status BiasAddShape(InferenceContext& ctx) {
  const PartialShape& value = ctx.input(0);
  const PartialShape& bias = ctx.input(1);
  PX_ASSIGN_OR_RETURN(std::string format, GetAttrString(ctx.node(), "data_format"));
  if (format != "NHWC" && format != "NCHW") {
    return ctx.Error(absl::StrCat("data_format must be NHWC or NCHW, got '", format, "'"));
  }
  if (bias.rank_known() && bias.rank() != 1) {
    return ctx.Error(absl::StrCat("bias must be 1-D, got shape ", bias.ToString()));
  }
  if (value.rank_known()) {
    if (value.rank() < 2) {
      return ctx.Error(absl::StrCat("input must be at least 2-D, got shape ", value.ToString()));
    }
    int64_t channel = value.dim(format == "NCHW" ? 1 : value.rank() - 1);
    if (bias.rank_known() && channel >= 0 && bias.dim(0) >= 0 && channel != bias.dim(0)) {
      return ctx.Error(absl::StrCat("bias size ", bias.dim(0),
                                    " does not match the channel dimension of ",
                                    value.ToString()));
    }
  }
  ctx.set_output(0, value);
  return absl::OkStatus();
}

// Conv2D and DepthwiseConv2dNative: input [N,H,W,C] (or NCHW), filter
// [KH,KW,C_in/groups,C_out] (grouped when the filter's input depth is less
// than the input's, shape_util.h) or, depthwise, [KH,KW,C,multiplier].
absl::Status ConvShape(InferenceContext& ctx, bool depthwise) {
  Window2D w;
  PX_RETURN_IF_ERROR(ReadWindow2D(ctx, /*allow_explicit=*/true, &w));
  const PartialShape& input = ctx.input(0);
  const PartialShape& filter = ctx.input(1);
  if (input.rank_known() && input.rank() != 4) {
    return ctx.Error(absl::StrCat("input must be 4-D, got shape ", input.ToString()));
  }
  if (filter.rank_known() && filter.rank() != 4) {
    return ctx.Error(absl::StrCat("filter must be 4-D, got shape ", filter.ToString()));
  }
  const int h = w.nchw ? 2 : 1, wd = w.nchw ? 3 : 2, c = w.nchw ? 1 : 3;
  const int64_t batch = input.rank_known() ? input.dim(0) : -1;
  const int64_t in_h = input.rank_known() ? input.dim(h) : -1;
  const int64_t in_w = input.rank_known() ? input.dim(wd) : -1;
  const int64_t in_c = input.rank_known() ? input.dim(c) : -1;
  const int64_t k_h = filter.rank_known() ? filter.dim(0) : -1;
  const int64_t k_w = filter.rank_known() ? filter.dim(1) : -1;
  const int64_t f_in = filter.rank_known() ? filter.dim(2) : -1;
  const int64_t f_out = filter.rank_known() ? filter.dim(3) : -1;
  int64_t out_c = -1;
  if (depthwise) {
    if (in_c >= 0 && f_in >= 0 && in_c != f_in) {
      return ctx.Error(absl::StrCat("input depth ", in_c, " must equal filter depth ", f_in,
                                    " (input ", input.ToString(), ", filter ",
                                    filter.ToString(), ")"));
    }
    const int64_t channels = in_c >= 0 ? in_c : f_in;
    if (channels >= 0 && f_out >= 0) {
      PX_RETURN_IF_ERROR(CheckedMul(ctx, channels, f_out, "the output depth", &out_c));
    }
  } else {
    if (in_c >= 0 && f_in > 0 && in_c % f_in != 0) {
      return ctx.Error(absl::StrCat("input depth ", in_c,
                                    " must be a multiple of the filter input depth ", f_in,
                                    " (input ", input.ToString(), ", filter ",
                                    filter.ToString(), ")"));
    }
    if (f_in == 0) return ctx.Error("filter input depth must be positive");
    PX_RETURN_IF_ERROR(CheckConvGroups(ctx, in_c, f_in, f_out));
    out_c = f_out;
  }
  int64_t out_h, out_w;
  PX_RETURN_IF_ERROR(OutputSize(ctx, w, in_h, k_h, w.dilation_h, w.stride_h, w.pad_top,
                                w.pad_bottom, &out_h));
  PX_RETURN_IF_ERROR(OutputSize(ctx, w, in_w, k_w, w.dilation_w, w.stride_w, w.pad_left,
                                w.pad_right, &out_w));
  ctx.set_output(0, PartialShape(w.nchw ? Shape{batch, out_c, out_h, out_w}
                                        : Shape{batch, out_h, out_w, out_c}));
  return absl::OkStatus();
}

// MaxPool and AvgPool: window ksize over a 4-D input.
absl::Status PoolShape(InferenceContext& ctx, bool allow_explicit) {
  Window2D w;
  PX_RETURN_IF_ERROR(ReadWindow2D(ctx, allow_explicit, &w));
  PX_ASSIGN_OR_RETURN(std::vector<int64_t> ksize, GetAttrIntList(ctx.node(), "ksize"));
  if (ksize.size() != 4) {
    return ctx.Error(absl::StrCat("ksize must have 4 elements, got ", ksize.size()));
  }
  const int h = w.nchw ? 2 : 1, wd = w.nchw ? 3 : 2, c = w.nchw ? 1 : 3;
  if (ksize[0] != 1 || ksize[c] != 1) {
    return ctx.Error("pooling is not supported over the batch and depth dimensions: "
                     "ksize there must be 1");
  }
  if (ksize[h] < 1 || ksize[wd] < 1) return ctx.Error("ksize must be positive");
  const PartialShape& input = ctx.input(0);
  if (input.rank_known() && input.rank() != 4) {
    return ctx.Error(absl::StrCat("input must be 4-D, got shape ", input.ToString()));
  }
  if (!input.rank_known()) {
    ctx.set_output(0, PartialShape::UnknownOfRank(4));
    return absl::OkStatus();
  }
  int64_t out_h, out_w;
  PX_RETURN_IF_ERROR(OutputSize(ctx, w, input.dim(h), ksize[h], 1, w.stride_h, w.pad_top,
                                w.pad_bottom, &out_h));
  PX_RETURN_IF_ERROR(OutputSize(ctx, w, input.dim(wd), ksize[wd], 1, w.stride_w, w.pad_left,
                                w.pad_right, &out_w));
  const int64_t n = input.dim(0), ch = input.dim(c);
  ctx.set_output(0, PartialShape(w.nchw ? Shape{n, ch, out_h, out_w}
                                        : Shape{n, out_h, out_w, ch}));
  return absl::OkStatus();
}

// FusedBatchNorm*: y has x's shape; the statistics outputs are [C]; V3's
// reserve_space_3 is a scalar placeholder.
absl::Status FusedBatchNormShape(InferenceContext& ctx) {
  PX_ASSIGN_OR_RETURN(std::string format, GetAttrString(ctx.node(), "data_format"));
  if (format != "NHWC" && format != "NCHW") {
    return ctx.Error(absl::StrCat("data_format must be NHWC or NCHW, got '", format, "'"));
  }
  const PartialShape& x = ctx.input(0);
  if (x.rank_known() && x.rank() != 4) {
    return ctx.Error(absl::StrCat("x must be 4-D, got shape ", x.ToString()));
  }
  int64_t channels = x.rank_known() ? x.dim(format == "NCHW" ? 1 : 3) : -1;
  static const char* kNames[] = {"", "scale", "offset", "mean", "variance"};
  for (int i = 1; i <= 4; ++i) {
    const PartialShape& s = ctx.input(i);
    if (!s.rank_known()) continue;
    if (s.rank() != 1) {
      return ctx.Error(absl::StrCat(kNames[i], " must be 1-D, got shape ", s.ToString()));
    }
    if (channels >= 0 && s.dim(0) >= 0 && s.dim(0) != channels) {
      return ctx.Error(absl::StrCat(kNames[i], " must have ", channels,
                                    " elements (the channels of x ", x.ToString(), "), got ",
                                    s.dim(0)));
    }
    if (channels < 0) channels = s.dim(0);
  }
  ctx.set_output(0, x);
  for (int i = 1; i <= 4; ++i) ctx.set_output(i, PartialShape(Shape{channels}));
  if (ctx.num_outputs() > 5) ctx.set_output(5, PartialShape(Shape{}));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("BiasAdd")
                   .Input("value: T")
                   .Input("bias: T")
                   .Output("output: T")
                   .Attr(kNumericTypes)
                   .Attr("data_format: string = \"NHWC\"")
                   .SetShapeFn(BiasAddShape));

PX_REGISTER_OP(OpDefBuilder("Conv2D")
                   .Input("input: T")
                   .Input("filter: T")
                   .Output("output: T")
                   .Attr("T: {half, bfloat16, float, double, int32}")
                   .Attr("strides: list(int)")
                   .Attr("use_cudnn_on_gpu: bool = true")
                   .Attr("padding: string")
                   .Attr("explicit_paddings: list(int) = []")
                   .Attr("data_format: string = \"NHWC\"")
                   .Attr("dilations: list(int) = [1, 1, 1, 1]")
                   .SetShapeFn([](InferenceContext& ctx) { return ConvShape(ctx, false); }));

PX_REGISTER_OP(OpDefBuilder("DepthwiseConv2dNative")
                   .Input("input: T")
                   .Input("filter: T")
                   .Output("output: T")
                   .Attr("T: {half, bfloat16, float, double}")
                   .Attr("strides: list(int)")
                   .Attr("padding: string")
                   .Attr("explicit_paddings: list(int) = []")
                   .Attr("data_format: string = \"NHWC\"")
                   .Attr("dilations: list(int) = [1, 1, 1, 1]")
                   .SetShapeFn([](InferenceContext& ctx) { return ConvShape(ctx, true); }));

PX_REGISTER_OP(OpDefBuilder("MaxPool")
                   .Input("input: T")
                   .Output("output: T")
                   .Attr("T: {half, bfloat16, float, double, int32, int64, uint8, int16, int8, "
                         "uint16} = DT_FLOAT")
                   .Attr("ksize: list(int) >= 4")
                   .Attr("strides: list(int) >= 4")
                   .Attr("padding: string")
                   .Attr("explicit_paddings: list(int) = []")
                   .Attr("data_format: string = \"NHWC\"")
                   .SetShapeFn([](InferenceContext& ctx) { return PoolShape(ctx, true); }));

PX_REGISTER_OP(OpDefBuilder("AvgPool")
                   .Input("value: T")
                   .Output("output: T")
                   .Attr("ksize: list(int) >= 4")
                   .Attr("strides: list(int) >= 4")
                   .Attr("padding: string")
                   .Attr("data_format: string = \"NHWC\"")
                   .Attr("T: {half, bfloat16, float, double}")
                   .SetShapeFn([](InferenceContext& ctx) { return PoolShape(ctx, false); }));

PX_REGISTER_OP(OpDefBuilder("FusedBatchNorm")
                   .Input("x: T")
                   .Input("scale: T")
                   .Input("offset: T")
                   .Input("mean: T")
                   .Input("variance: T")
                   .Output("y: T")
                   .Output("batch_mean: T")
                   .Output("batch_variance: T")
                   .Output("reserve_space_1: T")
                   .Output("reserve_space_2: T")
                   .Attr("T: {float}")
                   .Attr("epsilon: float = 0.0001")
                   .Attr("exponential_avg_factor: float = 1.0")
                   .Attr("data_format: string = \"NHWC\"")
                   .Attr("is_training: bool = true")
                   .SetShapeFn(FusedBatchNormShape));

PX_REGISTER_OP(OpDefBuilder("FusedBatchNormV2")
                   .Input("x: T")
                   .Input("scale: U")
                   .Input("offset: U")
                   .Input("mean: U")
                   .Input("variance: U")
                   .Output("y: T")
                   .Output("batch_mean: U")
                   .Output("batch_variance: U")
                   .Output("reserve_space_1: U")
                   .Output("reserve_space_2: U")
                   .Attr("T: {half, bfloat16, float}")
                   .Attr("U: {float}")
                   .Attr("epsilon: float = 0.0001")
                   .Attr("exponential_avg_factor: float = 1.0")
                   .Attr("data_format: string = \"NHWC\"")
                   .Attr("is_training: bool = true")
                   .SetShapeFn(FusedBatchNormShape));

PX_REGISTER_OP(OpDefBuilder("FusedBatchNormV3")
                   .Input("x: T")
                   .Input("scale: U")
                   .Input("offset: U")
                   .Input("mean: U")
                   .Input("variance: U")
                   .Output("y: T")
                   .Output("batch_mean: U")
                   .Output("batch_variance: U")
                   .Output("reserve_space_1: U")
                   .Output("reserve_space_2: U")
                   .Output("reserve_space_3: U")
                   .Attr("T: {half, bfloat16, float}")
                   .Attr("U: {bfloat16, float}")
                   .Attr("epsilon: float = 0.0001")
                   .Attr("exponential_avg_factor: float = 1.0")
                   .Attr("data_format: string = \"NHWC\"")
                   .Attr("is_training: bool = true")
                   .SetShapeFn(FusedBatchNormShape));

// The args check shared by _FusedConv2D, _PlexusFusedConv2DAdd and
// _FusedDepthwiseConv2dNative, after the convolution's shape was set: the
// arguments of a recognised fused_ops (BiasAdd: [C_out]; FusedBatchNorm:
// four [C_out]) are checked when num_args fits. Unsupported fused_ops and a
// num_args that does not fit them are left to the kernels (UNIMPLEMENTED and
// INVALID_ARGUMENT). `trailing`: inputs after the args (the addend).
absl::Status FusedConvArgsShape(InferenceContext& ctx, const char* op, int trailing = 0) {
  const tf::AttrValue* fused = ctx.node().FindAttr("fused_ops");
  if (fused == nullptr || fused->list().s_size() == 0) return absl::OkStatus();
  const std::string& first = fused->list().s(0);
  const int want = first == "BiasAdd" ? 1 : first == "FusedBatchNorm" ? 4 : 0;
  if (want == 0 || ctx.num_inputs() != 2 + want + trailing) return absl::OkStatus();
  const PartialShape& out = ctx.output(0);
  PX_ASSIGN_OR_RETURN(std::string format, GetAttrString(ctx.node(), "data_format"));
  const int64_t channels = out.rank_known() ? out.dim(format == "NCHW" ? 1 : 3) : -1;
  static const char* kBnNames[] = {"scale", "offset", "mean", "variance"};
  for (int i = 0; i < want; ++i) {
    const PartialShape& arg = ctx.input(2 + i);
    if (!arg.rank_known()) continue;
    const std::string name = want == 1 ? "bias" : kBnNames[i];
    if (arg.rank() != 1) {
      return ctx.Error(absl::StrCat(op, " ", name, " must be 1-D, got ", arg.ToString()));
    }
    if (channels >= 0 && arg.dim(0) >= 0 && arg.dim(0) != channels) {
      return ctx.Error(absl::StrCat(op, " ", name, " ", arg.ToString(),
                                    " must have the convolution's ", channels,
                                    " output channels"));
    }
  }
  return absl::OkStatus();
}

// _FusedConv2D (created by the graph optimizer) and _PlexusFusedConv2DAdd:
// Conv2D's shape for an HWIO filter, then the args check.
absl::Status FusedConv2DShapeOf(InferenceContext& ctx, const char* op, int trailing) {
  PX_ASSIGN_OR_RETURN(std::string filter_format, GetAttrString(ctx.node(), "filter_format"));
  if (filter_format != "HWIO" && filter_format != "OIHW" && filter_format != "OIHW_VECT_I") {
    return ctx.Error(absl::StrCat("filter_format must be HWIO, OIHW or OIHW_VECT_I, got '",
                                  filter_format, "'"));
  }
  if (filter_format != "HWIO") {
    // The shape below reads an HWIO filter; the kernels refuse the others.
    ctx.set_output(0, PartialShape::UnknownOfRank(4));
    return absl::OkStatus();
  }
  PX_RETURN_IF_ERROR(ConvShape(ctx, false));
  return FusedConvArgsShape(ctx, op, trailing);
}

absl::Status FusedConv2DShape(InferenceContext& ctx) { return FusedConv2DShapeOf(ctx, "_FusedConv2D", 0); }

// The attributes _FusedConv2D and _PlexusFusedConv2DAdd share.
OpDefBuilder& FusedConv2DAttrs(OpDefBuilder& b) {
  return b.Attr("strides: list(int)")
      .Attr("padding: string")
      .Attr("explicit_paddings: list(int) = []")
      .Attr("data_format: string = \"NHWC\"")
      .Attr("filter_format: string = \"HWIO\"")
      .Attr("dilations: list(int) = [1, 1, 1, 1]")
      .Attr("fused_ops: list(string) = []")
      .Attr("epsilon: float = 0.0001")
      .Attr("leakyrelu_alpha: float = 0.2");
}

// TensorFlow's signature before its args became a type list (TArgs) with
// host_args; T there is {half, float, double, int8, qint8}: here the four
// floating types, bfloat16 included, as the plain Conv2D.
PX_REGISTER_OP(FusedConv2DAttrs(OpDefBuilder("_FusedConv2D")
                                     .Input("input: T")
                                     .Input("filter: T")
                                     .Input("args: num_args * T")
                                     .Output("output: T")
                                     .Attr("T: {half, bfloat16, float, double}")
                                     .Attr("num_args: int >= 0")
                                     .Attr("use_cudnn_on_gpu: bool = true"))
                   .SetShapeFn(FusedConv2DShape));

// _PlexusFusedConv2DAdd (created by the graph optimizer's fuse pass for
// devices with a kernel for it; internal): _FusedConv2D whose epilogue also
// adds `addend`, a tensor of the output's shape, before the activation:
//   output = act(epilogue(conv(input, filter)) + addend)
// with fused_ops [BiasAdd] or [FusedBatchNorm], then optionally the
// activation. It is a residual block's Add (and the activation after it)
// run inside the convolution.
absl::Status FusedConv2DAddShape(InferenceContext& ctx) {
  PX_RETURN_IF_ERROR(FusedConv2DShapeOf(ctx, "_PlexusFusedConv2DAdd", /*trailing=*/1));
  const PartialShape& addend = ctx.input(ctx.num_inputs() - 1);
  const PartialShape& out = ctx.output(0);
  if (!addend.rank_known() || !out.rank_known()) return absl::OkStatus();
  bool same = addend.rank() == out.rank();
  std::vector<int64_t> dims;
  for (int64_t d = 0; same && d < out.rank(); ++d) {
    const int64_t a = addend.dim(d), o = out.dim(d);
    same = a < 0 || o < 0 || a == o;
    dims.push_back(o >= 0 ? o : a);
  }
  if (!same) {
    return ctx.Error(absl::StrCat("_PlexusFusedConv2DAdd addend ", addend.ToString(),
                                  " must have the convolution's output shape ", out.ToString()));
  }
  ctx.set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

PX_REGISTER_OP(FusedConv2DAttrs(OpDefBuilder("_PlexusFusedConv2DAdd")
                                     .Input("input: T")
                                     .Input("filter: T")
                                     .Input("args: num_args * T")
                                     .Input("addend: T")
                                     .Output("output: T")
                                     .Attr("T: {float, double}")
                                     .Attr("num_args: int >= 1"))
                   .SetShapeFn(FusedConv2DAddShape));

// _FusedDepthwiseConv2dNative (created by the graph optimizer): the
// depthwise convolution's shape, then the args as for _FusedConv2D (their
// length is the output depth, input depth * channel multiplier).
// TensorFlow's signature, plus DepthwiseConv2dNative's explicit_paddings
// (defaulted, so TensorFlow's nodes import unchanged).
PX_REGISTER_OP(OpDefBuilder("_FusedDepthwiseConv2dNative")
                   .Input("input: T")
                   .Input("filter: T")
                   .Input("args: num_args * T")
                   .Output("output: T")
                   .Attr("T: {half, bfloat16, float, double}")
                   .Attr("num_args: int >= 0")
                   .Attr("strides: list(int)")
                   .Attr("padding: string")
                   .Attr("explicit_paddings: list(int) = []")
                   .Attr("data_format: string = \"NHWC\"")
                   .Attr("dilations: list(int) = [1, 1, 1, 1]")
                   .Attr("fused_ops: list(string) = []")
                   .Attr("epsilon: float = 0.0001")
                   .Attr("leakyrelu_alpha: float = 0.2")
                   .SetShapeFn([](InferenceContext& ctx) -> absl::Status {
                     PX_RETURN_IF_ERROR(ConvShape(ctx, true));
                     return FusedConvArgsShape(ctx, "_FusedDepthwiseConv2dNative");
                   }));

}  // namespace
}  // namespace plexus

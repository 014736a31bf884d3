// Arithmetic, matrix and activation ops.
#include "absl/strings/str_cat.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

constexpr char kNumericTypes[] =
    "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, "
    "uint32, uint64, int64, complex64, complex128}";
constexpr char kRealTypes[] =
    "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, "
    "uint32, uint64, int64}";
constexpr char kFloatTypes[] = "T: {half, bfloat16, float, double}";

absl::Status BroadcastShape(InferenceContext& ctx) {
  auto out = BroadcastShapes(ctx.input(0), ctx.input(1));
  if (!out.ok()) return ctx.Error(out.status().message());
  ctx.set_output(0, *out);
  return absl::OkStatus();
}

absl::Status UnchangedShape(InferenceContext& ctx) {
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

absl::Status MatMulShape(InferenceContext& ctx) {
  const PartialShape& a = ctx.input(0);
  const PartialShape& b = ctx.input(1);
  for (const PartialShape* s : {&a, &b}) {
    if (s->rank_known() && s->rank() != 2) {
      return ctx.Error(absl::StrCat("MatMul needs rank-2 inputs, got ", a.ToString(),
                                    " and ", b.ToString()));
    }
  }
  PX_ASSIGN_OR_RETURN(bool ta, GetAttrBool(ctx.node(), "transpose_a"));
  PX_ASSIGN_OR_RETURN(bool tb, GetAttrBool(ctx.node(), "transpose_b"));
  int64_t m = a.rank_known() ? a.dim(ta ? 1 : 0) : -1;
  int64_t ka = a.rank_known() ? a.dim(ta ? 0 : 1) : -1;
  int64_t kb = b.rank_known() ? b.dim(tb ? 1 : 0) : -1;
  int64_t n = b.rank_known() ? b.dim(tb ? 0 : 1) : -1;
  if (ka >= 0 && kb >= 0 && ka != kb) {
    return ctx.Error(absl::StrCat("Matrix size-incompatible: In[0]: ", a.ToString(),
                                  ", In[1]: ", b.ToString(),
                                  " (transpose_a=", ta, ", transpose_b=", tb, ")"));
  }
  ctx.set_output(0, PartialShape(Shape{m, n}));
  return absl::OkStatus();
}

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

absl::Status SoftmaxShape(InferenceContext& ctx) {
  if (ctx.input(0).rank_known() && ctx.input(0).rank() < 1) {
    return ctx.Error("logits must have rank >= 1");
  }
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

#define PX_BINARY_OP(name)                      \
  PX_REGISTER_OP(OpDefBuilder(name)             \
                     .Input("x: T")             \
                     .Input("y: T")             \
                     .Output("z: T")            \
                     .Attr(kNumericTypes)       \
                     .SetShapeFn(BroadcastShape))

PX_BINARY_OP("Add");
PX_BINARY_OP("AddV2");
PX_BINARY_OP("Sub");
PX_BINARY_OP("Mul");

PX_REGISTER_OP(OpDefBuilder("MatMul")
                   .Input("a: T")
                   .Input("b: T")
                   .Output("product: T")
                   .Attr("transpose_a: bool = false")
                   .Attr("transpose_b: bool = false")
                   .Attr("grad_a: bool = false")
                   .Attr("grad_b: bool = false")
                   .Attr("T: {bfloat16, half, float, double, int32, int64, complex64, complex128}")
                   .SetShapeFn(MatMulShape));

PX_REGISTER_OP(OpDefBuilder("BiasAdd")
                   .Input("value: T")
                   .Input("bias: T")
                   .Output("output: T")
                   .Attr(kNumericTypes)
                   .Attr("data_format: string = \"NHWC\"")
                   .SetShapeFn(BiasAddShape));

PX_REGISTER_OP(OpDefBuilder("Relu")
                   .Input("features: T")
                   .Output("activations: T")
                   .Attr(kRealTypes)
                   .SetShapeFn(UnchangedShape));

PX_REGISTER_OP(OpDefBuilder("Softmax")
                   .Input("logits: T")
                   .Output("softmax: T")
                   .Attr(kFloatTypes)
                   .SetShapeFn(SoftmaxShape));

}  // namespace
}  // namespace plexus

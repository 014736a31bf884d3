// Activations: Relu, Relu6, Elu, Selu, LeakyRelu, Softplus, Softsign, Gelu, Softmax,
// LogSoftmax. Names, arguments, attributes and type sets follow TensorFlow's
// nn_ops.cc.
#include "absl/strings/str_cat.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

// Softmax and LogSoftmax work on the last axis: rank >= 1.
absl::Status SoftmaxShape(InferenceContext& ctx) {
  if (ctx.input(0).rank_known() && ctx.input(0).rank() < 1) {
    return ctx.Error(absl::StrCat("logits must have rank >= 1, got shape ",
                                  ctx.input(0).ToString()));
  }
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

#define PX_ACTIVATION_OP(name, types)           \
  PX_REGISTER_OP(OpDefBuilder(name)             \
                     .Input("features: T")      \
                     .Output("activations: T")  \
                     .Attr(types)               \
                     .SetShapeFn(UnchangedShape))

PX_ACTIVATION_OP("Relu", kRealTypes);
PX_ACTIVATION_OP("Relu6", kRealTypes);
PX_ACTIVATION_OP("Elu", kFloatTypes);
PX_ACTIVATION_OP("Selu", kFloatTypes);
PX_ACTIVATION_OP("Softplus", kFloatTypes);
// features / (1 + |features|).
PX_ACTIVATION_OP("Softsign", kFloatTypes);

PX_REGISTER_OP(OpDefBuilder("LeakyRelu")
                   .Input("features: T")
                   .Output("activations: T")
                   .Attr("alpha: float = 0.2")
                   .Attr("T: {half, bfloat16, float, double} = DT_FLOAT")
                   .SetShapeFn(UnchangedShape));

// TensorFlow's raw Gelu op (tf.raw_ops.Gelu); approximate selects the tanh
// form, otherwise the exact erf form.
PX_REGISTER_OP(OpDefBuilder("Gelu")
                   .Input("features: T")
                   .Output("activations: T")
                   .Attr("T: {half, bfloat16, float, double}")
                   .Attr("approximate: bool = true")
                   .SetShapeFn(UnchangedShape));

PX_REGISTER_OP(OpDefBuilder("Softmax")
                   .Input("logits: T")
                   .Output("softmax: T")
                   .Attr(kFloatTypes)
                   .SetShapeFn(SoftmaxShape));

PX_REGISTER_OP(OpDefBuilder("LogSoftmax")
                   .Input("logits: T")
                   .Output("logsoftmax: T")
                   .Attr(kFloatTypes)
                   .SetShapeFn(SoftmaxShape));

}  // namespace
}  // namespace plexus

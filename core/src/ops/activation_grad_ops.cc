// Gradients of the activations and of the elementwise unary math ops
// (UnsortedSegmentSum, the gradient of Gather, is in segment_ops.cc). Names, arguments,
// attributes and type sets follow TensorFlow's nn_ops.cc and math_ops.cc.
//
// The activation gradients take (gradients, features-or-outputs) and the
// unary math gradients take (y, dy): both inputs must have the same shape.
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

// Merges two partial shapes: an unknown rank or dimension takes the other's.
// False when they conflict.
bool MergeShapes(const PartialShape& a, const PartialShape& b, PartialShape* out) {
  if (!a.rank_known()) {
    *out = b;
    return true;
  }
  if (!b.rank_known()) {
    *out = a;
    return true;
  }
  if (a.rank() != b.rank()) return false;
  Shape dims = a.dims();
  for (int64_t i = 0; i < a.rank(); ++i) {
    const int64_t x = a.dim(i), y = b.dim(i);
    if (x < 0) {
      dims[i] = y;
    } else if (y >= 0 && x != y) {
      return false;
    }
  }
  *out = PartialShape(dims);
  return true;
}

// Both inputs have the same shape, which is the output's.
absl::Status MergeBothInputsShape(InferenceContext& ctx) {
  PartialShape merged;
  if (!MergeShapes(ctx.input(0), ctx.input(1), &merged)) {
    return ctx.Error(absl::StrCat("both inputs must have the same shape, got ",
                                  ctx.input(0).ToString(), " and ", ctx.input(1).ToString()));
  }
  ctx.set_output(0, merged);
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Activation gradients (nn_ops.cc)
// ---------------------------------------------------------------------------

// ReluGrad: gradients where features > 0, else 0.
PX_REGISTER_OP(OpDefBuilder("ReluGrad")
                   .Input("gradients: T")
                   .Input("features: T")
                   .Output("backprops: T")
                   .Attr(kRealTypes)
                   .SetShapeFn(MergeBothInputsShape));

// Relu6Grad: gradients where 0 < features < 6, else 0.
PX_REGISTER_OP(OpDefBuilder("Relu6Grad")
                   .Input("gradients: T")
                   .Input("features: T")
                   .Output("backprops: T")
                   .Attr(kRealTypes)
                   .SetShapeFn(MergeBothInputsShape));

// EluGrad: gradients * (outputs + 1) where outputs < 0, else gradients.
PX_REGISTER_OP(OpDefBuilder("EluGrad")
                   .Input("gradients: T")
                   .Input("outputs: T")
                   .Output("backprops: T")
                   .Attr(kFloatTypes)
                   .SetShapeFn(MergeBothInputsShape));

// SeluGrad: gradients * (outputs + scale * alpha) where outputs < 0, else
// gradients * scale.
PX_REGISTER_OP(OpDefBuilder("SeluGrad")
                   .Input("gradients: T")
                   .Input("outputs: T")
                   .Output("backprops: T")
                   .Attr(kFloatTypes)
                   .SetShapeFn(MergeBothInputsShape));

// LeakyReluGrad: gradients where features > 0, else gradients * alpha.
PX_REGISTER_OP(OpDefBuilder("LeakyReluGrad")
                   .Input("gradients: T")
                   .Input("features: T")
                   .Output("backprops: T")
                   .Attr("alpha: float = 0.2")
                   .Attr("T: {half, bfloat16, float, double} = DT_FLOAT")
                   .SetShapeFn(MergeBothInputsShape));

// SoftplusGrad: gradients / (1 + exp(-features)).
PX_REGISTER_OP(OpDefBuilder("SoftplusGrad")
                   .Input("gradients: T")
                   .Input("features: T")
                   .Output("backprops: T")
                   .Attr(kFloatTypes)
                   .SetShapeFn(MergeBothInputsShape));

// SoftsignGrad: gradients / (1 + |features|)^2.
PX_REGISTER_OP(OpDefBuilder("SoftsignGrad")
                   .Input("gradients: T")
                   .Input("features: T")
                   .Output("backprops: T")
                   .Attr(kFloatTypes)
                   .SetShapeFn(MergeBothInputsShape));

// ---------------------------------------------------------------------------
// Unary math gradients (math_ops.cc): z = f'(x) * dy written with y = f(x).
// TensorFlow also allows complex types, which Plexus does not have.
// ---------------------------------------------------------------------------

#define PX_UNARY_GRAD_OP(name)                                           \
  PX_REGISTER_OP(OpDefBuilder(name)                                      \
                     .Input("y: T")                                      \
                     .Input("dy: T")                                     \
                     .Output("z: T")                                     \
                     .Attr("T: {bfloat16, half, float, double}")         \
                     .SetShapeFn(MergeBothInputsShape))

PX_UNARY_GRAD_OP("SigmoidGrad");     // dy * y * (1 - y)
PX_UNARY_GRAD_OP("TanhGrad");        // dy * (1 - y * y)
PX_UNARY_GRAD_OP("RsqrtGrad");       // dy * -0.5 * y^3
PX_UNARY_GRAD_OP("SqrtGrad");        // dy * 0.5 / y
PX_UNARY_GRAD_OP("ReciprocalGrad");  // -dy * y * y
PX_UNARY_GRAD_OP("InvGrad");         // the same as ReciprocalGrad

#undef PX_UNARY_GRAD_OP

}  // namespace
}  // namespace plexus

// Variables: TensorFlow 1 reference variables (VariableV2, Assign,
// AssignAdd, ...) and TensorFlow 2 resource variables (VarHandleOp,
// ReadVariableOp, AssignVariableOp, ...), and the plain gradient-descent
// update. Their schemas and shape functions; all are host ops (a variable
// lives in the session's state), with kernels in host_kernels/state.cc.
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

absl::Status VariableShape(InferenceContext& ctx) {
  PX_ASSIGN_OR_RETURN(PartialShape shape, GetAttrShape(ctx.node(), "shape"));
  ctx.set_output(0, shape);
  return absl::OkStatus();
}

absl::Status ScalarShape(InferenceContext& ctx) {
  for (int i = 0; i < ctx.num_outputs(); ++i) ctx.set_output(i, PartialShape(Shape{}));
  return absl::OkStatus();
}

// A read's shape: the variable's declared shape when the handle comes
// straight from a VarHandleOp (TensorFlow keeps it in handle data).
absl::Status ReadShape(InferenceContext& ctx) {
  PartialShape shape = PartialShape::Unknown();
  const Node& node = ctx.node();
  if (!node.inputs.empty() && node.inputs[0].node != nullptr && node.inputs[0].node->op == "VarHandleOp") {
    if (auto s = GetAttrShape(*node.inputs[0].node, "shape"); s.ok()) shape = *s;
  }
  ctx.set_output(0, shape);
  return absl::OkStatus();
}

absl::Status NoOutputs(InferenceContext&) { return absl::OkStatus(); }

PX_REGISTER_OP(OpDefBuilder("VariableV2")
                   .Output("ref: Ref(dtype)")
                   .Attr("shape: shape")
                   .Attr("dtype: type")
                   .Attr("container: string = \"\"")
                   .Attr("shared_name: string = \"\"")
                   .SetIsStateful()
                   .SetShapeFn(VariableShape));

PX_REGISTER_OP(OpDefBuilder("Assign")
                   .Input("ref: Ref(T)")
                   .Input("value: T")
                   .Output("output_ref: Ref(T)")
                   .Attr("T: type")
                   .Attr("validate_shape: bool = true")
                   .Attr("use_locking: bool = true")
                   .SetIsStateful()
                   .SetShapeFn([](InferenceContext& ctx) {
                     ctx.set_output(0, ctx.input(1));
                     return absl::OkStatus();
                   }));

PX_REGISTER_OP(OpDefBuilder("AssignAdd")
                   .Input("ref: Ref(T)")
                   .Input("value: T")
                   .Output("output_ref: Ref(T)")
                   .Attr(kNumericTypes)
                   .Attr("use_locking: bool = false")
                   .SetIsStateful()
                   .SetShapeFn(UnchangedShape));

PX_REGISTER_OP(OpDefBuilder("AssignSub")
                   .Input("ref: Ref(T)")
                   .Input("value: T")
                   .Output("output_ref: Ref(T)")
                   .Attr(kNumericTypes)
                   .Attr("use_locking: bool = false")
                   .SetIsStateful()
                   .SetShapeFn(UnchangedShape));

PX_REGISTER_OP(OpDefBuilder("IsVariableInitialized")
                   .Input("ref: Ref(dtype)")
                   .Output("is_initialized: bool")
                   .Attr("dtype: type")
                   .SetIsStateful()
                   .SetShapeFn(ScalarShape));

PX_REGISTER_OP(OpDefBuilder("ApplyGradientDescent")
                   .Input("var: Ref(T)")
                   .Input("alpha: T")
                   .Input("delta: T")
                   .Output("out: Ref(T)")
                   .Attr(kNumericTypes)
                   .Attr("use_locking: bool = false")
                   .SetIsStateful()
                   .SetShapeFn(UnchangedShape));

PX_REGISTER_OP(OpDefBuilder("VarHandleOp")
                   .Output("resource: resource")
                   .Attr("container: string = \"\"")
                   .Attr("shared_name: string = \"\"")
                   .Attr("debug_name: string = \"\"")
                   .Attr("dtype: type")
                   .Attr("shape: shape")
                   .Attr("allowed_devices: list(string) = []")
                   .SetIsStateful()
                   .SetShapeFn(ScalarShape));

PX_REGISTER_OP(OpDefBuilder("ReadVariableOp")
                   .Input("resource: resource")
                   .Output("value: dtype")
                   .Attr("dtype: type")
                   .SetIsStateful()
                   .SetShapeFn(ReadShape));

PX_REGISTER_OP(OpDefBuilder("AssignVariableOp")
                   .Input("resource: resource")
                   .Input("value: dtype")
                   .Attr("dtype: type")
                   .Attr("validate_shape: bool = false")
                   .SetIsStateful()
                   .SetShapeFn(NoOutputs));

PX_REGISTER_OP(OpDefBuilder("AssignAddVariableOp")
                   .Input("resource: resource")
                   .Input("value: dtype")
                   .Attr("dtype: type")
                   .SetIsStateful()
                   .SetShapeFn(NoOutputs));

PX_REGISTER_OP(OpDefBuilder("AssignSubVariableOp")
                   .Input("resource: resource")
                   .Input("value: dtype")
                   .Attr("dtype: type")
                   .SetIsStateful()
                   .SetShapeFn(NoOutputs));

PX_REGISTER_OP(OpDefBuilder("VarIsInitializedOp")
                   .Input("resource: resource")
                   .Output("is_initialized: bool")
                   .SetIsStateful()
                   .SetShapeFn(ScalarShape));

PX_REGISTER_OP(OpDefBuilder("DestroyResourceOp")
                   .Input("resource: resource")
                   .Attr("ignore_lookup_error: bool = true")
                   .SetIsStateful()
                   .SetShapeFn(NoOutputs));

PX_REGISTER_OP(OpDefBuilder("DisableCopyOnRead")
                   .Input("resource: resource")
                   .SetIsStateful()
                   .SetShapeFn(NoOutputs));

PX_REGISTER_OP(OpDefBuilder("ResourceApplyGradientDescent")
                   .Input("var: resource")
                   .Input("alpha: T")
                   .Input("delta: T")
                   .Attr(kNumericTypes)
                   .Attr("use_locking: bool = false")
                   .SetIsStateful()
                   .SetShapeFn(NoOutputs));

}  // namespace
}  // namespace plexus

// Structural ops: constants, placeholders, identity (and EnsureShape, an
// identity that states its shape) and grouping.
#include "absl/strings/str_cat.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"
#include "plexus/tensor_proto.h"

namespace plexus {
namespace {

absl::Status ConstShape(InferenceContext& ctx) {
  PX_ASSIGN_OR_RETURN(const tf::TensorProto* value, GetAttrTensorProto(ctx.node(), "value"));
  auto shape = ShapeFromProto(value->tensor_shape());
  if (!shape.ok()) return ctx.Error(shape.status().message());
  ctx.set_output(0, *shape);
  return absl::OkStatus();
}

absl::Status PlaceholderShape(InferenceContext& ctx) {
  PX_ASSIGN_OR_RETURN(PartialShape shape, GetAttrShape(ctx.node(), "shape"));
  ctx.set_output(0, shape);
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("Const")
                   .Output("output: dtype")
                   .Attr("value: tensor")
                   .Attr("dtype: type")
                   .SetIsConstant()
                   .SetShapeFn(ConstShape));

PX_REGISTER_OP(OpDefBuilder("Placeholder")
                   .Output("output: dtype")
                   .Attr("dtype: type")
                   .Attr("shape: shape = { unknown_rank: true }")
                   .SetShapeFn(PlaceholderShape));

PX_REGISTER_OP(OpDefBuilder("Identity")
                   .Input("input: T")
                   .Output("output: T")
                   .Attr("T: type")
                   .SetForwardsInputs()
                   .SetShapeFn(UnchangedShape));

// EnsureShape(input): the input, which must have the attribute's (partial)
// shape. The core forwards the tensor; the shape is checked when the graph's
// shapes are inferred, so a graph whose known shapes contradict it is
// refused at load, naming the node. (TensorFlow checks again at run time; a
// tensor whose shape was unknown at load is not checked here.)
absl::Status EnsureShapeShape(InferenceContext& ctx) {
  PX_ASSIGN_OR_RETURN(PartialShape want, GetAttrShape(ctx.node(), "shape"));
  const PartialShape& in = ctx.input(0);
  if (!want.rank_known()) {
    ctx.set_output(0, in);
    return absl::OkStatus();
  }
  if (!in.rank_known()) {
    ctx.set_output(0, want);
    return absl::OkStatus();
  }
  if (in.rank() != want.rank()) {
    return ctx.Error(absl::StrCat("Shape of tensor ", in.ToString(), " is not compatible with expected shape ",
                                  want.ToString(), "."));
  }
  Shape merged(in.dims());
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (want.dim(d) >= 0 && in.dim(d) >= 0 && want.dim(d) != in.dim(d)) {
      return ctx.Error(absl::StrCat("Shape of tensor ", in.ToString(), " is not compatible with expected shape ",
                                    want.ToString(), "."));
    }
    if (merged[d] < 0) merged[d] = want.dim(d);
  }
  ctx.set_output(0, PartialShape(merged));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("EnsureShape")
                   .Input("input: T")
                   .Output("output: T")
                   .Attr("shape: shape")
                   .Attr("T: type")
                   .SetForwardsInputs()
                   .SetShapeFn(EnsureShapeShape));

PX_REGISTER_OP(OpDefBuilder("NoOp").SetShapeFn([](InferenceContext&) {
  return absl::OkStatus();
}));

}  // namespace
}  // namespace plexus

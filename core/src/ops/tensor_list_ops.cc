// TensorLists, the lists TensorFlow 2 loops build (tf.TensorArray inside a
// tf.function, Keras RNN layers): a DT_VARIANT scalar holding a list of
// tensors of one element_dtype, whose element_shape may be partly known.
// A list is a value: ops that change one return a new list and leave their
// input as it was. Their schemas and shape functions; they are host ops,
// with kernels in host_kernels/tensor_list.cc and tensor_list_bulk.cc.
#include "absl/strings/str_cat.h"
#include "ops/partial_shapes.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

constexpr char kShapeType[] = "shape_type: {int32, int64}";

// The element shape given by input `i` when it is a known constant, else
// unknown; an error for a constant that is not a shape.
absl::StatusOr<PartialShape> ElementShapeInput(InferenceContext& ctx, int i) {
  const Tensor* value = ctx.input_value(i);
  if (value == nullptr) return PartialShape::Unknown();
  auto shape = PartialShapeFromTensor(*value);
  if (!shape.ok()) return ctx.Error(shape.status().message());
  return shape;
}

// [leading] + element shape, or unknown when the element rank is.
PartialShape Prepend(int64_t leading, const PartialShape& element) {
  if (!element.rank_known()) return PartialShape::Unknown();
  Shape dims{leading};
  dims.insert(dims.end(), element.dims().begin(), element.dims().end());
  return PartialShape(std::move(dims));
}

absl::Status ListOut(InferenceContext& ctx) {
  ctx.set_output(0, PartialShape(Shape{}));
  return absl::OkStatus();
}

// Output 0 has the element shape given by input `i`.
absl::Status ElementOut(InferenceContext& ctx, int out, int i) {
  PX_ASSIGN_OR_RETURN(PartialShape element, ElementShapeInput(ctx, i));
  ctx.set_output(out, element);
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("EmptyTensorList")
                   .Input("element_shape: shape_type")
                   .Input("max_num_elements: int32")
                   .Output("handle: variant")
                   .Attr("element_dtype: type")
                   .Attr(kShapeType)
                   .SetShapeFn(ListOut));
PX_REGISTER_OP(OpDefBuilder("TensorListReserve")
                   .Input("element_shape: shape_type")
                   .Input("num_elements: int32")
                   .Output("handle: variant")
                   .Attr("element_dtype: type")
                   .Attr(kShapeType)
                   .SetShapeFn(ListOut));
PX_REGISTER_OP(OpDefBuilder("TensorListFromTensor")
                   .Input("tensor: element_dtype")
                   .Input("element_shape: shape_type")
                   .Output("output_handle: variant")
                   .Attr("element_dtype: type")
                   .Attr(kShapeType)
                   .SetShapeFn(ListOut));
PX_REGISTER_OP(OpDefBuilder("TensorListSplit")
                   .Input("tensor: element_dtype")
                   .Input("element_shape: shape_type")
                   .Input("lengths: int64")
                   .Output("output_handle: variant")
                   .Attr("element_dtype: type")
                   .Attr(kShapeType)
                   .SetShapeFn(ListOut));
PX_REGISTER_OP(OpDefBuilder("TensorListLength")
                   .Input("input_handle: variant")
                   .Output("length: int32")
                   .SetShapeFn(ListOut));
PX_REGISTER_OP(OpDefBuilder("TensorListElementShape")
                   .Input("input_handle: variant")
                   .Output("element_shape: shape_type")
                   .Attr(kShapeType)
                   .SetShapeFn([](InferenceContext& ctx) {
                     // A vector, or the scalar -1 when the rank is unknown.
                     ctx.set_output(0, PartialShape::Unknown());
                     return absl::OkStatus();
                   }));
PX_REGISTER_OP(OpDefBuilder("TensorListGetItem")
                   .Input("input_handle: variant")
                   .Input("index: int32")
                   .Input("element_shape: int32")
                   .Output("item: element_dtype")
                   .Attr("element_dtype: type")
                   .SetShapeFn([](InferenceContext& ctx) { return ElementOut(ctx, 0, 2); }));
PX_REGISTER_OP(OpDefBuilder("TensorListSetItem")
                   .Input("input_handle: variant")
                   .Input("index: int32")
                   .Input("item: element_dtype")
                   .Output("output_handle: variant")
                   .Attr("element_dtype: type")
                   .Attr("resize_if_index_out_of_bounds: bool = false")
                   .SetShapeFn(ListOut));
PX_REGISTER_OP(OpDefBuilder("TensorListPushBack")
                   .Input("input_handle: variant")
                   .Input("tensor: element_dtype")
                   .Output("output_handle: variant")
                   .Attr("element_dtype: type")
                   .SetShapeFn(ListOut));
PX_REGISTER_OP(OpDefBuilder("TensorListPopBack")
                   .Input("input_handle: variant")
                   .Input("element_shape: int32")
                   .Output("output_handle: variant")
                   .Output("tensor: element_dtype")
                   .Attr("element_dtype: type")
                   .SetShapeFn([](InferenceContext& ctx) {
                     ctx.set_output(0, PartialShape(Shape{}));
                     return ElementOut(ctx, 1, 1);
                   }));
PX_REGISTER_OP(OpDefBuilder("TensorListResize")
                   .Input("input_handle: variant")
                   .Input("size: int32")
                   .Output("output_handle: variant")
                   .SetShapeFn(ListOut));
PX_REGISTER_OP(OpDefBuilder("TensorListStack")
                   .Input("input_handle: variant")
                   .Input("element_shape: int32")
                   .Output("tensor: element_dtype")
                   .Attr("element_dtype: type")
                   .Attr("num_elements: int = -1")
                   .SetShapeFn([](InferenceContext& ctx) {
                     PX_ASSIGN_OR_RETURN(PartialShape element, ElementShapeInput(ctx, 1));
                     PX_ASSIGN_OR_RETURN(int64_t n, GetAttrInt(ctx.node(), "num_elements"));
                     ctx.set_output(0, Prepend(n >= 0 ? n : -1, element));
                     return absl::OkStatus();
                   }));
PX_REGISTER_OP(OpDefBuilder("TensorListGather")
                   .Input("input_handle: variant")
                   .Input("indices: int32")
                   .Input("element_shape: int32")
                   .Output("values: element_dtype")
                   .Attr("element_dtype: type")
                   .SetShapeFn([](InferenceContext& ctx) {
                     PX_ASSIGN_OR_RETURN(PartialShape element, ElementShapeInput(ctx, 2));
                     const PartialShape& indices = ctx.input(1);
                     const int64_t n = indices.rank() == 1 ? indices.dim(0) : -1;
                     ctx.set_output(0, Prepend(n, element));
                     return absl::OkStatus();
                   }));
PX_REGISTER_OP(OpDefBuilder("TensorListScatterIntoExistingList")
                   .Input("input_handle: variant")
                   .Input("tensor: element_dtype")
                   .Input("indices: int32")
                   .Output("output_handle: variant")
                   .Attr("element_dtype: type")
                   .SetShapeFn(ListOut));
PX_REGISTER_OP(OpDefBuilder("TensorListConcatV2")
                   .Input("input_handle: variant")
                   .Input("element_shape: shape_type")
                   .Input("leading_dims: int64")
                   .Output("tensor: element_dtype")
                   .Output("lengths: int64")
                   .Attr("element_dtype: type")
                   .Attr(kShapeType)
                   .SetShapeFn([](InferenceContext& ctx) {
                     PX_ASSIGN_OR_RETURN(PartialShape element, ElementShapeInput(ctx, 1));
                     if (element.rank() == 0) {
                       return ctx.Error("Concat requires elements to be at least vectors, found scalars instead.");
                     }
                     if (element.rank_known()) {
                       Shape dims = element.dims();
                       dims[0] = -1;
                       element = PartialShape(std::move(dims));
                     }
                     ctx.set_output(0, element);
                     ctx.set_output(1, PartialShape(Shape{-1}));
                     return absl::OkStatus();
                   }));

}  // namespace
}  // namespace plexus

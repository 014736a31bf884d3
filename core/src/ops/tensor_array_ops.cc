// TensorArrays (the V3 ops TensorFlow 1 loops use): a session resource
// holding a list of same-dtype tensors, written and read by index. The
// "flow" scalar only orders the ops in the graph. Their schemas and shape
// functions; they are host ops, with kernels (and the TensorArray resource)
// in host_kernels/tensor_array.cc.
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

absl::Status ScalarOut(InferenceContext& ctx) {
  ctx.set_output(0, PartialShape(Shape{}));
  return absl::OkStatus();
}
absl::Status UnknownOut(InferenceContext& ctx) {
  ctx.set_output(0, PartialShape::Unknown());
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("TensorArrayV3")
                   .Input("size: int32")
                   .Output("handle: resource")
                   .Output("flow: float")
                   .Attr("dtype: type")
                   .Attr("element_shape: shape = { unknown_rank: true }")
                   .Attr("dynamic_size: bool = false")
                   .Attr("clear_after_read: bool = true")
                   .Attr("identical_element_shapes: bool = false")
                   .Attr("tensor_array_name: string = \"\"")
                   .SetIsStateful()
                   .SetShapeFn([](InferenceContext& ctx) {
                     ctx.set_output(0, PartialShape(Shape{}));
                     ctx.set_output(1, PartialShape(Shape{}));
                     return absl::OkStatus();
                   }));
PX_REGISTER_OP(OpDefBuilder("TensorArrayScatterV3")
                   .Input("handle: resource")
                   .Input("indices: int32")
                   .Input("value: T")
                   .Input("flow_in: float")
                   .Output("flow_out: float")
                   .Attr("T: type")
                   .SetIsStateful()
                   .SetShapeFn(ScalarOut));
PX_REGISTER_OP(OpDefBuilder("TensorArrayWriteV3")
                   .Input("handle: resource")
                   .Input("index: int32")
                   .Input("value: T")
                   .Input("flow_in: float")
                   .Output("flow_out: float")
                   .Attr("T: type")
                   .SetIsStateful()
                   .SetShapeFn(ScalarOut));
PX_REGISTER_OP(OpDefBuilder("TensorArrayReadV3")
                   .Input("handle: resource")
                   .Input("index: int32")
                   .Input("flow_in: float")
                   .Output("value: dtype")
                   .Attr("dtype: type")
                   .SetIsStateful()
                   .SetShapeFn(UnknownOut));
PX_REGISTER_OP(OpDefBuilder("TensorArrayGatherV3")
                   .Input("handle: resource")
                   .Input("indices: int32")
                   .Input("flow_in: float")
                   .Output("value: dtype")
                   .Attr("dtype: type")
                   .Attr("element_shape: shape = { unknown_rank: true }")
                   .SetIsStateful()
                   .SetShapeFn(UnknownOut));
PX_REGISTER_OP(OpDefBuilder("TensorArraySizeV3")
                   .Input("handle: resource")
                   .Input("flow_in: float")
                   .Output("size: int32")
                   .SetIsStateful()
                   .SetShapeFn(ScalarOut));
PX_REGISTER_OP(OpDefBuilder("TensorArrayCloseV3")
                   .Input("handle: resource")
                   .SetIsStateful()
                   .SetShapeFn([](InferenceContext&) { return absl::OkStatus(); }));

}  // namespace
}  // namespace plexus

// TensorFlow's collective ops, as TF 2.21 defines them: the V2 forms take
// group size, group key and instance key as int32 inputs (one traced
// function serves any group); the V1 forms carry them as attributes.
// Kernels in host_kernels/collective.cc (host collectives on Gloo,
// dist/communicator.h). The spec parser has no string sets, so the kernels
// check merge_op (Min, Max, Mul, Add) and final_op (Id, Div). Stateful: a collective must run on every rank even
// where its output looks unused, and must never be folded or merged.
#include <string>
#include <vector>

#include "ops/array_util.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

// The input's shape with an unknown first dimension (gather and
// reduce-scatter change it by the group's size, known only at run time).
absl::Status FirstDimUnknown(InferenceContext& ctx) {
  PartialShape in = ctx.input(0);
  if (in.rank_known() && in.rank() == 0) return ctx.Error("the input must have rank 1 or more");
  if (in.rank_known()) {
    Shape dims = in.dims();
    dims[0] = -1;
    ctx.set_output(0, PartialShape(dims));
  } else {
    ctx.set_output(0, PartialShape::Unknown());
  }
  return absl::OkStatus();
}

absl::Status ShapeFromInput(InferenceContext& ctx, int index) {
  std::vector<int64_t> dims;
  if (ReadIntValues(ctx.input_value(index), &dims)) {
    ctx.set_output(0, PartialShape(dims));
  } else if (ctx.input(index).rank() == 1 && ctx.input(index).dim(0) >= 0) {
    PX_ASSIGN_OR_RETURN(PartialShape out,
                        array_util::UnknownOfLength(ctx, ctx.input(index).dim(0), "shape"));
    ctx.set_output(0, std::move(out));
  } else {
    ctx.set_output(0, PartialShape::Unknown());
  }
  return absl::OkStatus();
}

absl::Status ShapeFromAttr(InferenceContext& ctx) {
  PX_ASSIGN_OR_RETURN(PartialShape shape, GetAttrShape(ctx.node(), "shape"));
  ctx.set_output(0, shape);
  return absl::OkStatus();
}

}  // namespace

#define PX_COLLECTIVE_V2(name, types, extra_attrs, shape_fn)       \
  PX_REGISTER_OP(OpDefBuilder(name)                                \
                     .Input("input: T")                            \
                     .Output("data: T")                            \
                     .Input("group_size: int32")                   \
                     .Input("group_key: int32")                    \
                     .Input("instance_key: int32")                 \
                     .Input("ordering_token: Nordering_token * resource") \
                     .Attr("T: " types)                            \
                     extra_attrs                                   \
                     .Attr("communication_hint: string = \"auto\"")  \
                     .Attr("timeout_seconds: float = 0")           \
                     .Attr("is_stateless: bool = false")           \
                     .Attr("Nordering_token: int >= 0 = 0")        \
                     .SetIsStateful()                              \
                     .SetShapeFn(shape_fn))

#define PX_REDUCE_ATTRS                                 \
  .Attr("merge_op: string")                         \
      .Attr("final_op: string")                     \
      .Attr("max_subdivs_per_device: int = -1")

PX_COLLECTIVE_V2("CollectiveReduceV2", "{bfloat16, float, half, double, int32, int64}", PX_REDUCE_ATTRS,
                 UnchangedShape);
PX_COLLECTIVE_V2("CollectiveReduceScatterV2", "{bfloat16, float, half, double, int32, int64}", PX_REDUCE_ATTRS,
                 FirstDimUnknown);
PX_COLLECTIVE_V2("CollectiveGatherV2", "{float, half, double, int32, int64}", , FirstDimUnknown);
PX_COLLECTIVE_V2("CollectiveAllToAllV2", "{bfloat16, float, half, double, int32, int64}", , UnchangedShape);

PX_REGISTER_OP(OpDefBuilder("CollectiveBcastSendV2")
                   .Input("input: T")
                   .Output("data: T")
                   .Input("group_size: int32")
                   .Input("group_key: int32")
                   .Input("instance_key: int32")
                   .Attr("T: {bool, float, half, double, int32, int64}")
                   .Attr("communication_hint: string = \"auto\"")
                   .Attr("timeout_seconds: float = 0")
                   .SetIsStateful()
                   .SetShapeFn(UnchangedShape));

PX_REGISTER_OP(OpDefBuilder("CollectiveBcastRecvV2")
                   .Input("group_size: int32")
                   .Input("group_key: int32")
                   .Input("instance_key: int32")
                   .Input("shape: Tshape")
                   .Output("data: T")
                   .Attr("T: {bool, float, half, double, int32, int64}")
                   .Attr("Tshape: {int32, int64} = int32")
                   .Attr("communication_hint: string = \"auto\"")
                   .Attr("timeout_seconds: float = 0")
                   .SetIsStateful()
                   .SetShapeFn([](InferenceContext& ctx) { return ShapeFromInput(ctx, 3); }));

// V1: keys as attributes.
#define PX_COLLECTIVE_V1_ATTRS                   \
  .Attr("group_size: int")                       \
      .Attr("group_key: int")                    \
      .Attr("instance_key: int")                 \
      .Attr("communication_hint: string = \"auto\"") \
      .Attr("timeout_seconds: float = 0")

PX_REGISTER_OP(OpDefBuilder("CollectiveReduce")
                   .Input("input: T")
                   .Output("data: T")
                   .Attr("T: {bfloat16, float, half, double, int32, int64}")
                   PX_COLLECTIVE_V1_ATTRS
                   .Attr("merge_op: string")
                   .Attr("final_op: string")
                   .Attr("subdiv_offsets: list(int)")
                   .Attr("wait_for: list(int) = []")
                   .SetIsStateful()
                   .SetShapeFn(UnchangedShape));

PX_REGISTER_OP(OpDefBuilder("CollectiveGather")
                   .Input("input: T")
                   .Output("data: T")
                   .Attr("T: {float, half, double, int32, int64}")
                   PX_COLLECTIVE_V1_ATTRS
                   .Attr("shape: shape")
                   .SetIsStateful()
                   .SetShapeFn(ShapeFromAttr));

PX_REGISTER_OP(OpDefBuilder("CollectiveBcastSend")
                   .Input("input: T")
                   .Output("data: T")
                   .Attr("T: {bool, float, half, double, int32, int64}")
                   PX_COLLECTIVE_V1_ATTRS
                   .Attr("shape: shape")
                   .SetIsStateful()
                   .SetShapeFn(ShapeFromAttr));

PX_REGISTER_OP(OpDefBuilder("CollectiveBcastRecv")
                   .Output("data: T")
                   .Attr("T: {bool, float, half, double, int32, int64}")
                   PX_COLLECTIVE_V1_ATTRS
                   .Attr("shape: shape")
                   .SetIsStateful()
                   .SetShapeFn(ShapeFromAttr));

}  // namespace plexus

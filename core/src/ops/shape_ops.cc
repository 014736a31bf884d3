// Shape and dimension ops: Reshape, ExpandDims, Squeeze, the shape queries
// (Shape, ShapeN, Size, Rank), tensors made from a shape or a range (Fill,
// ZerosLike, OnesLike, Range, OneHot, BroadcastTo) and the forwarding ops
// (IdentityN, StopGradient, PreventGradient, Snapshot,
// PlaceholderWithDefault). The data movement ops are in array_ops.cc.
//
// The output shapes themselves are computed by sdk/reference/array_shapes.h,
// which the reference and cpu kernels use too: shape functions, kernels and
// their error messages cannot drift apart. This file adapts partial shapes
// (unknown ranks, unknown dimensions, unknown values) to it, with the
// helpers of ops/array_util.h.
#include <vector>

#include "plexus/sdk/array_shapes.h"
#include "absl/strings/str_cat.h"
#include "ops/array_util.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

using array_shapes::Dims;
using array_util::Check;
using array_util::CheckRank;
using array_util::kIndexTypes32And64;
using array_util::KnownInts;
using array_util::KnownScalarInt;
using array_util::KnownValue;
using array_util::ShapeFromInput;

// ---------------------------------------------------------------------------
// Shape functions
// ---------------------------------------------------------------------------

absl::Status ReshapeShape(InferenceContext& ctx) {
  PX_RETURN_IF_ERROR(CheckRank(ctx, 1, 1, "shape"));
  bool known = false;
  PX_ASSIGN_OR_RETURN(PartialShape target, ShapeFromInput(ctx, 1, &known));
  if (!known) {
    ctx.set_output(0, target);
    return absl::OkStatus();
  }
  const PartialShape& in = ctx.input(0);
  Dims out;
  Dims in_dims = in.rank_known() ? in.dim_vector() : Dims{-1};
  PX_RETURN_IF_ERROR(Check(ctx, array_shapes::Reshape(in_dims, target.dim_vector(), &out)));
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

absl::Status ExpandDimsShape(InferenceContext& ctx) {
  const PartialShape& in = ctx.input(0);
  Dims dim;
  if (!in.rank_known() || !KnownInts(ctx, 1, &dim)) {
    ctx.set_output(0, in.rank_known() ? PartialShape::UnknownOfRank(in.rank() + 1)
                                      : PartialShape::Unknown());
    return absl::OkStatus();
  }
  Dims out;
  PX_RETURN_IF_ERROR(Check(ctx, array_shapes::ExpandDims(in.dim_vector(), dim, &out)));
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

absl::Status SqueezeShape(InferenceContext& ctx) {
  PX_ASSIGN_OR_RETURN(std::vector<int64_t> dims, GetAttrIntList(ctx.node(), "squeeze_dims"));
  const PartialShape& in = ctx.input(0);
  if (!in.rank_known()) {
    ctx.set_output(0, PartialShape::Unknown());
    return absl::OkStatus();
  }
  Dims out;
  bool rank_unknown = false;
  PX_RETURN_IF_ERROR(Check(ctx, array_shapes::Squeeze(in.dim_vector(), dims, &out, &rank_unknown)));
  ctx.set_output(0, rank_unknown ? PartialShape::Unknown() : PartialShape(out));
  return absl::OkStatus();
}

absl::Status ShapeShape(InferenceContext& ctx) {
  const PartialShape& in = ctx.input(0);
  ctx.set_output(0, PartialShape(Shape{in.rank_known() ? in.rank() : -1}));
  return absl::OkStatus();
}

absl::Status ShapeNShape(InferenceContext& ctx) {
  for (int k = 0; k < ctx.num_inputs(); ++k) {
    const PartialShape& in = ctx.input(k);
    ctx.set_output(k, PartialShape(Shape{in.rank_known() ? in.rank() : -1}));
  }
  return absl::OkStatus();
}

absl::Status ScalarShape(InferenceContext& ctx) {
  ctx.set_output(0, PartialShape(Shape{}));
  return absl::OkStatus();
}

absl::Status FillShape(InferenceContext& ctx) {
  PX_RETURN_IF_ERROR(CheckRank(ctx, 0, 1, "dims"));
  PX_RETURN_IF_ERROR(CheckRank(ctx, 1, 0, "value"));
  bool known = false;
  PX_ASSIGN_OR_RETURN(PartialShape target, ShapeFromInput(ctx, 0, &known));
  if (known) {
    Dims out;
    PX_RETURN_IF_ERROR(Check(ctx, array_shapes::Fill(target.dim_vector(), &out)));
  }
  ctx.set_output(0, target);
  return absl::OkStatus();
}

// Reads a scalar input of a Range as C (see array_shapes::RangeSize).
template <typename C>
bool ScalarAs(const Tensor& t, C* out) {
  if (t.num_elements() != 1) return false;
  switch (t.dtype()) {
    case DataType::kFloat: *out = static_cast<C>(t.data<float>()[0]); return true;
    case DataType::kDouble: *out = static_cast<C>(t.data<double>()[0]); return true;
    case DataType::kInt8: *out = static_cast<C>(t.data<int8_t>()[0]); return true;
    case DataType::kInt16: *out = static_cast<C>(t.data<int16_t>()[0]); return true;
    case DataType::kInt32: *out = static_cast<C>(t.data<int32_t>()[0]); return true;
    case DataType::kInt64: *out = static_cast<C>(t.data<int64_t>()[0]); return true;
    case DataType::kUInt16: *out = static_cast<C>(t.data<uint16_t>()[0]); return true;
    case DataType::kUInt32: *out = static_cast<C>(t.data<uint32_t>()[0]); return true;
    default: return false;  // half and bfloat16: the kernel sizes the output
  }
}

template <typename C>
absl::Status RangeSizeFrom(InferenceContext& ctx, const Tensor* v[3]) {
  C start, limit, delta;
  if (!ScalarAs(*v[0], &start) || !ScalarAs(*v[1], &limit) || !ScalarAs(*v[2], &delta)) {
    ctx.set_output(0, PartialShape(Shape{-1}));
    return absl::OkStatus();
  }
  int64_t size = 0;
  PX_RETURN_IF_ERROR(Check(ctx, array_shapes::RangeSize<C>(start, limit, delta, &size)));
  ctx.set_output(0, PartialShape(Shape{size}));
  return absl::OkStatus();
}

absl::Status RangeShape(InferenceContext& ctx) {
  PX_RETURN_IF_ERROR(CheckRank(ctx, 0, 0, "start"));
  PX_RETURN_IF_ERROR(CheckRank(ctx, 1, 0, "limit"));
  PX_RETURN_IF_ERROR(CheckRank(ctx, 2, 0, "delta"));
  Tensor storage[3];
  const Tensor* v[3];
  for (int i = 0; i < 3; ++i) {
    v[i] = KnownValue(ctx, i, &storage[i]);
    if (v[i] == nullptr) {
      ctx.set_output(0, PartialShape(Shape{-1}));
      return absl::OkStatus();
    }
  }
  switch (v[0]->dtype()) {
    case DataType::kFloat: return RangeSizeFrom<float>(ctx, v);
    case DataType::kDouble: return RangeSizeFrom<double>(ctx, v);
    case DataType::kHalf: case DataType::kBFloat16:
      ctx.set_output(0, PartialShape(Shape{-1}));
      return absl::OkStatus();
    default: return RangeSizeFrom<int64_t>(ctx, v);
  }
}

absl::Status OneHotShape(InferenceContext& ctx) {
  PX_RETURN_IF_ERROR(CheckRank(ctx, 1, 0, "depth"));
  PX_RETURN_IF_ERROR(CheckRank(ctx, 2, 0, "on_value"));
  PX_RETURN_IF_ERROR(CheckRank(ctx, 3, 0, "off_value"));
  PX_ASSIGN_OR_RETURN(int64_t axis, GetAttrInt(ctx.node(), "axis"));
  const PartialShape& in = ctx.input(0);
  if (!in.rank_known()) {
    ctx.set_output(0, PartialShape::Unknown());
    return absl::OkStatus();
  }
  int64_t depth = -1;
  bool known = KnownScalarInt(ctx, 1, &depth);
  Dims out;
  PX_RETURN_IF_ERROR(Check(ctx, array_shapes::OneHot(in.dim_vector(), known ? depth : 0, axis, &out)));
  if (!known) {
    for (size_t i = 0; i < out.size(); ++i) {
      if (static_cast<int64_t>(i) == (axis == -1 ? in.rank() : axis)) out[i] = -1;
    }
  }
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

absl::Status BroadcastToShape(InferenceContext& ctx) {
  PX_RETURN_IF_ERROR(CheckRank(ctx, 1, 1, "shape"));
  bool known = false;
  PX_ASSIGN_OR_RETURN(PartialShape target, ShapeFromInput(ctx, 1, &known));
  if (known) {
    const PartialShape& in = ctx.input(0);
    Dims out;
    if (in.rank_known()) {
      PX_RETURN_IF_ERROR(Check(ctx, array_shapes::BroadcastTo(in.dim_vector(), target.dim_vector(), &out)));
    }
  }
  ctx.set_output(0, target);
  return absl::OkStatus();
}

absl::Status IdentityNShape(InferenceContext& ctx) {
  for (int k = 0; k < ctx.num_outputs() && k < ctx.num_inputs(); ++k) {
    ctx.set_output(k, ctx.input(k));
  }
  return absl::OkStatus();
}

// The input's shape when its rank is known (it is at least as precise as the
// declared one), else the declared `shape` attribute.
absl::Status PlaceholderWithDefaultShape(InferenceContext& ctx) {
  PX_ASSIGN_OR_RETURN(PartialShape declared, GetAttrShape(ctx.node(), "shape"));
  const PartialShape& in = ctx.input(0);
  if (!in.rank_known()) {
    ctx.set_output(0, declared);
    return absl::OkStatus();
  }
  if (declared.rank_known()) {
    bool compatible = declared.rank() == in.rank();
    for (int64_t d = 0; compatible && d < in.rank(); ++d) {
      compatible = declared.dim(d) < 0 || in.dim(d) < 0 || declared.dim(d) == in.dim(d);
    }
    if (!compatible) {
      return ctx.Error(absl::StrCat("the default value has shape ", in.ToString(),
                                    ", which does not match the declared shape ",
                                    declared.ToString()));
    }
    Dims merged = in.dim_vector();
    for (int64_t d = 0; d < in.rank(); ++d) {
      if (merged[d] < 0) merged[d] = declared.dim(d);
    }
    ctx.set_output(0, PartialShape(merged));
    return absl::OkStatus();
  }
  ctx.set_output(0, in);
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Op definitions (TensorFlow's names, arguments, attributes and defaults)
// ---------------------------------------------------------------------------

PX_REGISTER_OP(OpDefBuilder("Reshape")
                   .Input("tensor: T")
                   .Input("shape: Tshape")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr(absl::StrCat("Tshape: ", kIndexTypes32And64))
                   .SetOutputIsView()
                   .SetShapeFn(ReshapeShape));

PX_REGISTER_OP(OpDefBuilder("ExpandDims")
                   .Input("input: T")
                   .Input("dim: Tdim")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr(absl::StrCat("Tdim: ", kIndexTypes32And64))
                   .SetOutputIsView()
                   .SetShapeFn(ExpandDimsShape));

PX_REGISTER_OP(OpDefBuilder("Squeeze")
                   .Input("input: T")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr("squeeze_dims: list(int) >= 0 = []")
                   .SetOutputIsView()
                   .SetShapeFn(SqueezeShape));

PX_REGISTER_OP(OpDefBuilder("Shape")
                   .Input("input: T")
                   .Output("output: out_type")
                   .Attr("T: type")
                   .Attr(absl::StrCat("out_type: ", kIndexTypes32And64))
                   .SetOutputsFromShapes()
                   .SetShapeFn(ShapeShape));

PX_REGISTER_OP(OpDefBuilder("ShapeN")
                   .Input("input: N * T")
                   .Output("output: N * out_type")
                   .Attr("N: int >= 1")
                   .Attr("T: type")
                   .Attr(absl::StrCat("out_type: ", kIndexTypes32And64))
                   .SetOutputsFromShapes()
                   .SetShapeFn(ShapeNShape));

PX_REGISTER_OP(OpDefBuilder("Size")
                   .Input("input: T")
                   .Output("output: out_type")
                   .Attr("T: type")
                   .Attr(absl::StrCat("out_type: ", kIndexTypes32And64))
                   .SetOutputsFromShapes()
                   .SetShapeFn(ScalarShape));

// TensorFlow's Rank always produces int32 (it has no out_type).
PX_REGISTER_OP(OpDefBuilder("Rank")
                   .Input("input: T")
                   .Output("output: int32")
                   .Attr("T: type")
                   .SetOutputsFromShapes()
                   .SetShapeFn(ScalarShape));

PX_REGISTER_OP(OpDefBuilder("Fill")
                   .Input("dims: index_type")
                   .Input("value: T")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr(absl::StrCat("index_type: ", kIndexTypes32And64))
                   .SetShapeFn(FillShape));

PX_REGISTER_OP(OpDefBuilder("ZerosLike")
                   .Input("x: T")
                   .Output("y: T")
                   .Attr("T: type")
                   .SetShapeFn(UnchangedShape));

PX_REGISTER_OP(OpDefBuilder("OnesLike")
                   .Input("x: T")
                   .Output("y: T")
                   .Attr("T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, "
                         "uint32, int64, uint64, complex64, complex128, bool}")
                   .SetShapeFn(UnchangedShape));

PX_REGISTER_OP(OpDefBuilder("Range")
                   .Input("start: Tidx")
                   .Input("limit: Tidx")
                   .Input("delta: Tidx")
                   .Output("output: Tidx")
                   .Attr("Tidx: {bfloat16, half, float, double, int8, int16, int32, int64, "
                         "uint16, uint32} = int32")
                   .SetShapeFn(RangeShape));

PX_REGISTER_OP(OpDefBuilder("OneHot")
                   .Input("indices: TI")
                   .Input("depth: int32")
                   .Input("on_value: T")
                   .Input("off_value: T")
                   .Output("output: T")
                   .Attr("axis: int = -1")
                   .Attr("T: type")
                   .Attr("TI: {uint8, int8, int32, int64} = int64")
                   .SetShapeFn(OneHotShape));

PX_REGISTER_OP(OpDefBuilder("BroadcastTo")
                   .Input("input: T")
                   .Input("shape: Tidx")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr(absl::StrCat("Tidx: ", kIndexTypes32And64))
                   .SetShapeFn(BroadcastToShape));

// Forwarding ops: output k is input k; the executor forwards the tensor and
// runs no kernel (like Identity).
PX_REGISTER_OP(OpDefBuilder("IdentityN")
                   .Input("input: T")
                   .Output("output: T")
                   .Attr("T: list(type)")
                   .SetForwardsInputs()
                   .SetShapeFn(IdentityNShape));

PX_REGISTER_OP(OpDefBuilder("StopGradient")
                   .Input("input: T")
                   .Output("output: T")
                   .Attr("T: type")
                   .SetForwardsInputs()
                   .SetShapeFn(UnchangedShape));

PX_REGISTER_OP(OpDefBuilder("PreventGradient")
                   .Input("input: T")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr("message: string = \"\"")
                   .SetForwardsInputs()
                   .SetShapeFn(UnchangedShape));

PX_REGISTER_OP(OpDefBuilder("Snapshot")
                   .Input("input: T")
                   .Output("output: T")
                   .Attr("T: type")
                   .SetForwardsInputs()
                   .SetShapeFn(UnchangedShape));

PX_REGISTER_OP(OpDefBuilder("PlaceholderWithDefault")
                   .Input("input: dtype")
                   .Output("output: dtype")
                   .Attr("dtype: type")
                   .Attr("shape: shape")
                   .SetForwardsInputs()
                   .SetShapeFn(PlaceholderWithDefaultShape));

}  // namespace
}  // namespace plexus

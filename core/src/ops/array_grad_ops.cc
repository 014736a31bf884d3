// Ops that the gradients of the array ops emit (core/src/passes/gradients/
// array_grad.cc): StridedSliceGrad, MirrorPadGrad and ScatterNd (kernel
// ops), and ConcatOffset (shape arithmetic, run by the core on the host; its
// kernel is in host_kernels/array_grad.cc). Their schemas and shape
// functions. Names, arguments, attributes and defaults follow TensorFlow's
// array_ops.cc.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/array_grad_util.h"
#include "ops/array_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/sdk/array_shapes.h"
#include "plexus/sdk/index_shapes.h"
#include "plexus/status.h"

namespace plexus {
namespace {

using array_shapes::Dims;
using array_grad_util::IntegerValues;

// The value of input i when known on the host.
bool KnownInts(const InferenceContext& ctx, int i, Dims* out) {
  const Tensor* t = ctx.input_value(i);
  return t != nullptr && t->host_readable() && IntegerValues(*t, out);
}

// ---------------------------------------------------------------------------
// StridedSliceGrad(shape, begin, end, strides, dy): a zero tensor of `shape`
// with dy written where StridedSlice(zeros, begin, end, strides) reads.
// ---------------------------------------------------------------------------

absl::Status StridedSliceGradShape(InferenceContext& ctx) {
  const PartialShape& shape_arg = ctx.input(0);
  if (shape_arg.rank_known() && shape_arg.rank() != 1) {
    return ctx.Error(absl::StrCat("shape must be a vector, got shape ", shape_arg.ToString()));
  }
  for (int i = 1; i <= 3; ++i) {
    const PartialShape& s = ctx.input(i);
    if (s.rank_known() && s.rank() != 1) {
      return ctx.Error(absl::StrCat(i == 1 ? "begin" : i == 2 ? "end" : "strides",
                                    " must be a vector, got shape ", s.ToString()));
    }
  }
  Dims shape;
  if (!KnownInts(ctx, 0, &shape)) {
    const int64_t n = shape_arg.rank_known() ? shape_arg.dim(0) : -1;
    PX_ASSIGN_OR_RETURN(PartialShape out, array_util::UnknownOfLength(ctx, n, "shape"));
    ctx.set_output(0, std::move(out));
    return absl::OkStatus();
  }
  for (int64_t d : shape) {
    if (d < 0) return ctx.Error(absl::StrCat("shape has a negative dimension: ", array_shapes::Str(shape)));
  }
  // With every argument known, dy must have the sliced shape.
  Dims begin, end, strides;
  if (KnownInts(ctx, 1, &begin) && KnownInts(ctx, 2, &end) && KnownInts(ctx, 3, &strides)) {
    PX_ASSIGN_OR_RETURN(int64_t begin_mask, GetAttrInt(ctx.node(), "begin_mask"));
    PX_ASSIGN_OR_RETURN(int64_t end_mask, GetAttrInt(ctx.node(), "end_mask"));
    PX_ASSIGN_OR_RETURN(int64_t ellipsis_mask, GetAttrInt(ctx.node(), "ellipsis_mask"));
    PX_ASSIGN_OR_RETURN(int64_t new_axis_mask, GetAttrInt(ctx.node(), "new_axis_mask"));
    PX_ASSIGN_OR_RETURN(int64_t shrink_axis_mask, GetAttrInt(ctx.node(), "shrink_axis_mask"));
    array_shapes::StridedSliceResult r;
    std::string error = array_shapes::StridedSlice(shape, &begin, &end, strides, begin_mask, end_mask,
                                                   ellipsis_mask, new_axis_mask, shrink_axis_mask, &r);
    if (!error.empty()) return ctx.Error(error);
    const PartialShape& dy = ctx.input(4);
    bool compatible = !dy.rank_known() || dy.rank() == static_cast<int64_t>(r.final_shape.size());
    for (int64_t i = 0; compatible && dy.rank_known() && i < dy.rank(); ++i) {
      compatible = dy.dim(i) < 0 || dy.dim(i) == r.final_shape[i];
    }
    if (!compatible) {
      return ctx.Error(absl::StrCat("shape of dy was ", dy.ToString(), " instead of ",
                                    array_shapes::Str(r.final_shape)));
    }
  }
  ctx.set_output(0, PartialShape(shape));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("StridedSliceGrad")
                   .Input("shape: Index")
                   .Input("begin: Index")
                   .Input("end: Index")
                   .Input("strides: Index")
                   .Input("dy: T")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr("Index: {int32, int64}")
                   .Attr("begin_mask: int = 0")
                   .Attr("end_mask: int = 0")
                   .Attr("ellipsis_mask: int = 0")
                   .Attr("new_axis_mask: int = 0")
                   .Attr("shrink_axis_mask: int = 0")
                   .SetShapeFn(StridedSliceGradShape));

// ---------------------------------------------------------------------------
// MirrorPadGrad(input, paddings): the gradient of MirrorPad. `input` has the
// padded shape; each of its elements is added to the element of the output
// (the unpadded shape) it was mirrored from.
// ---------------------------------------------------------------------------

absl::Status MirrorPadGradShape(InferenceContext& ctx) {
  PX_ASSIGN_OR_RETURN(std::string mode, GetAttrString(ctx.node(), "mode"));
  if (mode != "REFLECT" && mode != "SYMMETRIC") {
    return ctx.Error(absl::StrCat("mode must be REFLECT or SYMMETRIC, got '", mode, "'"));
  }
  const PartialShape& in = ctx.input(0);
  const PartialShape& pad_shape = ctx.input(1);
  if (pad_shape.rank_known() && pad_shape.rank() != 2) {
    return ctx.Error(absl::StrCat("paddings must be a matrix, got shape ", pad_shape.ToString()));
  }
  Dims pad;
  if (!KnownInts(ctx, 1, &pad)) {
    int64_t rank = in.rank_known() ? in.rank() : pad_shape.rank_known() ? pad_shape.dim(0) : -1;
    PX_ASSIGN_OR_RETURN(PartialShape shape, array_util::UnknownOfLength(ctx, rank, "paddings"));
    ctx.set_output(0, shape);
    return absl::OkStatus();
  }
  const int64_t rank = static_cast<int64_t>(pad.size() / 2);
  if (pad_shape.rank_known() && (pad_shape.dim(0) != rank || pad_shape.dim(1) != 2)) {
    return ctx.Error(absl::StrCat("paddings must be a matrix of shape [rank, 2], got ", pad_shape.ToString()));
  }
  if (in.rank_known() && in.rank() != rank) {
    return ctx.Error(absl::StrCat("paddings must be a matrix of shape [", in.rank(), ",2] for an input of shape ",
                                  in.ToString(), ", got ", pad_shape.ToString()));
  }
  Dims out(static_cast<size_t>(rank), -1);
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t before = pad[2 * i], after = pad[2 * i + 1];
    if (before < 0 || after < 0) {
      return ctx.Error(absl::StrCat("Paddings must be non-negative: ", before, " ", after));
    }
    const int64_t d = in.rank_known() ? in.dim(i) : -1;
    if (d < 0) continue;
    out[i] = d - before - after;
    if (out[i] < 0) {
      return ctx.Error(absl::StrCat("paddings ", before, ", ", after, " are larger than dimension ", i,
                                    " of the input (", d, ")"));
    }
  }
  // The unpadded shape must admit the paddings (MirrorPad's own rules).
  Dims padded;
  std::string error = array_shapes::Pad(out, Dims{rank, 2}, pad, mode == "REFLECT" ? 1 : 2, &padded);
  if (!error.empty()) return ctx.Error(error);
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

// TensorFlow declares mode as {'REFLECT', 'SYMMETRIC'}; the spec parser has
// no string sets, so the shape function checks it.
PX_REGISTER_OP(OpDefBuilder("MirrorPadGrad")
                   .Input("input: T")
                   .Input("paddings: Tpaddings")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr("Tpaddings: {int32, int64} = int32")
                   .Attr("mode: string")
                   .SetShapeFn(MirrorPadGradShape));

// ---------------------------------------------------------------------------
// ScatterNd(indices, updates, shape): zeros of `shape` with each slice of
// updates added at the position its index row names (the gradient of
// GatherNd).
// ---------------------------------------------------------------------------

absl::Status ScatterNdShape(InferenceContext& ctx) {
  const PartialShape& indices = ctx.input(0);
  const PartialShape& updates = ctx.input(1);
  const PartialShape& shape_arg = ctx.input(2);
  if (indices.rank_known() && indices.rank() < 1) {
    return ctx.Error(absl::StrCat("indices must be at least a vector, got shape ", indices.ToString()));
  }
  if (shape_arg.rank_known() && shape_arg.rank() != 1) {
    return ctx.Error(absl::StrCat("shape must be a vector, got shape ", shape_arg.ToString()));
  }
  Dims shape;
  if (!KnownInts(ctx, 2, &shape)) {
    const int64_t n = shape_arg.rank_known() ? shape_arg.dim(0) : -1;
    PX_ASSIGN_OR_RETURN(PartialShape out, array_util::UnknownOfLength(ctx, n, "shape"));
    ctx.set_output(0, std::move(out));
    return absl::OkStatus();
  }
  for (int64_t d : shape) {
    if (d < 0) return ctx.Error(absl::StrCat("shape has a negative dimension: ", array_shapes::Str(shape)));
  }
  // updates must be indices.shape[:-1] + shape[K:] (index_shapes.h, shared
  // with the kernels and the TensorScatter ops).
  if (indices.rank_known() && updates.rank_known()) {
    const std::string error = index_shapes::ScatterNd(indices.dim_vector(), updates.dim_vector(), shape);
    if (!error.empty()) return ctx.Error(error);
  }
  ctx.set_output(0, PartialShape(shape));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("ScatterNd")
                   .Input("indices: Tindices")
                   .Input("updates: T")
                   .Input("shape: Tindices")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr("Tindices: {int16, int32, int64}")
                   .Attr("bad_indices_policy: string = \"\"")
                   .SetShapeFn(ScatterNdShape));

// ---------------------------------------------------------------------------
// ConcatOffset(concat_dim, shape_0..shape_{N-1}): the offset of each input
// of a concatenation in its output: zeros except along concat_dim, where it
// is the sum of the preceding inputs' sizes.
// ---------------------------------------------------------------------------

absl::Status ConcatOffsetShape(InferenceContext& ctx) {
  const PartialShape& dim = ctx.input(0);
  if (dim.rank_known() && dim.rank() != 0) {
    return ctx.Error(absl::StrCat("concat_dim must be a scalar, got shape ", dim.ToString()));
  }
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    const PartialShape& s = ctx.input(i);
    if (s.rank_known() && s.rank() != 1) {
      return ctx.Error(absl::StrCat("shape ", i - 1, " must be a vector, got shape ", s.ToString()));
    }
    ctx.set_output(i - 1, s);
  }
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("ConcatOffset")
                   .Input("concat_dim: int32")
                   .Input("shape: N * shape_type")
                   .Output("offset: N * shape_type")
                   .Attr("N: int >= 2")
                   .Attr("shape_type: {int32, int64} = int32")
                   .SetShapeFn(ConcatOffsetShape));

}  // namespace
}  // namespace plexus

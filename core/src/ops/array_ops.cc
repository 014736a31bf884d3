// Data movement ops: Transpose, joining and splitting (Concat, ConcatV2,
// Split, SplitV, Pack, Unpack), slicing (Slice, StridedSlice), gathering
// (Gather, GatherV2, GatherNd), padding (Pad, PadV2, MirrorPad), Tile,
// ReverseV2 and the space/batch reshuffles (SpaceToBatchND, BatchToSpaceND).
// The shape and dimension ops are in shape_ops.cc.
//
// The output shapes themselves are computed by sdk/reference/array_shapes.h,
// which the reference and cpu kernels use too: shape functions, kernels and
// their error messages cannot drift apart. This file adapts partial shapes
// (unknown ranks, unknown dimensions, unknown values) to it, with the
// helpers of ops/array_util.h.
#include <algorithm>
#include <string>
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
using array_util::UnknownOfLength;
using array_util::VectorLength;

// ---------------------------------------------------------------------------
// Shape functions
// ---------------------------------------------------------------------------

absl::Status TransposeShape(InferenceContext& ctx) {
  PX_RETURN_IF_ERROR(CheckRank(ctx, 1, 1, "perm"));
  const PartialShape& in = ctx.input(0);
  Dims perm;
  if (!KnownInts(ctx, 1, &perm)) {
    int64_t r = in.rank_known() ? in.rank() : VectorLength(ctx, 1);
    PX_ASSIGN_OR_RETURN(PartialShape out, UnknownOfLength(ctx, r, "perm"));
    ctx.set_output(0, out);
    return absl::OkStatus();
  }
  Dims in_dims = in.rank_known() ? in.dim_vector() : Dims(perm.size(), -1);
  Dims out;
  PX_RETURN_IF_ERROR(Check(ctx, array_shapes::Transpose(in_dims, perm, &out)));
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

// Concat of inputs [first, first + n) along the axis input `axis_index`.
absl::Status ConcatShapeImpl(InferenceContext& ctx, int first, int n, int axis_index) {
  PX_RETURN_IF_ERROR(CheckRank(ctx, axis_index, 0, "axis"));
  int64_t rank = -1;
  for (int k = first; k < first + n; ++k) {
    if (ctx.input(k).rank_known()) {
      rank = ctx.input(k).rank();
      break;
    }
  }
  int64_t axis = 0;
  if (rank < 0 || !KnownScalarInt(ctx, axis_index, &axis)) {
    ctx.set_output(0, rank >= 0 ? PartialShape::UnknownOfRank(rank) : PartialShape::Unknown());
    return absl::OkStatus();
  }
  std::vector<Dims> ins;
  for (int k = first; k < first + n; ++k) {
    const PartialShape& s = ctx.input(k);
    ins.push_back(s.rank_known() ? s.dim_vector() : Dims(rank, -1));
  }
  Dims out;
  PX_RETURN_IF_ERROR(Check(ctx, array_shapes::Concat(ins, axis, &out)));
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

absl::Status ConcatV2Shape(InferenceContext& ctx) {
  const int n = ctx.num_inputs() - 1;
  return ConcatShapeImpl(ctx, 0, n, n);
}

absl::Status ConcatShape(InferenceContext& ctx) {
  return ConcatShapeImpl(ctx, 1, ctx.num_inputs() - 1, 0);
}

absl::Status SplitShape(InferenceContext& ctx) {
  PX_RETURN_IF_ERROR(CheckRank(ctx, 0, 0, "split_dim"));
  PX_ASSIGN_OR_RETURN(int64_t num_split, GetAttrInt(ctx.node(), "num_split"));
  const PartialShape& in = ctx.input(1);
  int64_t axis = 0;
  PartialShape each = in.rank_known() ? PartialShape::UnknownOfRank(in.rank()) : PartialShape();
  if (in.rank_known() && KnownScalarInt(ctx, 0, &axis)) {
    Dims out;
    PX_RETURN_IF_ERROR(Check(ctx, array_shapes::Split(in.dim_vector(), axis, num_split, &out)));
    each = PartialShape(out);
  }
  for (int k = 0; k < ctx.num_outputs(); ++k) ctx.set_output(k, each);
  return absl::OkStatus();
}

absl::Status SplitVShape(InferenceContext& ctx) {
  PX_RETURN_IF_ERROR(CheckRank(ctx, 1, 1, "size_splits"));
  PX_RETURN_IF_ERROR(CheckRank(ctx, 2, 0, "split_dim"));
  PX_ASSIGN_OR_RETURN(int64_t num_split, GetAttrInt(ctx.node(), "num_split"));
  const PartialShape& in = ctx.input(0);
  int64_t axis = 0;
  Dims sizes;
  if (!in.rank_known() || !KnownScalarInt(ctx, 2, &axis)) {
    for (int k = 0; k < ctx.num_outputs(); ++k) {
      ctx.set_output(k, in.rank_known() ? PartialShape::UnknownOfRank(in.rank()) : PartialShape());
    }
    return absl::OkStatus();
  }
  if (!KnownInts(ctx, 1, &sizes)) {
    // Sizes unknown: every dimension but the split one is known.
    int64_t a = 0;
    PX_RETURN_IF_ERROR(Check(ctx, array_shapes::SplitAxis(in.rank(), axis, &a)));
    Dims each = in.dim_vector();
    each[a] = -1;
    for (int k = 0; k < ctx.num_outputs(); ++k) ctx.set_output(k, PartialShape(each));
    return absl::OkStatus();
  }
  std::vector<Dims> outs;
  PX_RETURN_IF_ERROR(Check(ctx, array_shapes::SplitV(in.dim_vector(), sizes, axis, num_split, &outs)));
  for (int k = 0; k < ctx.num_outputs(); ++k) ctx.set_output(k, PartialShape(outs[k]));
  return absl::OkStatus();
}

absl::Status SliceShape(InferenceContext& ctx) {
  PX_RETURN_IF_ERROR(CheckRank(ctx, 1, 1, "begin"));
  PX_RETURN_IF_ERROR(CheckRank(ctx, 2, 1, "size"));
  const PartialShape& in = ctx.input(0);
  Dims begin, size;
  const bool begin_known = KnownInts(ctx, 1, &begin);
  const bool size_known = KnownInts(ctx, 2, &size);
  int64_t rank = in.rank_known() ? in.rank() : -1;
  if (rank < 0) rank = begin_known ? static_cast<int64_t>(begin.size()) : rank;
  if (rank < 0) rank = size_known ? static_cast<int64_t>(size.size()) : rank;
  if (rank < 0) rank = std::max(VectorLength(ctx, 1), VectorLength(ctx, 2));
  if (rank < 0) {
    ctx.set_output(0, PartialShape::Unknown());
    return absl::OkStatus();
  }
  PX_RETURN_IF_ERROR(UnknownOfLength(ctx, rank, "begin").status());  // no more than kMaxRank
  Dims in_dims = in.rank_known() ? in.dim_vector() : Dims(rank, -1);
  if (begin_known && size_known) {
    Dims out;
    PX_RETURN_IF_ERROR(Check(ctx, array_shapes::Slice(in_dims, begin, size, &out)));
    ctx.set_output(0, PartialShape(out));
    return absl::OkStatus();
  }
  Dims out(rank, -1);
  if (size_known && static_cast<int64_t>(size.size()) == rank) {
    for (int64_t i = 0; i < rank; ++i) out[i] = size[i] >= 0 ? size[i] : -1;
  }
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

absl::Status StridedSliceShape(InferenceContext& ctx) {
  for (int i = 1; i <= 3; ++i) {
    PX_RETURN_IF_ERROR(CheckRank(ctx, i, 1, i == 1 ? "begin" : i == 2 ? "end" : "strides"));
  }
  const Node& node = ctx.node();
  PX_ASSIGN_OR_RETURN(int64_t begin_mask, GetAttrInt(node, "begin_mask"));
  PX_ASSIGN_OR_RETURN(int64_t end_mask, GetAttrInt(node, "end_mask"));
  PX_ASSIGN_OR_RETURN(int64_t ellipsis_mask, GetAttrInt(node, "ellipsis_mask"));
  PX_ASSIGN_OR_RETURN(int64_t new_axis_mask, GetAttrInt(node, "new_axis_mask"));
  PX_ASSIGN_OR_RETURN(int64_t shrink_axis_mask, GetAttrInt(node, "shrink_axis_mask"));
  const PartialShape& in = ctx.input(0);
  Dims begin, end, strides;
  if (!in.rank_known() || !KnownInts(ctx, 3, &strides)) {
    ctx.set_output(0, PartialShape::Unknown());
    return absl::OkStatus();
  }
  const bool begin_known = KnownInts(ctx, 1, &begin);
  const bool end_known = KnownInts(ctx, 2, &end);
  array_shapes::StridedSliceResult r;
  PX_RETURN_IF_ERROR(Check(
      ctx, array_shapes::StridedSlice(in.dim_vector(), begin_known && end_known ? &begin : nullptr,
                                      begin_known && end_known ? &end : nullptr, strides,
                                      begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                                      shrink_axis_mask, &r)));
  ctx.set_output(0, PartialShape(r.final_shape));
  return absl::OkStatus();
}

absl::Status PackShape(InferenceContext& ctx) {
  PX_ASSIGN_OR_RETURN(int64_t axis, GetAttrInt(ctx.node(), "axis"));
  int64_t rank = -1;
  for (int k = 0; k < ctx.num_inputs() && rank < 0; ++k) {
    if (ctx.input(k).rank_known()) rank = ctx.input(k).rank();
  }
  if (rank < 0) {
    ctx.set_output(0, PartialShape::Unknown());
    return absl::OkStatus();
  }
  std::vector<Dims> ins;
  for (int k = 0; k < ctx.num_inputs(); ++k) {
    const PartialShape& s = ctx.input(k);
    ins.push_back(s.rank_known() ? s.dim_vector() : Dims(rank, -1));
  }
  Dims out;
  PX_RETURN_IF_ERROR(Check(ctx, array_shapes::Pack(ins, axis, &out)));
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

absl::Status UnpackShape(InferenceContext& ctx) {
  PX_ASSIGN_OR_RETURN(int64_t axis, GetAttrInt(ctx.node(), "axis"));
  PX_ASSIGN_OR_RETURN(int64_t num, GetAttrInt(ctx.node(), "num"));
  const PartialShape& in = ctx.input(0);
  PartialShape each;
  if (in.rank_known()) {
    Dims out;
    PX_RETURN_IF_ERROR(Check(ctx, array_shapes::Unpack(in.dim_vector(), axis, num, &out)));
    each = PartialShape(out);
  }
  for (int k = 0; k < ctx.num_outputs(); ++k) ctx.set_output(k, each);
  return absl::OkStatus();
}

absl::Status GatherImpl(InferenceContext& ctx, bool known_axis, int64_t axis,
                        int64_t batch_dims) {
  const PartialShape& params = ctx.input(0);
  const PartialShape& indices = ctx.input(1);
  if (!params.rank_known() || !indices.rank_known() || !known_axis) {
    ctx.set_output(0, PartialShape::Unknown());
    return absl::OkStatus();
  }
  Dims out;
  PX_RETURN_IF_ERROR(Check(
      ctx, array_shapes::Gather(params.dim_vector(), indices.dim_vector(), axis, batch_dims, &out)));
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

absl::Status GatherShape(InferenceContext& ctx) { return GatherImpl(ctx, true, 0, 0); }

absl::Status GatherV2Shape(InferenceContext& ctx) {
  PX_RETURN_IF_ERROR(CheckRank(ctx, 2, 0, "axis"));
  PX_ASSIGN_OR_RETURN(int64_t batch_dims, GetAttrInt(ctx.node(), "batch_dims"));
  int64_t axis = 0;
  bool known = KnownScalarInt(ctx, 2, &axis);
  return GatherImpl(ctx, known, axis, batch_dims);
}

absl::Status GatherNdShape(InferenceContext& ctx) {
  const PartialShape& params = ctx.input(0);
  const PartialShape& indices = ctx.input(1);
  if (!params.rank_known() || !indices.rank_known() ||
      (indices.rank() > 0 && indices.dim(indices.rank() - 1) < 0)) {
    ctx.set_output(0, PartialShape::Unknown());
    return absl::OkStatus();
  }
  Dims out;
  PX_RETURN_IF_ERROR(Check(ctx, array_shapes::GatherNd(params.dim_vector(), indices.dim_vector(), &out)));
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

// Pad, PadV2 (constant_values a scalar) and MirrorPad.
absl::Status PadShapeImpl(InferenceContext& ctx, int mirror) {
  PX_RETURN_IF_ERROR(CheckRank(ctx, 1, 2, "paddings"));
  if (ctx.num_inputs() > 2) PX_RETURN_IF_ERROR(CheckRank(ctx, 2, 0, "constant_values"));
  const PartialShape& in = ctx.input(0);
  const PartialShape& ps = ctx.input(1);
  Dims pad;
  int64_t rank = in.rank_known() ? in.rank() : (ps.rank_known() ? ps.dim(0) : -1);
  if (!KnownInts(ctx, 1, &pad) || !ps.fully_defined() || rank < 0) {
    PX_ASSIGN_OR_RETURN(PartialShape shape, UnknownOfLength(ctx, rank, "paddings"));
    ctx.set_output(0, shape);
    return absl::OkStatus();
  }
  Dims out;
  Dims in_dims = in.rank_known() ? in.dim_vector() : Dims(rank, -1);
  PX_RETURN_IF_ERROR(Check(ctx, array_shapes::Pad(in_dims, ps.dim_vector(), pad, mirror, &out)));
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

absl::Status PadShape(InferenceContext& ctx) { return PadShapeImpl(ctx, 0); }

absl::Status MirrorPadShape(InferenceContext& ctx) {
  PX_ASSIGN_OR_RETURN(std::string mode, GetAttrString(ctx.node(), "mode"));
  if (mode != "REFLECT" && mode != "SYMMETRIC") {
    return ctx.Error(absl::StrCat("mode must be REFLECT or SYMMETRIC, got '", mode, "'"));
  }
  return PadShapeImpl(ctx, mode == "REFLECT" ? 1 : 2);
}

absl::Status TileShape(InferenceContext& ctx) {
  PX_RETURN_IF_ERROR(CheckRank(ctx, 1, 1, "multiples"));
  const PartialShape& in = ctx.input(0);
  Dims multiples;
  if (!KnownInts(ctx, 1, &multiples)) {
    int64_t r = in.rank_known() ? in.rank() : VectorLength(ctx, 1);
    PX_ASSIGN_OR_RETURN(PartialShape shape, UnknownOfLength(ctx, r, "multiples"));
    ctx.set_output(0, shape);
    return absl::OkStatus();
  }
  Dims out;
  Dims in_dims = in.rank_known() ? in.dim_vector() : Dims(multiples.size(), -1);
  PX_RETURN_IF_ERROR(Check(ctx, array_shapes::Tile(in_dims, multiples, &out)));
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

// ReverseV2 keeps the shape. The axes are checked only where TensorFlow's
// kernel checks them: for an input known to have elements (a scalar or an
// empty input is returned as it is, whatever the axes).
absl::Status ReverseV2Shape(InferenceContext& ctx) {
  const PartialShape& in = ctx.input(0);
  const PartialShape& axis_shape = ctx.input(1);
  Dims axis;
  const bool has_elements = in.fully_defined() && in.rank() > 0 &&
                            std::none_of(in.dims().begin(), in.dims().end(), [](int64_t d) { return d == 0; });
  if (has_elements && axis_shape.rank_known() && KnownInts(ctx, 1, &axis)) {
    std::vector<bool> reversed;
    PX_RETURN_IF_ERROR(Check(ctx, array_shapes::ReverseAxes(in.rank(), axis_shape.dim_vector(),
                                                            axis, &reversed)));
  }
  ctx.set_output(0, in);
  return absl::OkStatus();
}

absl::Status SpaceBatchShape(InferenceContext& ctx, bool to_batch) {
  const PartialShape& in = ctx.input(0);
  const PartialShape& bs = ctx.input(1);
  const PartialShape& ps = ctx.input(2);
  Dims block, pad;
  if (!in.rank_known() || !bs.fully_defined() || !ps.fully_defined() ||
      !KnownInts(ctx, 1, &block) || !KnownInts(ctx, 2, &pad)) {
    ctx.set_output(0, in.rank_known() ? PartialShape::UnknownOfRank(in.rank())
                                      : PartialShape::Unknown());
    return absl::OkStatus();
  }
  Dims out;
  PX_RETURN_IF_ERROR(Check(ctx, array_shapes::SpaceBatch(to_batch, in.dim_vector(), bs.dim_vector(), block,
                                                         ps.dim_vector(), pad, &out)));
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

absl::Status SpaceToBatchNDShape(InferenceContext& ctx) { return SpaceBatchShape(ctx, true); }
absl::Status BatchToSpaceNDShape(InferenceContext& ctx) { return SpaceBatchShape(ctx, false); }

// ---------------------------------------------------------------------------
// Op definitions (TensorFlow's names, arguments, attributes and defaults)
// ---------------------------------------------------------------------------

PX_REGISTER_OP(OpDefBuilder("Transpose")
                   .Input("x: T")
                   .Input("perm: Tperm")
                   .Output("y: T")
                   .Attr("T: type")
                   .Attr(absl::StrCat("Tperm: ", kIndexTypes32And64))
                   .SetShapeFn(TransposeShape));

PX_REGISTER_OP(OpDefBuilder("ConcatV2")
                   .Input("values: N * T")
                   .Input("axis: Tidx")
                   .Output("output: T")
                   .Attr("N: int >= 2")
                   .Attr("T: type")
                   .Attr(absl::StrCat("Tidx: ", kIndexTypes32And64))
                   .SetShapeFn(ConcatV2Shape));

PX_REGISTER_OP(OpDefBuilder("Concat")
                   .Input("concat_dim: int32")
                   .Input("values: N * T")
                   .Output("output: T")
                   .Attr("N: int >= 2")
                   .Attr("T: type")
                   .SetShapeFn(ConcatShape));

PX_REGISTER_OP(OpDefBuilder("Split")
                   .Input("split_dim: int32")
                   .Input("value: T")
                   .Output("output: num_split * T")
                   .Attr("num_split: int >= 1")
                   .Attr("T: type")
                   .SetShapeFn(SplitShape));

PX_REGISTER_OP(OpDefBuilder("SplitV")
                   .Input("value: T")
                   .Input("size_splits: Tlen")
                   .Input("split_dim: int32")
                   .Output("output: num_split * T")
                   .Attr("num_split: int >= 1")
                   .Attr("T: type")
                   .Attr("Tlen: {int8, int32, int64} = int64")
                   .SetShapeFn(SplitVShape));

PX_REGISTER_OP(OpDefBuilder("Slice")
                   .Input("input: T")
                   .Input("begin: Index")
                   .Input("size: Index")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr("Index: {int32, int64}")
                   .SetShapeFn(SliceShape));

PX_REGISTER_OP(OpDefBuilder("StridedSlice")
                   .Input("input: T")
                   .Input("begin: Index")
                   .Input("end: Index")
                   .Input("strides: Index")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr("Index: {int16, int32, int64}")
                   .Attr("begin_mask: int = 0")
                   .Attr("end_mask: int = 0")
                   .Attr("ellipsis_mask: int = 0")
                   .Attr("new_axis_mask: int = 0")
                   .Attr("shrink_axis_mask: int = 0")
                   .SetShapeFn(StridedSliceShape));

PX_REGISTER_OP(OpDefBuilder("Pack")
                   .Input("values: N * T")
                   .Output("output: T")
                   .Attr("N: int >= 1")
                   .Attr("T: type")
                   .Attr("axis: int = 0")
                   .SetShapeFn(PackShape));

PX_REGISTER_OP(OpDefBuilder("Unpack")
                   .Input("value: T")
                   .Output("output: num * T")
                   .Attr("num: int >= 0")
                   .Attr("T: type")
                   .Attr("axis: int = 0")
                   .SetShapeFn(UnpackShape));

PX_REGISTER_OP(OpDefBuilder("Gather")
                   .Input("params: Tparams")
                   .Input("indices: Tindices")
                   .Output("output: Tparams")
                   .Attr("validate_indices: bool = true")
                   .Attr("Tparams: type")
                   .Attr("Tindices: {int32, int64}")
                   .SetShapeFn(GatherShape));

PX_REGISTER_OP(OpDefBuilder("GatherV2")
                   .Input("params: Tparams")
                   .Input("indices: Tindices")
                   .Input("axis: Taxis")
                   .Output("output: Tparams")
                   .Attr("batch_dims: int = 0")
                   .Attr("Tparams: type")
                   .Attr("Tindices: {int16, int32, int64}")
                   .Attr("Taxis: {int32, int64}")
                   .SetShapeFn(GatherV2Shape));

PX_REGISTER_OP(OpDefBuilder("GatherNd")
                   .Input("params: Tparams")
                   .Input("indices: Tindices")
                   .Output("output: Tparams")
                   .Attr("Tparams: type")
                   .Attr("Tindices: {int16, int32, int64}")
                   .Attr("bad_indices_policy: string = \"\"")
                   .SetShapeFn(GatherNdShape));

PX_REGISTER_OP(OpDefBuilder("Pad")
                   .Input("input: T")
                   .Input("paddings: Tpaddings")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr(absl::StrCat("Tpaddings: ", kIndexTypes32And64))
                   .SetShapeFn(PadShape));

PX_REGISTER_OP(OpDefBuilder("PadV2")
                   .Input("input: T")
                   .Input("paddings: Tpaddings")
                   .Input("constant_values: T")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr(absl::StrCat("Tpaddings: ", kIndexTypes32And64))
                   .SetShapeFn(PadShape));

// TensorFlow declares mode as {'REFLECT', 'SYMMETRIC'}; the spec parser has
// no string sets, so the shape function checks it.
PX_REGISTER_OP(OpDefBuilder("MirrorPad")
                   .Input("input: T")
                   .Input("paddings: Tpaddings")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr(absl::StrCat("Tpaddings: ", kIndexTypes32And64))
                   .Attr("mode: string")
                   .SetShapeFn(MirrorPadShape));

PX_REGISTER_OP(OpDefBuilder("Tile")
                   .Input("input: T")
                   .Input("multiples: Tmultiples")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr(absl::StrCat("Tmultiples: ", kIndexTypes32And64))
                   .SetShapeFn(TileShape));

PX_REGISTER_OP(OpDefBuilder("ReverseV2")
                   .Input("tensor: T")
                   .Input("axis: Tidx")
                   .Output("output: T")
                   .Attr(absl::StrCat("Tidx: ", kIndexTypes32And64))
                   .Attr("T: {uint8, int8, uint16, int16, int32, uint32, int64, uint64, bool, "
                         "bfloat16, half, float, double, complex64, complex128, string}")
                   .SetShapeFn(ReverseV2Shape));

PX_REGISTER_OP(OpDefBuilder("SpaceToBatchND")
                   .Input("input: T")
                   .Input("block_shape: Tblock_shape")
                   .Input("paddings: Tpaddings")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr(absl::StrCat("Tblock_shape: ", kIndexTypes32And64))
                   .Attr(absl::StrCat("Tpaddings: ", kIndexTypes32And64))
                   .SetShapeFn(SpaceToBatchNDShape));

PX_REGISTER_OP(OpDefBuilder("BatchToSpaceND")
                   .Input("input: T")
                   .Input("block_shape: Tblock_shape")
                   .Input("crops: Tcrops")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr(absl::StrCat("Tblock_shape: ", kIndexTypes32And64))
                   .Attr(absl::StrCat("Tcrops: ", kIndexTypes32And64))
                   .SetShapeFn(BatchToSpaceNDShape));

}  // namespace
}  // namespace plexus

// Shape and data movement ops.
//
// The output shapes themselves are computed by sdk/reference/array_shapes.h,
// which the reference and cpu kernels use too: shape functions, kernels and
// their error messages cannot drift apart. This file adapts partial shapes
// (unknown ranks, unknown dimensions, unknown values) to it.
#include <algorithm>
#include <cstring>
#include <vector>

#include "plexus/sdk/array_shapes.h"
#include "absl/strings/str_cat.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"
#include "plexus/tensor_proto.h"

namespace plexus {
namespace {

using array_shapes::Dims;

// The index types of shape-like inputs, int32 by default.
constexpr char kIndexTypes32And64[] = "{int32, int64} = int32";

// The value of input i when known: the run-time value, or at import time
// the value of a Const node feeding it. `storage` holds a parsed constant.
const Tensor* KnownValue(const InferenceContext& ctx, int i, Tensor* storage) {
  if (const Tensor* t = ctx.input_value(i)) return t;
  const Node& node = ctx.node();
  if (i >= node.num_inputs()) return nullptr;
  const Node* producer = node.inputs[i].node;
  if (producer == nullptr || producer->op != "Const") return nullptr;
  const tf::AttrValue* value = producer->FindAttr("value");
  if (value == nullptr || !value->has_tensor()) return nullptr;
  auto parsed = TensorFromProto(value->tensor());
  if (!parsed.ok()) return nullptr;
  *storage = *std::move(parsed);
  return storage;
}

// Input i's integer values (int8/16/32/64, uint8), when known.
bool KnownInts(const InferenceContext& ctx, int i, Dims* out) {
  Tensor storage;
  const Tensor* t = KnownValue(ctx, i, &storage);
  if (t == nullptr) return false;
  const int64_t n = t->num_elements();
  out->resize(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    switch (t->dtype()) {
      case DataType::kInt32: (*out)[k] = t->data<int32_t>()[k]; break;
      case DataType::kInt64: (*out)[k] = t->data<int64_t>()[k]; break;
      case DataType::kInt16: (*out)[k] = t->data<int16_t>()[k]; break;
      case DataType::kInt8: (*out)[k] = t->data<int8_t>()[k]; break;
      case DataType::kUInt8: (*out)[k] = t->data<uint8_t>()[k]; break;
      default: return false;
    }
  }
  return true;
}

bool KnownScalarInt(const InferenceContext& ctx, int i, int64_t* out) {
  Dims v;
  if (!KnownInts(ctx, i, &v) || v.size() != 1) return false;
  *out = v[0];
  return true;
}

absl::Status Check(const InferenceContext& ctx, const std::string& error) {
  return error.empty() ? absl::OkStatus() : ctx.Error(error);
}

// Fails unless input i has rank `rank` (when its rank is known).
absl::Status CheckRank(const InferenceContext& ctx, int i, int64_t rank, const char* what) {
  const PartialShape& s = ctx.input(i);
  if (s.rank_known() && s.rank() != rank) {
    return ctx.Error(absl::StrCat(what, " must be ", rank == 0 ? "a scalar" : rank == 1 ? "a vector" : "a matrix",
                                  ", got shape ", s.ToString()));
  }
  return absl::OkStatus();
}

// The length of vector input i when known, else -1.
int64_t VectorLength(const InferenceContext& ctx, int i) {
  const PartialShape& s = ctx.input(i);
  return s.rank_known() && s.rank() == 1 ? s.dim(0) : -1;
}

// The shape described by a 1-D shape-valued input (Reshape, Fill,
// BroadcastTo): exact when its value is known, else of known rank when its
// length is known.
PartialShape ShapeFromInput(const InferenceContext& ctx, int i, bool* known) {
  Dims v;
  *known = KnownInts(ctx, i, &v);
  if (*known) return PartialShape(v);
  const PartialShape& s = ctx.input(i);
  if (s.rank_known() && s.rank() == 0) return PartialShape(Shape{});
  int64_t n = VectorLength(ctx, i);
  return n >= 0 ? PartialShape::UnknownOfRank(n) : PartialShape::Unknown();
}

// ---------------------------------------------------------------------------
// Shape functions
// ---------------------------------------------------------------------------

absl::Status ReshapeShape(InferenceContext& ctx) {
  PX_RETURN_IF_ERROR(CheckRank(ctx, 1, 1, "shape"));
  bool known = false;
  PartialShape target = ShapeFromInput(ctx, 1, &known);
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

absl::Status TransposeShape(InferenceContext& ctx) {
  PX_RETURN_IF_ERROR(CheckRank(ctx, 1, 1, "perm"));
  const PartialShape& in = ctx.input(0);
  Dims perm;
  if (!KnownInts(ctx, 1, &perm)) {
    int64_t r = in.rank_known() ? in.rank() : VectorLength(ctx, 1);
    ctx.set_output(0, r >= 0 ? PartialShape::UnknownOfRank(r) : PartialShape::Unknown());
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
    ctx.set_output(0, rank >= 0 ? PartialShape::UnknownOfRank(rank) : PartialShape::Unknown());
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
    ctx.set_output(0, r >= 0 ? PartialShape::UnknownOfRank(r) : PartialShape::Unknown());
    return absl::OkStatus();
  }
  Dims out;
  Dims in_dims = in.rank_known() ? in.dim_vector() : Dims(multiples.size(), -1);
  PX_RETURN_IF_ERROR(Check(ctx, array_shapes::Tile(in_dims, multiples, &out)));
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
  PartialShape target = ShapeFromInput(ctx, 0, &known);
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
  PartialShape target = ShapeFromInput(ctx, 1, &known);
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
                   .SetShapeFn(ReshapeShape));

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

PX_REGISTER_OP(OpDefBuilder("ExpandDims")
                   .Input("input: T")
                   .Input("dim: Tdim")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr(absl::StrCat("Tdim: ", kIndexTypes32And64))
                   .SetShapeFn(ExpandDimsShape));

PX_REGISTER_OP(OpDefBuilder("Squeeze")
                   .Input("input: T")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr("squeeze_dims: list(int) >= 0 = []")
                   .SetShapeFn(SqueezeShape));

PX_REGISTER_OP(OpDefBuilder("Shape")
                   .Input("input: T")
                   .Output("output: out_type")
                   .Attr("T: type")
                   .Attr(absl::StrCat("out_type: ", kIndexTypes32And64))
                   .SetShapeFn(ShapeShape));

PX_REGISTER_OP(OpDefBuilder("ShapeN")
                   .Input("input: N * T")
                   .Output("output: N * out_type")
                   .Attr("N: int >= 1")
                   .Attr("T: type")
                   .Attr(absl::StrCat("out_type: ", kIndexTypes32And64))
                   .SetShapeFn(ShapeNShape));

PX_REGISTER_OP(OpDefBuilder("Size")
                   .Input("input: T")
                   .Output("output: out_type")
                   .Attr("T: type")
                   .Attr(absl::StrCat("out_type: ", kIndexTypes32And64))
                   .SetShapeFn(ScalarShape));

// TensorFlow's Rank always produces int32 (it has no out_type).
PX_REGISTER_OP(OpDefBuilder("Rank")
                   .Input("input: T")
                   .Output("output: int32")
                   .Attr("T: type")
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

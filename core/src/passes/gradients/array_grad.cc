// Gradients of the array ops: reshapes, transposes, concatenation and
// splitting, slicing, padding, tiling, broadcasting, gathering, reversal and
// band masks. Each works with static shapes when the builder knows them
// (constants instead of shape arithmetic) and falls back to run-time shape
// ops otherwise.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "passes/gradients/grad_util.h"
#include "plexus/gradients.h"
#include "plexus/status.h"

namespace plexus {
namespace {

using grad::AttrInt;
using grad::AttrType;
using grad::Attrs;
using grad::Copy;
using grad::WithType;

#define PX_G_ASSIGN(lhs, expr) PX_ASSIGN_OR_RETURN(lhs, expr)

using Ints = std::vector<int64_t>;

// The static dimensions of `e`; false when the rank or a dimension is unknown.
bool StaticDims(GradientContext& g, const Endpoint& e, Ints* dims) {
  const PartialShape& s = g.shape(e);
  if (!s.rank_known()) return false;
  dims->clear();
  for (int64_t d = 0; d < s.rank(); ++d) {
    if (s.dim(d) < 0) return false;
    dims->push_back(s.dim(d));
  }
  return true;
}

// The rank of `e`, or -1 when unknown.
int64_t RankOf(GradientContext& g, const Endpoint& e) {
  const PartialShape& s = g.shape(e);
  return s.rank_known() ? s.rank() : -1;
}

// The integer values of `e` when it is a constant.
bool ConstInts(GradientContext& g, const Endpoint& e, Ints* out) {
  const Tensor* t = g.ConstValue(e);
  if (t == nullptr) return false;
  out->clear();
  for (int64_t i = 0; i < t->num_elements(); ++i) {
    switch (t->dtype()) {
      case DataType::kInt32: out->push_back(t->data<int32_t>()[i]); break;
      case DataType::kInt64: out->push_back(t->data<int64_t>()[i]); break;
      default: return false;
    }
  }
  return true;
}

// A constant integer tensor of `dtype` (int32 or int64) and `shape`.
absl::StatusOr<Endpoint> IndexConst(GradientContext& g, const Ints& values, DataType dtype, Shape shape) {
  if (dtype == DataType::kInt64) return g.Const(Tensor::FromVector<int64_t>(dtype, shape, values));
  std::vector<int32_t> v(values.begin(), values.end());
  return g.Const(Tensor::FromVector<int32_t>(DataType::kInt32, shape, v));
}
absl::StatusOr<Endpoint> IndexVector(GradientContext& g, const Ints& values, DataType dtype) {
  return IndexConst(g, values, dtype, Shape{static_cast<int64_t>(values.size())});
}

// Shape(x) with elements of `dtype` (int32 or int64); a constant when static.
absl::StatusOr<Endpoint> ShapeAs(GradientContext& g, const Endpoint& x, DataType dtype) {
  Ints dims;
  if (StaticDims(g, x, &dims)) return IndexVector(g, dims, dtype);
  return g.Op("Shape", {x}, WithType(Attrs(), "out_type", dtype));
}

AttrMap IntAttr(AttrMap m, const std::string& name, int64_t v) {
  m[name].set_i(v);
  return m;
}

// dy[k], or zeros shaped like output k when no gradient reaches it.
absl::StatusOr<Endpoint> GradOrZeros(GradientContext& g, const GradientOp& op, const GradientList& dy, size_t k) {
  if (dy[k].has_value()) return *dy[k];
  return g.ZerosLike(op.outputs[k]);
}

// A scalar int axis input: its constant value, or nullopt.
std::optional<int64_t> ConstAxis(GradientContext& g, const Endpoint& e) {
  Ints v;
  if (!ConstInts(g, e, &v) || v.size() != 1) return std::nullopt;
  return v[0];
}

// ---- Reshapes --------------------------------------------------------------

// Reshape, ExpandDims, Squeeze: dy reshaped to the input's shape.
absl::Status ReshapeGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], g.ReshapeLike(*dy[0], op.inputs[0]));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Reshape", ReshapeGrad);
PX_REGISTER_GRADIENT("ExpandDims", ReshapeGrad);
PX_REGISTER_GRADIENT("Squeeze", ReshapeGrad);

// PlaceholderWithDefault forwards its input.
absl::Status ForwardGrad(GradientContext&, const GradientOp&, const GradientList& dy, GradientList* dx) {
  (*dx)[0] = dy[0];
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("PlaceholderWithDefault", ForwardGrad);

absl::Status TransposeGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const Endpoint& perm = op.inputs[1];
  Ints p;
  Endpoint inverse;
  if (ConstInts(g, perm, &p)) {
    Ints inv(p.size(), 0);
    for (size_t i = 0; i < p.size(); ++i) {
      if (p[i] < 0 || p[i] >= static_cast<int64_t>(p.size())) {
        return absl::InvalidArgumentError(absl::StrCat("perm value ", p[i], " is out of range"));
      }
      inv[p[i]] = static_cast<int64_t>(i);
    }
    PX_G_ASSIGN(inverse, IndexVector(g, inv, DataType::kInt32));
  } else {
    PX_G_ASSIGN(inverse, g.Op("InvertPermutation", {perm}));
  }
  PX_G_ASSIGN((*dx)[0], g.Op("Transpose", {*dy[0], inverse}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Transpose", TransposeGrad);

// ---- Concatenation and splitting ---------------------------------------------

// The pieces of `d` (the gradient of a concatenation of `values` along
// `axis`) that belong to each value.
absl::Status SliceConcatGrad(GradientContext& g, const Endpoint& d, const std::vector<Endpoint>& values,
                             const Endpoint& axis, GradientList* dx, size_t first) {
  const int64_t n = static_cast<int64_t>(values.size());
  const int64_t rank = RankOf(g, d);
  std::optional<int64_t> a = ConstAxis(g, axis);
  if (a.has_value() && rank > 0) {
    if (*a < -rank || *a >= rank) {
      return absl::InvalidArgumentError(absl::StrCat("concat axis ", *a, " is out of range for rank ", rank));
    }
    const int64_t ax = *a < 0 ? *a + rank : *a;
    Ints sizes;
    for (const Endpoint& v : values) {
      const PartialShape& s = g.shape(v);
      if (!s.rank_known() || s.rank() != rank || s.dim(ax) < 0) break;
      sizes.push_back(s.dim(ax));
    }
    if (static_cast<int64_t>(sizes.size()) == n) {
      // Static offsets: Slice(d, [0..offset..0], [-1..size..-1]).
      int64_t offset = 0;
      for (int64_t k = 0; k < n; ++k) {
        Ints begin(rank, 0), size(rank, -1);
        begin[ax] = offset;
        size[ax] = sizes[k];
        offset += sizes[k];
        PX_G_ASSIGN(Endpoint b, IndexVector(g, begin, DataType::kInt32));
        PX_G_ASSIGN(Endpoint s, IndexVector(g, size, DataType::kInt32));
        PX_G_ASSIGN((*dx)[first + k], g.Op("Slice", {d, b, s}));
      }
      return absl::OkStatus();
    }
  }
  // Run-time offsets: ConcatOffset over the shapes of the values.
  Endpoint axis32 = axis;
  if (g.dtype(axis) != DataType::kInt32) {
    PX_G_ASSIGN(axis32, g.Op("Cast", {axis}, WithType(Attrs(), "DstT", DataType::kInt32)));
  }
  PX_G_ASSIGN(std::vector<Endpoint> shapes, g.Ops("ShapeN", values));
  std::vector<Endpoint> offset_inputs = {axis32};
  offset_inputs.insert(offset_inputs.end(), shapes.begin(), shapes.end());
  PX_G_ASSIGN(std::vector<Endpoint> offsets, g.Ops("ConcatOffset", offset_inputs));
  for (int64_t k = 0; k < n; ++k) {
    PX_G_ASSIGN((*dx)[first + k], g.Op("Slice", {d, offsets[k], shapes[k]}));
  }
  return absl::OkStatus();
}

absl::Status ConcatV2Grad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const size_t n = op.inputs.size() - 1;
  std::vector<Endpoint> values(op.inputs.begin(), op.inputs.begin() + n);
  return SliceConcatGrad(g, *dy[0], values, op.inputs[n], dx, 0);
}
PX_REGISTER_GRADIENT("ConcatV2", ConcatV2Grad);

absl::Status ConcatGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  std::vector<Endpoint> values(op.inputs.begin() + 1, op.inputs.end());
  return SliceConcatGrad(g, *dy[0], values, op.inputs[0], dx, 1);
}
PX_REGISTER_GRADIENT("Concat", ConcatGrad);

// The output gradients of a split, concatenated back along `axis`.
absl::StatusOr<Endpoint> ConcatOutputGrads(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                           const Endpoint& axis) {
  std::vector<Endpoint> pieces;
  for (size_t k = 0; k < dy.size(); ++k) {
    PX_G_ASSIGN(Endpoint p, GradOrZeros(g, op, dy, k));
    pieces.push_back(p);
  }
  if (pieces.size() == 1) return pieces[0];
  pieces.push_back(axis);
  return g.Op("ConcatV2", pieces);
}

absl::Status SplitGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN((*dx)[1], ConcatOutputGrads(g, op, dy, op.inputs[0]));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Split", SplitGrad);

absl::Status SplitVGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], ConcatOutputGrads(g, op, dy, op.inputs[2]));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("SplitV", SplitVGrad);

absl::Status PackGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const int64_t n = static_cast<int64_t>(op.inputs.size());
  AttrMap attrs = IntAttr(Attrs(), "num", n);
  attrs = IntAttr(attrs, "axis", AttrInt(op, "axis", 0));
  PX_G_ASSIGN(std::vector<Endpoint> pieces, g.Ops("Unpack", {*dy[0]}, attrs));
  for (int64_t k = 0; k < n; ++k) (*dx)[k] = pieces[k];
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Pack", PackGrad);

absl::Status UnpackGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  std::vector<Endpoint> pieces;
  for (size_t k = 0; k < dy.size(); ++k) {
    PX_G_ASSIGN(Endpoint p, GradOrZeros(g, op, dy, k));
    pieces.push_back(p);
  }
  if (pieces.empty()) return absl::OkStatus();
  PX_G_ASSIGN((*dx)[0], g.Op("Pack", pieces, IntAttr(Attrs(), "axis", AttrInt(op, "axis", 0))));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Unpack", UnpackGrad);

// ---- Slicing and padding -------------------------------------------------------

// Slice(x, begin, size): dy padded back to x's shape with
// paddings [begin, shape(x) - begin - shape(y)].
absl::Status SliceGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const Endpoint& x = op.inputs[0];
  const Endpoint& begin = op.inputs[1];
  const Endpoint& y = op.outputs[0];
  Ints b, xs, ys;
  Endpoint paddings;
  if (ConstInts(g, begin, &b) && StaticDims(g, x, &xs) && StaticDims(g, y, &ys) && b.size() == xs.size() &&
      ys.size() == xs.size()) {
    Ints pad;
    for (size_t i = 0; i < xs.size(); ++i) {
      pad.push_back(b[i]);
      pad.push_back(xs[i] - b[i] - ys[i]);
    }
    PX_G_ASSIGN(paddings, IndexConst(g, pad, DataType::kInt32, Shape{static_cast<int64_t>(xs.size()), 2}));
  } else {
    const DataType t = g.dtype(begin);
    PX_G_ASSIGN(Endpoint sx, ShapeAs(g, x, t));
    PX_G_ASSIGN(Endpoint sy, ShapeAs(g, y, t));
    PX_G_ASSIGN(Endpoint rest, g.Op("Sub", {sx, sy}));
    PX_G_ASSIGN(Endpoint after, g.Op("Sub", {rest, begin}));
    PX_G_ASSIGN(paddings, g.Op("Pack", {begin, after}, IntAttr(Attrs(), "axis", 1)));
  }
  PX_G_ASSIGN((*dx)[0], g.Op("Pad", {*dy[0], paddings}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Slice", SliceGrad);

absl::Status StridedSliceGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const Endpoint& x = op.inputs[0];
  PX_G_ASSIGN(Endpoint shape, ShapeAs(g, x, g.dtype(op.inputs[1])));
  AttrMap attrs = Copy(Attrs(), op, {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"});
  PX_G_ASSIGN((*dx)[0], g.Op("StridedSliceGrad", {shape, op.inputs[1], op.inputs[2], op.inputs[3], *dy[0]}, attrs));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("StridedSlice", StridedSliceGrad);

// StridedSliceGrad is linear in dy: its gradient slices the incoming one.
absl::Status StridedSliceGradGrad(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                  GradientList* dx) {
  AttrMap attrs = Copy(Attrs(), op, {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"});
  PX_G_ASSIGN((*dx)[4], g.Op("StridedSlice", {*dy[0], op.inputs[1], op.inputs[2], op.inputs[3]}, attrs));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("StridedSliceGrad", StridedSliceGradGrad);

// The sum of every element of `t`, a scalar.
absl::StatusOr<Endpoint> SumAll(GradientContext& g, const Endpoint& t) {
  PX_G_ASSIGN(Endpoint flat_shape, g.IntVector({-1}));
  PX_G_ASSIGN(Endpoint flat, g.Op("Reshape", {t, flat_shape}));
  PX_G_ASSIGN(Endpoint axis, g.IntVector({0}));
  return g.Op("Sum", {flat, axis});
}

// Pad / PadV2: the part of dy where x lies, Slice(dy, paddings[:, 0],
// shape(x)). PadV2's constant value receives every padded element's
// gradient: sum(dy) - sum(dx).
absl::Status PadGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const Endpoint& x = op.inputs[0];
  const Endpoint& paddings = op.inputs[1];
  Ints pad;
  Endpoint begin, size;
  if (ConstInts(g, paddings, &pad)) {
    Ints b;
    for (size_t i = 0; i + 1 < pad.size(); i += 2) b.push_back(pad[i]);
    PX_G_ASSIGN(begin, IndexVector(g, b, DataType::kInt32));
    PX_G_ASSIGN(size, ShapeAs(g, x, DataType::kInt32));
  } else {
    const DataType t = g.dtype(paddings);
    PX_G_ASSIGN(Endpoint b0, g.IntVector({0, 0}));
    PX_G_ASSIGN(Endpoint s0, g.IntVector({-1, 1}));
    PX_G_ASSIGN(Endpoint column, g.Op("Slice", {paddings, b0, s0}));
    PX_G_ASSIGN(Endpoint flat, g.IntVector({-1}));
    PX_G_ASSIGN(begin, g.Op("Reshape", {column, flat}));
    PX_G_ASSIGN(size, ShapeAs(g, x, t));
  }
  PX_G_ASSIGN(Endpoint d, g.Op("Slice", {*dy[0], begin, size}));
  (*dx)[0] = d;
  if (op.op == "PadV2") {
    PX_G_ASSIGN(Endpoint total, SumAll(g, *dy[0]));
    PX_G_ASSIGN(Endpoint inner, SumAll(g, d));
    PX_G_ASSIGN((*dx)[2], g.Op("Sub", {total, inner}));
  }
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Pad", PadGrad);
PX_REGISTER_GRADIENT("PadV2", PadGrad);

// MirrorPad and MirrorPadGrad are each other's gradient (both linear).
absl::Status MirrorPadGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  AttrMap attrs = Copy(Attrs(), op, {"mode"});
  PX_G_ASSIGN((*dx)[0], g.Op(op.op == "MirrorPad" ? "MirrorPadGrad" : "MirrorPad", {*dy[0], op.inputs[1]}, attrs));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("MirrorPad", MirrorPadGrad);
PX_REGISTER_GRADIENT("MirrorPadGrad", MirrorPadGrad);

// ---- Tiling and broadcasting ---------------------------------------------------

// Tile(x, multiples): dy reshaped to [m0, d0, m1, d1, ...] and summed over
// the multiples' axes.
absl::Status TileGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const Endpoint& x = op.inputs[0];
  const Endpoint& multiples = op.inputs[1];
  Ints m, xs;
  Endpoint split, axes;
  if (ConstInts(g, multiples, &m) && StaticDims(g, x, &xs) && m.size() == xs.size()) {
    if (xs.empty()) {
      (*dx)[0] = dy[0];
      return absl::OkStatus();
    }
    Ints s, a;
    for (size_t i = 0; i < xs.size(); ++i) {
      s.push_back(m[i]);
      s.push_back(xs[i]);
      a.push_back(static_cast<int64_t>(2 * i));
    }
    PX_G_ASSIGN(split, g.IntVector(s));
    PX_G_ASSIGN(axes, g.IntVector(a));
  } else {
    const DataType t = g.dtype(multiples);
    PX_G_ASSIGN(Endpoint sx, ShapeAs(g, x, t));
    PX_G_ASSIGN(Endpoint pairs, g.Op("Pack", {multiples, sx}, IntAttr(Attrs(), "axis", 1)));
    PX_G_ASSIGN(Endpoint flat, g.IntVector({-1}));
    PX_G_ASSIGN(split, g.Op("Reshape", {pairs, flat}));
    PX_G_ASSIGN(Endpoint n, g.Op("Size", {split}));
    PX_G_ASSIGN(Endpoint zero, g.Scalar(0, DataType::kInt32));
    PX_G_ASSIGN(Endpoint two, g.Scalar(2, DataType::kInt32));
    PX_G_ASSIGN(axes, g.Op("Range", {zero, n, two}));
  }
  PX_G_ASSIGN(Endpoint reshaped, g.Op("Reshape", {*dy[0], split}));
  PX_G_ASSIGN((*dx)[0], g.Op("Sum", {reshaped, axes}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Tile", TileGrad);

absl::Status BroadcastToGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], g.SumToShapeOf(*dy[0], op.inputs[0], op.outputs[0]));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("BroadcastTo", BroadcastToGrad);

// ---- Gathering -----------------------------------------------------------------

// `v` (an int32 vector constant or tensor) sliced to [begin, begin + size),
// or to its end when size is -1.
absl::StatusOr<Endpoint> SliceVector(GradientContext& g, const Endpoint& v, int64_t begin, int64_t size) {
  Ints values;
  if (ConstInts(g, v, &values)) {
    const int64_t n = static_cast<int64_t>(values.size());
    const int64_t end = size < 0 ? n : std::min(n, begin + size);
    return g.IntVector(Ints(values.begin() + std::min(begin, n), values.begin() + std::max(end, std::min(begin, n))));
  }
  PX_G_ASSIGN(Endpoint b, g.IntVector({begin}));
  PX_G_ASSIGN(Endpoint s, g.IntVector({size}));
  return g.Op("Slice", {v, b, s});
}

// Concatenation of int32 vectors, folded when every piece is a constant.
absl::StatusOr<Endpoint> ConcatVectors(GradientContext& g, const std::vector<Endpoint>& pieces) {
  Ints all;
  bool known = true;
  for (const Endpoint& p : pieces) {
    Ints v;
    if (!ConstInts(g, p, &v)) {
      known = false;
      break;
    }
    all.insert(all.end(), v.begin(), v.end());
  }
  if (known) return g.IntVector(all);
  std::vector<Endpoint> inputs = pieces;
  PX_G_ASSIGN(Endpoint axis, g.Scalar(0, DataType::kInt32));
  inputs.push_back(axis);
  return g.Op("ConcatV2", inputs);
}

// Gather / GatherV2 with batch_dims 0: params [outer, P, inner] (P at
// `axis`), output [outer, indices..., inner]. The gradient sums dy's rows
// into the rows of P they were gathered from (UnsortedSegmentSum), with
// P moved to the front and back when axis > 0.
absl::Status GatherGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const Endpoint& params = op.inputs[0];
  const Endpoint& indices = op.inputs[1];
  int64_t axis = 0;
  if (op.op == "GatherV2") {
    std::optional<int64_t> a = ConstAxis(g, op.inputs[2]);
    if (!a.has_value()) return absl::UnimplementedError("the gradient of GatherV2 needs a constant axis");
    axis = *a;
    if (AttrInt(op, "batch_dims", 0) != 0) {
      return absl::UnimplementedError("the gradient of GatherV2 with batch_dims != 0 is not supported");
    }
  }
  // Axis 0 needs no rank: inner is the shape of params after dimension 0.
  const int64_t rank = RankOf(g, params);
  if (rank < 0 && axis != 0) {
    return absl::UnimplementedError("the gradient of GatherV2 with axis != 0 needs params of known rank");
  }
  if (rank >= 0 && (axis < -rank || axis >= rank)) {
    return absl::InvalidArgumentError(absl::StrCat("gather axis ", axis, " is out of range for rank ", rank));
  }
  if (axis < 0) axis += rank;
  PX_G_ASSIGN(Endpoint shape, ShapeAs(g, params, DataType::kInt32));
  PX_G_ASSIGN(Endpoint outer, SliceVector(g, shape, 0, axis));
  PX_G_ASSIGN(Endpoint inner, SliceVector(g, shape, axis + 1, rank < 0 ? -1 : rank - axis - 1));
  PX_G_ASSIGN(Endpoint minus_one, g.IntVector({-1}));
  PX_G_ASSIGN(Endpoint values_shape, ConcatVectors(g, {outer, minus_one, inner}));
  PX_G_ASSIGN(Endpoint values, g.Op("Reshape", {*dy[0], values_shape}));
  Endpoint ids = indices;
  if (g.dtype(ids) != DataType::kInt32 && g.dtype(ids) != DataType::kInt64) {
    PX_G_ASSIGN(ids, g.Op("Cast", {ids}, WithType(Attrs(), "DstT", DataType::kInt32)));
  }
  PX_G_ASSIGN(ids, g.Op("Reshape", {ids, minus_one}));
  // num_segments: params' dimension `axis`, a scalar.
  Endpoint num;
  const int64_t p = rank < 0 ? -1 : g.shape(params).dim(axis);
  if (p >= 0) {
    PX_G_ASSIGN(num, g.Scalar(static_cast<double>(p), DataType::kInt32));
  } else {
    PX_G_ASSIGN(Endpoint pv, SliceVector(g, shape, axis, 1));
    PX_G_ASSIGN(Endpoint scalar, g.IntVector({}));
    PX_G_ASSIGN(num, g.Op("Reshape", {pv, scalar}));
  }
  if (axis == 0) {
    PX_G_ASSIGN((*dx)[0], g.Op("UnsortedSegmentSum", {values, ids, num}));
    return absl::OkStatus();
  }
  // Move P to the front, sum, and move it back.
  Ints perm = {axis}, inverse;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis) perm.push_back(d);
  }
  for (int64_t d = 1; d <= axis; ++d) inverse.push_back(d);
  inverse.insert(inverse.begin() + axis, 0);
  for (int64_t d = axis + 1; d < rank; ++d) inverse.push_back(d);
  PX_G_ASSIGN(Endpoint perm_e, g.IntVector(perm));
  PX_G_ASSIGN(Endpoint inverse_e, g.IntVector(inverse));
  PX_G_ASSIGN(Endpoint moved, g.Op("Transpose", {values, perm_e}));
  PX_G_ASSIGN(Endpoint summed, g.Op("UnsortedSegmentSum", {moved, ids, num}));
  PX_G_ASSIGN((*dx)[0], g.Op("Transpose", {summed, inverse_e}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Gather", GatherGrad);
PX_REGISTER_GRADIENT("GatherV2", GatherGrad);

// GatherNd(params, indices): the gathered slices scattered back, adding up
// where indices repeat. ScatterNd(indices, updates, shape): the reverse.
absl::Status GatherNdGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  Endpoint indices = op.inputs[1];
  DataType t = g.dtype(indices);
  if (t != DataType::kInt32 && t != DataType::kInt64) {
    PX_G_ASSIGN(indices, g.Op("Cast", {indices}, WithType(Attrs(), "DstT", DataType::kInt32)));
    t = DataType::kInt32;
  }
  PX_G_ASSIGN(Endpoint shape, ShapeAs(g, op.inputs[0], t));
  PX_G_ASSIGN((*dx)[0], g.Op("ScatterNd", {indices, *dy[0], shape}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("GatherNd", GatherNdGrad);

absl::Status ScatterNdGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN((*dx)[1], g.Op("GatherNd", {*dy[0], op.inputs[0]}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("ScatterNd", ScatterNdGrad);

// ---- Space / batch rearrangements --------------------------------------------------

absl::Status SpaceToBatchNDGrad(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], g.Op("BatchToSpaceND", {*dy[0], op.inputs[1], op.inputs[2]}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("SpaceToBatchND", SpaceToBatchNDGrad);

absl::Status BatchToSpaceNDGrad(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], g.Op("SpaceToBatchND", {*dy[0], op.inputs[1], op.inputs[2]}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("BatchToSpaceND", BatchToSpaceNDGrad);

// ---- Reversal and band masks: the same op applied to dy ---------------------------

absl::Status ReverseV2Grad(GradientContext& g, const GradientOp& op, const GradientList& dy,
                           GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], g.Op("ReverseV2", {*dy[0], op.inputs[1]}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("ReverseV2", ReverseV2Grad);

absl::Status MatrixBandPartGrad(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], g.Op("MatrixBandPart", {*dy[0], op.inputs[1], op.inputs[2]}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("MatrixBandPart", MatrixBandPartGrad);

// DepthToSpace and SpaceToDepth: each the other's gradient, with the same
// block_size and data_format (array_grad.py).
absl::Status DepthToSpaceGrad(GradientContext& g, const GradientOp& op, const GradientList& dy,
                              GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], g.Op("SpaceToDepth", {*dy[0]},
                             Copy(Attrs(), op, {"T", "block_size", "data_format"})));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("DepthToSpace", DepthToSpaceGrad);

absl::Status SpaceToDepthGrad(GradientContext& g, const GradientOp& op, const GradientList& dy,
                              GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], g.Op("DepthToSpace", {*dy[0]},
                             Copy(Attrs(), op, {"T", "block_size", "data_format"})));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("SpaceToDepth", SpaceToDepthGrad);

// ---- Ops without a gradient --------------------------------------------------------

PX_NO_GRADIENT("InvertPermutation");
PX_NO_GRADIENT("ConcatOffset");
PX_NO_GRADIENT("_PlexusReducedShape");

}  // namespace
}  // namespace plexus

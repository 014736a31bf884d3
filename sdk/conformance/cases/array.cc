// Cases for the array family's shape and data-movement ops: Reshape,
// ExpandDims, Squeeze, Transpose, Concat, ConcatV2, Split, SplitV, Pack,
// Unpack, Slice, StridedSlice, Tile, BroadcastTo, Pad, PadV2,
// MirrorPad, Shape, ShapeN, Size, Rank, Fill, ZerosLike, OnesLike, SpaceToBatchND and
// BatchToSpaceND. (Gather, GatherV2, GatherNd, OneHot and Range are in
// array_index.cc.)
//
// Axis, shape, perm, paddings and similar arguments are host-memory inputs:
// the shape function sees their values before any kernel runs, so invalid
// values there are refused by the core and are not kernel error cases. The
// one exception in this file is ConcatV2's axis, which is not a host-memory
// input (its index depends on N): its range check is the kernel's.
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cases.h"
#include "plexus/sdk/array_shapes.h"

namespace plexus::conformance {
namespace {

using I = std::vector<int64_t>;
constexpr DataType kI32 = DataType::kInt32;
constexpr DataType kI64 = DataType::kInt64;

// Every element dtype the array kernels may claim (the generators are called
// for each dtype the op's OpDef allows).
bool Supported(DataType t) { return IsFloatType(t) || IsIntegerType(t) || t == DataType::kBool; }

// Random data of the case's dtype; a wide range so that misplaced elements
// show up for integer types too.
Tensor Data(const CaseContext& ctx, const Shape& shape) {
  return RandomTensor(ctx.dtype, shape, ctx.rng, -100, 100);
}

// NaN, infinities, -0.0, large and tiny magnitudes cycled over `shape`; the
// data ops must move them bit for bit. Float dtypes only.
Tensor Specials(DataType t, const Shape& shape) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> cycle = {std::nan(""), inf, -inf, -0.0, 1e30, -1e-30, 6e4, -2.5};
  std::vector<double> v(static_cast<size_t>(NumElements(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = cycle[i % cycle.size()];
  return MakeTensor(t, shape, v);
}

Tensor Vec(const I& v, DataType t = kI32) {
  return IntTensor(t, {static_cast<int64_t>(v.size())}, v);
}
Tensor Scalar(int64_t v, DataType t = kI32) { return IntTensor(t, {}, {v}); }
// A [rows, 2] paddings or crops matrix.
Tensor Pairs(const I& v, DataType t = kI32) {
  return IntTensor(t, {static_cast<int64_t>(v.size() / 2), 2}, v);
}

// ---------------------------------------------------------------------------
// Reshape, ExpandDims, Squeeze
// ---------------------------------------------------------------------------

PX_CONFORMANCE_CASES("Reshape")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  auto add = [&](const std::string& label, const Shape& in, const I& target, DataType it) {
    cases.push_back(Case(ctx.op, label)
                        .Input(Data(ctx, in))
                        .Input(Vec(target, it))
                        .Attr("T", ctx.dtype)
                        .Attr("Tshape", it));
  };
  add("[2,3,4] to [4,-1]", {2, 3, 4}, {4, -1}, kI32);
  add("[2,3,4] to [6,4], int64 shape", {2, 3, 4}, {6, 4}, kI64);
  add("flatten [3,5] to [-1]", {3, 5}, {-1}, kI32);
  add("scalar to [1,1]", {}, {1, 1}, kI32);
  add("[1,1] to scalar", {1, 1}, {}, kI64);
  add("zero-size [0,3] to [3,0,5]", {0, 3}, {3, 0, 5}, kI32);
  return cases;
}

PX_CONFORMANCE_CASES("ExpandDims")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  auto add = [&](const std::string& label, const Shape& in, Tensor dim, DataType it) {
    cases.push_back(Case(ctx.op, label)
                        .Input(Data(ctx, in))
                        .Input(std::move(dim))
                        .Attr("T", ctx.dtype)
                        .Attr("Tdim", it));
  };
  add("[2,3] dim 0", {2, 3}, Scalar(0), kI32);
  add("[2,3] dim 2", {2, 3}, Scalar(2), kI32);
  add("[2,3] dim -1", {2, 3}, Scalar(-1, kI64), kI64);
  add("[2,3] dim -3", {2, 3}, Scalar(-3), kI32);
  add("scalar, dim as a 1-element vector", {}, Vec({0}, kI64), kI64);
  add("zero-size [0,2] dim 1", {0, 2}, Scalar(1), kI32);
  return cases;
}

PX_CONFORMANCE_CASES("Squeeze")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  auto add = [&](const std::string& label, const Shape& in, const I& dims) {
    Case c(ctx.op, label);
    c.Input(Data(ctx, in)).Attr("T", ctx.dtype);
    if (!dims.empty()) c.Attr("squeeze_dims", dims);
    cases.push_back(std::move(c));
  };
  add("all size-1 dims of [1,2,1,3,1]", {1, 2, 1, 3, 1}, {});
  add("squeeze_dims {0,-1}", {1, 2, 1, 3, 1}, {0, -1});
  add("[1] to scalar", {1}, {});
  add("nothing to squeeze [2,3]", {2, 3}, {});
  add("zero-size [0,1,2]", {0, 1, 2}, {});
  return cases;
}

// ---------------------------------------------------------------------------
// Transpose
// ---------------------------------------------------------------------------

PX_CONFORMANCE_CASES("Transpose")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  auto add = [&](const std::string& label, Tensor x, const I& perm, DataType it = kI32) {
    cases.push_back(Case(ctx.op, label)
                        .Input(std::move(x))
                        .Input(Vec(perm, it))
                        .Attr("T", ctx.dtype)
                        .Attr("Tperm", it));
  };
  add("[2,3,4] perm {2,0,1}", Data(ctx, {2, 3, 4}), {2, 0, 1});
  // Large enough for a tiled 2-D copy, with ragged tiles.
  add("[67,29] perm {1,0}, int64 perm", Data(ctx, {67, 29}), {1, 0}, kI64);
  add("rank 5 [2,3,4,5,2] perm {4,2,0,3,1}", Data(ctx, {2, 3, 4, 5, 2}), {4, 2, 0, 3, 1});
  add("size-1 dims [3,1,4,1] reversed", Data(ctx, {3, 1, 4, 1}), {3, 2, 1, 0});
  add("inner pair kept [2,13,7,3] perm {0,2,1,3}", Data(ctx, {2, 13, 7, 3}), {0, 2, 1, 3});
  add("identity perm [5,6]", Data(ctx, {5, 6}), {0, 1});
  add("scalar, empty perm", Data(ctx, {}), {});
  add("zero-size [0,3]", Data(ctx, {0, 3}), {1, 0});
  if (IsFloatType(ctx.dtype)) add("NaN, inf, -0.0", Specials(ctx.dtype, {4, 6}), {1, 0});
  return cases;
}

// ---------------------------------------------------------------------------
// ConcatV2, Concat
// ---------------------------------------------------------------------------

PX_CONFORMANCE_CASES("ConcatV2")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  auto add = [&](const std::string& label, std::vector<Tensor> values, Tensor axis, DataType it) {
    Case c(ctx.op, label);
    const int64_t n = static_cast<int64_t>(values.size());
    for (Tensor& v : values) c.Input(std::move(v));
    c.Input(std::move(axis)).Attr("T", ctx.dtype).Attr("N", n).Attr("Tidx", it);
    cases.push_back(std::move(c));
  };
  // Three inputs, the second of size 1 and the third of size 0 along the axis.
  for (int64_t axis : {0, 1, 2, -1}) {
    Shape a = {2, 3, 4}, b = a, z = a;
    const size_t ax = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
    b[ax] = 1;
    z[ax] = 0;
    add("[2,3,4] + size 1 + size 0, axis " + std::to_string(axis),
        {Data(ctx, a), Data(ctx, b), Data(ctx, z)}, Scalar(axis, axis == 2 ? kI64 : kI32),
        axis == 2 ? kI64 : kI32);
  }
  add("vectors [5] + [7]", {Data(ctx, {5}), Data(ctx, {7})}, Scalar(0), kI32);
  add("all zero-size [0,2] + [0,2]", {Data(ctx, {0, 2}), Data(ctx, {0, 2})}, Scalar(0), kI32);
  if (IsFloatType(ctx.dtype)) {
    add("NaN, inf, -0.0", {Specials(ctx.dtype, {2, 4}), Data(ctx, {2, 1})}, Scalar(1), kI32);
  }
  // The axis is not a host-memory input: only the kernel sees its value.
  cases.push_back(Case(ctx.op, "error: axis out of range")
                      .Input(Data(ctx, {2, 2}))
                      .Input(Data(ctx, {2, 2}))
                      .Input(Scalar(2))
                      .Attr("T", ctx.dtype)
                      .Attr("N", 2)
                      .Attr("Tidx", kI32)
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  return cases;
}

PX_CONFORMANCE_CASES("Concat")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  auto add = [&](const std::string& label, int64_t axis, std::vector<Tensor> values) {
    Case c(ctx.op, label);
    const int64_t n = static_cast<int64_t>(values.size());
    c.Input(Scalar(axis));
    for (Tensor& v : values) c.Input(std::move(v));
    c.Attr("T", ctx.dtype).Attr("N", n);
    cases.push_back(std::move(c));
  };
  add("[1,2] + [2,2] axis 0", 0, {Data(ctx, {1, 2}), Data(ctx, {2, 2})});
  add("three inputs axis 1", 1, {Data(ctx, {3, 2, 2}), Data(ctx, {3, 1, 2}), Data(ctx, {3, 4, 2})});
  add("axis -1 with a zero-size input", -1, {Data(ctx, {2, 3}), Data(ctx, {2, 0})});
  add("vectors", 0, {Data(ctx, {4}), Data(ctx, {1})});
  return cases;
}

// ---------------------------------------------------------------------------
// Split, SplitV, Pack, Unpack
// ---------------------------------------------------------------------------

PX_CONFORMANCE_CASES("Split")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  auto add = [&](const std::string& label, int64_t axis, const Shape& in, int64_t num) {
    cases.push_back(Case(ctx.op, label)
                        .Input(Scalar(axis))
                        .Input(Data(ctx, in))
                        .Attr("T", ctx.dtype)
                        .Attr("num_split", num));
  };
  add("[3,6,3] axis 0 into 3", 0, {3, 6, 3}, 3);
  add("[3,6,3] axis 1 into 3", 1, {3, 6, 3}, 3);
  add("[3,6,3] axis -1 into 3", -1, {3, 6, 3}, 3);
  add("num_split 1", 1, {2, 5}, 1);
  add("zero-size [0,4] axis 1 into 2", 1, {0, 4}, 2);
  add("vector [8] into 4", 0, {8}, 4);
  return cases;
}

PX_CONFORMANCE_CASES("SplitV")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  auto add = [&](const std::string& label, const Shape& in, const I& sizes, DataType tlen,
                 int64_t axis) {
    cases.push_back(Case(ctx.op, label)
                        .Input(Data(ctx, in))
                        .Input(Vec(sizes, tlen))
                        .Input(Scalar(axis))
                        .Attr("T", ctx.dtype)
                        .Attr("Tlen", tlen)
                        .Attr("num_split", static_cast<int64_t>(sizes.size())));
  };
  add("[2,7] sizes {2,-1,4} axis 1, int64 sizes", {2, 7}, {2, -1, 4}, kI64, 1);
  add("[5] sizes {1,0,4}, an empty piece", {5}, {1, 0, 4}, kI32, 0);
  add("[4,3,2] sizes {1,3} axis 0, int8 sizes", {4, 3, 2}, {1, 3}, DataType::kInt8, 0);
  add("[3,4] sizes {-1,1} axis -1", {3, 4}, {-1, 1}, kI32, -1);
  add("one piece", {2, 3}, {3}, kI64, 1);
  return cases;
}

PX_CONFORMANCE_CASES("Pack")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  auto add = [&](const std::string& label, const Shape& each, int64_t n, int64_t axis) {
    Case c(ctx.op, label);
    for (int64_t k = 0; k < n; ++k) c.Input(Data(ctx, each));
    c.Attr("T", ctx.dtype).Attr("N", n).Attr("axis", axis);
    cases.push_back(std::move(c));
  };
  add("2 x [2,3] axis 0", {2, 3}, 2, 0);
  add("2 x [2,3] axis 1", {2, 3}, 2, 1);
  add("3 x [2,3] axis 2", {2, 3}, 3, 2);
  add("2 x [2,3] axis -1", {2, 3}, 2, -1);
  add("2 x [2,3] axis -3", {2, 3}, 2, -3);
  add("3 scalars", {}, 3, 0);
  add("one zero-size [0,2] axis 1", {0, 2}, 1, 1);
  return cases;
}

PX_CONFORMANCE_CASES("Unpack")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  auto add = [&](const std::string& label, const Shape& in, int64_t num, int64_t axis) {
    cases.push_back(Case(ctx.op, label)
                        .Input(Data(ctx, in))
                        .Attr("T", ctx.dtype)
                        .Attr("num", num)
                        .Attr("axis", axis));
  };
  add("[2,3] axis 0", {2, 3}, 2, 0);
  add("[2,3] axis 1", {2, 3}, 3, 1);
  add("[2,3,4] axis -1", {2, 3, 4}, 4, -1);
  add("vector into scalars", {3}, 3, 0);
  add("zero-size [4,0] axis 0", {4, 0}, 4, 0);
  add("single [1,5]", {1, 5}, 1, 0);
  return cases;
}

// ---------------------------------------------------------------------------
// Slice, StridedSlice
// ---------------------------------------------------------------------------

PX_CONFORMANCE_CASES("Slice")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  auto add = [&](const std::string& label, const Shape& in, const I& begin, const I& size,
                 DataType it) {
    cases.push_back(Case(ctx.op, label)
                        .Input(Data(ctx, in))
                        .Input(Vec(begin, it))
                        .Input(Vec(size, it))
                        .Attr("T", ctx.dtype)
                        .Attr("Index", it));
  };
  add("[4,5,6] begin {1,0,2} size {2,-1,3}", {4, 5, 6}, {1, 0, 2}, {2, -1, 3}, kI32);
  add("same, int64 indices", {4, 5, 6}, {1, 0, 2}, {2, -1, 3}, kI64);
  add("[3,4] inner block", {3, 4}, {1, 1}, {2, 2}, kI32);
  add("whole input", {3, 4}, {0, 0}, {3, 4}, kI64);
  add("empty result, begin at the end", {3, 4}, {3, 0}, {0, -1}, kI32);
  add("scalar", {}, {}, {}, kI32);
  add("zero-size input", {0, 4}, {0, 1}, {-1, 2}, kI32);
  return cases;
}

// One StridedSlice case with int32 or int64 begin/end/strides.
Case StridedSliceCase(const CaseContext& ctx, const std::string& label, Tensor x, const I& begin,
                      const I& end, const I& strides, int64_t begin_mask, int64_t end_mask,
                      int64_t ellipsis_mask, int64_t new_axis_mask, int64_t shrink_axis_mask,
                      DataType it = kI32) {
  return Case(ctx.op, label)
      .Input(std::move(x))
      .Input(Vec(begin, it))
      .Input(Vec(end, it))
      .Input(Vec(strides, it))
      .Attr("T", ctx.dtype)
      .Attr("Index", it)
      .Attr("begin_mask", begin_mask)
      .Attr("end_mask", end_mask)
      .Attr("ellipsis_mask", ellipsis_mask)
      .Attr("new_axis_mask", new_axis_mask)
      .Attr("shrink_axis_mask", shrink_axis_mask);
}

PX_CONFORMANCE_CASES("StridedSlice")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  auto add = [&](const std::string& label, const Shape& in, const I& begin, const I& end,
                 const I& strides, int64_t bm, int64_t em, int64_t ellipsis, int64_t new_axis,
                 int64_t shrink, DataType it = kI32) {
    cases.push_back(StridedSliceCase(ctx, label, Data(ctx, in), begin, end, strides, bm, em,
                                     ellipsis, new_axis, shrink, it));
  };
  const Shape x = {2, 3, 4};
  add("x[1] (shrink)", x, {1}, {2}, {1}, 0, 0, 0, 0, 1);
  add("x[:, ::-1, 0] (begin/end masks, negative stride)", x, {0, 0, 0}, {0, 0, 1}, {1, -1, 1}, 3,
      3, 0, 0, 4);
  add("x[..., 1] (ellipsis)", x, {0, 1}, {0, 2}, {1, 1}, 0, 0, 1, 0, 2);
  add("x[:, newaxis, 1:3, -1] (new axis)", x, {0, 0, 1, -1}, {0, 0, 3, 0}, {1, 1, 1, 1}, 1, 1,
      0, 2, 8);
  add("x[-1, -2:, ::-2]", x, {-1, -2, 0}, {0, 0, 0}, {1, 1, -2}, 4, 6, 0, 0, 1);
  add("x[newaxis, ..., newaxis, 2], int64 indices", x, {0, 0, 0, 2}, {0, 0, 0, 3}, {1, 1, 1, 1},
      0, 0, 2, 5, 8, kI64);
  add("x[::-1] (whole axis reversed)", x, {0}, {0}, {-1}, 1, 1, 0, 0, 0);
  add("clamped x[-10:1]", x, {-10}, {1}, {1}, 0, 0, 0, 0, 0);
  add("empty x[5:10]", x, {5}, {10}, {1}, 0, 0, 0, 0, 0);
  add("[4,5,6] strides {2,-2,1}", {4, 5, 6}, {1, -1, 0}, {4, 0, 6}, {2, -2, 1}, 0, 0, 0, 0, 0);
  add("vector to scalar (shrink)", {3}, {1}, {2}, {1}, 0, 0, 0, 0, 1);
  add("zero-size input [0,4] x[:, 1:3]", {0, 4}, {0, 1}, {0, 3}, {1, 1}, 1, 1, 0, 0, 0);
  if (IsFloatType(ctx.dtype)) {
    cases.push_back(StridedSliceCase(ctx, "NaN, inf, -0.0 x[::2, ::-1]", Specials(ctx.dtype, {4, 5}),
                                     {0, 0}, {0, 0}, {2, -1}, 3, 3, 0, 0, 0));
  }
  // Random masks, bounds and strides on a rank-4 input, kept when the spec
  // is valid (as the core's shape function decides).
  const std::vector<int64_t> r4 = {3, 4, 1, 5};
  std::uniform_int_distribution<int> len(1, 5), mask(0, 31), idx(-7, 7), stride(-3, 3), coin(0, 3);
  int kept = 0;
  for (int attempt = 0; attempt < 200 && kept < 6; ++attempt) {
    const int n = len(ctx.rng);
    I begin, end, strides;
    for (int i = 0; i < n; ++i) {
      begin.push_back(idx(ctx.rng));
      end.push_back(idx(ctx.rng));
      const int s = stride(ctx.rng);
      strides.push_back(s == 0 ? 1 : s);
    }
    const int64_t ellipsis = coin(ctx.rng) == 0 ? int64_t{1} << (ctx.rng() % n) : 0;
    const int64_t shrink = coin(ctx.rng) == 0 ? mask(ctx.rng) & ((1 << n) - 1) : 0;
    for (int i = 0; i < n; ++i) {
      if (shrink & (int64_t{1} << i)) {
        strides[i] = 1;
        begin[i] = static_cast<int>(ctx.rng() % 3) - 1;
      }
    }
    const int64_t bm = mask(ctx.rng), em = mask(ctx.rng);
    const int64_t new_axis = coin(ctx.rng) == 0 ? mask(ctx.rng) : 0;
    array_shapes::StridedSliceResult result;
    if (!array_shapes::StridedSlice(r4, &begin, &end, strides, bm, em, ellipsis, new_axis, shrink,
                                    &result)
             .empty()) {
      continue;
    }
    ++kept;
    add("random spec " + std::to_string(kept) + " on [3,4,1,5]", Shape(r4.begin(), r4.end()), begin, end, strides, bm, em,
        ellipsis, new_axis, shrink, kept % 2 ? kI32 : kI64);
  }
  return cases;
}

// ---------------------------------------------------------------------------
// Tile, BroadcastTo
// ---------------------------------------------------------------------------

PX_CONFORMANCE_CASES("Tile")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  auto add = [&](const std::string& label, Tensor x, const I& multiples, DataType it = kI32) {
    cases.push_back(Case(ctx.op, label)
                        .Input(std::move(x))
                        .Input(Vec(multiples, it))
                        .Attr("T", ctx.dtype)
                        .Attr("Tmultiples", it));
  };
  add("[2,1,3] x {2,5,1}", Data(ctx, {2, 1, 3}), {2, 5, 1});
  add("[2] x {3}", Data(ctx, {2}), {3});
  add("[2,2] x {2,1}, int64 multiples", Data(ctx, {2, 2}), {2, 1}, kI64);
  add("zero multiple {0,3}", Data(ctx, {2, 2}), {0, 3});
  add("zero-size [2,0] x {2,2}", Data(ctx, {2, 0}), {2, 2});
  add("scalar, empty multiples", Data(ctx, {}), {});
  if (IsFloatType(ctx.dtype)) add("NaN, inf, -0.0", Specials(ctx.dtype, {2, 4}), {3, 2});
  return cases;
}

PX_CONFORMANCE_CASES("BroadcastTo")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  auto add = [&](const std::string& label, const Shape& in, const I& shape, DataType it) {
    cases.push_back(Case(ctx.op, label)
                        .Input(Data(ctx, in))
                        .Input(Vec(shape, it))
                        .Attr("T", ctx.dtype)
                        .Attr("Tidx", it));
  };
  add("[3,1] to [2,3,4]", {3, 1}, {2, 3, 4}, kI64);
  add("[2,1] to [2,3]", {2, 1}, {2, 3}, kI32);
  add("[1,3] to [4,3]", {1, 3}, {4, 3}, kI32);
  add("scalar to [1,2]", {}, {1, 2}, kI32);
  add("same shape [2,3]", {2, 3}, {2, 3}, kI64);
  add("[3] to zero-size [0,3]", {3}, {0, 3}, kI32);
  add("scalar to scalar", {}, {}, kI32);
  return cases;
}

// ---------------------------------------------------------------------------
// Pad, PadV2, MirrorPad
// ---------------------------------------------------------------------------

PX_CONFORMANCE_CASES("Pad", "PadV2")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  const bool v2 = ctx.op == "PadV2";
  // PadV2's constant_values: `value` when given, else a random scalar.
  auto add = [&](const std::string& label, Tensor x, const I& pads, DataType it,
                 std::optional<Tensor> value = std::nullopt) {
    Case c(ctx.op, label);
    c.Input(std::move(x)).Input(Pairs(pads, it));
    if (v2) c.Input(value ? std::move(*value) : Data(ctx, {}));
    c.Attr("T", ctx.dtype).Attr("Tpaddings", it);
    cases.push_back(std::move(c));
  };
  add("[2,3,4] pads {1,0,2,1,0,3}", Data(ctx, {2, 3, 4}), {1, 0, 2, 1, 0, 3}, kI32);
  add("same, int64 paddings", Data(ctx, {2, 3, 4}), {1, 0, 2, 1, 0, 3}, kI64);
  add("vector [2] pads {1,2}", Data(ctx, {2}), {1, 2}, kI32);
  add("no padding", Data(ctx, {3, 2}), {0, 0, 0, 0}, kI32);
  add("scalar, [0,2] paddings", Data(ctx, {}), {}, kI32);
  add("zero-size [0] pads {1,1}", Data(ctx, {0}), {1, 1}, kI64);
  add("zero-size [2,0] pads only dim 0", Data(ctx, {2, 0}), {1, 1, 0, 0}, kI32);
  if (v2 && IsFloatType(ctx.dtype)) {
    add("NaN constant, special values", Specials(ctx.dtype, {2, 3}), {1, 1, 0, 2}, kI32,
        MakeTensor(ctx.dtype, {}, {std::nan("")}));
    add("-inf constant", Data(ctx, {2, 2}), {0, 1, 1, 0}, kI32,
        MakeTensor(ctx.dtype, {}, {-std::numeric_limits<double>::infinity()}));
  }
  return cases;
}

PX_CONFORMANCE_CASES("MirrorPad")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  auto add = [&](const std::string& label, const Shape& in, const I& pads, const char* mode,
                 DataType it = kI32) {
    cases.push_back(Case(ctx.op, label)
                        .Input(Data(ctx, in))
                        .Input(Pairs(pads, it))
                        .Attr("T", ctx.dtype)
                        .Attr("Tpaddings", it)
                        .Attr("mode", mode));
  };
  add("REFLECT [2,3,4] pads {1,0,2,1,0,3}", {2, 3, 4}, {1, 0, 2, 1, 0, 3}, "REFLECT");
  add("SYMMETRIC [2,3,4] pads {1,0,2,1,0,3}, int64", {2, 3, 4}, {1, 0, 2, 1, 0, 3}, "SYMMETRIC",
      kI64);
  add("REFLECT [3] pads {2,2} (the most allowed)", {3}, {2, 2}, "REFLECT");
  add("SYMMETRIC [3] pads {3,2} (the most allowed)", {3}, {3, 2}, "SYMMETRIC");
  add("REFLECT [2,3] pads {1,1,2,2}", {2, 3}, {1, 1, 2, 2}, "REFLECT", kI64);
  add("SYMMETRIC size-1 dim [1,4] pads {1,0,0,2}", {1, 4}, {1, 0, 0, 2}, "SYMMETRIC");
  add("no padding", {2, 2}, {0, 0, 0, 0}, "REFLECT");
  add("scalar", {}, {}, "SYMMETRIC");
  return cases;
}

// ---------------------------------------------------------------------------
// Shape, ShapeN, Size, Rank
// ---------------------------------------------------------------------------

PX_CONFORMANCE_CASES("Shape", "Size")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  for (const Shape& shape : std::vector<Shape>{{2, 3, 4}, {}, {2, 0, 3}, {1, 7}}) {
    for (DataType out : {kI32, kI64}) {
      cases.push_back(Case(ctx.op, ShapeToString(shape) + " out_type " + DataTypeName(out))
                          .Input(Data(ctx, shape))
                          .Attr("T", ctx.dtype)
                          .Attr("out_type", out));
    }
  }
  return cases;
}

PX_CONFORMANCE_CASES("ShapeN")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  auto add = [&](const std::string& label, const std::vector<Shape>& shapes, DataType out) {
    Case c(ctx.op, label);
    for (const Shape& s : shapes) c.Input(Data(ctx, s));
    c.Attr("T", ctx.dtype).Attr("N", static_cast<int64_t>(shapes.size())).Attr("out_type", out);
    cases.push_back(std::move(c));
  };
  add("[2,0,3] and a scalar", {{2, 0, 3}, {}}, kI32);
  add("three shapes, int64", {{4}, {2, 3}, {1, 1, 5}}, kI64);
  add("one input", {{3, 2}}, kI32);
  return cases;
}

PX_CONFORMANCE_CASES("Rank")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  for (const Shape& shape : std::vector<Shape>{{4, 5, 1}, {}, {0, 2}, {1, 2, 1, 2, 1}}) {
    cases.push_back(
        Case(ctx.op, "rank of " + ShapeToString(shape)).Input(Data(ctx, shape)).Attr("T", ctx.dtype));
  }
  return cases;
}

// ---------------------------------------------------------------------------
// Fill, ZerosLike, OnesLike
// ---------------------------------------------------------------------------

PX_CONFORMANCE_CASES("Fill")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  auto add = [&](const std::string& label, const I& dims, DataType it, Tensor value) {
    cases.push_back(Case(ctx.op, label)
                        .Input(Vec(dims, it))
                        .Input(std::move(value))
                        .Attr("T", ctx.dtype)
                        .Attr("index_type", it));
  };
  const Tensor one = MakeTensor(ctx.dtype, {}, {1});
  add("[2,3] of a random value", {2, 3}, kI32, Data(ctx, {}));
  add("[4,1,5] of one, int64 dims", {4, 1, 5}, kI64, one);
  add("scalar", {}, kI64, Data(ctx, {}));
  add("zero-size [0,3]", {0, 3}, kI32, Data(ctx, {}));
  if (IsFloatType(ctx.dtype)) {
    add("NaN", {3, 2}, kI32, MakeTensor(ctx.dtype, {}, {std::nan("")}));
    add("-inf", {5}, kI32, MakeTensor(ctx.dtype, {}, {-std::numeric_limits<double>::infinity()}));
  }
  return cases;
}

PX_CONFORMANCE_CASES("ZerosLike", "OnesLike")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  auto add = [&](const std::string& label, Tensor x) {
    cases.push_back(Case(ctx.op, label).Input(std::move(x)).Attr("T", ctx.dtype));
  };
  add("random [3,2]", Data(ctx, {3, 2}));
  add("random [2,3,5]", Data(ctx, {2, 3, 5}));
  add("scalar", Data(ctx, {}));
  add("zero-size [0,4]", Data(ctx, {0, 4}));
  if (IsFloatType(ctx.dtype)) add("NaN, inf, -0.0 input", Specials(ctx.dtype, {8}));
  return cases;
}

// ---------------------------------------------------------------------------
// SpaceToBatchND, BatchToSpaceND
// ---------------------------------------------------------------------------

PX_CONFORMANCE_CASES("SpaceToBatchND", "BatchToSpaceND")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  const bool to_batch = ctx.op == "SpaceToBatchND";
  // `space` is the spatial-side shape: the input of SpaceToBatchND, the
  // output of BatchToSpaceND; the batch-side shape follows from it.
  auto add = [&](const std::string& label, const Shape& space, const I& block, const I& pads,
                 DataType it = kI32) {
    Shape batch = space;
    for (size_t i = 0; i < block.size(); ++i) {
      batch[0] *= block[i];
      batch[i + 1] = (space[i + 1] + pads[2 * i] + pads[2 * i + 1]) / block[i];
    }
    cases.push_back(Case(ctx.op, label)
                        .Input(Data(ctx, to_batch ? space : batch))
                        .Input(Vec(block, it))
                        .Input(IntTensor(it, {static_cast<int64_t>(block.size()), 2}, pads))
                        .Attr("T", ctx.dtype)
                        .Attr("Tblock_shape", it)
                        .Attr(to_batch ? "Tpaddings" : "Tcrops", it));
  };
  add("[1,4,4,1] block {2,2}", {1, 4, 4, 1}, {2, 2}, {0, 0, 0, 0});
  add("[2,5,3,2] block {2,3} pads {1,2,0,3}", {2, 5, 3, 2}, {2, 3}, {1, 2, 0, 3});
  add("same, int64 arguments", {2, 5, 3, 2}, {2, 3}, {1, 2, 0, 3}, kI64);
  add("one spatial dim [1,49,8] block 4 pads {3,4}", {1, 49, 8}, {4}, {3, 4});
  add("three spatial dims", {2, 3, 4, 2, 3}, {3, 2, 2}, {0, 0, 1, 1, 0, 0});
  add("block 1", {2, 3, 2}, {1}, {0, 0});
  add("no spatial dims", {2}, {}, {});
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

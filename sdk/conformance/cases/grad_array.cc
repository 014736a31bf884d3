// Cases for the array gradients and scatters: StridedSliceGrad,
// MirrorPadGrad, ScatterNd and UnsortedSegmentSum. Their shape, begin, end,
// strides, paddings and num_segments inputs are host values that the shape
// functions read, so bad ones never reach a kernel; the error cases here are
// the ones only the index values show (out-of-range scatter indices and
// segment ids).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cases.h"

namespace plexus::conformance {
namespace {

using Ints = std::vector<int64_t>;

Tensor Vec(DataType t, const Ints& v) { return IntTensor(t, {static_cast<int64_t>(v.size())}, v); }

double Lowest(DataType t) { return IsUnsignedType(t) ? 0 : -3; }

// Sums of ~60 values of up to 3: float and half round each partial sum
// (the reference sums in double), so a sum that cancels towards 0 is off by
// a few float epsilons times the terms.
Tolerance SumTolerance(DataType t) {
  if (t == DataType::kFloat) return Tolerance{1e-4, 1e-5};
  if (t == DataType::kHalf) return Tolerance{2e-2, 1e-2};
  if (t == DataType::kBFloat16) return Tolerance{2e-1, 2e-2};
  return DefaultTolerance(t);
}

// StridedSliceGrad(shape, begin, end, strides, dy): dy scattered into
// zeros of `shape` where StridedSlice would have read it.
PX_CONFORMANCE_CASES("StridedSliceGrad")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t) && !IsIntegerType(t) && t != DataType::kBool) return cases;
  struct Slice {
    Ints shape, begin, end, strides;
    Shape dy;
    int64_t begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask;
    const char* label;
  };
  const std::vector<Slice> slices = {
      {{4, 6}, {1, 0}, {3, 6}, {1, 2}, {2, 3}, 0, 0, 0, 0, 0, "rows 1:3, every second column"},
      {{5}, {4}, {0}, {-2}, {2}, 0, 0, 0, 0, 0, "negative stride 4:0:-2"},
      {{3, 4}, {1, 0}, {2, 4}, {1, 1}, {4}, 0, 0, 0, 0, 1, "shrink axis 0"},
      {{2, 3, 4}, {0, 1}, {0, 3}, {1, 1}, {2, 3, 2}, 0, 0, 1, 0, 0, "ellipsis then 1:3"},
      {{3, 4}, {0, 0}, {0, 0}, {1, 1}, {3, 4}, 3, 3, 0, 0, 0, "begin and end masks: everything"},
      {{3}, {0, 0}, {0, 3}, {1, 1}, {1, 3}, 0, 0, 0, 1, 0, "new axis"},
      {{4}, {-10}, {10}, {1}, {4}, 0, 0, 0, 0, 0, "out-of-range begin and end clamp"},
      {{3, 4}, {-1, -3}, {-4, -1}, {-1, 1}, {3, 2}, 0, 0, 0, 0, 0, "negative indices"},
      {{3, 4}, {1, 0}, {1, 4}, {1, 1}, {0, 4}, 0, 0, 0, 0, 0, "zero-size slice"},
      {{0, 4}, {0, 0}, {0, 4}, {1, 1}, {0, 4}, 0, 0, 0, 0, 0, "zero-size shape"},
      {{40, 30}, {3, 2}, {37, 29}, {2, 3}, {17, 9}, 0, 0, 0, 0, 0, "larger [40,30] strided"},
  };
  for (DataType index : {DataType::kInt32, DataType::kInt64}) {
    for (const Slice& s : slices) {
      if (index == DataType::kInt64 && s.shape.size() != 2) continue;
      Case c(ctx.op, std::string(s.label) + (index == DataType::kInt64 ? ", int64 indices" : ""));
      c.Input(Vec(index, s.shape))
          .Input(Vec(index, s.begin))
          .Input(Vec(index, s.end))
          .Input(Vec(index, s.strides))
          .Input(RandomTensor(t, s.dy, ctx.rng, Lowest(t), 3))
          .Attr("T", t)
          .Attr("Index", index)
          .Attr("begin_mask", s.begin_mask)
          .Attr("end_mask", s.end_mask)
          .Attr("ellipsis_mask", s.ellipsis_mask)
          .Attr("new_axis_mask", s.new_axis_mask)
          .Attr("shrink_axis_mask", s.shrink_axis_mask);
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

// MirrorPadGrad(input, paddings): the padded gradient folded back onto the
// unpadded shape.
PX_CONFORMANCE_CASES("MirrorPadGrad")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t) && !IsIntegerType(t)) return cases;
  struct Pad {
    Shape padded;
    Ints paddings;
    const char* mode;
    const char* label;
  };
  const std::vector<Pad> pads = {
      {{4, 7}, {1, 1, 2, 2}, "REFLECT", "REFLECT [2,3] padded by 1 and 2"},
      {{4, 7}, {1, 1, 2, 2}, "SYMMETRIC", "SYMMETRIC [2,3] padded by 1 and 2"},
      {{5, 6}, {2, 0, 0, 3}, "SYMMETRIC", "SYMMETRIC, one side only, the whole dimension"},
      {{9}, {3, 2}, "REFLECT", "REFLECT rank 1, the most padding allowed"},
      {{2, 3, 4}, {0, 0, 0, 0, 0, 0}, "REFLECT", "no padding"},
      {{1, 5, 2}, {0, 0, 1, 1, 0, 0}, "REFLECT", "rank 3, middle dimension"},
      {{0, 5}, {0, 0, 1, 1}, "SYMMETRIC", "zero-size"},
  };
  for (const Pad& p : pads) {
    const int64_t rank = static_cast<int64_t>(p.padded.size());
    for (DataType index : {DataType::kInt32, DataType::kInt64}) {
      if (index == DataType::kInt64 && rank != 2) continue;
      cases.push_back(Case(ctx.op, std::string(p.label) + (index == DataType::kInt64 ? ", int64 paddings" : ""))
                          .Input(RandomTensor(t, p.padded, ctx.rng, Lowest(t), 3))
                          .Input(IntTensor(index, {rank, 2}, p.paddings))
                          .Attr("T", t)
                          .Attr("Tpaddings", index)
                          .Attr("mode", p.mode));
    }
  }
  return cases;
}

// ScatterNd(indices, updates, shape): updates summed into zeros of `shape`.
PX_CONFORMANCE_CASES("ScatterNd")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t) && !IsIntegerType(t)) return cases;
  struct Scatter {
    Shape indices_shape;
    Ints indices;
    Shape updates;
    Ints shape;
    const char* label;
  };
  const std::vector<Scatter> scatters = {
      {{4, 1}, {4, 3, 1, 7}, {4}, {8}, "elements of a vector"},
      {{2, 1}, {0, 2}, {2, 4}, {4, 4}, "rows of a matrix"},
      {{3, 2}, {0, 1, 2, 3, 0, 1}, {3}, {3, 4}, "elements of a matrix, one duplicated (summed)"},
      {{2, 2, 1}, {1, 0, 1, 3}, {2, 2, 3}, {4, 3}, "2-D indices, rows, duplicates"},
      {{2, 3}, {0, 1, 2, 1, 0, 0}, {2}, {2, 2, 3}, "full-rank indices of rank 3"},
      {{0, 1}, {}, {0, 3}, {5, 3}, "no indices: zeros"},
      {{2, 1}, {0, 1}, {2, 0}, {3, 0}, "zero-size slices"},
  };
  for (DataType index : {DataType::kInt32, DataType::kInt64}) {
    for (const Scatter& s : scatters) {
      cases.push_back(Case(ctx.op, std::string(s.label) + (index == DataType::kInt64 ? ", int64 indices" : ""))
                          .Input(IntTensor(index, s.indices_shape, s.indices))
                          .Input(RandomTensor(t, s.updates, ctx.rng, Lowest(t), 3))
                          .Input(Vec(index, s.shape))
                          .Attr("T", t)
                          .Attr("Tindices", index));
    }
  }
  for (const auto& [bad, label] : {std::pair<int64_t, const char*>{8, "error: an index past the end"},
                                   std::pair<int64_t, const char*>{-1, "error: a negative index"}}) {
    cases.push_back(Case(ctx.op, label)
                        .Input(IntTensor(DataType::kInt32, {3, 1}, {0, bad, 2}))
                        .Input(RandomTensor(t, {3}, ctx.rng, Lowest(t), 3))
                        .Input(Vec(DataType::kInt32, {8}))
                        .Attr("T", t)
                        .Attr("Tindices", DataType::kInt32)
                        .ExpectError(absl::StatusCode::kInvalidArgument));
  }
  return cases;
}

// UnsortedSegmentSum(data, segment_ids, num_segments): negative ids are
// dropped, an id >= num_segments is an error.
PX_CONFORMANCE_CASES("UnsortedSegmentSum")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t) && !IsIntegerType(t)) return cases;
  struct Segments {
    Shape data;
    Shape ids_shape;
    Ints ids;
    int64_t num;
    const char* label;
  };
  const std::vector<Segments> segments = {
      {{6, 3}, {6}, {0, 2, 0, 3, 2, 2}, 4, "rows, segment 1 empty"},
      {{6}, {6}, {1, -1, 1, 0, -5, 1}, 2, "negative ids dropped"},
      {{2, 3, 2}, {2, 3}, {0, 1, 0, 2, 2, 1}, 3, "2-D ids"},
      {{3}, {3}, {0, 1, 2}, 5, "more segments than ids"},
      {{4, 2}, {4}, {-1, -1, -1, -1}, 0, "no segments, every id dropped"},
      {{0, 3}, {0}, {}, 3, "zero-size data: zeros"},
      {{}, {}, {1}, 2, "rank-0 data and id"},
  };
  for (DataType index : {DataType::kInt32, DataType::kInt64}) {
    for (const Segments& s : segments) {
      cases.push_back(Case(ctx.op, std::string(s.label) + (index == DataType::kInt64 ? ", int64 ids" : ""))
                          .Input(RandomTensor(t, s.data, ctx.rng, Lowest(t), 3))
                          .Input(IntTensor(index, s.ids_shape, s.ids))
                          .Input(IntTensor(index, {}, {s.num}))
                          .Attr("T", t)
                          .Attr("Tindices", index)
                          .Attr("Tnumsegments", index));
    }
  }
  // Large enough for the cpu plugin's parallel paths: over the inner
  // dimension (inner >= 256), and over many segments.
  std::vector<int64_t> rows(200), spread(4000);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int64_t>((i * 3) % 10);
  for (size_t i = 0; i < spread.size(); ++i) spread[i] = static_cast<int64_t>((i * 37) % 101) - 1;
  cases.push_back(Case(ctx.op, "[200,256] into 10 segments, in parallel")
                      .Input(RandomTensor(t, {200, 256}, ctx.rng, Lowest(t), 3))
                      .Input(IntTensor(DataType::kInt32, {200}, rows))
                      .Input(IntTensor(DataType::kInt32, {}, {10}))
                      .Attr("T", t)
                      .Attr("Tindices", DataType::kInt32)
                      .WithTolerance(SumTolerance(t)));
  cases.push_back(Case(ctx.op, "[4000,10] into 100 segments, in parallel")
                      .Input(RandomTensor(t, {4000, 10}, ctx.rng, Lowest(t), 3))
                      .Input(IntTensor(DataType::kInt64, {4000}, spread))
                      .Input(IntTensor(DataType::kInt64, {}, {100}))
                      .Attr("T", t)
                      .Attr("Tindices", DataType::kInt64)
                      .Attr("Tnumsegments", DataType::kInt64)
                      .WithTolerance(SumTolerance(t)));
  // Many ids into few segments: the sums of a vectorized kernel.
  std::vector<int64_t> ids(300);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>((i * 7) % 5) - 1;
  cases.push_back(Case(ctx.op, "300 rows into 4 segments")
                      .Input(RandomTensor(t, {300, 5}, ctx.rng, Lowest(t), 3))
                      .Input(IntTensor(DataType::kInt32, {300}, ids))
                      .Input(IntTensor(DataType::kInt32, {}, {4}))
                      .Attr("T", t)
                      .Attr("Tindices", DataType::kInt32)
                      .WithTolerance(SumTolerance(t)));
  if (IsFloatType(t)) {
    const double inf = std::numeric_limits<double>::infinity();
    cases.push_back(Case(ctx.op, "NaN and inf")
                        .Input(MakeTensor(t, {4}, {std::nan(""), 1, inf, -inf}))
                        .Input(IntTensor(DataType::kInt32, {4}, {0, 0, 1, 1}))
                        .Input(IntTensor(DataType::kInt32, {}, {3}))
                        .Attr("T", t)
                        .Attr("Tindices", DataType::kInt32));
  }
  cases.push_back(Case(ctx.op, "error: an id past num_segments")
                      .Input(RandomTensor(t, {4, 2}, ctx.rng, Lowest(t), 3))
                      .Input(IntTensor(DataType::kInt32, {4}, {0, 1, 3, 1}))
                      .Input(IntTensor(DataType::kInt32, {}, {3}))
                      .Attr("T", t)
                      .Attr("Tindices", DataType::kInt32)
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

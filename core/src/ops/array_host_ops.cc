// Array ops that the core runs on the host: Roll, LinSpace, LowerBound and
// UpperBound (tf.searchsorted), CheckNumerics and CheckNumericsV2,
// DynamicPartition, DynamicStitch and ParallelDynamicStitch, Diag and
// DiagPart. TensorFlow's names, attributes, type lists and shape functions;
// kernels in host_kernels/roll.cc, linspace.cc, search_sorted.cc,
// check_numerics.cc, dynamic_partition.cc and diag.cc.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"
#include "plexus/tensor.h"

namespace plexus {
namespace {

// Input `i` has at most rank `rank` (or at least, with `at_least`).
absl::Status CheckRank(InferenceContext& ctx, int i, int64_t rank, bool at_least, const char* what) {
  const PartialShape& s = ctx.input(i);
  if (!s.rank_known()) return absl::OkStatus();
  if (at_least ? s.rank() < rank : s.rank() > rank) {
    return ctx.Error(absl::StrCat(what, " must have rank ", at_least ? "at least " : "at most ", rank, ", got shape ",
                                  s.ToString()));
  }
  return absl::OkStatus();
}

absl::Status RollShape(InferenceContext& ctx) {
  PX_RETURN_IF_ERROR(CheckRank(ctx, 0, 1, true, "input"));
  PX_RETURN_IF_ERROR(CheckRank(ctx, 1, 1, false, "shift"));
  PX_RETURN_IF_ERROR(CheckRank(ctx, 2, 1, false, "axis"));
  const PartialShape& shift = ctx.input(1);
  const PartialShape& axis = ctx.input(2);
  if (shift.rank() == 1 && axis.rank() == 1 && shift.dim(0) >= 0 && axis.dim(0) >= 0 &&
      shift.dim(0) != axis.dim(0)) {
    return ctx.Error("shift and axis must have the same size");
  }
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("Roll")
                   .Input("input: T")
                   .Input("shift: Tshift")
                   .Input("axis: Taxis")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr("Tshift: {int32, int64}")
                   .Attr("Taxis: {int32, int64}")
                   .SetShapeFn(RollShape));

absl::Status LinSpaceShape(InferenceContext& ctx) {
  const char* names[] = {"start", "stop", "num"};
  for (int i = 0; i < 3; ++i) {
    if (ctx.input(i).rank_known() && ctx.input(i).rank() != 0) {
      return ctx.Error(absl::StrCat(names[i], " must be a scalar, got shape ", ctx.input(i).ToString()));
    }
  }
  std::vector<int64_t> num;
  if (ReadIntValues(ctx.input_value(2), &num) && num.size() == 1) {
    if (num[0] <= 0) return ctx.Error(absl::StrCat("Requires num > 0: ", num[0]));
    ctx.set_output(0, PartialShape(Shape{num[0]}));
  } else {
    ctx.set_output(0, PartialShape(Shape{-1}));
  }
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("LinSpace")
                   .Input("start: T")
                   .Input("stop: T")
                   .Input("num: Tidx")
                   .Output("output: T")
                   .Attr("T: {bfloat16, half, float, double}")
                   .Attr("Tidx: {int32, int64} = DT_INT32")
                   .SetShapeFn(LinSpaceShape));

// LowerBound, UpperBound: matrices of sorted rows and of values; one index
// per value.
absl::Status SearchSortedShape(InferenceContext& ctx) {
  for (int i = 0; i < 2; ++i) {
    const PartialShape& s = ctx.input(i);
    if (s.rank_known() && s.rank() != 2) {
      return ctx.Error(absl::StrCat("Shape must be rank 2 but is rank ", s.rank(), " for `",
                                    i == 0 ? "sorted_inputs" : "values", "` argument"));
    }
  }
  ctx.set_output(0, ctx.input(1));
  return absl::OkStatus();
}

#define PX_BOUND_OP(name)                                       \
  PX_REGISTER_OP(OpDefBuilder(name)                             \
                     .Input("sorted_inputs: T")                 \
                     .Input("values: T")                        \
                     .Output("output: out_type")                \
                     .Attr("T: type")                           \
                     .Attr("out_type: {int32, int64} = DT_INT32") \
                     .SetShapeFn(SearchSortedShape))
PX_BOUND_OP("LowerBound");
PX_BOUND_OP("UpperBound");

// Stateful, as in TensorFlow: the check must run even where its output
// looks unused or constant.
#define PX_CHECK_NUMERICS_OP(name)                              \
  PX_REGISTER_OP(OpDefBuilder(name)                             \
                     .Input("tensor: T")                        \
                     .Output("output: T")                       \
                     .Attr("T: {bfloat16, half, float, double}") \
                     .Attr("message: string")                   \
                     .SetIsStateful()                           \
                     .SetShapeFn(UnchangedShape))
PX_CHECK_NUMERICS_OP("CheckNumerics");
PX_CHECK_NUMERICS_OP("CheckNumericsV2");

// Each output: an unknown number of slices of data's shape past
// partitions' rank.
absl::Status DynamicPartitionShape(InferenceContext& ctx) {
  const PartialShape& data = ctx.input(0);
  const PartialShape& partitions = ctx.input(1);
  PartialShape out = PartialShape::Unknown();
  if (data.rank_known() && partitions.rank_known()) {
    if (partitions.rank() > data.rank()) {
      return ctx.Error(absl::StrCat("data.shape must start with partitions.shape, got data.shape = ",
                                    data.ToString(), ", partitions.shape = ", partitions.ToString()));
    }
    for (int64_t d = 0; d < partitions.rank(); ++d) {
      if (data.dim(d) >= 0 && partitions.dim(d) >= 0 && data.dim(d) != partitions.dim(d)) {
        return ctx.Error(absl::StrCat("data.shape must start with partitions.shape, got data.shape = ",
                                      data.ToString(), ", partitions.shape = ", partitions.ToString()));
      }
    }
    Shape s{-1};
    for (int64_t d = partitions.rank(); d < data.rank(); ++d) s.push_back(data.dim(d));
    out = PartialShape(s);
  }
  for (int i = 0; i < ctx.num_outputs(); ++i) ctx.set_output(i, out);
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("DynamicPartition")
                   .Input("data: T")
                   .Input("partitions: int32")
                   .Output("outputs: num_partitions * T")
                   .Attr("num_partitions: int >= 1")
                   .Attr("T: type")
                   .SetShapeFn(DynamicPartitionShape));

// [max index + 1] followed by the data's shape past its indices' rank.
absl::Status DynamicStitchShape(InferenceContext& ctx) {
  const int n = ctx.num_inputs() / 2;
  PartialShape inner = PartialShape::Unknown();
  for (int i = 0; i < n; ++i) {
    const PartialShape& indices = ctx.input(i);
    const PartialShape& data = ctx.input(n + i);
    if (!indices.rank_known() || !data.rank_known()) continue;
    if (data.rank() < indices.rank()) {
      return ctx.Error(absl::StrCat("data[", i, "].shape = ", data.ToString(), " does not start with indices[", i,
                                    "].shape = ", indices.ToString()));
    }
    Shape s;
    for (int64_t d = indices.rank(); d < data.rank(); ++d) s.push_back(data.dim(d));
    if (!inner.rank_known()) {
      inner = PartialShape(s);
    } else if (inner.rank() != static_cast<int64_t>(s.size())) {
      return ctx.Error(absl::StrCat("data[", i, "].shape = ", data.ToString(),
                                    " does not match the other data inputs past their indices' rank"));
    }
  }
  // The first dimension is known when every index is a known constant.
  int64_t rows = -1;
  int64_t max_index = -1;
  bool all_known = true;
  for (int i = 0; i < n && all_known; ++i) {
    std::vector<int64_t> values;
    if (ReadIntValues(ctx.input_value(i), &values)) {
      for (int64_t v : values) max_index = std::max(max_index, v);
    } else {
      all_known = false;
    }
  }
  if (all_known) rows = max_index + 1;
  if (!inner.rank_known()) {
    ctx.set_output(0, PartialShape::Unknown());
  } else {
    Shape s{rows};
    for (int64_t d : inner.dims()) s.push_back(d);
    ctx.set_output(0, PartialShape(s));
  }
  return absl::OkStatus();
}

#define PX_STITCH_OP(name)                                  \
  PX_REGISTER_OP(OpDefBuilder(name)                         \
                     .Input("indices: N * int32")           \
                     .Input("data: N * T")                  \
                     .Output("merged: T")                   \
                     .Attr("N: int >= 1")                  \
                     .Attr("T: type")                      \
                     .SetShapeFn(DynamicStitchShape))
PX_STITCH_OP("DynamicStitch");
PX_STITCH_OP("ParallelDynamicStitch");

constexpr char kDiagTypes[] = "T: {bfloat16, half, float, double, int32, int64, complex64, complex128}";

PX_REGISTER_OP(OpDefBuilder("Diag")
                   .Input("diagonal: T")
                   .Output("output: T")
                   .Attr(kDiagTypes)
                   .SetShapeFn([](InferenceContext& ctx) {
                     const PartialShape& in = ctx.input(0);
                     if (!in.rank_known()) {
                       ctx.set_output(0, PartialShape::Unknown());
                       return absl::OkStatus();
                     }
                     if (in.rank() < 1) {
                       return ctx.Error(absl::StrCat("Input must be at least rank 1, got ", in.rank()));
                     }
                     Shape s = in.dims();
                     s.insert(s.end(), in.dims().begin(), in.dims().end());
                     ctx.set_output(0, PartialShape(s));
                     return absl::OkStatus();
                   }));

PX_REGISTER_OP(OpDefBuilder("DiagPart")
                   .Input("input: T")
                   .Output("diagonal: T")
                   .Attr(kDiagTypes)
                   .SetShapeFn([](InferenceContext& ctx) {
                     const PartialShape& in = ctx.input(0);
                     if (!in.rank_known()) {
                       ctx.set_output(0, PartialShape::Unknown());
                       return absl::OkStatus();
                     }
                     if (in.rank() % 2 != 0) {
                       return ctx.Error(absl::StrCat("The rank of the tensor should be even and positive, got shape ",
                                                     in.ToString()));
                     }
                     const int64_t half = in.rank() / 2;
                     Shape s;
                     for (int64_t d = 0; d < half; ++d) {
                       const int64_t a = in.dim(d), b = in.dim(d + half);
                       if (a >= 0 && b >= 0 && a != b) {
                         return ctx.Error(absl::StrCat("Invalid shape ", in.ToString(), ": dimensions ", d, " and ",
                                                       d + half, " do not match."));
                       }
                       s.push_back(a >= 0 ? a : b);
                     }
                     ctx.set_output(0, PartialShape(s));
                     return absl::OkStatus();
                   }));

}  // namespace
}  // namespace plexus

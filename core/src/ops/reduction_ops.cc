// Reductions: Sum, Mean, Max, Min, Prod, All, Any, ArgMax, ArgMin.
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

// Input 0 without the dimension named by input 1 (a scalar).
absl::Status ArgReductionShape(InferenceContext& ctx) {
  const PartialShape& input = ctx.input(0);
  const PartialShape& dimension = ctx.input(1);
  if (dimension.rank_known() && dimension.rank() != 0) {
    return ctx.Error(absl::StrCat("dimension must be a scalar, got shape ",
                                  dimension.ToString()));
  }
  std::vector<int64_t> axis;
  if (!input.rank_known()) {
    ctx.set_output(0, PartialShape::Unknown());
    return absl::OkStatus();
  }
  const int64_t rank = input.rank();
  if (!ReadIntValues(ctx.input_value(1), &axis) || axis.size() != 1) {
    ctx.set_output(0, rank > 0 ? PartialShape::UnknownOfRank(rank - 1) : PartialShape::Unknown());
    return absl::OkStatus();
  }
  int64_t a = axis[0];
  if (a < -rank || a >= rank || rank == 0) {
    return ctx.Error(absl::StrCat("Expected dimension in the range [", -rank, ", ", rank,
                                  "), but got ", a));
  }
  if (a < 0) a += rank;
  if (input.dim(a) == 0) {
    return ctx.Error(absl::StrCat("Reduction axis ", a, " is empty in shape ",
                                  input.ToString()));
  }
  Shape out;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != a) out.push_back(input.dim(d));
  }
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

constexpr char kNumberTypes[] =
    "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, "
    "uint32, uint64, int64, complex64, complex128}";

#define PX_REDUCTION_OP(name, types)                                \
  PX_REGISTER_OP(OpDefBuilder(name)                                 \
                     .Input("input: T")                             \
                     .Input("reduction_indices: Tidx")              \
                     .Output("output: T")                           \
                     .Attr("keep_dims: bool = false")               \
                     .Attr(types)                                   \
                     .Attr("Tidx: {int32, int64} = DT_INT32")       \
                     .SetShapeFn(ReductionShape))

PX_REDUCTION_OP("Sum", kNumberTypes);
PX_REDUCTION_OP("Mean", kNumberTypes);
PX_REDUCTION_OP("Prod", kNumberTypes);
PX_REDUCTION_OP("Max", kRealTypes);
PX_REDUCTION_OP("Min", kRealTypes);

PX_REGISTER_OP(OpDefBuilder("All")
                   .Input("input: bool")
                   .Input("reduction_indices: Tidx")
                   .Output("output: bool")
                   .Attr("keep_dims: bool = false")
                   .Attr("Tidx: {int32, int64} = DT_INT32")
                   .SetShapeFn(ReductionShape));

PX_REGISTER_OP(OpDefBuilder("Any")
                   .Input("input: bool")
                   .Input("reduction_indices: Tidx")
                   .Output("output: bool")
                   .Attr("keep_dims: bool = false")
                   .Attr("Tidx: {int32, int64} = DT_INT32")
                   .SetShapeFn(ReductionShape));

#define PX_ARG_REDUCTION_OP(name)                                                        \
  PX_REGISTER_OP(OpDefBuilder(name)                                                      \
                     .Input("input: T")                                                  \
                     .Input("dimension: Tidx")                                           \
                     .Output("output: output_type")                                      \
                     .Attr("T: {bfloat16, half, float, double, uint8, int8, uint16, "   \
                           "int16, int32, uint32, uint64, int64, complex64, "           \
                           "complex128, bool}")                                          \
                     .Attr("Tidx: {int16, int32, int64} = DT_INT32")                     \
                     .Attr("output_type: {int16, uint16, int32, int64} = DT_INT64")      \
                     .SetShapeFn(ArgReductionShape))

PX_ARG_REDUCTION_OP("ArgMax");
PX_ARG_REDUCTION_OP("ArgMin");

}  // namespace
}  // namespace plexus

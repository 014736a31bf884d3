// Cumulative sums and products along one axis: Cumsum and Cumprod, with
// TensorFlow's exclusive and reverse attributes. The axis check is
// array_shapes::ScanAxis, which the kernels use too.
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/array_util.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/sdk/array_shapes.h"
#include "plexus/status.h"

namespace plexus {
namespace {

using array_shapes::Dims;

// The output has the input's shape; the axis is checked when its value and
// the input's rank are known.
absl::Status ScanShape(InferenceContext& ctx) {
  const PartialShape& in = ctx.input(0);
  const PartialShape& axis_shape = ctx.input(1);
  int64_t axis = 0;
  if (in.rank_known() && axis_shape.rank_known()) {
    if (axis_shape.rank() != 0 || array_util::KnownScalarInt(ctx, 1, &axis)) {
      int64_t canonical = 0;
      PX_RETURN_IF_ERROR(array_util::Check(
          ctx, array_shapes::ScanAxis(in.rank(), axis_shape.dim_vector(), axis, &canonical)));
    }
  }
  ctx.set_output(0, in);
  return absl::OkStatus();
}

#define PX_SCAN_OP(name)                                                          \
  PX_REGISTER_OP(OpDefBuilder(name)                                               \
                     .Input("x: T")                                               \
                     .Input("axis: Tidx")                                         \
                     .Output("out: T")                                            \
                     .Attr("exclusive: bool = false")                             \
                     .Attr("reverse: bool = false")                               \
                     .Attr(kNumericTypes)                                         \
                     .Attr(absl::StrCat("Tidx: ", array_util::kIndexTypes32And64)) \
                     .SetShapeFn(ScanShape))

PX_SCAN_OP("Cumsum");
PX_SCAN_OP("Cumprod");

}  // namespace
}  // namespace plexus

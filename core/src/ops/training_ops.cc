// Shape arithmetic ops: those TensorFlow's gradient functions emit
// (BroadcastGradientArgs, _PlexusReducedShape, InvertPermutation) and
// BroadcastArgs (the broadcast shape of two shapes, which Keras layers emit
// for dynamic shapes). Their schemas and shape functions; they are host ops
// (their inputs and outputs are small integer vectors that live in host
// memory), with kernels in host_kernels/training.cc.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/training_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

using training_util::GradientReductionIndices;
using training_util::IntValues;

absl::Status BroadcastGradientArgsShape(InferenceContext& ctx) {
  for (int i = 0; i < 2; ++i) {
    const PartialShape& in = ctx.input(i);
    if (in.rank_known() && in.rank() != 1) {
      return ctx.Error(absl::StrCat("s", i, " must be a vector (rank 1), got rank ", in.rank()));
    }
  }
  const Tensor* v0 = ctx.input_value(0);
  const Tensor* v1 = ctx.input_value(1);
  if (v0 != nullptr && v1 != nullptr && v0->host_readable() && v1->host_readable() &&
      (v0->dtype() == DataType::kInt32 || v0->dtype() == DataType::kInt64) && v0->dtype() == v1->dtype() &&
      v0->dims() == 1 && v1->dims() == 1) {
    std::vector<int64_t> r0, r1;
    if (GradientReductionIndices(IntValues(*v0), IntValues(*v1), &r0, &r1)) {
      ctx.set_output(0, PartialShape(Shape{static_cast<int64_t>(r0.size())}));
      ctx.set_output(1, PartialShape(Shape{static_cast<int64_t>(r1.size())}));
      return absl::OkStatus();
    }
    // Incompatible shapes: the op itself reports them with its own message.
  }
  ctx.set_output(0, PartialShape(Shape{-1}));
  ctx.set_output(1, PartialShape(Shape{-1}));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("BroadcastGradientArgs")
                   .Input("s0: T")
                   .Input("s1: T")
                   .Output("r0: T")
                   .Output("r1: T")
                   .Attr("T: {int32, int64} = int32")
                   .SetShapeFn(BroadcastGradientArgsShape));

// BroadcastArgs(s0, s1): the shape two tensors of shapes s0 and s1 broadcast
// to.
absl::Status BroadcastArgsShape(InferenceContext& ctx) {
  int64_t rank = 0;
  for (int i = 0; i < 2; ++i) {
    const PartialShape& in = ctx.input(i);
    if (in.rank_known() && in.rank() != 1) {
      return ctx.Error(absl::StrCat("s", i, " must be a vector (rank 1), got rank ", in.rank()));
    }
    const int64_t n = in.rank_known() ? in.dims()[0] : -1;
    rank = (n < 0 || rank < 0) ? -1 : std::max(rank, n);
  }
  ctx.set_output(0, PartialShape(Shape{rank}));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("BroadcastArgs")
                   .Input("s0: T")
                   .Input("s1: T")
                   .Output("r0: T")
                   .Attr("T: {int32, int64} = int32")
                   .SetShapeFn(BroadcastArgsShape));

// _PlexusReducedShape(input_shape, axes): input_shape with the reduced axes
// set to 1 (negative axes count from the end), the shape a reduction's
// gradient reshapes its incoming gradient to before broadcasting it back.
// TensorFlow's gradient code builds the same with DynamicStitch.
PX_REGISTER_OP(OpDefBuilder("_PlexusReducedShape")
                   .Input("input_shape: int32")
                   .Input("axes: Tidx")
                   .Output("output_shape: int32")
                   .Attr("Tidx: {int32, int64} = int32")
                   .SetShapeFn([](InferenceContext& ctx) {
                     ctx.set_output(0, ctx.input(0));
                     return absl::OkStatus();
                   }));

// InvertPermutation(x): y[x[i]] = i (the gradient of Transpose uses it).
PX_REGISTER_OP(OpDefBuilder("InvertPermutation")
                   .Input("x: T")
                   .Output("y: T")
                   .Attr("T: {int32, int64} = int32")
                   .SetShapeFn([](InferenceContext& ctx) {
                     const PartialShape& in = ctx.input(0);
                     if (in.rank_known() && in.rank() != 1) {
                       return ctx.Error(absl::StrCat("x must be a vector, got rank ", in.rank()));
                     }
                     ctx.set_output(0, in);
                     return absl::OkStatus();
                   }));

}  // namespace
}  // namespace plexus

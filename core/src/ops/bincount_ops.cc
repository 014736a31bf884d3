// Counting ops: Bincount, DenseBincount (rows of a matrix counted apart)
// and RaggedBincount (rows of a ragged tensor), as Keras's
// CategoryEncoding and TextVectorization use them for multi-hot and count
// outputs. Their schemas and shape functions; host ops, with kernels in
// host_kernels/bincount.cc (their output sizes are input values).
#include "absl/strings/str_cat.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"
#include "plexus/tensor.h"

namespace plexus {
namespace {

// The value of the scalar `size` input, or -1 when unknown.
int64_t SizeValue(const InferenceContext& ctx, int input) {
  const Tensor* size = ctx.input_value(input);
  if (size == nullptr || size->num_elements() != 1) return -1;
  return size->dtype() == DataType::kInt64 ? size->data<int64_t>()[0] : size->data<int32_t>()[0];
}

PX_REGISTER_OP(OpDefBuilder("Bincount")
                   .Input("arr: int32")
                   .Input("size: int32")
                   .Input("weights: T")
                   .Output("bins: T")
                   .Attr("T: {int32, int64, float, double}")
                   .SetShapeFn([](InferenceContext& ctx) {
                     ctx.set_output(0, PartialShape(Shape{SizeValue(ctx, 1)}));
                     return absl::OkStatus();
                   }));

PX_REGISTER_OP(OpDefBuilder("DenseBincount")
                   .Input("input: Tidx")
                   .Input("size: Tidx")
                   .Input("weights: T")
                   .Output("output: T")
                   .Attr("Tidx: {int32, int64}")
                   .Attr("T: {int32, int64, float, double}")
                   .Attr("binary_output: bool = false")
                   .SetShapeFn([](InferenceContext& ctx) {
                     const PartialShape& input = ctx.input(0);
                     if (!input.rank_known()) {
                       ctx.set_output(0, PartialShape::Unknown());
                     } else if (input.rank() <= 1) {
                       ctx.set_output(0, PartialShape(Shape{SizeValue(ctx, 1)}));
                     } else if (input.rank() == 2) {
                       ctx.set_output(0, PartialShape(Shape{input.dim(0), SizeValue(ctx, 1)}));
                     } else {
                       return ctx.Error(absl::StrCat("Shape must be at most rank 2 but is rank ", input.rank()));
                     }
                     return absl::OkStatus();
                   }));

PX_REGISTER_OP(OpDefBuilder("RaggedBincount")
                   .Input("splits: int64")
                   .Input("values: Tidx")
                   .Input("size: Tidx")
                   .Input("weights: T")
                   .Output("output: T")
                   .Attr("Tidx: {int32, int64}")
                   .Attr("T: {int32, int64, float, double}")
                   .Attr("binary_output: bool = false")
                   .SetShapeFn([](InferenceContext& ctx) {
                     const PartialShape& splits = ctx.input(0);
                     const int64_t rows = splits.rank_known() && splits.rank() == 1 && splits.dim(0) > 0
                                              ? splits.dim(0) - 1
                                              : -1;
                     ctx.set_output(0, PartialShape(Shape{rows, SizeValue(ctx, 2)}));
                     return absl::OkStatus();
                   }));

}  // namespace
}  // namespace plexus

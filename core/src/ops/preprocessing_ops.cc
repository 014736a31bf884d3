// Ops of Keras's preprocessing layers that the core runs on the host:
// Bucketize (Discretization) and SparseToDense (HashedCrossing and other
// sparse results made dense). Their schemas and shape functions; kernels in
// host_kernels/preprocessing.cc. Names, arguments, attributes and defaults
// follow TensorFlow's math_ops.cc and sparse_ops.cc.
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "ops/array_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"
#include "plexus/tensor.h"

namespace plexus {
namespace {

// Bucketize(input, boundaries): for each element, the number of boundaries
// that are <= it (its bucket), as int32 of the input's shape.
PX_REGISTER_OP(OpDefBuilder("Bucketize")
                   .Input("input: T")
                   .Output("output: int32")
                   .Attr("T: {int32, int64, float, double}")
                   .Attr("boundaries: list(float)")
                   .SetShapeFn([](InferenceContext& ctx) {
                     ctx.set_output(0, ctx.input(0));
                     return absl::OkStatus();
                   }));

// SparseToDense(sparse_indices, output_shape, sparse_values, default_value):
// a dense tensor of output_shape holding default_value except at the listed
// indices.
absl::Status SparseToDenseShape(InferenceContext& ctx) {
  const PartialShape& shape = ctx.input(1);
  if (shape.rank_known() && shape.rank() > 1) {
    return ctx.Error(absl::StrCat("output_shape must be a vector or scalar, got shape ", shape.ToString()));
  }
  const PartialShape& def = ctx.input(3);
  if (def.rank_known() && def.rank() != 0) {
    return ctx.Error(absl::StrCat("default_value must be a scalar, got shape ", def.ToString()));
  }
  const Tensor* value = ctx.input_value(1);
  if (value != nullptr && value->host_readable() && value->dims() <= 1 &&
      (value->dtype() == DataType::kInt32 || value->dtype() == DataType::kInt64)) {
    PX_ASSIGN_OR_RETURN(PartialShape out, array_util::UnknownOfLength(ctx, value->num_elements(), "output_shape"));
    Shape dims = out.dims();
    for (size_t i = 0; i < dims.size(); ++i) {
      dims[i] = value->dtype() == DataType::kInt32 ? value->data<int32_t>()[i] : value->data<int64_t>()[i];
      if (dims[i] < 0) {
        return ctx.Error(absl::StrCat("output_shape[", i, "] is ", dims[i], "; sizes must be non-negative"));
      }
    }
    ctx.set_output(0, PartialShape(dims));
    return absl::OkStatus();
  }
  if (shape.rank_known() && shape.rank() == 1 && shape.dims()[0] >= 0) {
    PX_ASSIGN_OR_RETURN(PartialShape out, array_util::UnknownOfLength(ctx, shape.dims()[0], "output_shape"));
    ctx.set_output(0, out);
  } else {
    ctx.set_output(0, PartialShape::Unknown());
  }
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("SparseToDense")
                   .Input("sparse_indices: Tindices")
                   .Input("output_shape: Tindices")
                   .Input("sparse_values: T")
                   .Input("default_value: T")
                   .Output("dense: T")
                   .Attr("validate_indices: bool = true")
                   .Attr("T: type")
                   .Attr("Tindices: {int32, int64}")
                   .SetShapeFn(SparseToDenseShape));

}  // namespace
}  // namespace plexus

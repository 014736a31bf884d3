// The tensor-scatter family (TensorFlow's array_ops.cc): TensorScatterUpdate,
// TensorScatterAdd, TensorScatterSub, TensorScatterMax and TensorScatterMin
// take (tensor, indices, updates) and return a copy of tensor with each slice
// that a row of indices names replaced by, or combined with, its slice of
// updates. indices live in host memory, where kernels check them. The shape
// checks are ScatterNd's (plexus/sdk/index_shapes.h), with tensor's shape as
// the shape.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/sdk/index_shapes.h"
#include "plexus/status.h"

namespace plexus {
namespace {

absl::Status TensorScatterShape(InferenceContext& ctx) {
  const PartialShape& tensor = ctx.input(0);
  const PartialShape& indices = ctx.input(1);
  const PartialShape& updates = ctx.input(2);
  if (indices.rank_known() && indices.rank() < 1) {
    return ctx.Error(absl::StrCat("indices must be at least a vector, got shape ", indices.ToString()));
  }
  if (tensor.rank_known() && indices.rank_known() && updates.rank_known()) {
    const std::string error =
        index_shapes::TensorScatter(tensor.dim_vector(), indices.dim_vector(), updates.dim_vector());
    if (!error.empty()) return ctx.Error(error);
  }
  ctx.set_output(0, tensor);
  return absl::OkStatus();
}

// Update replaces; Add and Sub combine with the slice; Max and Min keep the
// larger or smaller value (an update that is NaN changes nothing, a NaN
// already in tensor stays, as TensorFlow's kernels do). TensorFlow allows
// uint16 indices for Update only.
#define PX_TENSOR_SCATTER_OP(name, index_types)                      \
  PX_REGISTER_OP(OpDefBuilder(name)                                  \
                     .Input("tensor: T")                             \
                     .Input("indices: Tindices")                     \
                     .Input("updates: T")                            \
                     .Output("output: T")                            \
                     .Attr("T: type")                                \
                     .Attr("Tindices: " index_types)                 \
                     .Attr("bad_indices_policy: string = \"\"")      \
                     .SetShapeFn(TensorScatterShape))

PX_TENSOR_SCATTER_OP("TensorScatterUpdate", "{int16, int32, int64, uint16}");
PX_TENSOR_SCATTER_OP("TensorScatterAdd", "{int32, int64}");
PX_TENSOR_SCATTER_OP("TensorScatterSub", "{int32, int64}");
PX_TENSOR_SCATTER_OP("TensorScatterMax", "{int32, int64}");
PX_TENSOR_SCATTER_OP("TensorScatterMin", "{int32, int64}");

#undef PX_TENSOR_SCATTER_OP

}  // namespace
}  // namespace plexus

// Feature crossing (tf.sparse.cross, tf.sparse.cross_hashed, Keras's
// HashedCrossing): SparseCross, SparseCrossV2 and SparseCrossHashed. Each
// takes N sparse columns (indices, values, dense shapes) and dense columns
// ([batch, features] matrices) and returns, as a sparse matrix, every
// combination of one feature per column in each row, joined as a string
// or hashed into buckets. Host ops, with kernels in
// host_kernels/sparse_cross.cc.
#include "absl/strings/str_cat.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

absl::Status SparseCrossShape(InferenceContext& ctx) {
  ctx.set_output(0, PartialShape(Shape{-1, 2}));
  ctx.set_output(1, PartialShape(Shape{-1}));
  ctx.set_output(2, PartialShape(Shape{2}));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("SparseCross")
                   .Input("indices: N * int64")
                   .Input("values: sparse_types")
                   .Input("shapes: N * int64")
                   .Input("dense_inputs: dense_types")
                   .Output("output_indices: int64")
                   .Output("output_values: out_type")
                   .Output("output_shape: int64")
                   .Attr("N: int >= 0")
                   .Attr("hashed_output: bool")
                   .Attr("num_buckets: int >= 0")
                   .Attr("hash_key: int")
                   .Attr("sparse_types: list(type) >= 0")  // int64 or string (the kernel checks)
                   .Attr("dense_types: list(type) >= 0")
                   .Attr("out_type: {int64, string}")
                   .Attr("internal_type: {int64, string}")
                   .SetShapeFn(SparseCrossShape));

PX_REGISTER_OP(OpDefBuilder("SparseCrossV2")
                   .Input("indices: N * int64")
                   .Input("values: sparse_types")
                   .Input("shapes: N * int64")
                   .Input("dense_inputs: dense_types")
                   .Input("sep: string")
                   .Output("output_indices: int64")
                   .Output("output_values: string")
                   .Output("output_shape: int64")
                   .Attr("N: int >= 0")
                   .Attr("sparse_types: list(type) >= 0")
                   .Attr("dense_types: list(type) >= 0")
                   .SetShapeFn(SparseCrossShape));

PX_REGISTER_OP(OpDefBuilder("SparseCrossHashed")
                   .Input("indices: N * int64")
                   .Input("values: sparse_types")
                   .Input("shapes: N * int64")
                   .Input("dense_inputs: dense_types")
                   .Input("num_buckets: int64")
                   .Input("strong_hash: bool")
                   .Input("salt: int64")
                   .Output("output_indices: int64")
                   .Output("output_values: int64")
                   .Output("output_shape: int64")
                   .Attr("N: int >= 0")
                   .Attr("sparse_types: list(type) >= 0")
                   .Attr("dense_types: list(type) >= 0")
                   .SetShapeFn(SparseCrossShape));

}  // namespace
}  // namespace plexus

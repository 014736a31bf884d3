// Ragged tensors to dense: RaggedTensorToTensor (the op of
// RaggedTensor.to_tensor), with row partitions as ROW_SPLITS, or as
// FIRST_DIM_SIZE followed by VALUE_ROWIDS. Its schema and shape function;
// a host op, with its kernel in host_kernels/ragged_to_tensor.cc.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"
#include "plexus/tensor.h"

namespace plexus {
namespace {

absl::Status RaggedToTensorShape(InferenceContext& ctx) {
  const tf::AttrValue* types = ctx.node().FindAttr("row_partition_types");
  if (types == nullptr || types->list().s_size() == 0) {
    return ctx.Error("row_partition_types must list at least one partition type");
  }
  const int64_t partitions = types->list().s_size();
  const int64_t ragged_rank = partitions - (types->list().s(0) == "FIRST_DIM_SIZE" ? 1 : 0);
  const PartialShape& values = ctx.input(1);
  if (!values.rank_known()) {
    ctx.set_output(0, PartialShape::Unknown());
    return absl::OkStatus();
  }
  if (values.rank() < 1) return ctx.Error("values must have rank 1 or more");
  const int64_t rank = ragged_rank + values.rank();
  Shape dims(rank, -1);
  for (int64_t d = 1; d < values.rank(); ++d) dims[ragged_rank + d] = values.dim(d);
  if (const Tensor* shape = ctx.input_value(0); shape != nullptr && shape->dims() == 1) {
    if (shape->num_elements() != rank) {
      return ctx.Error(absl::StrCat("shape has ", shape->num_elements(), " dimensions but the ragged tensor has rank ",
                                    rank));
    }
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t v = shape->dtype() == DataType::kInt64 ? shape->data<int64_t>()[d] : shape->data<int32_t>()[d];
      if (v >= 0) dims[d] = v;
    }
  }
  ctx.set_output(0, PartialShape(dims));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("RaggedTensorToTensor")
                   .Input("shape: Tshape")
                   .Input("values: T")
                   .Input("default_value: T")
                   .Input("row_partition_tensors: num_row_partition_tensors * Tindex")
                   .Output("result: T")
                   .Attr("T: type")
                   .Attr("Tindex: {int64, int32}")
                   .Attr("Tshape: {int64, int32}")
                   .Attr("num_row_partition_tensors: int >= 1")
                   .Attr("row_partition_types: list(string)")
                   .SetShapeFn(RaggedToTensorShape));

}  // namespace
}  // namespace plexus

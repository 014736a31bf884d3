// Selection ops: TopKV2 (the k largest entries of each last-axis row) and
// Where (the coordinates of the true elements). Names, arguments, attributes
// and defaults follow TensorFlow's nn_ops.cc and array_ops.cc.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/sdk/index_shapes.h"
#include "plexus/status.h"
#include "plexus/tensor.h"

namespace plexus {
namespace {

// The value of a host scalar of an integer dtype (int16, int32, int64).
bool KnownIntScalar(const InferenceContext& ctx, int i, int64_t* out) {
  const Tensor* t = ctx.input_value(i);
  if (t == nullptr || !t->host_readable() || t->num_elements() != 1) return false;
  switch (t->dtype()) {
    case DataType::kInt16: *out = t->data<int16_t>()[0]; return true;
    case DataType::kInt32: *out = t->data<int32_t>()[0]; return true;
    case DataType::kInt64: *out = t->data<int64_t>()[0]; return true;
    default: return false;
  }
}

// TopKV2(input [..., n], k) -> values, indices [..., k]. k lives in host
// memory; the shape function checks it when its value is known.
absl::Status TopKShape(InferenceContext& ctx) {
  const PartialShape& input = ctx.input(0);
  const PartialShape& k_shape = ctx.input(1);
  if (k_shape.rank_known() && k_shape.rank() != 0) {
    return ctx.Error(absl::StrCat("k must be 0-D, got shape ", k_shape.ToString()));
  }
  int64_t k = -1;
  const bool k_known = KnownIntScalar(ctx, 1, &k);
  if (!input.rank_known()) {
    ctx.set_output(0, PartialShape::Unknown());
    ctx.set_output(1, PartialShape::Unknown());
    if (k_known && k < 0) return ctx.Error(absl::StrCat("Need k >= 0, got ", k));
    return absl::OkStatus();
  }
  std::vector<int64_t> out;
  const std::string error = index_shapes::TopK(input.dim_vector(), k, k_known, &out);
  if (!error.empty()) return ctx.Error(error);
  ctx.set_output(0, PartialShape(out));
  ctx.set_output(1, PartialShape(out));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("TopKV2")
                   .Input("input: T")
                   .Input("k: Tk")
                   .Output("values: T")
                   .Output("indices: index_type")
                   .Attr("sorted: bool = true")
                   .Attr("T: {float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, "
                         "uint32, uint64}")
                   .Attr("Tk: {int16, int32, int64} = DT_INT32")
                   .Attr("index_type: {int16, int32, int64} = DT_INT32")
                   .SetShapeFn(TopKShape));

// Where(input) -> index [num_true, rank]: the number of rows depends on the
// values, so the kernel allocates the output (unless the input is empty).
// TensorFlow's kernel refuses a scalar input; so does the shape function.
absl::Status WhereShape(InferenceContext& ctx) {
  const PartialShape& input = ctx.input(0);
  if (!input.rank_known()) {
    ctx.set_output(0, PartialShape::UnknownOfRank(2));
    return absl::OkStatus();
  }
  if (input.rank() == 0) return ctx.Error("input must be at least 1-D, got a scalar");
  const int64_t size = array_shapes::NumElements(input.dim_vector());
  ctx.set_output(0, PartialShape(Shape{size == 0 ? 0 : -1, input.rank()}));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("Where")
                   .Input("input: T")
                   .Output("index: int64")
                   .Attr("T: {float, double, int32, uint8, int16, int8, complex64, int64, bfloat16, uint16, "
                         "complex128, half, uint32, uint64, bool} = DT_BOOL")
                   .SetShapeFn(WhereShape));

}  // namespace
}  // namespace plexus

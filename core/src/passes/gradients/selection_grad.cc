// Gradients of the selection ops. TopKV2: each row's output gradient goes
// back to the input positions its indices name, by one ScatterNd over the
// flattened input (as TensorFlow's _TopKGrad); k gets none. Where's output
// is coordinates, which have no gradient.
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "passes/gradients/grad_util.h"
#include "plexus/gradients.h"
#include "plexus/status.h"

namespace plexus {
namespace {

using grad::Attrs;
using grad::WithType;

#define PX_G_ASSIGN(lhs, expr) PX_ASSIGN_OR_RETURN(lhs, expr)

// An int64 constant vector.
absl::StatusOr<Endpoint> Int64Vector(GradientContext& g, const std::vector<int64_t>& values) {
  return g.Const(Tensor::FromVector<int64_t>(DataType::kInt64, Shape{static_cast<int64_t>(values.size())}, values));
}

// Element `i` of an int64 vector as a one-element vector.
absl::StatusOr<Endpoint> Element(GradientContext& g, const Endpoint& v, int64_t i) {
  PX_G_ASSIGN(Endpoint begin, g.IntVector({i}));
  PX_G_ASSIGN(Endpoint size, g.IntVector({1}));
  return g.Op("Slice", {v, begin, size});
}

// input [..., n], indices [..., k] viewed as [rows, k]: position
// indices[r, j] + r * n of the flat input gets dy[r, j].
absl::Status TopKV2Grad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  if (!dy[0].has_value()) return absl::OkStatus();  // only the indices are used
  const Endpoint& input = op.inputs[0];
  const PartialShape& shape = g.shape(input);
  if (!shape.rank_known()) {
    return absl::UnimplementedError("the gradient of TopKV2 needs an input of known rank");
  }
  const int64_t last = shape.rank() - 1;
  Endpoint indices = op.outputs[1];
  if (g.dtype(indices) != DataType::kInt64) {
    PX_G_ASSIGN(indices, g.Op("Cast", {indices}, WithType(Attrs(), "DstT", DataType::kInt64)));
  }
  const AttrMap int64_shape = WithType(Attrs(), "out_type", DataType::kInt64);
  PX_G_ASSIGN(Endpoint in_shape, g.Op("Shape", {input}, int64_shape));
  PX_G_ASSIGN(Endpoint out_shape, g.Op("Shape", {indices}, int64_shape));
  PX_G_ASSIGN(Endpoint n, Element(g, in_shape, last));
  PX_G_ASSIGN(Endpoint k, Element(g, out_shape, last));
  PX_G_ASSIGN(Endpoint minus_one, Int64Vector(g, {-1}));
  PX_G_ASSIGN(Endpoint zero, g.Scalar(0, DataType::kInt32));
  PX_G_ASSIGN(Endpoint rows_by_k, g.Op("ConcatV2", {minus_one, k, zero}));
  PX_G_ASSIGN(Endpoint rows_k, g.Op("Reshape", {indices, rows_by_k}));
  // Row offsets r * n as a column [rows, 1].
  PX_G_ASSIGN(Endpoint rows_k_shape, g.Op("Shape", {rows_k}, int64_shape));
  PX_G_ASSIGN(Endpoint rows, Element(g, rows_k_shape, 0));
  PX_G_ASSIGN(Endpoint scalar_shape, g.IntVector({}));
  PX_G_ASSIGN(Endpoint rows_scalar, g.Op("Reshape", {rows, scalar_shape}));
  PX_G_ASSIGN(Endpoint start, g.Scalar(0, DataType::kInt64));
  PX_G_ASSIGN(Endpoint step, g.Scalar(1, DataType::kInt64));
  PX_G_ASSIGN(Endpoint row_ids, g.Op("Range", {start, rows_scalar, step}));
  PX_G_ASSIGN(Endpoint offsets, g.Op("Mul", {row_ids, n}));
  PX_G_ASSIGN(Endpoint column, Int64Vector(g, {-1, 1}));
  PX_G_ASSIGN(Endpoint offsets_column, g.Op("Reshape", {offsets, column}));
  PX_G_ASSIGN(Endpoint flat_positions, g.Op("AddV2", {rows_k, offsets_column}));
  PX_G_ASSIGN(Endpoint positions, g.Op("Reshape", {flat_positions, column}));
  PX_G_ASSIGN(Endpoint flat_dy, g.Op("Reshape", {*dy[0], minus_one}));
  PX_G_ASSIGN(Endpoint total, g.Op("Mul", {rows, n}));
  PX_G_ASSIGN(Endpoint scattered, g.Op("ScatterNd", {positions, flat_dy, total}));
  PX_G_ASSIGN((*dx)[0], g.Op("Reshape", {scattered, in_shape}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("TopKV2", TopKV2Grad);

PX_NO_GRADIENT("Where");

}  // namespace
}  // namespace plexus

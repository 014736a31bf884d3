#include "ops/partial_shapes.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace plexus {

absl::StatusOr<PartialShape> PartialShapeFromTensor(const Tensor& t) {
  if (t.dtype() != DataType::kInt32 && t.dtype() != DataType::kInt64) {
    return absl::InvalidArgumentError(
        absl::StrCat("Expected an int32 or int64 shape tensor; found ", DataTypeName(t.dtype())));
  }
  auto value = [&](int64_t i) {
    return t.dtype() == DataType::kInt32 ? int64_t{t.data<int32_t>()[i]} : t.data<int64_t>()[i];
  };
  if (t.dims() == 0) {
    if (value(0) == -1) return PartialShape::Unknown();
    return absl::InvalidArgumentError(
        "The only valid scalar shape tensor is the fully unknown shape specified as -1.");
  }
  if (t.dims() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("a shape tensor must be a scalar or a vector, got shape ", ShapeToString(t.shape())));
  }
  Shape dims(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    dims[i] = value(i);
    if (dims[i] < -1) return absl::InvalidArgumentError(absl::StrCat("Dimension ", dims[i], " must be >= -1"));
  }
  return PartialShape(std::move(dims));
}

bool CompatibleShapes(const PartialShape& a, const PartialShape& b) {
  if (!a.rank_known() || !b.rank_known()) return true;
  if (a.rank() != b.rank()) return false;
  for (int64_t i = 0; i < a.rank(); ++i) {
    if (a.dim(i) >= 0 && b.dim(i) >= 0 && a.dim(i) != b.dim(i)) return false;
  }
  return true;
}

absl::StatusOr<PartialShape> MergeShapes(const PartialShape& a, const PartialShape& b) {
  if (!CompatibleShapes(a, b)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Incompatible shapes during merge: ", a.ToString(), " vs. ", b.ToString()));
  }
  if (!a.rank_known()) return b;
  if (!b.rank_known()) return a;
  Shape out = a.dims();
  for (int64_t i = 0; i < a.rank(); ++i) {
    if (out[i] < 0) out[i] = b.dim(i);
  }
  return PartialShape(std::move(out));
}

}  // namespace plexus

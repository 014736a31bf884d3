// Partial-shape algebra of TensorFlow's PartialTensorShape that the list
// ops need: shape tensors with unknown entries, compatibility and merging.
#ifndef PLEXUS_CORE_SRC_OPS_PARTIAL_SHAPES_H_
#define PLEXUS_CORE_SRC_OPS_PARTIAL_SHAPES_H_

#include "absl/status/statusor.h"
#include "plexus/shape.h"
#include "plexus/tensor.h"

namespace plexus {

// A shape tensor (TensorShapeFromTensor): an int32 or int64 vector whose
// -1 entries are unknown dimensions, or the scalar -1 for an unknown rank.
absl::StatusOr<PartialShape> PartialShapeFromTensor(const Tensor& t);
// True when some fully known shape matches both (an unknown rank or
// dimension matches anything).
bool CompatibleShapes(const PartialShape& a, const PartialShape& b);
// The most specific shape compatible with both; TensorFlow's error
// ("Incompatible shapes during merge: [4,2] vs. [5,2]") when there is none.
absl::StatusOr<PartialShape> MergeShapes(const PartialShape& a, const PartialShape& b);

}  // namespace plexus

#endif  // PLEXUS_CORE_SRC_OPS_PARTIAL_SHAPES_H_

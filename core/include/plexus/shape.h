// Partially known shapes, for shape functions. A dimension of -1 is unknown;
// an unknown rank has no dimensions at all. At run time every input shape is
// fully known, so the same shape functions give exact output shapes.
#ifndef PLEXUS_SHAPE_H_
#define PLEXUS_SHAPE_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "plexus/dtype.h"

namespace plexus {

// Dimensions kept inline up to rank 6, so tensors of common ranks never
// allocate for their shape.
using Shape = absl::InlinedVector<int64_t, 6>;

// "[2,3]"; "[]" for a scalar.
std::string ShapeToString(const Shape& shape);
// Product of the dimensions; 1 for a scalar. The shape must be valid (see
// CheckedByteSize); use that for shapes from untrusted input.
int64_t NumElements(const Shape& shape);
// Bytes a dense tensor of this dtype and shape needs. Fails, naming the
// shape, for negative dimensions and for sizes that overflow or exceed
// kMaxTensorBytes.
absl::StatusOr<size_t> CheckedByteSize(DataType dtype, const Shape& shape);
inline constexpr size_t kMaxTensorBytes = size_t{1} << 40;

class PartialShape {
 public:
  static PartialShape Unknown() { return PartialShape(); }
  static PartialShape Known(Shape dims) { return PartialShape(std::move(dims)); }
  static PartialShape UnknownOfRank(int64_t rank) {
    return PartialShape(Shape(rank, -1));
  }

  PartialShape() = default;  // unknown rank
  explicit PartialShape(Shape dims) : known_rank_(true), dims_(std::move(dims)) {}
  explicit PartialShape(std::initializer_list<int64_t> dims) : known_rank_(true), dims_(dims) {}
  // Known dimensions from a plain vector (the SDK's shape helpers use one).
  explicit PartialShape(const std::vector<int64_t>& dims)
      : known_rank_(true), dims_(dims.begin(), dims.end()) {}

  bool rank_known() const { return known_rank_; }
  int64_t rank() const { return known_rank_ ? static_cast<int64_t>(dims_.size()) : -1; }
  int64_t dim(int64_t i) const { return dims_[i]; }
  const Shape& dims() const { return dims_; }
  std::vector<int64_t> dim_vector() const { return std::vector<int64_t>(dims_.begin(), dims_.end()); }
  // Rank and every dimension known.
  bool fully_defined() const;
  std::string ToString() const;  // "[2,?]", "<unknown>"

 private:
  bool known_rank_ = false;
  Shape dims_;
};

// NumPy broadcasting of two shapes; an error names both shapes.
absl::StatusOr<PartialShape> BroadcastShapes(const PartialShape& a,
                                             const PartialShape& b);

}  // namespace plexus

#endif  // PLEXUS_SHAPE_H_

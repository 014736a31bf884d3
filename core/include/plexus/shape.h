// Partially known shapes, for shape functions. A dimension of -1 is unknown;
// an unknown rank has no dimensions at all. At run time every input shape is
// fully known, so the same shape functions give exact output shapes.
#ifndef PLEXUS_SHAPE_H_
#define PLEXUS_SHAPE_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "plexus/tensor.h"

namespace plexus {

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

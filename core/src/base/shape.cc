#include "plexus/shape.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace plexus {

std::string ShapeToString(const Shape& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

absl::StatusOr<size_t> CheckedByteSize(DataType dtype, const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid tensor shape ", ShapeToString(shape)));
    }
  }
  size_t bytes;
  if (__builtin_mul_overflow(static_cast<size_t>(n), DataTypeSize(dtype), &bytes) ||
      bytes > kMaxTensorBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a ", DataTypeName(dtype), " tensor of shape ", ShapeToString(shape), " is too large"));
  }
  return bytes;
}

bool PartialShape::fully_defined() const {
  if (!known_rank_) return false;
  return std::all_of(dims_.begin(), dims_.end(), [](int64_t d) { return d >= 0; });
}

std::string PartialShape::ToString() const {
  if (!known_rank_) return "<unknown>";
  std::string out = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i > 0) out += ",";
    out += dims_[i] < 0 ? std::string("?") : absl::StrCat(dims_[i]);
  }
  return out + "]";
}

absl::StatusOr<PartialShape> BroadcastShapes(const PartialShape& a,
                                             const PartialShape& b) {
  if (!a.rank_known() || !b.rank_known()) return PartialShape::Unknown();
  int64_t rank = std::max(a.rank(), b.rank());
  Shape out(rank);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t ia = a.rank() - rank + i;
    int64_t ib = b.rank() - rank + i;
    int64_t da = ia >= 0 ? a.dim(ia) : 1;
    int64_t db = ib >= 0 ? b.dim(ib) : 1;
    if (da == 1) {
      out[i] = db;
    } else if (db == 1) {
      out[i] = da;
    } else if (da < 0 || db < 0) {
      out[i] = da < 0 ? db : da;  // unknown against n: n if compatible
    } else if (da == db) {
      out[i] = da;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "Incompatible shapes: ", a.ToString(), " vs. ", b.ToString()));
    }
  }
  return PartialShape(std::move(out));
}

}  // namespace plexus

// NumPy broadcasting for the reference kernels of binary elementwise ops
// (elementwise.cc, bitwise.cc): the broadcast shape of two operands, and the
// element of an operand that an output element reads.
#ifndef PLEXUS_SDK_REFERENCE_BROADCAST_H_
#define PLEXUS_SDK_REFERENCE_BROADCAST_H_

#include <algorithm>
#include <cstdint>

#include "plexus/sdk/kernel.h"

namespace plexus::reference {

// The broadcast of shapes a and b; INVALID_ARGUMENT when they do not
// broadcast.
inline sdk::Shape BroadcastShape(const sdk::Shape& a, const sdk::Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  sdk::Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    int64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (da == db || db == 1) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else {
      throw sdk::KernelError(PX_CODE_INVALID_ARGUMENT,
                             "Incompatible shapes: " + sdk::ShapeString(a) + " vs. " +
                                 sdk::ShapeString(b));
    }
  }
  return out;
}

// The flat index into `in` (broadcast to `out`) of output element `flat`.
inline int64_t SourceIndex(const sdk::Shape& in, const sdk::Shape& out, int64_t flat) {
  int64_t index = 0, stride = 1;
  for (int64_t d = static_cast<int64_t>(out.size()) - 1; d >= 0; --d) {
    int64_t coord = flat % out[d];
    flat /= out[d];
    int64_t in_d = d - static_cast<int64_t>(out.size() - in.size());
    if (in_d >= 0) {
      if (in[in_d] != 1) index += coord * stride;
      stride *= in[in_d];
    }
  }
  return index;
}

}  // namespace plexus::reference

#endif  // PLEXUS_SDK_REFERENCE_BROADCAST_H_

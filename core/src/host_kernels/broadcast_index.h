// Element positions under NumPy broadcasting, for host kernels that take
// several inputs of broadcastable shapes (string comparison, Substr).
#ifndef PLEXUS_CORE_SRC_HOST_KERNELS_BROADCAST_INDEX_H_
#define PLEXUS_CORE_SRC_HOST_KERNELS_BROADCAST_INDEX_H_

#include <cstdint>
#include <vector>

#include "plexus/shape.h"

namespace plexus {

// For each element of `out`, the index of the element of `in` it reads
// under broadcasting (in's dimensions aligned to the right).
inline std::vector<int64_t> BroadcastIndex(const Shape& in, const Shape& out) {
  const int64_t rank = static_cast<int64_t>(out.size());
  const int64_t offset = rank - static_cast<int64_t>(in.size());
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= offset; --d) {
    const int64_t size = in[d - offset];
    strides[d] = size == 1 ? 0 : stride;
    stride *= size;
  }
  const int64_t n = NumElements(out);
  std::vector<int64_t> index(n, 0);
  std::vector<int64_t> position(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t at = 0;
    for (int64_t d = 0; d < rank; ++d) at += position[d] * strides[d];
    index[i] = at;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++position[d] < out[d]) break;
      position[d] = 0;
    }
  }
  return index;
}

}  // namespace plexus

#endif  // PLEXUS_CORE_SRC_HOST_KERNELS_BROADCAST_INDEX_H_

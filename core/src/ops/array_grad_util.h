// Helpers shared by the shape functions of the array gradient ops
// (ops/array_grad_ops.cc) and their host kernels (host_kernels/array_grad.cc).
#ifndef PLEXUS_CORE_SRC_OPS_ARRAY_GRAD_UTIL_H_
#define PLEXUS_CORE_SRC_OPS_ARRAY_GRAD_UTIL_H_

#include <cstddef>
#include <cstdint>

#include "plexus/sdk/array_shapes.h"
#include "plexus/tensor.h"

namespace plexus {
namespace array_grad_util {

// The values of a host integer tensor, widened to int64; false for other
// dtypes.
inline bool IntegerValues(const Tensor& t, array_shapes::Dims* out) {
  out->resize(static_cast<size_t>(t.num_elements()));
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    switch (t.dtype()) {
      case DataType::kInt32: (*out)[i] = t.data<int32_t>()[i]; break;
      case DataType::kInt64: (*out)[i] = t.data<int64_t>()[i]; break;
      default: return false;
    }
  }
  return true;
}

}  // namespace array_grad_util
}  // namespace plexus

#endif  // PLEXUS_CORE_SRC_OPS_ARRAY_GRAD_UTIL_H_

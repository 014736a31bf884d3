// Helpers shared by the shape arithmetic ops' shape functions
// (ops/training_ops.cc) and the host kernels that read or write integer
// vectors (host_kernels/training.cc, preprocessing.cc, unique.cc): integer
// vectors read from and written to tensors, and TensorFlow's broadcast
// gradient reduction indices.
#ifndef PLEXUS_CORE_SRC_OPS_TRAINING_UTIL_H_
#define PLEXUS_CORE_SRC_OPS_TRAINING_UTIL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "plexus/status.h"
#include "plexus/tensor.h"

namespace plexus {
namespace training_util {

// The values of a host int32/int64 tensor, widened to int64.
inline std::vector<int64_t> IntValues(const Tensor& t) {
  std::vector<int64_t> out(static_cast<size_t>(t.num_elements()));
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = t.dtype() == DataType::kInt32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
  }
  return out;
}

// A host int32 or int64 vector holding `values`.
inline absl::StatusOr<Tensor> IndexVector(DataType dtype, const std::vector<int64_t>& values) {
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(dtype, Shape{static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DataType::kInt32) {
      out.data<int32_t>()[i] = static_cast<int32_t>(values[i]);
    } else {
      out.data<int64_t>()[i] = values[i];
    }
  }
  return out;
}

// TensorFlow's BCast gradient reduction indices for two shapes: for every
// output dimension (after aligning the shapes on the right and padding the
// shorter one with leading 1s), an input whose dimension is 1 while the
// other's is not is summed over that dimension; a dimension where both are
// 1 is listed for both. Identical shapes need no reduction at all. Returns
// false when the shapes do not broadcast.
inline bool GradientReductionIndices(const std::vector<int64_t>& s0, const std::vector<int64_t>& s1,
                              std::vector<int64_t>* r0, std::vector<int64_t>* r1) {
  r0->clear();
  r1->clear();
  if (s0 == s1) return true;
  const size_t rank = std::max(s0.size(), s1.size());
  for (size_t k = 0; k < rank; ++k) {
    // Dimension k of the output, aligned on the right.
    const int64_t d0 = k + s0.size() < rank ? 1 : s0[k + s0.size() - rank];
    const int64_t d1 = k + s1.size() < rank ? 1 : s1[k + s1.size() - rank];
    const int64_t index = static_cast<int64_t>(k);
    if (d0 == 1 && d1 == 1) {
      r0->push_back(index);
      r1->push_back(index);
    } else if (d0 == 1) {
      r0->push_back(index);
    } else if (d1 == 1) {
      r1->push_back(index);
    } else if (d0 != d1) {
      return false;
    }
  }
  return true;
}

}  // namespace training_util
}  // namespace plexus

#endif  // PLEXUS_CORE_SRC_OPS_TRAINING_UTIL_H_

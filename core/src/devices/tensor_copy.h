// A copy of a tensor in the same memory: host memory for a host-readable
// tensor, otherwise a new block of the same device (memcpy_d2d). What a
// variable keeps of a value others may write, and what a pinned value is
// handed out as for writing (Tensor::ShareForWriting). Internal to the core.
#ifndef PLEXUS_CORE_SRC_DEVICES_TENSOR_COPY_H_
#define PLEXUS_CORE_SRC_DEVICES_TENSOR_COPY_H_

#include "absl/status/statusor.h"
#include "plexus/tensor.h"

namespace plexus {

absl::StatusOr<Tensor> CopyInSameMemory(const Tensor& tensor);

}  // namespace plexus

#endif  // PLEXUS_CORE_SRC_DEVICES_TENSOR_COPY_H_

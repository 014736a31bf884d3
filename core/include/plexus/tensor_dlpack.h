// Tensors to and from DLPack (dlpack.h, version 0.6: DLManagedTensor),
// without copies. Shared by the C API and the Python package.
#ifndef PLEXUS_TENSOR_DLPACK_H_
#define PLEXUS_TENSOR_DLPACK_H_

#include "absl/status/statusor.h"
#include "dlpack/dlpack.h"
#include "plexus/runtime.h"
#include "plexus/tensor.h"

namespace plexus {

// A DLManagedTensor sharing `tensor`'s buffer, which its deleter releases.
// Host tensors, and tensors in a device's memory (the DLPack device is the
// plugin's, e.g. kDLCUDA). Refuses strings and resources.
absl::StatusOr<DLManagedTensor*> ExportDLPack(const Tensor& tensor);

// A tensor over the memory of `managed`, taking ownership of it on success
// (the deleter runs when the last tensor sharing the buffer dies); on
// failure `managed` is untouched and still the caller's. Host memory
// (kDLCPU, and the pinned kinds) becomes a host tensor; other memory is
// matched to a device of `runtime` by DLPack device type and id (refused
// when none matches, or without a runtime). Only compact row-major layouts
// are accepted (a dimension of size 1 may have any stride).
absl::StatusOr<Tensor> ImportDLPack(DLManagedTensor* managed, const Runtime* runtime);

// The device of `runtime` whose memory DLPack calls `dl`, or null (host
// memory, no runtime, or no such device loaded).
std::shared_ptr<Device> DeviceForDLPack(DLDevice dl, const Runtime* runtime);

}  // namespace plexus

#endif  // PLEXUS_TENSOR_DLPACK_H_

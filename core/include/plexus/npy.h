// NumPy .npy files (format versions 1.0-3.0, little-endian, C order) for host
// tensors of numeric and bool dtypes.
#ifndef PLEXUS_NPY_H_
#define PLEXUS_NPY_H_

#include <string>

#include "absl/status/statusor.h"
#include "plexus/tensor.h"

namespace plexus {

absl::StatusOr<Tensor> ReadNpy(const std::string& path);
absl::StatusOr<Tensor> ParseNpy(absl::string_view bytes, absl::string_view source);
// `tensor` must be host-readable.
absl::Status WriteNpy(const std::string& path, const Tensor& tensor);

}  // namespace plexus

#endif  // PLEXUS_NPY_H_

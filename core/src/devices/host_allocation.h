// The limits on a host buffer (docs/serving.md): a tensor's most bytes
// (kMaxTensorBytes) and PLEXUS_HOST_ALLOCATION_LIMIT. Buffer::AllocateHost
// checks them; host kernels check them too before they size a buffer of
// their own (the strings of a string tensor, scratch) from an input's value.
#ifndef PLEXUS_CORE_SRC_DEVICES_HOST_ALLOCATION_H_
#define PLEXUS_CORE_SRC_DEVICES_HOST_ALLOCATION_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"

namespace plexus {

// OK when `count` elements of `element_bytes` each may be allocated on the
// host; else RESOURCE_EXHAUSTED naming the limit.
absl::Status CheckHostAllocation(int64_t count, size_t element_bytes);

}  // namespace plexus

#endif  // PLEXUS_CORE_SRC_DEVICES_HOST_ALLOCATION_H_

// The grouping of a Conv2D's channels (Keras' Conv2D(groups=g), exported as
// a Conv2D whose filter's input depth is the input's divided by g), checked
// the way TensorFlow does. Shared by the cpu and reference plugins so both
// accept and refuse the same nodes with the same messages.
#ifndef PLEXUS_SDK_CONV_GROUPING_H_
#define PLEXUS_SDK_CONV_GROUPING_H_

#include <cstdint>

#include "plexus/sdk/kernel.h"

namespace plexus::sdk {

// The number of groups of a Conv2D (or its gradients) whose input has in_c
// channels and whose filter is [kh, kw, filter_in, filter_out]: in_c /
// filter_in, 1 for an ordinary convolution. A grouped convolution (Keras'
// Conv2D(groups=...)) feeds output channels [k * filter_out / groups,
// (k + 1) * filter_out / groups) from input channels [k * filter_in,
// (k + 1) * filter_in) only. Refused as TensorFlow refuses them: an input
// depth that is not a multiple of the filter's, an output depth that is not
// a multiple of the groups.
inline int64_t ConvGroups(const char* op, int64_t in_c, int64_t filter_in, int64_t filter_out) {
  PX_SDK_CHECK(filter_in > 0 ? in_c % filter_in == 0 : in_c == 0,
               "%s input depth %lld must be a multiple of the filter input depth %lld", op,
               static_cast<long long>(in_c), static_cast<long long>(filter_in));
  const int64_t groups = filter_in > 0 ? in_c / filter_in : 1;
  PX_SDK_CHECK(groups > 0 && filter_out % groups == 0,
               "%s output depth %lld must be a multiple of the number of groups %lld (input "
               "depth %lld / filter input depth %lld)",
               op, static_cast<long long>(filter_out), static_cast<long long>(groups),
               static_cast<long long>(in_c), static_cast<long long>(filter_in));
  return groups;
}

}  // namespace plexus::sdk

#endif  // PLEXUS_SDK_CONV_GROUPING_H_

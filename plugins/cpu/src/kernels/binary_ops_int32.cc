// Add/Sub/Mul for int32_t, in a TU of its own to keep Eigen compile times short.
#include "kernels/binary_ops_impl.h"

namespace plexus::cpu {
PX_CPU_DECLARE_BINARY(int32_t, );
}  // namespace plexus::cpu

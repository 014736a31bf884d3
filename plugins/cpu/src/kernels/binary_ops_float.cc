// Add/Sub/Mul for float, in a TU of its own to keep Eigen compile times short.
#include "kernels/binary_ops_impl.h"

namespace plexus::cpu {
PX_CPU_DECLARE_BINARY(float, );
}  // namespace plexus::cpu

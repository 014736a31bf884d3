// MatMul for float, in a TU of its own to keep Eigen compile times short.
#include "kernels/matmul_impl.h"

namespace plexus::cpu {
PX_CPU_DECLARE_MATMUL(float, );
}  // namespace plexus::cpu

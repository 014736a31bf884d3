// The elementwise kernels' launch functions: plain C++ between the kernel
// classes (elementwise.cc, host compiler) and the device code (unary.cu,
// binary.cu, nvcc). Nothing here needs the SDK or the GPU headers beyond the
// runtime's stream type.
#ifndef PLEXUS_PLUGINS_CUDA_KERNELS_ELEMENTWISE_LAUNCH_H_
#define PLEXUS_PLUGINS_CUDA_KERNELS_ELEMENTWISE_LAUNCH_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace plexus::cuda::ew {

enum class Dtype : int { kFloat, kDouble, kHalf, kBFloat16 };

enum class Unary : int {
  kNeg, kAbs, kExp, kLog, kSqrt, kRsqrt, kSquare, kRelu, kRelu6, kSigmoid, kTanh,
};

enum class Binary : int { kAdd, kSub, kMul, kDiv, kMax, kMin, kSquaredDifference };

// y[i] = op(x[i]) for i < n (n > 0). Launch errors are left for
// cudaGetLastError.
void LaunchUnary(Unary op, Dtype dtype, const void* x, void* y, int64_t n, cudaStream_t stream);

// The most dimensions a broadcast keeps after collapsing (elementwise.cc
// refuses more).
constexpr int kMaxBroadcastRank = 8;

// A broadcast of two inputs to the output, collapsed to the fewest
// dimensions: out has dims[0..rank) (row-major, `num_elements` in all) and
// input k reads element sum(coord[d] * strides[k][d]); a stride of 0 repeats
// the input along that dimension. rank 1 with strides 1 and 1 is the
// same-shape case, 1 and 0 (or 0 and 1) a scalar operand.
struct BroadcastPlan {
  int rank = 0;
  int64_t num_elements = 0;
  int64_t dims[kMaxBroadcastRank] = {};
  int64_t strides[2][kMaxBroadcastRank] = {};
};

// out = op(a, b) over `plan` (num_elements > 0).
void LaunchBinary(Binary op, Dtype dtype, const void* a, const void* b, void* out,
                  const BroadcastPlan& plan, cudaStream_t stream);

}  // namespace plexus::cuda::ew

#endif  // PLEXUS_PLUGINS_CUDA_KERNELS_ELEMENTWISE_LAUNCH_H_

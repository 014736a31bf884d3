// The elementwise kernels' launch functions: plain C++ between the kernel
// classes (elementwise.cc, host compiler) and the device code (unary.cu,
// unary_int.cu, binary.cu, binary_int.cu, compare.cu, select.cu; nvcc).
// Nothing here needs the SDK or the GPU headers beyond the runtime's stream
// type.
#ifndef PLEXUS_PLUGINS_GPU_KERNELS_ELEMENTWISE_LAUNCH_H_
#define PLEXUS_PLUGINS_GPU_KERNELS_ELEMENTWISE_LAUNCH_H_

#include "gpu_runtime.h"

#include <cstdint>

namespace plexus::cuda::ew {

// The floating-point dtypes, shared with the other families (reduce, pool,
// matmul).
enum class Dtype : int { kFloat, kDouble, kHalf, kBFloat16 };

// Every dtype of the elementwise family (bool is stored as one byte, 0 or 1).
enum class Type : int {
  kFloat, kDouble, kHalf, kBFloat16, kInt8, kInt16, kInt32, kInt64, kUInt8, kBool,
};

inline bool IsFloatType(Type t) { return static_cast<int>(t) <= static_cast<int>(Type::kBFloat16); }

// Unary ops and activations. The integer types have Neg, Abs, Sign, Square,
// Reciprocal, Round, Relu and Relu6 (the kernel classes check the dtypes);
// bool has only LogicalNot.
enum class Unary : int {
  kNeg, kAbs, kExp, kLog, kSqrt, kRsqrt, kSquare, kRelu, kRelu6, kSigmoid, kTanh,
  kSign, kLog1p, kReciprocal, kErf, kFloor, kCeil, kRound,
  kElu, kSelu, kLeakyRelu, kSoftplus, kGelu,
  kLogicalNot,
};

// Attributes of the activations: LeakyRelu's alpha, Gelu's approximate.
struct UnaryAttrs {
  float alpha = 0.2f;
  bool approximate = true;
};

// Binary ops. Arithmetic writes the input type; comparisons and the logical
// ops write bool.
enum class Binary : int {
  kAdd, kSub, kMul, kDiv, kMax, kMin, kSquaredDifference, kFloorDiv, kFloorMod, kPow,
  kDivNoNan, kMulNoNan,  // floating types only
  kLess, kLessEqual, kGreater, kGreaterEqual, kEqual, kNotEqual, kLogicalAnd, kLogicalOr,
};

inline bool IsComparison(Binary op) { return static_cast<int>(op) >= static_cast<int>(Binary::kLess); }

// y[i] = op(x[i]) for i < n (n > 0). Launch errors are left for
// cudaGetLastError.
void LaunchUnary(Unary op, Type type, const void* x, void* y, int64_t n, const UnaryAttrs& attrs,
                 px_gpu::Stream stream);

// The most dimensions a broadcast keeps after collapsing (elementwise.cc
// refuses more).
constexpr int kMaxBroadcastRank = 8;

// A broadcast of N inputs to the output, collapsed to the fewest
// dimensions: out has dims[0..rank) (row-major, `num_elements` in all) and
// input k reads element sum(coord[d] * strides[k][d]); a stride of 0 repeats
// the input along that dimension. rank 1 with strides 1 and 1 is the
// same-shape case, 1 and 0 (or 0 and 1) a scalar operand.
template <int N>
struct PlanN {
  int rank = 0;
  int64_t num_elements = 0;
  int64_t dims[kMaxBroadcastRank] = {};
  int64_t strides[N][kMaxBroadcastRank] = {};
};
using BroadcastPlan = PlanN<2>;
using SelectPlan = PlanN<3>;

// out = op(a, b) over `plan` (num_elements > 0). The (op, type) pair is one
// the kernel classes register.
void LaunchBinary(Binary op, Type type, const void* a, const void* b, void* out,
                  const BroadcastPlan& plan, px_gpu::Stream stream);

// out = cond ? t : e over `plan` (inputs cond, t, e; num_elements > 0), the
// values moved as words of `word_size` bytes (1, 2, 4 or 8).
void LaunchSelect(int word_size, const void* cond, const void* t, const void* e, void* out,
                  const SelectPlan& plan, px_gpu::Stream stream);

// Integer argument checks before a division or power: sets *flag to 1 when
// any of the n values of integer type `type` is zero (negative = false) or
// negative (negative = true). *flag is device memory, set to 0 before.
void LaunchFindBadInteger(Type type, const void* x, int64_t n, bool negative, unsigned* flag,
                          px_gpu::Stream stream);

}  // namespace plexus::cuda::ew

#endif  // PLEXUS_PLUGINS_GPU_KERNELS_ELEMENTWISE_LAUNCH_H_

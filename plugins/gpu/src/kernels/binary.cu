// Binary elementwise arithmetic on the floating-point types with NumPy
// broadcasting, over the collapsed plan elementwise.cc builds
// (BroadcastPlan). Per op and dtype the kernels of elementwise_device.h:
// - flat: the same-shape and scalar-operand cases (one dimension), with
//   128-bit loads and stores when the pointers allow;
// - broadcast: any plan, the coordinates recovered per element, in 32-bit
//   index arithmetic when the output has fewer than 2^31 elements.
// 16-bit types compute in float. Integers are in binary_int.cu, comparisons
// and the logical ops in compare.cu.
#include <cstdint>

#include "gpu_portability.h"
#include "kernels/elementwise_device.h"
#include "kernels/elementwise_launch.h"
#include "kernels/launch_util.h"

namespace plexus::cuda {
namespace {

using ew::Binary;

// The cpu plugin's semantics. Maximum and Minimum return NaN when either
// operand is NaN (TensorFlow's); DivNoNan and MulNoNan give 0 where b is 0,
// whatever a is.
template <Binary kOp, typename C>
__device__ __forceinline__ C ApplyBinary(C a, C b) {
  if constexpr (kOp == Binary::kAdd) {
    return a + b;
  } else if constexpr (kOp == Binary::kSub) {
    return a - b;
  } else if constexpr (kOp == Binary::kMul) {
    return a * b;
  } else if constexpr (kOp == Binary::kDiv) {
    return a / b;
  } else if constexpr (kOp == Binary::kMax) {
    return px_gpu::IsNan(a) ? a : (px_gpu::IsNan(b) ? b : (a > b ? a : b));
  } else if constexpr (kOp == Binary::kMin) {
    return px_gpu::IsNan(a) ? a : (px_gpu::IsNan(b) ? b : (a < b ? a : b));
  } else if constexpr (kOp == Binary::kSquaredDifference) {
    const C d = a - b;
    return d * d;
  } else if constexpr (kOp == Binary::kFloorDiv) {
    return Floor(a / b);
  } else if constexpr (kOp == Binary::kFloorMod) {
    // The remainder takes the divisor's sign (Python's and TensorFlow's).
    const C r = Fmod(a, b);
    return r != C(0) && ((r < C(0)) != (b < C(0))) ? r + b : r;
  } else if constexpr (kOp == Binary::kDivNoNan) {
    return b == C(0) ? C(0) : a / b;
  } else if constexpr (kOp == Binary::kMulNoNan) {
    return b == C(0) ? C(0) : a * b;
  } else {
    static_assert(kOp == Binary::kPow, "unhandled binary op");
    return Pow(a, b);
  }
}

template <Binary kOp, typename T>
struct BinaryFn {
  __device__ __forceinline__ T operator()(T a, T b) const {
    return FromC<T>(ApplyBinary<kOp>(ToC(a), ToC(b)));
  }
};

template <typename T>
void LaunchTyped(Binary op, const void* a, const void* b, void* out,
                 const ew::BroadcastPlan& plan, px_gpu::Stream stream) {
  switch (op) {
#define PX_BINARY_CASE(name) \
  case Binary::name: LaunchPlan2<T, T>(a, b, out, plan, BinaryFn<Binary::name, T>{}, stream); return;
    PX_BINARY_CASE(kAdd)
    PX_BINARY_CASE(kSub)
    PX_BINARY_CASE(kMul)
    PX_BINARY_CASE(kDiv)
    PX_BINARY_CASE(kMax)
    PX_BINARY_CASE(kMin)
    PX_BINARY_CASE(kSquaredDifference)
    PX_BINARY_CASE(kFloorDiv)
    PX_BINARY_CASE(kFloorMod)
    PX_BINARY_CASE(kPow)
    PX_BINARY_CASE(kDivNoNan)
    PX_BINARY_CASE(kMulNoNan)
#undef PX_BINARY_CASE
    default: return;  // comparisons: compare.cu
  }
}

}  // namespace

// Defined in binary_int.cu (integer arithmetic) and compare.cu (comparisons
// and the logical ops, every type).
void LaunchBinaryInt(Binary op, ew::Type type, const void* a, const void* b, void* out,
                     const ew::BroadcastPlan& plan, px_gpu::Stream stream);
void LaunchCompare(Binary op, ew::Type type, const void* a, const void* b, void* out,
                   const ew::BroadcastPlan& plan, px_gpu::Stream stream);

void ew::LaunchBinary(Binary op, Type type, const void* a, const void* b, void* out,
                      const BroadcastPlan& plan, px_gpu::Stream stream) {
  if (IsComparison(op)) {
    LaunchCompare(op, type, a, b, out, plan, stream);
  } else if (!IsFloatType(type)) {
    LaunchBinaryInt(op, type, a, b, out, plan, stream);
  } else {
    VisitFloatType(type, [&](auto tag) { LaunchTyped<decltype(tag)>(op, a, b, out, plan, stream); });
  }
}

}  // namespace plexus::cuda

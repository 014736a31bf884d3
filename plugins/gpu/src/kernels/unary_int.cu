// Unary elementwise kernels on the integer types (Neg, Abs, Sign, Square,
// Reciprocal, Round, Relu, Relu6: the cpu plugin's wrapping semantics) and
// bool (LogicalNot), plus the integer argument check that Div, FloorDiv,
// FloorMod, Reciprocal and Pow run before they launch. One kernel per dtype:
// the op is a runtime argument (a uniform branch), which keeps the
// instantiations few.
#include <cstdint>
#include <type_traits>

#include "gpu_portability.h"
#include "kernels/elementwise_device.h"
#include "kernels/elementwise_launch.h"
#include "kernels/launch_util.h"

namespace plexus::cuda {
namespace {

using ew::Unary;

template <typename T>
struct IntUnaryFn {
  Unary op;
  __device__ __forceinline__ T operator()(T x) const {
    switch (op) {
      case Unary::kNeg: return WrapSub(T(0), x);
      case Unary::kAbs: return IsNeg(x) ? WrapSub(T(0), x) : x;
      case Unary::kSign: return static_cast<T>((x > T(0)) - (IsNeg(x) ? 1 : 0));
      case Unary::kSquare: return WrapMul(x, x);
      case Unary::kReciprocal: return IntDiv(T(1), x);
      case Unary::kRelu: return IsNeg(x) ? T(0) : x;
      case Unary::kRelu6: return IsNeg(x) ? T(0) : (x < T(6) ? x : T(6));
      default: return x;  // Round: the identity
    }
  }
};

struct LogicalNotFn {
  __device__ __forceinline__ uint8_t operator()(uint8_t x) const { return x == 0 ? 1 : 0; }
};

template <typename T>
__global__ void FindBadKernel(const T* __restrict__ x, int64_t n, bool negative,
                              unsigned* __restrict__ flag) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  bool bad = false;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    bad |= negative ? IsNeg(x[i]) : x[i] == T(0);
  }
  // Every writer stores the same value: no atomic needed.
  if (bad) *flag = 1u;
}

}  // namespace

void LaunchUnaryInt(Unary op, ew::Type type, const void* x, void* y, int64_t n,
                    px_gpu::Stream stream) {
  if (type == ew::Type::kBool) {
    if (op == Unary::kLogicalNot) LaunchMap<uint8_t, uint8_t>(x, y, n, LogicalNotFn{}, stream);
    return;
  }
  VisitIntType(type, [&](auto tag) {
    using T = decltype(tag);
    LaunchMap<T, T>(x, y, n, IntUnaryFn<T>{op}, stream);
  });
}

void ew::LaunchFindBadInteger(Type type, const void* x, int64_t n, bool negative, unsigned* flag,
                              px_gpu::Stream stream) {
  VisitIntType(type, [&](auto tag) {
    using T = decltype(tag);
    PX_GPU_LAUNCH((FindBadKernel<T>), GridFor(n), kBlockSize, 0, stream)(
        static_cast<const T*>(x), n, negative, flag);
  });
}

}  // namespace plexus::cuda

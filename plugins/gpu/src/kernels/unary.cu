// Unary elementwise kernels and activations on the floating-point types:
// y = op(x) over n contiguous elements, with 128-bit loads and stores when
// both pointers allow, in a grid-stride loop (elementwise_device.h). 16-bit
// types compute in float. The integer ops are in unary_int.cu.
#include <cstdint>

#include "gpu_portability.h"
#include "kernels/elementwise_device.h"
#include "kernels/elementwise_launch.h"
#include "kernels/launch_util.h"

namespace plexus::cuda {
namespace {

using ew::Unary;

// The cpu plugin's semantics; NaN passes through every op (comparisons with
// NaN are false).
template <Unary kOp, typename C>
__device__ __forceinline__ C ApplyUnary(C x, float alpha, bool approximate) {
  if constexpr (kOp == Unary::kNeg) {
    return -x;
  } else if constexpr (kOp == Unary::kAbs) {
    return px_gpu::Abs(x);
  } else if constexpr (kOp == Unary::kExp) {
    return px_gpu::Exp(x);
  } else if constexpr (kOp == Unary::kLog) {
    return px_gpu::Log(x);
  } else if constexpr (kOp == Unary::kSqrt) {
    return px_gpu::Sqrt(x);
  } else if constexpr (kOp == Unary::kRsqrt) {
    return px_gpu::Rsqrt(x);
  } else if constexpr (kOp == Unary::kSquare) {
    return x * x;
  } else if constexpr (kOp == Unary::kRelu) {
    return x < C(0) ? C(0) : x;
  } else if constexpr (kOp == Unary::kRelu6) {
    return x < C(0) ? C(0) : (x > C(6) ? C(6) : x);
  } else if constexpr (kOp == Unary::kSigmoid) {
    return C(1) / (C(1) + px_gpu::Exp(-x));
  } else if constexpr (kOp == Unary::kTanh) {
    return px_gpu::Tanh(x);
  } else if constexpr (kOp == Unary::kSign) {
    return px_gpu::IsNan(x) ? x : C((x > C(0)) - (x < C(0)));
  } else if constexpr (kOp == Unary::kLog1p) {
    return Log1p(x);
  } else if constexpr (kOp == Unary::kReciprocal) {
    return C(1) / x;
  } else if constexpr (kOp == Unary::kErf) {
    return Erf(x);
  } else if constexpr (kOp == Unary::kFloor) {
    return Floor(x);
  } else if constexpr (kOp == Unary::kCeil) {
    return Ceil(x);
  } else if constexpr (kOp == Unary::kRound) {
    return Rint(x);  // ties to even
  } else if constexpr (kOp == Unary::kElu) {
    return x < C(0) ? Expm1(x) : x;
  } else if constexpr (kOp == Unary::kSelu) {
    const C scale = C(1.0507009873554804934193349852946);
    const C scale_alpha = C(1.0507009873554804934193349852946 * 1.6732632423543772848170429916717);
    return x < C(0) ? scale_alpha * Expm1(x) : scale * x;
  } else if constexpr (kOp == Unary::kLeakyRelu) {
    return x < C(0) ? static_cast<C>(alpha) * x : x;
  } else if constexpr (kOp == Unary::kSoftplus) {
    // log(1 + e^x) = max(x, 0) + log1p(e^-|x|), which cannot overflow.
    return (x > C(0) ? x : C(0)) + Log1p(px_gpu::Exp(-px_gpu::Abs(x)));
  } else {
    static_assert(kOp == Unary::kGelu, "unhandled unary op");
    if (approximate) {
      const C k = C(0.7978845608028654);  // sqrt(2 / pi)
      return C(0.5) * x * (C(1) + px_gpu::Tanh(k * (x + C(0.044715) * (x * x * x))));
    }
    return C(0.5) * x * (C(1) + Erf(x * C(0.7071067811865476)));
  }
}

template <Unary kOp, typename T>
struct UnaryFn {
  float alpha;
  bool approximate;
  __device__ __forceinline__ T operator()(T x) const {
    return FromC<T>(ApplyUnary<kOp>(ToC(x), alpha, approximate));
  }
};

template <typename T>
void LaunchTyped(Unary op, const void* x, void* y, int64_t n, const ew::UnaryAttrs& attrs,
                 px_gpu::Stream stream) {
  switch (op) {
#define PX_UNARY_CASE(name)                                                                  \
  case Unary::name:                                                                          \
    LaunchMap<T, T>(x, y, n, UnaryFn<Unary::name, T>{attrs.alpha, attrs.approximate}, stream); \
    return;
    PX_UNARY_CASE(kNeg)
    PX_UNARY_CASE(kAbs)
    PX_UNARY_CASE(kExp)
    PX_UNARY_CASE(kLog)
    PX_UNARY_CASE(kSqrt)
    PX_UNARY_CASE(kRsqrt)
    PX_UNARY_CASE(kSquare)
    PX_UNARY_CASE(kRelu)
    PX_UNARY_CASE(kRelu6)
    PX_UNARY_CASE(kSigmoid)
    PX_UNARY_CASE(kTanh)
    PX_UNARY_CASE(kSign)
    PX_UNARY_CASE(kLog1p)
    PX_UNARY_CASE(kReciprocal)
    PX_UNARY_CASE(kErf)
    PX_UNARY_CASE(kFloor)
    PX_UNARY_CASE(kCeil)
    PX_UNARY_CASE(kRound)
    PX_UNARY_CASE(kElu)
    PX_UNARY_CASE(kSelu)
    PX_UNARY_CASE(kLeakyRelu)
    PX_UNARY_CASE(kSoftplus)
    PX_UNARY_CASE(kGelu)
#undef PX_UNARY_CASE
    case Unary::kLogicalNot: return;  // bool only (unary_int.cu)
  }
}

}  // namespace

// Defined in unary_int.cu: the integer and bool unary ops.
void LaunchUnaryInt(Unary op, ew::Type type, const void* x, void* y, int64_t n,
                    px_gpu::Stream stream);

void ew::LaunchUnary(Unary op, Type type, const void* x, void* y, int64_t n,
                     const UnaryAttrs& attrs, px_gpu::Stream stream) {
  if (!IsFloatType(type)) {
    LaunchUnaryInt(op, type, x, y, n, stream);
    return;
  }
  VisitFloatType(type, [&](auto tag) { LaunchTyped<decltype(tag)>(op, x, y, n, attrs, stream); });
}

}  // namespace plexus::cuda

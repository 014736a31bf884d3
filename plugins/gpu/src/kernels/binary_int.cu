// Binary elementwise arithmetic on the integer types with NumPy
// broadcasting (the kernels of elementwise_device.h), with the cpu plugin's
// semantics: two's-complement wrapping, truncating Div, FloorDiv and
// FloorMod rounding toward negative infinity (the remainder takes the
// divisor's sign), min / -1 wrapping to min, Pow by repeated squaring. Zero
// divisors and negative exponents are refused by elementwise.cc before the
// launch. One kernel set per dtype: the op is a runtime argument (a uniform
// branch), which keeps the instantiations few.
#include <cstdint>

#include "gpu_portability.h"
#include "kernels/elementwise_device.h"
#include "kernels/elementwise_launch.h"
#include "kernels/launch_util.h"

namespace plexus::cuda {
namespace {

using ew::Binary;

template <typename T>
struct IntBinaryFn {
  Binary op;
  __device__ __forceinline__ T operator()(T x, T y) const {
    switch (op) {
      case Binary::kAdd: return WrapAdd(x, y);
      case Binary::kSub: return WrapSub(x, y);
      case Binary::kMul: return WrapMul(x, y);
      case Binary::kDiv: return IntDiv(x, y);
      case Binary::kFloorDiv: {
        const T q = IntDiv(x, y);
        return IntMod(x, y) != T(0) && (IsNeg(x) != IsNeg(y)) ? WrapSub(q, T(1)) : q;
      }
      case Binary::kFloorMod: {
        const T r = IntMod(x, y);
        return r != T(0) && (IsNeg(r) != IsNeg(y)) ? WrapAdd(r, y) : r;
      }
      case Binary::kMax: return x > y ? x : y;
      case Binary::kMin: return x < y ? x : y;
      case Binary::kPow: {
        T result = 1, base = x;
        for (T e = y; e > T(0); e = static_cast<T>(e >> 1)) {
          if (e & 1) result = WrapMul(result, base);
          base = WrapMul(base, base);
        }
        return result;
      }
      case Binary::kSquaredDifference: {
        const T d = WrapSub(x, y);
        return WrapMul(d, d);
      }
      default: return T(0);  // comparisons: compare.cu
    }
  }
};

}  // namespace

void LaunchBinaryInt(Binary op, ew::Type type, const void* a, const void* b, void* out,
                     const ew::BroadcastPlan& plan, px_gpu::Stream stream) {
  VisitIntType(type, [&](auto tag) {
    using T = decltype(tag);
    LaunchPlan2<T, T>(a, b, out, plan, IntBinaryFn<T>{op}, stream);
  });
}

}  // namespace plexus::cuda

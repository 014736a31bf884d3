// Comparisons (Less, LessEqual, Greater, GreaterEqual, Equal, NotEqual) on
// every type and the logical ops (LogicalAnd, LogicalOr) on bool, with NumPy
// broadcasting (the kernels of elementwise_device.h); the output is bool
// (one byte, 0 or 1). 16-bit floats compare in float; NaN compares unequal
// to everything. One kernel set per dtype: the op is a runtime argument (a
// uniform branch), which keeps the instantiations few.
#include <cstdint>

#include "gpu_portability.h"
#include "kernels/elementwise_device.h"
#include "kernels/elementwise_launch.h"
#include "kernels/launch_util.h"

namespace plexus::cuda {
namespace {

using ew::Binary;

template <typename T>
struct CompareFn {
  Binary op;
  __device__ __forceinline__ uint8_t operator()(T a, T b) const {
    const Compute<T> x = ToC(a), y = ToC(b);
    switch (op) {
      case Binary::kLess: return x < y;
      case Binary::kLessEqual: return x <= y;
      case Binary::kGreater: return x > y;
      case Binary::kGreaterEqual: return x >= y;
      case Binary::kEqual: return x == y;
      default: return x != y;  // kNotEqual
    }
  }
};

// bool operands, one byte each; any non-zero byte is true.
struct BoolFn {
  Binary op;
  __device__ __forceinline__ uint8_t operator()(uint8_t a, uint8_t b) const {
    const bool x = a != 0, y = b != 0;
    switch (op) {
      case Binary::kEqual: return x == y;
      case Binary::kNotEqual: return x != y;
      case Binary::kLogicalAnd: return x && y;
      default: return x || y;  // kLogicalOr
    }
  }
};

}  // namespace

void LaunchCompare(Binary op, ew::Type type, const void* a, const void* b, void* out,
                   const ew::BroadcastPlan& plan, px_gpu::Stream stream) {
  if (type == ew::Type::kBool) {
    LaunchPlan2<uint8_t, uint8_t>(a, b, out, plan, BoolFn{op}, stream);
    return;
  }
  auto run = [&](auto tag) {
    using T = decltype(tag);
    LaunchPlan2<T, uint8_t>(a, b, out, plan, CompareFn<T>{op}, stream);
  };
  if (ew::IsFloatType(type)) {
    VisitFloatType(type, run);
  } else {
    VisitIntType(type, run);
  }
}

}  // namespace plexus::cuda

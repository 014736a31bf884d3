#include "dist/reduce.h"

#include <algorithm>

#include "host_kernels/host_dispatch.h"

namespace plexus::dist {
namespace {

template <typename T>
ReduceFn Make(ReduceOp op) {
  using C = host::Compute<T>;
  auto apply = [](auto combine) -> ReduceFn {
    return [combine](void* out, const void* a, const void* b, size_t n) {
      T* o = static_cast<T*>(out);
      const T* x = static_cast<const T*>(a);
      const T* y = static_cast<const T*>(b);
      for (size_t i = 0; i < n; ++i) o[i] = static_cast<T>(combine(static_cast<C>(x[i]), static_cast<C>(y[i])));
    };
  };
  switch (op) {
    case ReduceOp::kSum:
      return apply([](C p, C q) { return static_cast<C>(p + q); });
    case ReduceOp::kProd:
      return apply([](C p, C q) { return static_cast<C>(p * q); });
    case ReduceOp::kMin:
      return apply([](C p, C q) { return std::min(p, q); });
    case ReduceOp::kMax:
      return apply([](C p, C q) { return std::max(p, q); });
  }
  return nullptr;
}

}  // namespace

bool ReductionSupported(DataType dtype) {
  return host::Visit<host::kReals>(dtype, [](auto) {});
}

ReduceFn ReductionFunction(DataType dtype, ReduceOp op) {
  ReduceFn fn;
  host::Visit<host::kReals>(dtype, [&](auto v) { fn = Make<decltype(v)>(op); });
  return fn;
}

void DivideInPlace(Tensor& t, int n) {
  if (n <= 1) return;
  host::Visit<host::kReals>(t.dtype(), [&](auto v) {
    using T = decltype(v);
    using C = host::Compute<T>;
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = static_cast<T>(static_cast<C>(p[i]) / static_cast<C>(n));
  });
}

}  // namespace plexus::dist

// Eigen implementation of BinaryCompute, included only by the per-dtype TUs
// binary_ops_<dtype>.cc.
#ifndef PLEXUS_PLUGINS_CPU_KERNELS_BINARY_OPS_IMPL_H_
#define PLEXUS_PLUGINS_CPU_KERNELS_BINARY_OPS_IMPL_H_

#include <Eigen/Core>

#include "kernels/binary_ops.h"

namespace plexus::cpu {
namespace binary_impl {

// One template body for scalars and Eigen arrays alike.
template <BinaryOp Op>
struct Apply;
template <>
struct Apply<BinaryOp::kAdd> {
  template <typename X, typename Y>
  static auto Run(const X& x, const Y& y) { return x + y; }
};
template <>
struct Apply<BinaryOp::kSub> {
  template <typename X, typename Y>
  static auto Run(const X& x, const Y& y) { return x - y; }
};
template <>
struct Apply<BinaryOp::kMul> {
  template <typename X, typename Y>
  static auto Run(const X& x, const Y& y) { return x * y; }
};

template <typename T>
using ConstArray = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using MutArray = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;

// General N-d broadcasting: walk the output in row-major order, the innermost
// dimension as a tight loop, carrying an index over the outer dimensions.
template <typename T, BinaryOp Op>
void BroadcastLoop(const T* a, const T* b, T* out, const BinaryLaunch& l) {
  const int64_t total = NumElements(l.out_shape);
  if (total == 0) return;
  const Shape sa = BroadcastStrides(l.a_shape, l.out_shape);
  const Shape sb = BroadcastStrides(l.b_shape, l.out_shape);
  const int rank = static_cast<int>(l.out_shape.size());
  const int64_t inner = l.out_shape[rank - 1];
  const int64_t ia = sa[rank - 1], ib = sb[rank - 1];
  Shape index(rank, 0);
  int64_t off_a = 0, off_b = 0;
  for (int64_t done = 0; done < total; done += inner) {
    for (int64_t i = 0; i < inner; ++i) {
      out[i] = Apply<Op>::Run(a[off_a + i * ia], b[off_b + i * ib]);
    }
    out += inner;
    for (int d = rank - 2; d >= 0; --d) {
      off_a += sa[d];
      off_b += sb[d];
      if (++index[d] < l.out_shape[d]) break;
      off_a -= sa[d] * l.out_shape[d];
      off_b -= sb[d] * l.out_shape[d];
      index[d] = 0;
    }
  }
}

template <typename T, BinaryOp Op>
void Run(const BinaryLaunch& l) {
  const T* a = static_cast<const T*>(l.a);
  const T* b = static_cast<const T*>(l.b);
  T* out = static_cast<T*>(l.out);
  const int64_t n = NumElements(l.out_shape);
  // Fast paths: same shapes, or a one-element operand against a tensor that
  // already has the output's shape.
  if (l.a_shape == l.b_shape) {
    MutArray<T>(out, n) =
        Apply<Op>::Run(ConstArray<T>(a, n), ConstArray<T>(b, n));
  } else if (NumElements(l.a_shape) == 1 && l.b_shape == l.out_shape) {
    MutArray<T>(out, n) = Apply<Op>::Run(a[0], ConstArray<T>(b, n));
  } else if (NumElements(l.b_shape) == 1 && l.a_shape == l.out_shape) {
    MutArray<T>(out, n) = Apply<Op>::Run(ConstArray<T>(a, n), b[0]);
  } else {
    BroadcastLoop<T, Op>(a, b, out, l);
  }
}

}  // namespace binary_impl

template <typename T, BinaryOp Op>
PX_Status* BinaryCompute(void* kernel, PX_KernelContext* ctx,
                         const DLTensor* inputs, size_t num_inputs,
                         DLTensor* outputs, size_t num_outputs,
                         PX_Stream* stream) {
  const PX_HostServices* host = HostOf(kernel);
  return GuardCall(host, [&]() -> PX_Status* {
    BinaryLaunch launch;
    if (PX_Status* s = PrepareBinary(host, ctx, inputs, num_inputs, outputs,
                                     num_outputs, DlTypeOf<T>(), &launch)) {
      return s;
    }
    binary_impl::Run<T, Op>(launch);
    return nullptr;
  });
}

}  // namespace plexus::cpu

#endif  // PLEXUS_PLUGINS_CPU_KERNELS_BINARY_OPS_IMPL_H_

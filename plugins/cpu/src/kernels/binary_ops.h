// Element-wise binary arithmetic with NumPy broadcasting: Add, AddV2, Sub,
// Mul. The per-dtype computations live in binary_ops_<dtype>.cc (each its own
// small TU, because Eigen is slow to compile); this header is Eigen-free.
#ifndef PLEXUS_PLUGINS_CPU_KERNELS_BINARY_OPS_H_
#define PLEXUS_PLUGINS_CPU_KERNELS_BINARY_OPS_H_

#include "kernels/kernel_util.h"

namespace plexus::cpu {

enum class BinaryOp { kAdd, kSub, kMul };

// One launch after its checks: the operands' shapes, the broadcast output
// shape and the data addresses.
struct BinaryLaunch {
  Shape a_shape, b_shape, out_shape;
  const void* a;
  const void* b;
  void* out;
};

// Checks arity and dtypes, broadcasts the shapes (INVALID_ARGUMENT
// "Incompatible shapes: [2,3] vs. [4]" when they do not broadcast) and
// prepares the output.
PX_Status* PrepareBinary(const PX_HostServices* host, PX_KernelContext* ctx,
                         const DLTensor* inputs, size_t num_inputs,
                         DLTensor* outputs, size_t num_outputs,
                         DLDataType dtype, BinaryLaunch* launch);

// Element strides of `shape` seen as a tensor of rank `rank` broadcast to
// `out_shape`: leading missing dims and dims of size 1 get stride 0.
Shape BroadcastStrides(const Shape& shape, const Shape& out_shape);

// The compute slot for one op and dtype; instantiated in binary_ops_<T>.cc.
template <typename T, BinaryOp Op>
PX_Status* BinaryCompute(void* kernel, PX_KernelContext* ctx,
                         const DLTensor* inputs, size_t num_inputs,
                         DLTensor* outputs, size_t num_outputs,
                         PX_Stream* stream);

#define PX_CPU_DECLARE_BINARY(T, extern_kw)                                   \
  extern_kw template PX_Status* BinaryCompute<T, BinaryOp::kAdd>(            \
      void*, PX_KernelContext*, const DLTensor*, size_t, DLTensor*, size_t,  \
      PX_Stream*);                                                           \
  extern_kw template PX_Status* BinaryCompute<T, BinaryOp::kSub>(            \
      void*, PX_KernelContext*, const DLTensor*, size_t, DLTensor*, size_t,  \
      PX_Stream*);                                                           \
  extern_kw template PX_Status* BinaryCompute<T, BinaryOp::kMul>(            \
      void*, PX_KernelContext*, const DLTensor*, size_t, DLTensor*, size_t,  \
      PX_Stream*)

PX_CPU_DECLARE_BINARY(float, extern);
PX_CPU_DECLARE_BINARY(double, extern);
PX_CPU_DECLARE_BINARY(int32_t, extern);
PX_CPU_DECLARE_BINARY(int64_t, extern);

}  // namespace plexus::cpu

#endif  // PLEXUS_PLUGINS_CPU_KERNELS_BINARY_OPS_H_

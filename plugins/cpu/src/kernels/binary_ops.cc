// Shape handling and registration for the binary ops; the arithmetic itself
// is in binary_ops_impl.h.
#include <algorithm>

#include "kernels/binary_ops.h"
#include "kernels/register_kernels.h"

namespace plexus::cpu {
namespace {

// NumPy rules: align at the right; each pair of dims is equal or one is 1.
bool BroadcastShapes(const Shape& a, const Shape& b, Shape* out) {
  const size_t rank = std::max(a.size(), b.size());
  out->assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) return false;
    // A dim of 1 against a dim of 0 broadcasts to 0.
    (*out)[rank - 1 - i] = da == 1 ? db : da;
  }
  return true;
}

template <typename T>
PX_Status* RegisterForType(const PX_HostServices* host,
                           PX_KernelRegistrar* registrar, PX_DataType type) {
  struct Entry {
    const char* op;
    PX_KernelComputeFn compute;
  };
  // AddV2 is TensorFlow's Add without string support: the same kernel here.
  const Entry entries[] = {
      {"Add", BinaryCompute<T, BinaryOp::kAdd>},
      {"AddV2", BinaryCompute<T, BinaryOp::kAdd>},
      {"Sub", BinaryCompute<T, BinaryOp::kSub>},
      {"Mul", BinaryCompute<T, BinaryOp::kMul>},
  };
  for (const Entry& e : entries) {
    if (PX_Status* s = RegisterKernel(host, registrar, e.op, "T", {type},
                                      CreateStatelessKernel, e.compute)) {
      return s;
    }
  }
  return nullptr;
}

}  // namespace

Shape BroadcastStrides(const Shape& shape, const Shape& out_shape) {
  const size_t rank = out_shape.size();
  const size_t offset = rank - shape.size();
  Shape strides(rank, 0);
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[offset + i] = shape[i] == 1 ? 0 : stride;
    stride *= shape[i];
  }
  return strides;
}

PX_Status* PrepareBinary(const PX_HostServices* host, PX_KernelContext* ctx,
                         const DLTensor* inputs, size_t num_inputs,
                         DLTensor* outputs, size_t num_outputs,
                         DLDataType dtype, BinaryLaunch* launch) {
  if (PX_Status* s = CheckArity(host, num_inputs, 2, num_outputs, 1)) return s;
  for (size_t i = 0; i < 2; ++i) {
    if (PX_Status* s = CheckInput(host, inputs[i], i, dtype)) return s;
  }
  launch->a_shape = ShapeOf(inputs[0]);
  launch->b_shape = ShapeOf(inputs[1]);
  if (!BroadcastShapes(launch->a_shape, launch->b_shape, &launch->out_shape)) {
    return px_sdk_error(host, PX_CODE_INVALID_ARGUMENT,
                        "Incompatible shapes: %s vs. %s",
                        ShapeString(launch->a_shape).c_str(),
                        ShapeString(launch->b_shape).c_str());
  }
  launch->a = px_sdk_data(&inputs[0]);
  launch->b = px_sdk_data(&inputs[1]);
  return PrepareOutput(host, ctx, outputs, 0, launch->out_shape, dtype,
                       &launch->out);
}

PX_Status* RegisterBinaryKernels(const PX_HostServices* host,
                                 PX_KernelRegistrar* registrar) {
  if (PX_Status* s = RegisterForType<float>(host, registrar, PX_DT_FLOAT)) {
    return s;
  }
  if (PX_Status* s = RegisterForType<double>(host, registrar, PX_DT_DOUBLE)) {
    return s;
  }
  if (PX_Status* s = RegisterForType<int32_t>(host, registrar, PX_DT_INT32)) {
    return s;
  }
  return RegisterForType<int64_t>(host, registrar, PX_DT_INT64);
}

}  // namespace plexus::cpu

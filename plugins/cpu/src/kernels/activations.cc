// Relu and Softmax. Plain loops: the compiler vectorizes them, and keeping
// Eigen out of this TU keeps it quick to build.
#include <algorithm>
#include <cmath>

#include "kernels/kernel_util.h"
#include "kernels/register_kernels.h"

namespace plexus::cpu {
namespace {

// The checks every unary op shares: one input of dtype T, one output of its
// shape.
template <typename T>
PX_Status* PrepareUnary(const PX_HostServices* host, PX_KernelContext* ctx,
                        const DLTensor* inputs, size_t num_inputs,
                        DLTensor* outputs, size_t num_outputs,
                        const T** in, T** out, Shape* shape) {
  if (PX_Status* s = CheckArity(host, num_inputs, 1, num_outputs, 1)) return s;
  if (PX_Status* s = CheckInput(host, inputs[0], 0, DlTypeOf<T>())) return s;
  *shape = ShapeOf(inputs[0]);
  void* out_data = nullptr;
  if (PX_Status* s = PrepareOutput(host, ctx, outputs, 0, *shape,
                                   DlTypeOf<T>(), &out_data)) {
    return s;
  }
  *in = static_cast<const T*>(px_sdk_data(&inputs[0]));
  *out = static_cast<T*>(out_data);
  return nullptr;
}

template <typename T>
PX_Status* ReluCompute(void* kernel, PX_KernelContext* ctx,
                       const DLTensor* inputs, size_t num_inputs,
                       DLTensor* outputs, size_t num_outputs,
                       PX_Stream* stream) {
  const PX_HostServices* host = HostOf(kernel);
  return GuardCall(host, [&]() -> PX_Status* {
    const T* in = nullptr;
    T* out = nullptr;
    Shape shape;
    if (PX_Status* s = PrepareUnary(host, ctx, inputs, num_inputs, outputs,
                                    num_outputs, &in, &out, &shape)) {
      return s;
    }
    const int64_t n = NumElements(shape);
    // Written so that NaN passes through, as in TensorFlow.
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] < T(0) ? T(0) : in[i];
    return nullptr;
  });
}

template <typename T>
PX_Status* SoftmaxCompute(void* kernel, PX_KernelContext* ctx,
                          const DLTensor* inputs, size_t num_inputs,
                          DLTensor* outputs, size_t num_outputs,
                          PX_Stream* stream) {
  const PX_HostServices* host = HostOf(kernel);
  return GuardCall(host, [&]() -> PX_Status* {
    if (num_inputs == 1 && inputs[0].ndim < 1) {
      return px_sdk_error(host, PX_CODE_INVALID_ARGUMENT,
                          "Softmax logits must have at least one dimension");
    }
    const T* in = nullptr;
    T* out = nullptr;
    Shape shape;
    if (PX_Status* s = PrepareUnary(host, ctx, inputs, num_inputs, outputs,
                                    num_outputs, &in, &out, &shape)) {
      return s;
    }
    const int64_t cols = shape.back();
    if (cols == 0) return nullptr;
    const int64_t rows = NumElements(shape) / cols;
    for (int64_t r = 0; r < rows; ++r) {
      const T* x = in + r * cols;
      T* y = out + r * cols;
      // Subtracting the row max keeps exp() from overflowing.
      const T max = *std::max_element(x, x + cols);
      T sum = T(0);
      for (int64_t c = 0; c < cols; ++c) {
        y[c] = std::exp(x[c] - max);
        sum += y[c];
      }
      const T scale = T(1) / sum;
      for (int64_t c = 0; c < cols; ++c) y[c] *= scale;
    }
    return nullptr;
  });
}

}  // namespace

PX_Status* RegisterActivationKernels(const PX_HostServices* host,
                                     PX_KernelRegistrar* registrar) {
  struct Entry {
    const char* op;
    PX_DataType type;
    PX_KernelComputeFn compute;
  };
  const Entry entries[] = {
      {"Relu", PX_DT_FLOAT, ReluCompute<float>},
      {"Relu", PX_DT_DOUBLE, ReluCompute<double>},
      {"Relu", PX_DT_INT32, ReluCompute<int32_t>},
      {"Softmax", PX_DT_FLOAT, SoftmaxCompute<float>},
      {"Softmax", PX_DT_DOUBLE, SoftmaxCompute<double>},
  };
  for (const Entry& e : entries) {
    if (PX_Status* s = RegisterKernel(host, registrar, e.op, "T", {e.type},
                                      CreateStatelessKernel, e.compute)) {
      return s;
    }
  }
  return nullptr;
}

}  // namespace plexus::cpu

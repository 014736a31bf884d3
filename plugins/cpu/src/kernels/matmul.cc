// Attribute reading, shape checks and registration for MatMul; the product
// itself is in matmul_impl.h.
#include <memory>

#include "kernels/matmul.h"
#include "kernels/register_kernels.h"

namespace plexus::cpu {
namespace {

PX_Status* MatMulCreate(void* user_data, const PX_NodeView* node,
                        void** out_kernel) {
  const auto* host = static_cast<const PX_HostServices*>(user_data);
  return GuardCall(host, [&]() -> PX_Status* {
    auto state = std::make_unique<MatMulState>(host);
    if (PX_Status* s = ReadBoolAttr(host, node, "transpose_a", false,
                                    &state->transpose_a)) {
      return s;
    }
    if (PX_Status* s = ReadBoolAttr(host, node, "transpose_b", false,
                                    &state->transpose_b)) {
      return s;
    }
    *out_kernel = static_cast<KernelState*>(state.release());
    return nullptr;
  });
}

}  // namespace

PX_Status* PrepareMatMul(const MatMulState& state, PX_KernelContext* ctx,
                         const DLTensor* inputs, size_t num_inputs,
                         DLTensor* outputs, size_t num_outputs,
                         DLDataType dtype, MatMulLaunch* launch) {
  const PX_HostServices* host = state.host;
  if (PX_Status* s = CheckArity(host, num_inputs, 2, num_outputs, 1)) return s;
  for (size_t i = 0; i < 2; ++i) {
    if (PX_Status* s = CheckInput(host, inputs[i], i, dtype)) return s;
  }
  const Shape a = ShapeOf(inputs[0]);
  const Shape b = ShapeOf(inputs[1]);
  if (a.size() != 2 || b.size() != 2) {
    return px_sdk_error(host, PX_CODE_INVALID_ARGUMENT,
                        "MatMul needs rank-2 inputs, got In[0]: %s, In[1]: %s",
                        ShapeString(a).c_str(), ShapeString(b).c_str());
  }
  launch->a_rows = a[0];
  launch->a_cols = a[1];
  launch->b_rows = b[0];
  launch->b_cols = b[1];
  launch->m = state.transpose_a ? a[1] : a[0];
  launch->k = state.transpose_a ? a[0] : a[1];
  const int64_t k_b = state.transpose_b ? b[1] : b[0];
  launch->n = state.transpose_b ? b[0] : b[1];
  if (launch->k != k_b) {
    return px_sdk_error(
        host, PX_CODE_INVALID_ARGUMENT,
        "Matrix size-incompatible: In[0]: %s, In[1]: %s (transpose_a=%s, "
        "transpose_b=%s): inner dimensions %lld and %lld differ",
        ShapeString(a).c_str(), ShapeString(b).c_str(),
        state.transpose_a ? "true" : "false",
        state.transpose_b ? "true" : "false", (long long)launch->k,
        (long long)k_b);
  }
  launch->a = px_sdk_data(&inputs[0]);
  launch->b = px_sdk_data(&inputs[1]);
  return PrepareOutput(host, ctx, outputs, 0, {launch->m, launch->n}, dtype,
                       &launch->out);
}

PX_Status* RegisterMatMulKernels(const PX_HostServices* host,
                                 PX_KernelRegistrar* registrar) {
  if (PX_Status* s = RegisterKernel(host, registrar, "MatMul", "T",
                                    {PX_DT_FLOAT}, MatMulCreate,
                                    MatMulCompute<float>)) {
    return s;
  }
  if (PX_Status* s = RegisterKernel(host, registrar, "MatMul", "T",
                                    {PX_DT_DOUBLE}, MatMulCreate,
                                    MatMulCompute<double>)) {
    return s;
  }
  return RegisterKernel(host, registrar, "MatMul", "T", {PX_DT_INT32},
                        MatMulCreate, MatMulCompute<int32_t>);
}

}  // namespace plexus::cpu

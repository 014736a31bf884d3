// Const, Placeholder, Identity and NoOp: kernels that only move bytes.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/register_kernels.h"

namespace plexus::cpu {
namespace {

// Every dtype whose elements are plain bytes (so: all but DT_STRING).
#define PX_CPU_NUMERIC_AND_BOOL_TYPES                                        \
  PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_INT32, PX_DT_UINT8, PX_DT_INT16,          \
      PX_DT_INT8, PX_DT_COMPLEX64, PX_DT_INT64, PX_DT_BOOL, PX_DT_BFLOAT16,  \
      PX_DT_UINT16, PX_DT_COMPLEX128, PX_DT_HALF, PX_DT_UINT32, PX_DT_UINT64

// Const keeps its own copy of the value: the attribute tensor is borrowed
// only for the duration of create.
struct ConstState : KernelState {
  using KernelState::KernelState;
  DLDataType dtype;
  Shape shape;
  std::vector<unsigned char> bytes;
};

PX_Status* ConstCreate(void* user_data, const PX_NodeView* node,
                       void** out_kernel) {
  const auto* host = static_cast<const PX_HostServices*>(user_data);
  return GuardCall(host, [&]() -> PX_Status* {
    PX_DataType type = PX_DT_INVALID;
    if (PX_Status* s = host->node_attr_type(node, "dtype", &type)) return s;
    if (type == PX_DT_STRING) {
      return px_sdk_error(host, PX_CODE_UNIMPLEMENTED,
                          "string constants are not supported by the cpu "
                          "plugin");
    }
    const DLTensor* value = nullptr;
    if (PX_Status* s = host->node_attr_tensor(node, "value", &value)) return s;
    if (value->ndim < 0 || !px_sdk_is_contiguous(value)) {
      return px_sdk_error(host, PX_CODE_INVALID_ARGUMENT,
                          "the \"value\" attribute is not a dense tensor");
    }
    if (px_sdk_dtype_from_dl(value->dtype) != type) {
      return px_sdk_error(host, PX_CODE_INVALID_ARGUMENT,
                          "the \"value\" attribute has dtype %s, which does "
                          "not match the \"dtype\" attribute (%d)",
                          DtypeString(value->dtype).c_str(), (int)type);
    }
    auto state = std::make_unique<ConstState>(host);
    state->dtype = value->dtype;
    state->shape = ShapeOf(*value);
    const size_t nbytes = px_sdk_nbytes(value);
    if (nbytes > 0) {
      const auto* src = static_cast<const unsigned char*>(px_sdk_data(value));
      state->bytes.assign(src, src + nbytes);
    }
    *out_kernel = static_cast<KernelState*>(state.release());
    return nullptr;
  });
}

PX_Status* ConstCompute(void* kernel, PX_KernelContext* ctx,
                        const DLTensor* inputs, size_t num_inputs,
                        DLTensor* outputs, size_t num_outputs,
                        PX_Stream* stream) {
  const auto& state = static_cast<const ConstState&>(
      *static_cast<const KernelState*>(kernel));
  const PX_HostServices* host = state.host;
  return GuardCall(host, [&]() -> PX_Status* {
    if (PX_Status* s = CheckArity(host, num_inputs, 0, num_outputs, 1)) {
      return s;
    }
    void* out = nullptr;
    if (PX_Status* s = PrepareOutput(host, ctx, outputs, 0, state.shape,
                                     state.dtype, &out)) {
      return s;
    }
    if (!state.bytes.empty()) {
      std::memcpy(out, state.bytes.data(), state.bytes.size());
    }
    return nullptr;
  });
}

PX_Status* PlaceholderCompute(void* kernel, PX_KernelContext* ctx,
                              const DLTensor* inputs, size_t num_inputs,
                              DLTensor* outputs, size_t num_outputs,
                              PX_Stream* stream) {
  return px_sdk_error(HostOf(kernel), PX_CODE_INVALID_ARGUMENT,
                      "placeholder was not fed: every Placeholder must be "
                      "given a value in the feeds");
}

PX_Status* IdentityCompute(void* kernel, PX_KernelContext* ctx,
                           const DLTensor* inputs, size_t num_inputs,
                           DLTensor* outputs, size_t num_outputs,
                           PX_Stream* stream) {
  const PX_HostServices* host = HostOf(kernel);
  return GuardCall(host, [&]() -> PX_Status* {
    if (PX_Status* s = CheckArity(host, num_inputs, 1, num_outputs, 1)) {
      return s;
    }
    const DLTensor& in = inputs[0];
    if (PX_Status* s = CheckInput(host, in, 0, in.dtype)) return s;
    void* out = nullptr;
    if (PX_Status* s =
            PrepareOutput(host, ctx, outputs, 0, ShapeOf(in), in.dtype, &out)) {
      return s;
    }
    const void* src = px_sdk_data(&in);
    const size_t nbytes = px_sdk_nbytes(&in);
    // The host may forward the input buffer as the output: nothing to copy.
    if (nbytes > 0 && out != src) std::memmove(out, src, nbytes);
    return nullptr;
  });
}

PX_Status* NoOpCompute(void* kernel, PX_KernelContext* ctx,
                       const DLTensor* inputs, size_t num_inputs,
                       DLTensor* outputs, size_t num_outputs,
                       PX_Stream* stream) {
  return nullptr;
}

}  // namespace

PX_Status* RegisterBasicKernels(const PX_HostServices* host,
                                PX_KernelRegistrar* registrar) {
  if (PX_Status* s = RegisterKernel(host, registrar, "Const", "dtype",
                                    {PX_CPU_NUMERIC_AND_BOOL_TYPES},
                                    ConstCreate, ConstCompute)) {
    return s;
  }
  // Strings included: the error says "not fed", the helpful one.
  if (PX_Status* s = RegisterKernel(
          host, registrar, "Placeholder", "dtype",
          {PX_CPU_NUMERIC_AND_BOOL_TYPES, PX_DT_STRING}, CreateStatelessKernel,
          PlaceholderCompute)) {
    return s;
  }
  // Strings excluded: a DLTensor cannot describe a string tensor.
  if (PX_Status* s = RegisterKernel(host, registrar, "Identity", "T",
                                    {PX_CPU_NUMERIC_AND_BOOL_TYPES},
                                    CreateStatelessKernel, IdentityCompute)) {
    return s;
  }
  return RegisterKernel(host, registrar, "NoOp", nullptr, {},
                        CreateStatelessKernel, NoOpCompute);
}

}  // namespace plexus::cpu

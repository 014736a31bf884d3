// BiasAdd: adds a rank-1 bias along the channel dimension (the last one for
// NHWC, dimension 1 for NCHW). Plain loops: no Eigen needed.
#include <memory>
#include <string>

#include "kernels/kernel_util.h"
#include "kernels/register_kernels.h"

namespace plexus::cpu {
namespace {

struct BiasAddState : KernelState {
  using KernelState::KernelState;
  bool nchw = false;
};

PX_Status* BiasAddCreate(void* user_data, const PX_NodeView* node,
                         void** out_kernel) {
  const auto* host = static_cast<const PX_HostServices*>(user_data);
  return GuardCall(host, [&]() -> PX_Status* {
    std::string format;
    if (PX_Status* s =
            ReadStringAttr(host, node, "data_format", "NHWC", &format)) {
      return s;
    }
    if (format != "NHWC" && format != "NCHW") {
      return px_sdk_error(host, PX_CODE_INVALID_ARGUMENT,
                          "BiasAdd data_format must be \"NHWC\" or \"NCHW\", "
                          "got \"%s\"",
                          format.c_str());
    }
    auto state = std::make_unique<BiasAddState>(host);
    state->nchw = format == "NCHW";
    *out_kernel = static_cast<KernelState*>(state.release());
    return nullptr;
  });
}

template <typename T>
PX_Status* BiasAddCompute(void* kernel, PX_KernelContext* ctx,
                          const DLTensor* inputs, size_t num_inputs,
                          DLTensor* outputs, size_t num_outputs,
                          PX_Stream* stream) {
  const auto& state =
      static_cast<const BiasAddState&>(*static_cast<const KernelState*>(kernel));
  const PX_HostServices* host = state.host;
  return GuardCall(host, [&]() -> PX_Status* {
    if (PX_Status* s = CheckArity(host, num_inputs, 2, num_outputs, 1)) {
      return s;
    }
    for (size_t i = 0; i < 2; ++i) {
      if (PX_Status* s = CheckInput(host, inputs[i], i, DlTypeOf<T>())) {
        return s;
      }
    }
    const Shape value_shape = ShapeOf(inputs[0]);
    const Shape bias_shape = ShapeOf(inputs[1]);
    if (value_shape.size() < 2) {
      return px_sdk_error(host, PX_CODE_INVALID_ARGUMENT,
                          "BiasAdd value must be at least rank 2, got %s",
                          ShapeString(value_shape).c_str());
    }
    const size_t channel_dim = state.nchw ? 1 : value_shape.size() - 1;
    const int64_t channels = value_shape[channel_dim];
    if (bias_shape.size() != 1 || bias_shape[0] != channels) {
      return px_sdk_error(host, PX_CODE_INVALID_ARGUMENT,
                          "BiasAdd bias must be rank 1 with the %lld channels "
                          "of value %s (%s), got bias %s",
                          (long long)channels,
                          ShapeString(value_shape).c_str(),
                          state.nchw ? "NCHW" : "NHWC",
                          ShapeString(bias_shape).c_str());
    }
    void* out_data = nullptr;
    if (PX_Status* s = PrepareOutput(host, ctx, outputs, 0, value_shape,
                                     DlTypeOf<T>(), &out_data)) {
      return s;
    }
    const T* value = static_cast<const T*>(px_sdk_data(&inputs[0]));
    const T* bias = static_cast<const T*>(px_sdk_data(&inputs[1]));
    T* out = static_cast<T*>(out_data);
    // View value as [outer, channels, inner]: inner is 1 for NHWC.
    int64_t inner = 1;
    for (size_t d = channel_dim + 1; d < value_shape.size(); ++d) {
      inner *= value_shape[d];
    }
    const int64_t outer = channels * inner == 0
                              ? 0
                              : NumElements(value_shape) / (channels * inner);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t c = 0; c < channels; ++c) {
        const T b = bias[c];
        const int64_t base = (o * channels + c) * inner;
        for (int64_t i = 0; i < inner; ++i) out[base + i] = value[base + i] + b;
      }
    }
    return nullptr;
  });
}

}  // namespace

PX_Status* RegisterBiasAddKernels(const PX_HostServices* host,
                                  PX_KernelRegistrar* registrar) {
  if (PX_Status* s = RegisterKernel(host, registrar, "BiasAdd", "T",
                                    {PX_DT_FLOAT}, BiasAddCreate,
                                    BiasAddCompute<float>)) {
    return s;
  }
  if (PX_Status* s = RegisterKernel(host, registrar, "BiasAdd", "T",
                                    {PX_DT_DOUBLE}, BiasAddCreate,
                                    BiasAddCompute<double>)) {
    return s;
  }
  return RegisterKernel(host, registrar, "BiasAdd", "T", {PX_DT_INT32},
                        BiasAddCreate, BiasAddCompute<int32_t>);
}

}  // namespace plexus::cpu

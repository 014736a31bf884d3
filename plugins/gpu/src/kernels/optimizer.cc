// The fused optimizer updates on the GPU: _PlexusApplyGradientDescent,
// _PlexusApplyMomentum, _PlexusApplyAdam, _PlexusApplyAdamW and
// _PlexusApplyRMSProp (core/src/ops/optimizer_ops.cc), for half, bfloat16,
// float and double. Functional, like the reference and cpu kernels: each
// writes the new var and slots as outputs, which the caller assigns back.
// The hyperparameters are scalars in device memory, read and combined by
// the device code, which updates the tensors in one pass (optimizer.cu).
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "gpu_error.h"
#include "gpu_stream.h"
#include "kernels/optimizer_launch.h"
#include "kernels/register_kernels.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/plugin.h"

namespace plexus::cuda {
namespace {

using opt::Update;

// Where each update finds its tensors (var first, then the slots, the
// gradient last) and its hyperparameter scalars, and how many outputs it has.
struct Layout {
  std::vector<size_t> tensors;
  std::vector<size_t> scalars;
};

Layout LayoutOf(Update u) {
  switch (u) {
    case Update::kGradientDescent: return {{0, 2}, {1}};
    case Update::kMomentum: return {{0, 1, 3}, {2, 4}};
    case Update::kAdam: return {{0, 1, 2, 9}, {3, 4, 5, 6, 7, 8}};
    case Update::kAdamW: return {{0, 1, 2, 10}, {3, 4, 5, 6, 7, 8, 9}};
    case Update::kRMSProp: return {{0, 1, 2, 7}, {3, 4, 5, 6}};
  }
  return {};
}

template <Update U>
class ApplyKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    op_ = attrs.op();
    nesterov_ = attrs.Bool("use_nesterov", false);
  }

  void Compute(sdk::Call& call) override {
    const char* op = op_.c_str();
    const Layout layout = LayoutOf(U);
    for (size_t i : layout.scalars) {
      PX_SDK_CHECK(call.input_rank(i) == 0, "hyperparameter input %zu is not a scalar: shape %s", i,
                   sdk::ShapeString(call.input_shape(i)).c_str());
    }
    const sdk::Shape shape = call.input_shape(0);
    for (size_t i : layout.tensors) {
      PX_SDK_CHECK(call.input_shape(i) == shape, "input %zu does not have var's shape: %s and %s", i,
                   sdk::ShapeString(call.input_shape(i)).c_str(), sdk::ShapeString(shape).c_str());
      PX_SDK_CHECK(px_sdk_is_contiguous(&call.input(i)), "%s: input %zu is not contiguous", op, i);
    }
    ew::Dtype dtype = ew::Dtype::kFloat;
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, double>) dtype = ew::Dtype::kDouble;
      if constexpr (std::is_same_v<T, sdk::half>) dtype = ew::Dtype::kHalf;
      if constexpr (std::is_same_v<T, sdk::bfloat16>) dtype = ew::Dtype::kBFloat16;
    });
    opt::Scalars scalars;
    scalars.nesterov = nesterov_;
    for (size_t k = 0; k < layout.scalars.size(); ++k) {
      PX_SDK_CHECK(call.input_dtype(layout.scalars[k]) == call.input_dtype(0),
                   "%s: hyperparameter input %zu is %s, the var %s", op, layout.scalars[k],
                   sdk::DtypeName(call.input_dtype(layout.scalars[k])), sdk::DtypeName(call.input_dtype(0)));
      scalars.p[k] = call.input_data(layout.scalars[k]);
    }
    const size_t slots = layout.tensors.size() - 2;
    void* out[3] = {nullptr, nullptr, nullptr};
    for (size_t o = 0; o <= slots; ++o) out[o] = call.AllocateOutputRaw(o, shape);
    const void* in[3] = {call.input_data(layout.tensors[0]), nullptr, nullptr};
    for (size_t k = 0; k < slots; ++k) in[k + 1] = call.input_data(layout.tensors[k + 1]);
    const void* grad = call.input_data(layout.tensors.back());
    const int64_t n = sdk::NumElements(shape);
    if (n == 0) return;
    GpuStream& stream = StreamOf(call);
    opt::LaunchApply(U, dtype, in[0], in[1], in[2], grad, out[0], out[1], out[2], n, scalars, stream.get());
    CheckLaunch(stream, op);
  }

 private:
  std::string op_;
  bool nesterov_ = false;
};

}  // namespace

PX_Status* RegisterOptimizerKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> types = sdk::FloatTypes();
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<ApplyKernel<Update::kGradientDescent>>(
      info, registrar, sdk::sig::kPlexusApplyGradientDescent, {types}));
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<ApplyKernel<Update::kMomentum>>(
      info, registrar, sdk::sig::kPlexusApplyMomentum, {types}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<ApplyKernel<Update::kAdam>>(info, registrar, sdk::sig::kPlexusApplyAdam, {types}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<ApplyKernel<Update::kAdamW>>(info, registrar, sdk::sig::kPlexusApplyAdamW, {types}));
  return sdk::RegisterKernel<ApplyKernel<Update::kRMSProp>>(info, registrar, sdk::sig::kPlexusApplyRMSProp,
                                                           {types});
}

}  // namespace plexus::cuda

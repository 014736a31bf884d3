// The CUDA plugin's pooling kernels: MaxPool and AvgPool (SAME, VALID and,
// for MaxPool, EXPLICIT padding; NHWC or NCHW). The attributes are read and
// checked by the SDK's Window (shared with the cpu and reference plugins);
// the device code is in pool.cu.
#include <cstdint>
#include <vector>

#include "gpu_stream.h"
#include "kernels/dtype_map.h"
#include "kernels/pool_launch.h"
#include "kernels/register_kernels.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/plugin.h"
#include "plexus/sdk/window.h"

namespace plexus::cuda {
namespace {

template <bool kMax>
class PoolKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { window_.Read(attrs, true); }

  void Compute(sdk::Call& call) override {
    const char* op = kMax ? "MaxPool" : "AvgPool";
    const sdk::Shape xs = call.input_shape(0);
    PX_SDK_CHECK(xs.size() == 4, "%s input must be 4-D, got %s", op,
                 sdk::ShapeString(xs).c_str());
    PX_SDK_CHECK(px_sdk_is_contiguous(&call.input(0)), "%s: the input is not contiguous", op);
    const ew::Dtype dtype = ToDtype(call.input_dtype(0), op);
    const pool::PoolPlan plan = window_.Pool(xs);
    const sdk::Shape out = sdk::PooledShape(plan);
    void* y = call.AllocateOutputRaw(0, out);
    if (sdk::NumElements(out) == 0) return;
    GpuStream& stream = StreamOf(call);
    pool::LaunchPool(kMax, dtype, px_sdk_data(&call.input(0)), y, plan, stream.get());
    CheckLaunch(stream, op);
  }

 private:
  sdk::Window window_;
};

}  // namespace

PX_Status* RegisterPoolKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> floats = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF,
                                           PX_DT_BFLOAT16};
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<PoolKernel<true>>(info, registrar, sdk::sig::kMaxPool, {floats}));
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<PoolKernel<false>>(info, registrar, sdk::sig::kAvgPool, {floats}));
  return nullptr;
}

}  // namespace plexus::cuda

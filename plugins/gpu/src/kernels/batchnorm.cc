// FusedBatchNorm, FusedBatchNormV2 and FusedBatchNormV3 on CUDA, inference
// only (is_training = false), like the cpu plugin: y from x (float, half or
// bfloat16; NHWC or NCHW) and the float per-channel scale, offset, mean and
// variance (batchnorm.cu); batch_mean and batch_variance and the reserve
// spaces 1 and 2 are copies of mean and variance, V3's reserve_space_3 a
// scalar 0. is_training = true is UNIMPLEMENTED (as on the cpu plugin).
#include <cstdint>
#include <string>
#include <vector>

#include "gpu_error.h"
#include "gpu_stream.h"
#include "kernels/batchnorm_launch.h"
#include "kernels/register_kernels.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/plugin.h"
#include "plexus/sdk/window.h"

namespace plexus::cuda {
namespace {


class FusedBatchNormKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    op_name_ = attrs.op();
    nchw_ = sdk::ReadNchw(attrs);
    epsilon_ = attrs.Float("epsilon", 1e-4f);
    training_ = attrs.Bool("is_training", true);
  }

  void Compute(sdk::Call& call) override {
    const char* op = op_name_.c_str();
    if (training_) {
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                             sdk::Format("%s with is_training=true is not supported; only "
                                         "inference (is_training=false) is",
                                         op));
    }
    const sdk::Shape shape = call.input_shape(0);
    PX_SDK_CHECK(shape.size() == 4, "x must be 4-D, got %s", sdk::ShapeString(shape).c_str());
    const int64_t channels = shape[nchw_ ? 1 : 3];
    static const char* kNames[] = {"", "scale", "offset", "mean", "variance"};
    for (size_t i = 1; i <= 4; ++i) {
      const sdk::Shape s = call.input_shape(i);
      PX_SDK_CHECK(s.size() == 1 && s[0] == channels,
                   "%s must be 1-D with the %lld channels of x %s, got %s", kNames[i],
                   static_cast<long long>(channels), sdk::ShapeString(shape).c_str(),
                   sdk::ShapeString(s).c_str());
      PX_SDK_CHECK(call.input_dtype(i) == PX_DT_FLOAT, "%s: %s is %s, expected float", op,
                   kNames[i], sdk::DtypeName(call.input_dtype(i)));
    }
    ew::Dtype dtype;
    switch (call.input_dtype(0)) {
      case PX_DT_FLOAT: dtype = ew::Dtype::kFloat; break;
      case PX_DT_HALF: dtype = ew::Dtype::kHalf; break;
      case PX_DT_BFLOAT16: dtype = ew::Dtype::kBFloat16; break;
      default:
        throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                               sdk::Format("%s on CUDA does not support dtype %s", op,
                                           sdk::DtypeName(call.input_dtype(0))));
    }
    for (size_t i = 0; i <= 4; ++i) {
      PX_SDK_CHECK(px_sdk_is_contiguous(&call.input(i)), "%s: input %zu is not contiguous", op, i);
    }
    const auto* scale = static_cast<const float*>(call.input_data(1));
    const auto* offset = static_cast<const float*>(call.input_data(2));
    const auto* mean = static_cast<const float*>(call.input_data(3));
    const auto* variance = static_cast<const float*>(call.input_data(4));
    void* y = call.AllocateOutputRaw(0, shape);
    const int64_t total = sdk::NumElements(shape);
    GpuStream& stream = StreamOf(call);
    if (total > 0) {
      const int64_t inner = nchw_ ? shape[2] * shape[3] : 1;
      bn::LaunchBatchNormInference(dtype, call.input_data(0), scale, offset, mean, variance,
                                   epsilon_, y, total, channels, inner, stream.get());
      CheckLaunch(stream, op);
    }
    // batch_mean, batch_variance, reserve_space_1, reserve_space_2.
    const sdk::Shape stats{channels};
    const float* pass[] = {mean, variance, mean, variance};
    for (size_t o = 1; o <= 4 && o < call.num_outputs(); ++o) {
      void* out = call.AllocateOutputRaw(o, stats);
      if (channels > 0) {
        PX_GPU_THROW_IF_FAILED(
            px_gpu::MemcpyAsync(out, pass[o - 1], static_cast<size_t>(channels) * sizeof(float),
                            px_gpu::kDeviceToDevice, stream.get()),
            "cudaMemcpyAsync");
      }
    }
    if (call.num_outputs() > 5) {
      void* out = call.AllocateOutputRaw(5, sdk::Shape{});
      PX_GPU_THROW_IF_FAILED(px_gpu::MemsetAsync(out, 0, sizeof(float), stream.get()),
                              "cudaMemsetAsync");
    }
    CheckLaunch(stream, op);  // waits in synchronous debug mode
  }

 private:
  std::string op_name_;
  bool nchw_ = false;
  float epsilon_ = 1e-4f;
  bool training_ = true;
};

}  // namespace

PX_Status* RegisterBatchNormKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> x_types = {PX_DT_FLOAT, PX_DT_HALF, PX_DT_BFLOAT16};
  const std::vector<PX_DataType> f32 = {PX_DT_FLOAT};
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<FusedBatchNormKernel>(info, registrar, sdk::sig::kFusedBatchNorm, {f32}));
  for (const sdk::OpSignature* op : {&sdk::sig::kFusedBatchNormV2, &sdk::sig::kFusedBatchNormV3}) {
    PX_SDK_RETURN_IF_ERROR(
        sdk::RegisterKernel<FusedBatchNormKernel>(info, registrar, *op, {x_types, f32}));
  }
  return nullptr;
}

}  // namespace plexus::cuda

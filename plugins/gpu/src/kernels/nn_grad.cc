// The GPU plugins' training kernels: the activation gradients (ReluGrad ..
// ReciprocalGrad, InvGrad), SoftmaxCrossEntropyWithLogits and its sparse
// form, MaxPoolGrad, MaxPoolGradV2 and AvgPoolGrad. The classes here check
// dtypes and shapes as the reference plugin does (sdk/reference/
// activation_grad.cc, nn_grad.cc; the conformance tool compares the two)
// and call the launch functions of nn_grad_launch.h on the call's stream.
// BiasAddGrad is a reduction (reduce.cc); the optimizer updates are in
// optimizer.cc.
#include <cstdint>
#include <string>
#include <vector>

#include "gpu_error.h"
#include "gpu_stream.h"
#include "kernels/dtype_map.h"
#include "kernels/nn_grad_launch.h"
#include "kernels/register_kernels.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/plugin.h"
#include "plexus/sdk/window.h"
#include "plexus/sdk/xent.h"

namespace plexus::cuda {
namespace {

using grad::Activation;
using sdk::Shape;

// ---------------------------------------------------------------------------
// Activation gradients
// ---------------------------------------------------------------------------

struct ActivationEntry {
  const sdk::OpSignature* sig;
  Activation code;
  bool integers;  // registered for the integer types too
};
constexpr ActivationEntry kActivationOps[] = {
    {&sdk::sig::kReluGrad, Activation::kRelu, true},
    {&sdk::sig::kRelu6Grad, Activation::kRelu6, true},
    {&sdk::sig::kEluGrad, Activation::kElu, false},
    {&sdk::sig::kSeluGrad, Activation::kSelu, false},
    {&sdk::sig::kLeakyReluGrad, Activation::kLeakyRelu, false},
    {&sdk::sig::kSoftplusGrad, Activation::kSoftplus, false},
    {&sdk::sig::kSoftsignGrad, Activation::kSoftsign, false},
    {&sdk::sig::kSigmoidGrad, Activation::kSigmoid, false},
    {&sdk::sig::kTanhGrad, Activation::kTanh, false},
    {&sdk::sig::kRsqrtGrad, Activation::kRsqrt, false},
    {&sdk::sig::kSqrtGrad, Activation::kSqrt, false},
    {&sdk::sig::kReciprocalGrad, Activation::kReciprocal, false},
    {&sdk::sig::kInvGrad, Activation::kReciprocal, false},
};

class ActivationGradKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    op_name_ = attrs.op();
    for (const ActivationEntry& e : kActivationOps) {
      if (op_name_ == e.sig->op) {
        entry_ = &e;
        break;
      }
    }
    PX_SDK_CHECK(entry_ != nullptr, "no " PX_GPU_RUNTIME_NAME " activation-gradient kernel for op %s",
                 op_name_.c_str());
    if (entry_->code == Activation::kLeakyRelu) alpha_ = attrs.Float("alpha", 0.2f);
  }

  void Compute(sdk::Call& call) override {
    const char* op = op_name_.c_str();
    const Shape shape = call.input_shape(0);
    PX_SDK_CHECK(shape == call.input_shape(1), "both inputs must have the same shape, got %s and %s",
                 sdk::ShapeString(shape).c_str(), sdk::ShapeString(call.input_shape(1)).c_str());
    const PX_DataType dtype = call.input_dtype(0);
    PX_SDK_CHECK(call.input_dtype(1) == dtype, "%s: inputs are %s and %s", op,
                 sdk::DtypeName(dtype), sdk::DtypeName(call.input_dtype(1)));
    const ew::Type type = ToEwType(dtype, op);
    if (type == ew::Type::kBool || (!ew::IsFloatType(type) && !entry_->integers)) {
      UnsupportedDtype(dtype, op);
    }
    CheckContiguous(call, op);
    void* out = call.AllocateOutputRaw(0, shape);
    const int64_t n = sdk::NumElements(shape);
    if (n == 0) return;
    GpuStream& stream = StreamOf(call);
    grad::LaunchActivationGrad(entry_->code, type, call.input_data(0), call.input_data(1), out, n,
                               alpha_, stream.get());
    CheckLaunch(stream, op);
  }

 private:
  std::string op_name_;
  const ActivationEntry* entry_ = nullptr;
  float alpha_ = 0.2f;
};

// ---------------------------------------------------------------------------
// Softmax cross entropy
// ---------------------------------------------------------------------------

class SoftmaxXentKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const char* op = "SoftmaxCrossEntropyWithLogits";
    const sdk::XentShape shape = sdk::DenseXentShape(call.input_shape(0), call.input_shape(1));
    const PX_DataType dtype = call.input_dtype(0);
    PX_SDK_CHECK(call.input_dtype(1) == dtype, "%s: logits are %s, labels %s", op,
                 sdk::DtypeName(dtype), sdk::DtypeName(call.input_dtype(1)));
    const ew::Dtype ew_dtype = ToDtype(dtype, op);
    CheckContiguous(call, op);
    grad::XentPlan plan;
    plan.batch = shape.batch;
    plan.classes = shape.classes;
    plan.f_row = shape.f_row;
    plan.f_col = shape.f_col;
    plan.l_row = shape.l_row;
    plan.l_col = shape.l_col;
    void* loss = call.AllocateOutputRaw(0, Shape{plan.batch});
    void* backprop = call.AllocateOutputRaw(1, Shape{plan.batch, plan.classes});
    if (plan.batch == 0) return;
    GpuStream& stream = StreamOf(call);
    if (plan.classes == 0) {
      // No classes: every loss is an empty sum.
      const size_t bytes = static_cast<size_t>(plan.batch) * sdk::DtypeSize(dtype);
      PX_GPU_THROW_IF_FAILED(px_gpu::MemsetAsync(loss, 0, bytes, stream.get()),
                             "px_gpu::MemsetAsync(the losses of zero classes)");
      return;
    }
    grad::LaunchSoftmaxXent(ew_dtype, call.input_data(0), call.input_data(1), loss, backprop, plan,
                            stream.get());
    CheckLaunch(stream, op);
  }
};

// The sparse form. The labels are device values, so their range is checked
// on the device: the kernel folds the first bad row into a flag, and one
// synchronous 4-byte read brings it back (a stream synchronize per call,
// the price of an error instead of TensorFlow's silent NaN on GPUs).
class SparseSoftmaxXentKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const char* op = "SparseSoftmaxCrossEntropyWithLogits";
    const sdk::XentShape shape = sdk::SparseXentShape(call.input_shape(0), call.input_shape(1));
    const int64_t batch = shape.batch, classes = shape.classes;
    PX_SDK_CHECK(batch < (int64_t{1} << 32) - 1, "%s: %lld rows are more than this kernel handles",
                 op, static_cast<long long>(batch));
    const ew::Dtype ew_dtype = ToDtype(call.input_dtype(0), op);
    const PX_DataType label_type = call.input_dtype(1);
    PX_SDK_CHECK(label_type == PX_DT_INT32 || label_type == PX_DT_INT64,
                 "%s: labels must be int32 or int64, got %s", op, sdk::DtypeName(label_type));
    CheckContiguous(call, op);
    void* loss = call.AllocateOutputRaw(0, Shape{batch});
    void* backprop = call.AllocateOutputRaw(1, Shape{batch, classes});
    if (batch == 0) return;
    GpuStream& stream = StreamOf(call);
    px_gpu::Stream s = stream.get();
    StreamBuffer flag(stream, sizeof(unsigned), op);
    unsigned* bad_row = static_cast<unsigned*>(flag.get());
    PX_GPU_THROW_IF_FAILED(px_gpu::MemsetAsync(bad_row, 0xFF, sizeof(unsigned), s),
                           "px_gpu::MemsetAsync(the label check)");
    const bool int64_labels = label_type == PX_DT_INT64;
    grad::LaunchSparseSoftmaxXent(ew_dtype, int64_labels, call.input_data(0), call.input_data(1),
                                  loss, backprop, batch, classes, bad_row, s);
    CheckLaunch(stream, op);
    unsigned row = 0;
    PX_GPU_THROW_IF_FAILED(px_gpu::MemcpyAsync(&row, bad_row, sizeof(row), px_gpu::kDeviceToHost, s),
                           "reading back the label check");
    PX_GPU_THROW_IF_FAILED(px_gpu::StreamSynchronize(s), "the label check");
    if (row == 0xFFFFFFFFu) return;
    // The bad label itself, for the message.
    int64_t label = 0;
    const size_t size = int64_labels ? 8 : 4;
    const char* at = static_cast<const char*>(call.input_data(1)) + size * row;
    int32_t label32 = 0;
    PX_GPU_THROW_IF_FAILED(
        px_gpu::MemcpyAsync(int64_labels ? static_cast<void*>(&label) : &label32, at, size,
                            px_gpu::kDeviceToHost, s),
        "reading back a bad label");
    PX_GPU_THROW_IF_FAILED(px_gpu::StreamSynchronize(s), "reading back a bad label");
    if (!int64_labels) label = label32;
    PX_SDK_CHECK(false,
                 "Received a label value of %lld which is outside the valid range of [0, %lld) "
                 "(labels[%u], the first such label)",
                 static_cast<long long>(label), static_cast<long long>(classes), row);
  }
};

// ---------------------------------------------------------------------------
// Pooling gradients
// ---------------------------------------------------------------------------

template <bool kV2>
class MaxPoolGradKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    if (!kV2) {
      window_.Read(attrs, true);
      return;
    }
    window_.ReadPoolingV2(attrs);  // ksize and strides: inputs 3 and 4
  }

  void Compute(sdk::Call& call) override {
    const char* op = kV2 ? "MaxPoolGradV2" : "MaxPoolGrad";
    sdk::Window w = window_;
    if (kV2) w.SetPoolSizes(call.input_int_values(3), call.input_int_values(4));
    const Shape in_shape = call.input_shape(0);
    PX_SDK_CHECK(in_shape.size() == 4, "orig_input must be 4-D, got %s",
                 sdk::ShapeString(in_shape).c_str());
    const PX_DataType dtype = call.input_dtype(0);
    for (size_t i = 1; i < 3; ++i) {
      PX_SDK_CHECK(call.input_dtype(i) == dtype, "%s: input %zu is %s, orig_input %s", op, i,
                   sdk::DtypeName(call.input_dtype(i)), sdk::DtypeName(dtype));
    }
    const ew::Dtype ew_dtype = ToDtype(dtype, op);
    const pool::PoolPlan plan = w.Pool(in_shape);
    const Shape pooled = sdk::PooledShape(plan);
    sdk::CheckPooledShape("orig_output", call.input_shape(1), pooled);
    sdk::CheckPooledShape("grad", call.input_shape(2), pooled);
    CheckContiguous(call, op);
    void* dx = call.AllocateOutputRaw(0, in_shape);
    if (sdk::NumElements(in_shape) == 0) return;
    GpuStream& stream = StreamOf(call);
    grad::LaunchMaxPoolGrad(ew_dtype, call.input_data(0), call.input_data(2), dx, plan,
                            stream.get());
    CheckLaunch(stream, op);
  }

 private:
  sdk::Window window_;
};

class AvgPoolGradKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { window_.Read(attrs, true); }

  void Compute(sdk::Call& call) override {
    const char* op = "AvgPoolGrad";
    const std::vector<int64_t> dims = call.input_int_values(0);
    PX_SDK_CHECK(call.input_rank(0) == 1 && dims.size() == 4,
                 "orig_input_shape must be a 1-D tensor of 4 elements, got shape %s",
                 sdk::ShapeString(call.input_shape(0)).c_str());
    for (int64_t d : dims) {
      PX_SDK_CHECK(d >= 0, "orig_input_shape must be non-negative, got %s",
                   sdk::ShapeString(dims).c_str());
    }
    const Shape in_shape(dims.begin(), dims.end());
    const Shape grad_shape = call.input_shape(1);
    PX_SDK_CHECK(grad_shape.size() == 4, "grad must be 4-D, got %s",
                 sdk::ShapeString(grad_shape).c_str());
    const ew::Dtype ew_dtype = ToDtype(call.input_dtype(1), op);
    const pool::PoolPlan plan = window_.Pool(in_shape);
    sdk::CheckPooledShape("grad", grad_shape, sdk::PooledShape(plan));
    PX_SDK_CHECK(px_sdk_is_contiguous(&call.input(1)), "%s: grad is not contiguous", op);
    void* dx = call.AllocateOutputRaw(0, in_shape);
    if (sdk::NumElements(in_shape) == 0) return;
    GpuStream& stream = StreamOf(call);
    grad::LaunchAvgPoolGrad(ew_dtype, call.input_data(1), dx, plan, stream.get());
    CheckLaunch(stream, op);
  }

 private:
  sdk::Window window_;
};

const std::vector<PX_DataType> kFloatTypes = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF,
                                              PX_DT_BFLOAT16};
const std::vector<PX_DataType> kRealTypes = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF,
                                             PX_DT_BFLOAT16, PX_DT_INT8,  PX_DT_INT16,
                                             PX_DT_INT32, PX_DT_INT64, PX_DT_UINT8};

}  // namespace

PX_Status* RegisterNnGradKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  for (const ActivationEntry& e : kActivationOps) {
    PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<ActivationGradKernel>(
        info, registrar, *e.sig, {e.integers ? kRealTypes : kFloatTypes}));
  }
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<SoftmaxXentKernel>(
      info, registrar, sdk::sig::kSoftmaxCrossEntropyWithLogits, {kFloatTypes}));
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<SparseSoftmaxXentKernel>(
      info, registrar, sdk::sig::kSparseSoftmaxCrossEntropyWithLogits,
      {kFloatTypes, {PX_DT_INT32, PX_DT_INT64}}));
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<MaxPoolGradKernel<false>>(
      info, registrar, sdk::sig::kMaxPoolGrad, {kFloatTypes}));
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<MaxPoolGradKernel<true>>(
      info, registrar, sdk::sig::kMaxPoolGradV2, {kFloatTypes}));
  return sdk::RegisterKernel<AvgPoolGradKernel>(info, registrar, sdk::sig::kAvgPoolGrad,
                                                {kFloatTypes});
}

}  // namespace plexus::cuda

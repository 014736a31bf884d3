// The CUDA plugin's reductions (Sum, Mean, Max, Min, Prod over a host-memory
// `axis` input), Softmax / LogSoftmax over the last dimension, BiasAdd
// (NHWC or NCHW) and BiasAddGrad (a Sum over every dimension but the
// channel one). The classes here check dtypes and shapes and build the
// plans; the device code is in reduce.cu.
#include <cstdint>
#include <string>
#include <vector>

#include "gpu_stream.h"
#include "kernels/dtype_map.h"
#include "kernels/reduce_launch.h"
#include "kernels/register_kernels.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/plugin.h"
#include "plexus/sdk/window.h"

namespace plexus::cuda {
namespace {

using red::Reducer;
using sdk::Shape;

// ---------------------------------------------------------------------------
// Reductions
// ---------------------------------------------------------------------------

struct ReduceEntry {
  const sdk::OpSignature* sig;
  Reducer code;
};
constexpr ReduceEntry kReduceOps[] = {
    {&sdk::sig::kSum, Reducer::kSum},   {&sdk::sig::kMean, Reducer::kMean},
    {&sdk::sig::kMax, Reducer::kMax},   {&sdk::sig::kMin, Reducer::kMin},
    {&sdk::sig::kProd, Reducer::kProd},
};

// The output shape and the plan of reducing `shape` over `axes` (repeated
// axes count once, like the cpu plugin and TensorFlow). Returns false when
// nothing is reduced (every reduced dimension has size 1, or no axis): the
// output is then a copy of the input.
bool MakeReducePlan(const Shape& shape, const std::vector<int64_t>& axes, bool keep_dims,
                    Shape* out_shape, red::ReducePlan* plan) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t axis : axes) {
    PX_SDK_CHECK(axis >= -rank && axis < rank,
                 "Invalid reduction dimension (%lld for input with %lld dimension(s)",
                 static_cast<long long>(axis), static_cast<long long>(rank));
    reduced[axis < 0 ? axis + rank : axis] = true;
  }
  // Merge neighbours that are both kept or both reduced; size-1 dimensions
  // change nothing and are dropped.
  std::vector<int64_t> dims;
  std::vector<bool> group_reduced;
  out_shape->clear();
  plan->outputs = 1;
  plan->count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      plan->count *= shape[d];
      if (keep_dims) out_shape->push_back(1);
    } else {
      plan->outputs *= shape[d];
      out_shape->push_back(shape[d]);
    }
    if (shape[d] == 1) continue;
    if (!dims.empty() && group_reduced.back() == reduced[d]) {
      dims.back() *= shape[d];
    } else {
      dims.push_back(shape[d]);
      group_reduced.push_back(reduced[d]);
    }
  }
  const int groups = static_cast<int>(dims.size());
  int red_groups = 0, last_red = -1;
  for (int g = 0; g < groups; ++g) {
    if (group_reduced[g]) {
      ++red_groups;
      last_red = g;
    }
  }
  if (red_groups == 0) return false;
  if (red_groups == 1) {
    // Groups alternate: [outer?, reduced, inner?].
    plan->outer = last_red > 0 ? dims[last_red - 1] : 1;
    plan->inner = last_red + 1 < groups ? dims[last_red + 1] : 1;
    plan->layout = plan->inner == 1 ? red::Layout::kRows : red::Layout::kColumns;
    return true;
  }
  plan->layout = red::Layout::kGeneral;
  int64_t stride = 1;
  std::vector<int64_t> strides(static_cast<size_t>(groups));
  for (int g = groups - 1; g >= 0; --g) {
    strides[g] = stride;
    stride *= dims[g];
  }
  plan->kept_rank = 0;
  plan->red_rank = 0;
  for (int g = 0; g < groups; ++g) {
    int& n = group_reduced[g] ? plan->red_rank : plan->kept_rank;
    if (n == red::kMaxGroups) {
      throw sdk::KernelError(
          PX_CODE_UNIMPLEMENTED,
          sdk::Format("reducing %s over these axes needs more than %d groups of dimensions, the "
                      "most the CUDA kernels handle",
                      sdk::ShapeString(shape).c_str(), red::kMaxGroups));
    }
    (group_reduced[g] ? plan->red_dims : plan->kept_dims)[n] = dims[g];
    (group_reduced[g] ? plan->red_strides : plan->kept_strides)[n] = strides[g];
    ++n;
  }
  return true;
}

// Output 0 of `call`: input 0 folded with `op` over `axes` (`name` is the
// op, for errors).
void ReduceInput(sdk::Call& call, Reducer op, const std::vector<int64_t>& axes, bool keep_dims,
                 const char* name) {
  const DLTensor& x = call.input(0);
  const PX_DataType dtype = call.input_dtype(0);
  const ew::Dtype ew_dtype = ToDtype(dtype, name);
  PX_SDK_CHECK(px_sdk_is_contiguous(&x), "%s: input 0 is not contiguous", name);
  Shape out_shape;
  red::ReducePlan plan;
  const bool reduces = MakeReducePlan(call.input_shape(0), axes, keep_dims, &out_shape, &plan);
  void* out = call.AllocateOutputRaw(0, out_shape.data(), out_shape.size());
  if (plan.outputs == 0) return;
  GpuStream& stream = StreamOf(call);
  if (!reduces) {
    // Every output element folds exactly one input element: a copy.
    const size_t bytes = static_cast<size_t>(plan.outputs) * sdk::DtypeSize(dtype);
    const px_gpu::Error error = px_gpu::MemcpyAsync(out, px_sdk_data(&x), bytes,
                                                    px_gpu::kDeviceToDevice, stream.get());
    PX_SDK_CHECK(error == px_gpu::kSuccess, "%s: cudaMemcpyAsync failed: %s", name,
                 px_gpu::ErrorString(error));
  } else {
    red::LaunchReduce(op, ew_dtype, px_sdk_data(&x), out, plan, stream.get());
  }
  CheckLaunch(stream, name);
}

class ReduceKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    op_name_ = attrs.op();
    keep_dims_ = attrs.Bool("keep_dims", false);
    for (const ReduceEntry& e : kReduceOps) {
      if (op_name_ == e.sig->op) {
        op_ = e.code;
        return;
      }
    }
    PX_SDK_CHECK(false, "no CUDA reduction kernel for op %s", op_name_.c_str());
  }

  void Compute(sdk::Call& call) override {
    ReduceInput(call, op_, call.input_int_values(1), keep_dims_, op_name_.c_str());
  }

 private:
  std::string op_name_;
  Reducer op_ = Reducer::kSum;
  bool keep_dims_ = false;
};

// ---------------------------------------------------------------------------
// Softmax, LogSoftmax
// ---------------------------------------------------------------------------

class SoftmaxKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    op_name_ = attrs.op();
    log_ = op_name_ == "LogSoftmax";
  }

  void Compute(sdk::Call& call) override {
    const DLTensor& x = call.input(0);
    const PX_DataType dtype = call.input_dtype(0);
    const ew::Dtype ew_dtype = ToDtype(dtype, op_name_.c_str());
    PX_SDK_CHECK(px_sdk_is_contiguous(&x), "%s: input 0 is not contiguous", op_name_.c_str());
    const Shape shape = call.input_shape(0);
    PX_SDK_CHECK(!shape.empty(), "logits must have rank >= 1, got shape %s",
                 sdk::ShapeString(shape).c_str());
    void* y = call.AllocateOutputRaw(0, x.shape, static_cast<size_t>(x.ndim));
    const int64_t cols = shape.back();
    const int64_t n = sdk::NumElements(shape);
    if (n == 0) return;
    GpuStream& stream = StreamOf(call);
    red::LaunchSoftmax(log_, ew_dtype, px_sdk_data(&x), y, n / cols, cols, stream.get());
    CheckLaunch(stream, op_name_.c_str());
  }

 private:
  std::string op_name_;
  bool log_ = false;
};

// ---------------------------------------------------------------------------
// BiasAdd
// ---------------------------------------------------------------------------

class BiasAddKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { nchw_ = sdk::ReadNchw(attrs); }

  void Compute(sdk::Call& call) override {
    const DLTensor& x = call.input(0);
    const DLTensor& bias = call.input(1);
    const PX_DataType dtype = call.input_dtype(0);
    PX_SDK_CHECK(call.input_dtype(1) == dtype, "BiasAdd: value is %s, bias %s",
                 sdk::DtypeName(dtype), sdk::DtypeName(call.input_dtype(1)));
    const ew::Dtype ew_dtype = ToDtype(dtype, "BiasAdd");
    PX_SDK_CHECK(px_sdk_is_contiguous(&x) && px_sdk_is_contiguous(&bias),
                 "BiasAdd: the inputs must be contiguous");
    const Shape shape = call.input_shape(0);
    const Shape bias_shape = call.input_shape(1);
    PX_SDK_CHECK(shape.size() >= 2, "BiasAdd value must be at least rank 2, got %s",
                 sdk::ShapeString(shape).c_str());
    const size_t channel_dim = nchw_ ? 1 : shape.size() - 1;
    const int64_t channels = shape[channel_dim];
    PX_SDK_CHECK(bias_shape.size() == 1 && bias_shape[0] == channels,
                 "BiasAdd bias must be 1-D with the %lld channels of value %s (%s), got %s",
                 static_cast<long long>(channels), sdk::ShapeString(shape).c_str(),
                 nchw_ ? "NCHW" : "NHWC", sdk::ShapeString(bias_shape).c_str());
    int64_t inner = 1;
    for (size_t d = channel_dim + 1; d < shape.size(); ++d) inner *= shape[d];
    void* y = call.AllocateOutputRaw(0, x.shape, static_cast<size_t>(x.ndim));
    const int64_t n = sdk::NumElements(shape);
    if (n == 0) return;
    GpuStream& stream = StreamOf(call);
    red::LaunchBiasAdd(ew_dtype, px_sdk_data(&x), px_sdk_data(&bias), y, n, channels, inner,
                       stream.get());
    CheckLaunch(stream, "BiasAdd");
  }

 private:
  bool nchw_ = false;
};

// BiasAddGrad: out_backprop summed over every dimension but the channel one
// (the last, or dimension 1 with NCHW), as a Sum.
class BiasAddGradKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { nchw_ = sdk::ReadNchw(attrs); }

  void Compute(sdk::Call& call) override {
    const Shape shape = call.input_shape(0);
    PX_SDK_CHECK(shape.size() >= 2, "BiasAddGrad out_backprop must be at least 2-D, got %s",
                 sdk::ShapeString(shape).c_str());
    const int64_t channel_dim = nchw_ ? 1 : static_cast<int64_t>(shape.size()) - 1;
    std::vector<int64_t> axes;
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
      if (d != channel_dim) axes.push_back(d);
    }
    ReduceInput(call, Reducer::kSum, axes, /*keep_dims=*/false, "BiasAddGrad");
  }

 private:
  bool nchw_ = false;
};

const std::vector<PX_DataType> kFloatTypes = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF,
                                              PX_DT_BFLOAT16};

}  // namespace

PX_Status* RegisterReductionKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> idx = {PX_DT_INT32, PX_DT_INT64};
  for (const ReduceEntry& e : kReduceOps) {
    // axis (input 1) stays in host memory.
    PX_SDK_RETURN_IF_ERROR(
        sdk::RegisterKernel<ReduceKernel>(info, registrar, *e.sig, {kFloatTypes, idx}));
  }
  for (const sdk::OpSignature* op : {&sdk::sig::kSoftmax, &sdk::sig::kLogSoftmax}) {
    PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<SoftmaxKernel>(info, registrar, *op, {kFloatTypes}));
  }
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<BiasAddKernel>(info, registrar, sdk::sig::kBiasAdd, {kFloatTypes}));
  PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<BiasAddGradKernel>(info, registrar,
                                                                sdk::sig::kBiasAddGrad,
                                                                {kFloatTypes}));
  return nullptr;
}

}  // namespace plexus::cuda

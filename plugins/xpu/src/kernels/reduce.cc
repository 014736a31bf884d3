// The XPU plugin's reduction kernel classes: Sum, Mean, Max, Min, Prod,
// All, Any (axes in a host-memory input, keep_dims), ArgMax / ArgMin,
// Softmax / LogSoftmax over the last dimension and BiasAdd (NHWC or NCHW).
// The classes check dtypes and shapes, build the plan (plans.h) and launch
// the kernels of kernels/reduce.cl through xpu_stream.h.
#include <cstdint>
#include <string>
#include <vector>

#include "abi.h"
#include "kernels/dtype_suffix.h"
#include "kernels/families.h"
#include "kernels/plans.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/plugin.h"
#include "plexus/sdk/window.h"
#include "xpu_stream.h"

namespace plexus::xpu {
namespace {

using sdk::Shape;

// Launches a reduction kernel (`name`_group or `name`_serial) over `plan`:
// a work-group per output for long reductions or few outputs, a work-item
// per output for many short ones.
void LaunchReduce(XpuStream& stream, const std::string& name, const void* x, void* y,
                  const px_xpu_reduce_plan& plan, int op) {
  const bool serial = plan.count <= 32 || (plan.outputs >= 16384 && plan.count <= 1024);
  const size_t local = PX_XPU_REDUCE_WG;
  const size_t global = serial ? static_cast<size_t>(plan.outputs)
                               : static_cast<size_t>(plan.outputs) * PX_XPU_REDUCE_WG;
  const std::string kernel = name + (serial ? "_serial" : "_group");
  Launch(stream, kernel.c_str(), 1, &global, serial ? nullptr : &local,
         {Arg(x), Arg(static_cast<const void*>(y)), Arg(plan), Arg(int32_t{op})});
}

// The reduced dimensions of `shape` for the axes of input `index` (repeated
// and negative axes allowed), and the output shape.
std::vector<bool> ReducedAxes(const sdk::Call& call, size_t index, const Shape& shape,
                              bool keep_dims, Shape* out_shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t axis : call.input_int_values(index)) {
    PX_SDK_CHECK(axis >= -rank && axis < rank,
                 "Invalid reduction dimension (%lld for input with %lld dimension(s)",
                 static_cast<long long>(axis), static_cast<long long>(rank));
    reduced[axis < 0 ? axis + rank : axis] = true;
  }
  out_shape->clear();
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d]) {
      out_shape->push_back(shape[d]);
    } else if (keep_dims) {
      out_shape->push_back(1);
    }
  }
  return reduced;
}

struct ReduceEntry {
  const sdk::OpSignature* sig;
  int code;
};
constexpr ReduceEntry kReduceOps[] = {
    {&sdk::sig::kSum, PX_RED_SUM}, {&sdk::sig::kMean, PX_RED_MEAN}, {&sdk::sig::kMax, PX_RED_MAX},
    {&sdk::sig::kMin, PX_RED_MIN}, {&sdk::sig::kProd, PX_RED_PROD}, {&sdk::sig::kAll, PX_RED_ALL},
    {&sdk::sig::kAny, PX_RED_ANY},
};

class ReduceKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    op_name_ = attrs.op();
    keep_dims_ = attrs.Bool("keep_dims", false);
    for (const ReduceEntry& e : kReduceOps) {
      if (op_name_ == e.sig->op) {
        code_ = e.code;
        return;
      }
    }
    PX_SDK_CHECK(false, "no XPU reduction kernel for op %s", op_name_.c_str());
  }

  void Compute(sdk::Call& call) override {
    const char* op = op_name_.c_str();
    const PX_DataType dtype = call.input_dtype(0);
    const bool logical = code_ == PX_RED_ALL || code_ == PX_RED_ANY;
    PX_SDK_CHECK(!logical || dtype == PX_DT_BOOL, "%s: input is %s, expected bool", op,
                 sdk::DtypeName(dtype));
    if (!logical && !IsFloatDtype(dtype)) {
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED, sdk::Format("%s on XPU does not support dtype %s",
                                                                op, sdk::DtypeName(dtype)));
    }
    PX_SDK_CHECK(px_sdk_is_contiguous(&call.input(0)), "%s: input 0 is not contiguous", op);
    const Shape shape = call.input_shape(0);
    Shape out_shape;
    const std::vector<bool> reduced = ReducedAxes(call, 1, shape, keep_dims_, &out_shape);
    px_xpu_reduce_plan plan;
    const bool reduces = MakeReducePlan(shape, reduced, &plan);
    void* out = call.AllocateOutputRaw(0, out_shape);
    if (plan.outputs == 0) return;
    XpuStream& stream = StreamOf(call);
    if (!reduces) {
      // Every output folds exactly one input element: a copy.
      CopyAsync(stream, out, call.input_data(0),
                static_cast<size_t>(plan.outputs) * sdk::DtypeSize(dtype));
      return;
    }
    LaunchReduce(stream, "reduce_" + RequireSuffix(dtype, op), call.input_data(0), out, plan,
                 code_);
  }

 private:
  std::string op_name_;
  int code_ = PX_RED_SUM;
  bool keep_dims_ = false;
};

// ArgMax / ArgMin: the first index of the extreme value along one axis.
class ArgReduceKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { max_ = std::string(attrs.op()) == "ArgMax"; }

  void Compute(sdk::Call& call) override {
    const char* op = max_ ? "ArgMax" : "ArgMin";
    const Shape shape = call.input_shape(0);
    const int64_t rank = static_cast<int64_t>(shape.size());
    PX_SDK_CHECK(call.input_rank(1) == 0, "dimension must be a scalar, got shape %s",
                 sdk::ShapeString(call.input_shape(1)).c_str());
    int64_t axis = call.input_int_values(1)[0];
    PX_SDK_CHECK(axis >= -rank && axis < rank,
                 "Expected dimension in the range [%lld, %lld), but got %lld",
                 static_cast<long long>(-rank), static_cast<long long>(rank),
                 static_cast<long long>(axis));
    if (axis < 0) axis += rank;
    PX_SDK_CHECK(shape[axis] > 0, "Reduction axis %lld is empty in shape %s",
                 static_cast<long long>(axis), sdk::ShapeString(shape).c_str());
    const PX_DataType dtype = call.input_dtype(0);
    const PX_DataType out_dtype = call.output_dtype(0);
    if ((!IsFloatDtype(dtype) && dtype != PX_DT_INT32) ||
        (out_dtype != PX_DT_INT32 && out_dtype != PX_DT_INT64)) {
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                             sdk::Format("%s on XPU does not support %s input with %s output", op,
                                         sdk::DtypeName(dtype), sdk::DtypeName(out_dtype)));
    }
    PX_SDK_CHECK(px_sdk_is_contiguous(&call.input(0)), "%s: input 0 is not contiguous", op);
    Shape out_shape;
    std::vector<bool> reduced(static_cast<size_t>(rank), false);
    reduced[axis] = true;
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis) out_shape.push_back(shape[d]);
    }
    void* out = call.AllocateOutputRaw(0, out_shape);
    if (sdk::NumElements(out_shape) == 0) return;
    XpuStream& stream = StreamOf(call);
    px_xpu_reduce_plan plan;
    if (!MakeReducePlan(shape, reduced, &plan)) {
      // An axis of size 1: every index is 0.
      FillAsync(stream, out, 0, static_cast<size_t>(plan.outputs) * sdk::DtypeSize(out_dtype));
      return;
    }
    LaunchReduce(stream,
                 "argreduce_" + RequireSuffix(dtype, op) + "_" + RequireSuffix(out_dtype, op),
                 call.input_data(0), out, plan, max_ ? PX_RED_ARGMAX : PX_RED_ARGMIN);
  }

 private:
  bool max_ = true;
};

class SoftmaxKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    op_name_ = attrs.op();
    log_ = op_name_ == "LogSoftmax";
  }

  void Compute(sdk::Call& call) override {
    const char* op = op_name_.c_str();
    const DLTensor& x = call.input(0);
    const PX_DataType dtype = call.input_dtype(0);
    PX_SDK_CHECK(px_sdk_is_contiguous(&x), "%s: input 0 is not contiguous", op);
    const Shape shape = call.input_shape(0);
    PX_SDK_CHECK(!shape.empty(), "logits must have rank >= 1, got shape %s",
                 sdk::ShapeString(shape).c_str());
    const std::string kernel = "softmax_" + RequireSuffix(dtype, op);
    void* y = call.AllocateOutputRaw(0, x.ndim ? x.shape : nullptr, static_cast<size_t>(x.ndim));
    const int64_t cols = shape.back();
    const int64_t n = sdk::NumElements(shape);
    if (n == 0) return;
    const int64_t rows = n / cols;
    const size_t global = static_cast<size_t>(rows) * PX_XPU_REDUCE_WG, local = PX_XPU_REDUCE_WG;
    Launch(StreamOf(call), kernel.c_str(), 1, &global, &local,
           {Arg(px_sdk_data(&x)), Arg(static_cast<const void*>(y)), Arg(rows), Arg(cols),
            Arg(int32_t{log_ ? 1 : 0})});
  }

 private:
  std::string op_name_;
  bool log_ = false;
};

class BiasAddKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { nchw_ = sdk::ReadNchw(attrs); }

  void Compute(sdk::Call& call) override {
    const DLTensor& x = call.input(0);
    const DLTensor& bias = call.input(1);
    const PX_DataType dtype = call.input_dtype(0);
    PX_SDK_CHECK(call.input_dtype(1) == dtype, "BiasAdd: value is %s, bias %s",
                 sdk::DtypeName(dtype), sdk::DtypeName(call.input_dtype(1)));
    const std::string kernel = "bias_add_" + RequireSuffix(dtype, "BiasAdd");
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
    const size_t global = static_cast<size_t>(n);
    Launch(StreamOf(call), kernel.c_str(), 1, &global, nullptr,
           {Arg(px_sdk_data(&x)), Arg(px_sdk_data(&bias)), Arg(static_cast<const void*>(y)), Arg(n),
            Arg(channels), Arg(inner)});
  }

 private:
  bool nchw_ = false;
};

const std::vector<PX_DataType> kFloat = {PX_DT_FLOAT, PX_DT_HALF, PX_DT_BFLOAT16};

}  // namespace

PX_Status* RegisterXpuReductionKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> idx = {PX_DT_INT32, PX_DT_INT64};
  for (const ReduceEntry& e : kReduceOps) {
    const bool logical = e.code == PX_RED_ALL || e.code == PX_RED_ANY;
    // The axes (input 1) stay in host memory.
    if (logical) {
      PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<ReduceKernel>(info, registrar, *e.sig, {idx}));
    } else {
      PX_SDK_RETURN_IF_ERROR(
          sdk::RegisterKernel<ReduceKernel>(info, registrar, *e.sig, {kFloat, idx}));
    }
  }
  const std::vector<PX_DataType> arg_types = {PX_DT_FLOAT, PX_DT_HALF, PX_DT_BFLOAT16, PX_DT_INT32};
  for (const sdk::OpSignature* op : {&sdk::sig::kArgMax, &sdk::sig::kArgMin}) {
    PX_SDK_RETURN_IF_ERROR(
        sdk::RegisterKernel<ArgReduceKernel>(info, registrar, *op, {arg_types, idx, idx}));
  }
  for (const sdk::OpSignature* op : {&sdk::sig::kSoftmax, &sdk::sig::kLogSoftmax}) {
    PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<SoftmaxKernel>(info, registrar, *op, {kFloat}));
  }
  PX_SDK_RETURN_IF_ERROR(
      sdk::RegisterKernel<BiasAddKernel>(info, registrar, sdk::sig::kBiasAdd, {kFloat}));
  return nullptr;
}

}  // namespace plexus::xpu

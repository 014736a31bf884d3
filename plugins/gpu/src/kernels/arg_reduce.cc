// ArgMax, ArgMin, All and Any on CUDA (device code in arg_reduce.cu), with the
// cpu plugin's checks, messages and dtypes:
// - ArgMax / ArgMin: every dtype the cpu plugin registers (float, double,
//   half, bfloat16, int8/16/32/64, uint8, bool); the dimension (int16, int32
//   or int64) in host memory; output_type int16, uint16, int32 or int64.
// - All / Any: bool, the axes (int32 or int64, scalar or vector, negative
//   and repeated allowed) in host memory, keep_dims.
#include <cstdint>
#include <string>
#include <vector>

#include "gpu_stream.h"
#include "kernels/dtype_map.h"
#include "kernels/arg_reduce_launch.h"
#include "kernels/register_kernels.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/plugin.h"

namespace plexus::cuda {
namespace {

// ArgMax / ArgMin: the first index of the extreme value along one axis.
class ArgReduceKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { max_ = std::string(attrs.op()) == "ArgMax"; }

  void Compute(sdk::Call& call) override {
    const char* op = max_ ? "ArgMax" : "ArgMin";
    const sdk::Shape shape = call.input_shape(0);
    const int64_t rank = static_cast<int64_t>(shape.size());
    PX_SDK_CHECK(call.input_rank(1) == 0, "dimension must be a scalar, got shape %s",
                 sdk::ShapeString(call.input_shape(1)).c_str());
    int64_t axis = call.input_dtype(1) == PX_DT_INT16 ? *call.input<int16_t>(1)
                                                      : call.input_int_values(1)[0];
    PX_SDK_CHECK(axis >= -rank && axis < rank,
                 "Expected dimension in the range [%lld, %lld), but got %lld",
                 static_cast<long long>(-rank), static_cast<long long>(rank),
                 static_cast<long long>(axis));
    if (axis < 0) axis += rank;
    PX_SDK_CHECK(shape[axis] > 0, "Reduction axis %lld is empty in shape %s",
                 static_cast<long long>(axis), sdk::ShapeString(shape).c_str());
    const ew::Type type = ToEwType(call.input_dtype(0), op);
    int out_bytes = 0;
    switch (call.output_dtype(0)) {
      case PX_DT_INT64: out_bytes = 8; break;
      case PX_DT_INT32: out_bytes = 4; break;
      case PX_DT_INT16:
      case PX_DT_UINT16: out_bytes = 2; break;
      default:
        PX_SDK_CHECK(false, "output_type %s is not supported",
                     sdk::DtypeName(call.output_dtype(0)));
    }
    PX_SDK_CHECK(px_sdk_is_contiguous(&call.input(0)), "%s: input 0 is not contiguous", op);
    sdk::Shape out_shape;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis) out_shape.push_back(shape[d]);
      if (d < axis) outer *= shape[d];
      if (d > axis) inner *= shape[d];
    }
    void* out = call.AllocateOutputRaw(0, out_shape);
    if (outer * inner == 0) return;
    GpuStream& stream = StreamOf(call);
    red2::LaunchArgReduce(max_, type, call.input_data(0), out, out_bytes, outer, shape[axis],
                          inner, stream.get());
    CheckLaunch(stream, op);
  }

 private:
  bool max_ = true;
};

// All / Any over the axes of input 1.
class LogicalReduceKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    all_ = std::string(attrs.op()) == "All";
    keep_dims_ = attrs.Bool("keep_dims", false);
  }

  void Compute(sdk::Call& call) override {
    const char* op = all_ ? "All" : "Any";
    PX_SDK_CHECK(call.input_dtype(0) == PX_DT_BOOL, "%s: input is %s, expected bool", op,
                 sdk::DtypeName(call.input_dtype(0)));
    PX_SDK_CHECK(px_sdk_is_contiguous(&call.input(0)), "%s: input 0 is not contiguous", op);
    const sdk::Shape shape = call.input_shape(0);
    const int64_t rank = static_cast<int64_t>(shape.size());
    std::vector<bool> reduced(static_cast<size_t>(rank), false);
    for (int64_t axis : call.input_int_values(1)) {
      PX_SDK_CHECK(axis >= -rank && axis < rank,
                   "Invalid reduction dimension (%lld for input with %lld dimension(s)",
                   static_cast<long long>(axis), static_cast<long long>(rank));
      reduced[axis < 0 ? axis + rank : axis] = true;
    }
    // Output shape; merged groups of the input (size-1 dimensions dropped,
    // neighbours both kept or both reduced merged).
    sdk::Shape out_shape;
    std::vector<int64_t> dims;
    std::vector<bool> group_reduced;
    for (int64_t d = 0; d < rank; ++d) {
      if (reduced[d]) {
        if (keep_dims_) out_shape.push_back(1);
      } else {
        out_shape.push_back(shape[d]);
      }
      if (shape[d] == 1) continue;
      if (!dims.empty() && group_reduced.back() == reduced[d]) {
        dims.back() *= shape[d];
      } else {
        dims.push_back(shape[d]);
        group_reduced.push_back(reduced[d]);
      }
    }
    auto* out = static_cast<uint8_t*>(call.AllocateOutputRaw(0, out_shape));
    const int64_t outputs = sdk::NumElements(out_shape);
    if (outputs == 0) return;
    GpuStream& stream = StreamOf(call);
    const auto* x = static_cast<const uint8_t*>(call.input_data(0));
    const int64_t n = sdk::NumElements(shape);
    bool any_reduced = false;
    for (bool r : group_reduced) any_reduced |= r;
    if (!any_reduced) {  // nothing reduced (or only dimensions of 1): a copy
      const px_gpu::Error error =
          px_gpu::MemcpyAsync(out, x, static_cast<size_t>(n), px_gpu::kDeviceToDevice, stream.get());
      PX_SDK_CHECK(error == px_gpu::kSuccess, "%s: cudaMemcpyAsync failed: %s", op,
                   px_gpu::ErrorString(error));
      return;
    }
    const px_gpu::Error error =
        px_gpu::MemsetAsync(out, all_ ? 1 : 0, static_cast<size_t>(outputs), stream.get());
    PX_SDK_CHECK(error == px_gpu::kSuccess, "%s: cudaMemsetAsync failed: %s", op,
                 px_gpu::ErrorString(error));
    if (n == 0) return;  // empty reductions: the identity
    if (static_cast<int>(dims.size()) > red2::kMaxGroups) {
      throw sdk::KernelError(
          PX_CODE_UNIMPLEMENTED,
          sdk::Format("%s over %s with these axes needs more than %d merged dimension groups, "
                      "the most the CUDA kernel handles",
                      op, sdk::ShapeString(shape).c_str(), red2::kMaxGroups));
    }
    red2::LogicalPlan plan;
    plan.rank = static_cast<int>(dims.size());
    plan.num_inputs = n;
    int64_t stride = 1;
    for (int d = plan.rank - 1; d >= 0; --d) {
      plan.dims[d] = dims[d];
      plan.out_strides[d] = group_reduced[d] ? 0 : stride;
      if (!group_reduced[d]) stride *= dims[d];
    }
    red2::LaunchLogicalReduce(all_, x, out, plan, outputs == 1, stream.get());
    CheckLaunch(stream, op);
  }

 private:
  bool all_ = true;
  bool keep_dims_ = false;
};

}  // namespace

PX_Status* RegisterArgReduceKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> types = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF,  PX_DT_BFLOAT16,
                                          PX_DT_INT8,  PX_DT_INT16,  PX_DT_INT32, PX_DT_INT64,
                                          PX_DT_UINT8, PX_DT_BOOL};
  const std::vector<PX_DataType> arg_idx = {PX_DT_INT16, PX_DT_INT32, PX_DT_INT64};
  const std::vector<PX_DataType> out_types = {PX_DT_INT16, PX_DT_UINT16, PX_DT_INT32,
                                              PX_DT_INT64};
  const std::vector<PX_DataType> idx = {PX_DT_INT32, PX_DT_INT64};
  for (const sdk::OpSignature* op : {&sdk::sig::kArgMax, &sdk::sig::kArgMin}) {
    PX_SDK_RETURN_IF_ERROR(
        sdk::RegisterKernel<ArgReduceKernel>(info, registrar, *op, {types, arg_idx, out_types}));
  }
  for (const sdk::OpSignature* op : {&sdk::sig::kAll, &sdk::sig::kAny}) {
    PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<LogicalReduceKernel>(info, registrar, *op, {idx}));
  }
  return nullptr;
}

}  // namespace plexus::cuda

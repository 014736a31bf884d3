// The CUDA plugin's convolution gradients through cuDNN's legacy API:
// Conv2DBackpropInput, Conv2DBackpropFilter,
// DepthwiseConv2dNativeBackpropInput and DepthwiseConv2dNativeBackpropFilter
// (NHWC or NCHW; strides, dilations; SAME, VALID and EXPLICIT padding;
// grouped Conv2D). The shapes and their checks are the reference plugin's
// (sdk/reference/conv_grad.cc); the sizes input (input_sizes or
// filter_sizes) is a host-memory int32 or int64 [4].
//
// Each gradient is of the forward convolution conv.cc runs, set up the same
// way (cudnn_common.h): the filter in cuDNN's order, symmetric padding in
// cuDNN and the rest as a padded copy of the input. So
// - the input gradient is cuDNN's data gradient with respect to the padded
//   input, cropped to the input (conv.cu), and
// - the filter gradient is cuDNN's filter gradient from the padded input,
//   reordered back to TensorFlow's HWIO.
// cuDNN has no gradient algorithm for double with NHWC tensors: those run in
// NCHW, the input and out_backprop transposed there (and the input gradient
// back) by the tiled transpose of the data-movement kernels.
// Algorithms: the heuristics' first that works within the workspace limit
// (and, for float without TF32, uses no tensor cores), else algorithm 1,
// cached per problem. The heuristics may pick an algorithm that sums with
// atomics, so gradients can differ in the last bits from run to run (as
// TensorFlow's and PyTorch's do by default).
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cudnn_loader.h"
#include "gpu_error.h"
#include "gpu_stream.h"
#include "kernels/array_launch.h"
#include "kernels/conv_launch.h"
#include "kernels/cudnn_common.h"
#include "kernels/vendor_kernels.h"
#include "plexus/sdk/conv_grouping.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/plugin.h"
#include "plexus/sdk/window.h"

namespace plexus::cuda {
namespace {

using sdk::Shape;

constexpr size_t kMaxPlans = 256;

// The descriptors and the chosen gradient algorithm of one problem (the
// data or the filter gradient, by kernel).
struct GradPlan : ConvDescriptors {
  cudnnConvolutionBwdDataAlgo_t data_algo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
  cudnnConvolutionBwdFilterAlgo_t filter_algo = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
  size_t workspace = 0;
};

std::shared_ptr<GradPlan> MakeDataPlan(cudnnHandle_t handle, const ConvKey& key,
                                       const TypeInfo& ti, const char* op) {
  auto plan = std::make_shared<GradPlan>();
  SetConvDescriptors(key, ti, op, plan.get());
  int max_count = 0;
  PX_CUDNN_THROW_IF_ERROR(
      cudnn::cudnnGetConvolutionBackwardDataAlgorithmMaxCount(handle, &max_count), op);
  std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(static_cast<size_t>(std::max(max_count, 1)));
  int returned = 0;
  PX_CUDNN_THROW_IF_ERROR(cudnn::cudnnGetConvolutionBackwardDataAlgorithm_v7(
                              handle, plan->filter, plan->y, plan->conv, plan->x,
                              static_cast<int>(perf.size()), &returned, perf.data()),
                          op);
  auto workspace_of = [&](cudnnConvolutionBwdDataAlgo_t algo, size_t* bytes) {
    return cudnn::cudnnGetConvolutionBackwardDataWorkspaceSize(
               handle, plan->filter, plan->y, plan->conv, plan->x, algo, bytes) ==
           CUDNN_STATUS_SUCCESS;
  };
  const bool found = PickAlgorithm(perf, returned, ti, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, plan->conv,
                                   workspace_of, &plan->data_algo, &plan->workspace);
  if (!found) {
    throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                           sdk::Format("%s: cuDNN has no data-gradient algorithm for this "
                                       "convolution (%s, %lld groups)",
                                       op, sdk::DtypeName(static_cast<PX_DataType>(key.dtype)),
                                       static_cast<long long>(key.groups)));
  }
  return plan;
}

std::shared_ptr<GradPlan> MakeFilterPlan(cudnnHandle_t handle, const ConvKey& key,
                                         const TypeInfo& ti, const char* op) {
  auto plan = std::make_shared<GradPlan>();
  SetConvDescriptors(key, ti, op, plan.get());
  int max_count = 0;
  PX_CUDNN_THROW_IF_ERROR(
      cudnn::cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(handle, &max_count), op);
  std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(
      static_cast<size_t>(std::max(max_count, 1)));
  int returned = 0;
  PX_CUDNN_THROW_IF_ERROR(cudnn::cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                              handle, plan->x, plan->y, plan->conv, plan->filter,
                              static_cast<int>(perf.size()), &returned, perf.data()),
                          op);
  auto workspace_of = [&](cudnnConvolutionBwdFilterAlgo_t algo, size_t* bytes) {
    return cudnn::cudnnGetConvolutionBackwardFilterWorkspaceSize(
               handle, plan->x, plan->y, plan->conv, plan->filter, algo, bytes) ==
           CUDNN_STATUS_SUCCESS;
  };
  const bool found = PickAlgorithm(perf, returned, ti, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1,
                                   plan->conv, workspace_of, &plan->filter_algo, &plan->workspace);
  if (!found) {
    throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                           sdk::Format("%s: cuDNN has no filter-gradient algorithm for this "
                                       "convolution (%s, %lld groups)",
                                       op, sdk::DtypeName(static_cast<PX_DataType>(key.dtype)),
                                       static_cast<long long>(key.groups)));
  }
  return plan;
}

// input_sizes or filter_sizes: a host vector of 4 non-negative sizes.
Shape ReadSizes(const sdk::Call& call, size_t i, const char* name) {
  PX_SDK_CHECK(call.input_rank(i) == 1 && call.input_size(i) == 4,
               "%s must be a vector of 4 elements, got shape %s", name,
               sdk::ShapeString(call.input_shape(i)).c_str());
  const std::vector<int64_t> v = call.input_int_values(i);
  for (int64_t d : v) PX_SDK_CHECK(d >= 0, "%s must be non-negative, got %s", name,
                                   sdk::ShapeString(v).c_str());
  return Shape(v.begin(), v.end());
}

// kFilter: Conv2DBackpropFilter (inputs input, filter_sizes, out_backprop);
// else Conv2DBackpropInput (inputs input_sizes, filter, out_backprop). The
// depthwise ops by name.
template <bool kFilter>
class ConvBackpropKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    op_ = attrs.op();
    depthwise_ = op_.rfind("Depthwise", 0) == 0;
    window_.Read(attrs, false);
  }

  void Compute(sdk::Call& call) override {
    const char* op = op_.c_str();
    const Shape input = kFilter ? call.input_shape(0) : ReadSizes(call, 0, "input_sizes");
    const Shape filter = kFilter ? ReadSizes(call, 1, "filter_sizes") : call.input_shape(1);
    const Shape dy_shape = call.input_shape(2);
    PX_SDK_CHECK(input.size() == 4, "%s input must be 4-D, got %s", op,
                 sdk::ShapeString(input).c_str());
    PX_SDK_CHECK(filter.size() == 4, "%s filter must be 4-D, got %s", op,
                 sdk::ShapeString(filter).c_str());
    PX_SDK_CHECK(dy_shape.size() == 4, "%s out_backprop must be 4-D, got %s", op,
                 sdk::ShapeString(dy_shape).c_str());
    const PX_DataType dtype = call.input_dtype(2);
    const size_t tensor_input = kFilter ? 0 : 1;
    PX_SDK_CHECK(call.input_dtype(tensor_input) == dtype, "%s: %s is %s, out_backprop %s", op,
                 kFilter ? "input" : "filter", sdk::DtypeName(call.input_dtype(tensor_input)),
                 sdk::DtypeName(dtype));
    PX_SDK_CHECK(call.output_dtype(0) == dtype, "%s: the output is %s, out_backprop %s", op,
                 sdk::DtypeName(call.output_dtype(0)), sdk::DtypeName(dtype));
    const TypeInfo ti = TypeInfoFor(dtype, op);
    PX_SDK_CHECK(px_sdk_is_contiguous(&call.input(tensor_input)) &&
                     px_sdk_is_contiguous(&call.input(2)),
                 "%s: the inputs must be contiguous", op);

    const bool nchw = window_.nchw;
    const int64_t n = input[0], c = input[nchw ? 1 : 3], h = input[nchw ? 2 : 1],
                  w = input[nchw ? 3 : 2];
    const int64_t kh = filter[0], kw = filter[1];
    int64_t out_c, groups, c_per_group;
    if (depthwise_) {
      PX_SDK_CHECK(c == filter[2], "input depth %lld must equal the filter depth %lld",
                   static_cast<long long>(c), static_cast<long long>(filter[2]));
      out_c = c * filter[3];
      groups = c;
      c_per_group = 1;
    } else {
      groups = sdk::ConvGroups(op, c, filter[2], filter[3]);
      out_c = filter[3];
      c_per_group = filter[2];
    }
    // The layout cuDNN sees: NCHW for double NHWC (see the top of the file).
    const bool via_nchw = !nchw && dtype == PX_DT_DOUBLE;
    sdk::Window win = window_;
    win.nchw = nchw || via_nchw;
    const ConvPadding padding = PadConvolution(win, n, c, h, w, kh, kw);
    const Shape expected = nchw ? Shape{n, out_c, padding.oh, padding.ow}
                                : Shape{n, padding.oh, padding.ow, out_c};
    PX_SDK_CHECK(dy_shape == expected,
                 "out_backprop must have shape %s (the output of the forward convolution of "
                 "input %s with filter %s), got %s",
                 sdk::ShapeString(expected).c_str(), sdk::ShapeString(input).c_str(),
                 sdk::ShapeString(filter).c_str(), sdk::ShapeString(dy_shape).c_str());

    const Shape& out_shape = kFilter ? filter : input;
    void* out = call.AllocateOutputRaw(0, out_shape);
    const int64_t out_elements = sdk::NumElements(out_shape);
    if (out_elements == 0) return;
    GpuStream& stream = StreamOf(call);
    if (sdk::NumElements(input) == 0 || sdk::NumElements(dy_shape) == 0 || kh == 0 || kw == 0) {
      // Nothing flows back (no input, no output or no filter taps): the
      // empty sums, zeros (all-zero bits in every float type).
      PX_GPU_THROW_IF_FAILED(px_gpu::MemsetAsync(out, 0, static_cast<size_t>(out_elements) * ti.size,
                                                 stream.get()),
                             "cudaMemsetAsync(gradient, 0)");
      CheckLaunch(stream, op);
      return;
    }

    ScopedHandle handle(stream, op);
    const ConvKey key =
        MakeConvKey(stream.ordinal, dtype, ti, win, n, c, padding, out_c, c_per_group, groups, kh, kw);
    const std::shared_ptr<GradPlan> plan = PlanFor(handle.get(), key, ti);
    if (plan->oh != padding.oh || plan->ow != padding.ow) {
      throw sdk::KernelError(
          PX_CODE_INTERNAL,
          sdk::Format("%s: cuDNN's output is %lld x %lld, expected %lld x %lld", op,
                      static_cast<long long>(plan->oh), static_cast<long long>(plan->ow),
                      static_cast<long long>(padding.oh), static_cast<long long>(padding.ow)));
    }
    StreamBuffer workspace(stream, plan->workspace, "cudaMallocAsync(cuDNN workspace)");
    const float one_f = 1.0f, zero_f = 0.0f;
    const double one_d = 1.0, zero_d = 0.0;
    const bool dbl = dtype == PX_DT_DOUBLE;
    const void* one = dbl ? static_cast<const void*>(&one_d) : &one_f;
    const void* zero = dbl ? static_cast<const void*>(&zero_d) : &zero_f;
    const int64_t r = kh * kw;
    const size_t filter_bytes = static_cast<size_t>(r * c_per_group * out_c) * ti.size;
    const size_t padded_bytes =
        padding.has_extra
            ? static_cast<size_t>(n * c * padding.padded_h * padding.padded_w) * ti.size
            : 0;
    StreamBuffer filter_buf(stream, filter_bytes, "cudaMallocAsync(filter in cuDNN's order)");
    StreamBuffer padded(stream, padded_bytes, "cudaMallocAsync(padded input)");
    // NHWC [n, h*w, c] <-> NCHW [n, c, h*w] for the double route.
    const size_t input_bytes = static_cast<size_t>(n * c * h * w) * ti.size;
    StreamBuffer input_nchw(stream, via_nchw ? input_bytes : 0,
                            "cudaMallocAsync(input in NCHW)");
    StreamBuffer dy_nchw(stream,
                         via_nchw ? static_cast<size_t>(sdk::NumElements(dy_shape)) * ti.size : 0,
                         "cudaMallocAsync(out_backprop in NCHW)");
    const void* dy = call.input_data(2);
    if (via_nchw) {
      arr::LaunchTransposeTiled(ti.size, dy, dy_nchw.get(), n, padding.oh * padding.ow, out_c,
                                stream.get());
      CheckLaunch(stream, op);
      dy = dy_nchw.get();
    }
    if (kFilter) {
      const void* x = call.input_data(0);
      if (via_nchw) {
        arr::LaunchTransposeTiled(ti.size, x, input_nchw.get(), n, h * w, c, stream.get());
        CheckLaunch(stream, op);
        x = input_nchw.get();
      }
      if (padding.has_extra) {
        conv::LaunchPadInput(ti.ew, x, padded.get(), padding.extra, stream.get());
        CheckLaunch(stream, op);
        x = padded.get();
      }
      PX_CUDNN_THROW_IF_ERROR(
          cudnn::cudnnConvolutionBackwardFilter(
              handle.get(), one, plan->x, x, plan->y, dy, plan->conv,
              plan->filter_algo, workspace.get(),
              plan->workspace, zero, plan->filter, filter_buf.get()),
          op);
      CheckLaunch(stream, op);
      conv::LaunchFilterToHwio(ti.ew, filter_buf.get(), out, r, c_per_group, out_c, win.nchw,
                               stream.get());
    } else {
      conv::LaunchFilterReorder(ti.ew, call.input_data(1), filter_buf.get(), r, c_per_group, out_c,
                                win.nchw, stream.get());
      CheckLaunch(stream, op);
      // The gradient in cuDNN's layout: `out` itself, else the NCHW buffer.
      void* grad = via_nchw ? input_nchw.get() : out;
      void* dx = padding.has_extra ? padded.get() : grad;
      PX_CUDNN_THROW_IF_ERROR(
          cudnn::cudnnConvolutionBackwardData(
              handle.get(), one, plan->filter, filter_buf.get(), plan->y, dy,
              plan->conv, plan->data_algo,
              workspace.get(), plan->workspace, zero, plan->x, dx),
          op);
      CheckLaunch(stream, op);
      if (padding.has_extra) conv::LaunchCropInput(ti.ew, dx, grad, padding.extra, stream.get());
      if (via_nchw) arr::LaunchTransposeTiled(ti.size, grad, out, n, c, h * w, stream.get());
    }
    CheckLaunch(stream, op);
  }

 private:
  std::shared_ptr<GradPlan> PlanFor(cudnnHandle_t handle, const ConvKey& key, const TypeInfo& ti) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    if (plans_.size() >= kMaxPlans) plans_.clear();
    std::shared_ptr<GradPlan> plan = kFilter ? MakeFilterPlan(handle, key, ti, op_.c_str())
                                             : MakeDataPlan(handle, key, ti, op_.c_str());
    plans_.emplace(key, plan);
    return plan;
  }

  std::string op_;
  bool depthwise_ = false;
  sdk::Window window_;
  std::mutex mu_;
  std::map<ConvKey, std::shared_ptr<GradPlan>> plans_;
};

}  // namespace

PX_Status* RegisterConvBackpropKernels(sdk::RegistrationInfo* info,
                                       PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> types = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF, PX_DT_BFLOAT16};
  for (const sdk::OpSignature* op :
       {&sdk::sig::kConv2DBackpropInput, &sdk::sig::kDepthwiseConv2dNativeBackpropInput}) {
    PX_SDK_RETURN_IF_ERROR(
        sdk::RegisterKernel<ConvBackpropKernel<false>>(info, registrar, *op, {types}));
  }
  for (const sdk::OpSignature* op :
       {&sdk::sig::kConv2DBackpropFilter, &sdk::sig::kDepthwiseConv2dNativeBackpropFilter}) {
    PX_SDK_RETURN_IF_ERROR(
        sdk::RegisterKernel<ConvBackpropKernel<true>>(info, registrar, *op, {types}));
  }
  return nullptr;
}

}  // namespace plexus::cuda

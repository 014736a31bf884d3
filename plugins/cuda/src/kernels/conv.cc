// The CUDA plugin's convolutions through cuDNN's legacy API: Conv2D,
// DepthwiseConv2dNative, _FusedConv2D and _FusedDepthwiseConv2dNative
// (NHWC or NCHW; strides, dilations; SAME, VALID and EXPLICIT padding).
//
// cuDNN itself is opened with dlopen on the first convolution
// (cudnn_loader.h: every call is cudnn::cudnn...), so the plugin loads where
// libcudnn is missing and only the convolutions fail, UNAVAILABLE.
//
// - Filters: TensorFlow's [kh, kw, in, out] (HWIO) is reordered on the
//   device (conv.cu) to cuDNN's KRSC (NHWC tensors) or KCRS (NCHW): once,
//   into memory the kernel keeps, when the graph promises the filter is a
//   constant (sdk::ConstantInput: a frozen graph's; prepared_weight.h), else
//   into a stream-ordered scratch buffer on every call. A depthwise filter
//   [kh, kw, c, m] is an HWIO filter with in = 1 and out = c * m (output
//   channel c * m + j), run as a grouped convolution with c groups; a plain
//   Conv2D whose input depth is a multiple of the filter's runs grouped too.
// - Padding: cuDNN pads symmetrically. The common part of each side's
//   padding (the smaller of top and bottom, of left and right) is cuDNN's;
//   the rest (SAME's extra bottom row or right column, asymmetric EXPLICIT
//   padding) is added by copying the input into a zero-padded scratch
//   buffer first (conv.cu).
// - Algorithms: cudnnGetConvolutionForwardAlgorithm_v7 (heuristics, nothing
//   runs), the first one that succeeds within a 1 GiB workspace, cached per
//   problem in the kernel instance with its descriptors. The workspace and
//   the scratch buffers come from the stream-ordered allocator
//   (cudaMallocAsync / cudaFreeAsync on the call's stream).
// - Math: float with FMA only (CUDNN_FMA_MATH), or TF32 tensor cores
//   (CUDNN_TENSOR_OP_MATH) when the environment has PX_CUDA_ALLOW_TF32=1;
//   half and bfloat16 on tensor cores with float accumulation; double in
//   double.
// - cuDNN handles: per device, a pool; a call takes one for itself (so
//   concurrent calls never share one), sets the call's stream on it
//   (cudnnSetStream) and gives it back. Handles live until the process ends.
// - Fused ops: the convolution, then one elementwise kernel (conv.cu) adds
//   the bias or applies the inference batch norm per output channel, then
//   the activation.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "cudnn_loader.h"
#include "kernels/cudnn_common.h"
#include "gpu_error.h"
#include "gpu_stream.h"
#include "prepared_weight.h"
#include "kernels/conv_attrs.h"
#include "kernels/conv_launch.h"
#include "kernels/elementwise_launch.h"
#include "kernels/vendor_kernels.h"
#include "plexus/sdk/const_inputs.h"
#include "plexus/sdk/fused.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/plugin.h"
#include "plexus/sdk/window.h"

namespace plexus::cuda {
namespace {

using sdk::Shape;

// Cached plans kept per kernel at most; past that the cache starts over.
constexpr size_t kMaxPlans = 256;

// ---------------------------------------------------------------------------
// Plans: descriptors and algorithm per problem.
// ---------------------------------------------------------------------------

// The forward algorithm of a convolution and its workspace.
struct Plan : ConvDescriptors {
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t workspace = 0;
};

std::shared_ptr<Plan> MakePlan(cudnnHandle_t handle, const ConvKey& key, const TypeInfo& ti,
                               const char* op) {
  auto plan = std::make_shared<Plan>();
  SetConvDescriptors(key, ti, op, plan.get());

  // The heuristics' algorithms, best first: the first that works within the
  // workspace limit and, for float without TF32, uses no tensor cores.
  // Else implicit GEMM, which needs no workspace and takes every geometry,
  // if cuDNN agrees.
  int max_count = 0;
  PX_CUDNN_THROW_IF_ERROR(cudnn::cudnnGetConvolutionForwardAlgorithmMaxCount(handle, &max_count),
                          op);
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<size_t>(std::max(max_count, 1)));
  int returned = 0;
  PX_CUDNN_THROW_IF_ERROR(cudnn::cudnnGetConvolutionForwardAlgorithm_v7(
                              handle, plan->x, plan->filter, plan->conv, plan->y,
                              static_cast<int>(perf.size()), &returned, perf.data()),
                          op);
  auto workspace_of = [&](cudnnConvolutionFwdAlgo_t algo, size_t* bytes) {
    return cudnn::cudnnGetConvolutionForwardWorkspaceSize(handle, plan->x, plan->filter, plan->conv,
                                                          plan->y, algo, bytes) ==
           CUDNN_STATUS_SUCCESS;
  };
  if (!PickAlgorithm(perf, returned, ti, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, plan->conv,
                     workspace_of, &plan->algo, &plan->workspace)) {
    throw sdk::KernelError(
        PX_CODE_UNIMPLEMENTED,
        sdk::Format("%s: cuDNN has no forward algorithm for %s input [%lld, %lld, %lld, %lld] "
                    "(%s), filter %lld x %lld x %lld -> %lld, %lld groups",
                    op, sdk::DtypeName(static_cast<PX_DataType>(key.dtype)),
                    static_cast<long long>(key.n), static_cast<long long>(key.c),
                    static_cast<long long>(key.h), static_cast<long long>(key.w),
                    key.nchw ? "NCHW" : "NHWC", static_cast<long long>(key.kh),
                    static_cast<long long>(key.kw), static_cast<long long>(key.c_per_group),
                    static_cast<long long>(key.k), static_cast<long long>(key.groups)));
  }
  return plan;
}

// ---------------------------------------------------------------------------
// The kernel
// ---------------------------------------------------------------------------

// Conv2D, DepthwiseConv2dNative and their fused forms.
class ConvKernel : public ConvKernelBase {
 public:
  void Init(sdk::Attrs& attrs) override {
    ConvKernelBase::Init(attrs);
    constant_filter_ = sdk::ConstantInput(attrs, 1);
  }

  void Compute(sdk::Call& call) override {
    const char* op = op_.c_str();
    const Shape xs = call.input_shape(0), fs = call.input_shape(1);
    const PX_DataType dtype = call.input_dtype(0);
    PX_SDK_CHECK(call.input_dtype(1) == dtype && call.output_dtype(0) == dtype,
                 "%s: input %s, filter %s, output %s", op, sdk::DtypeName(dtype),
                 sdk::DtypeName(call.input_dtype(1)), sdk::DtypeName(call.output_dtype(0)));
    const TypeInfo ti = TypeInfoFor(dtype, op);
    PX_SDK_CHECK(xs.size() == 4, "%s input must be 4-D, got %s", op, sdk::ShapeString(xs).c_str());
    PX_SDK_CHECK(fs.size() == 4, "%s filter must be 4-D, got %s", op,
                 sdk::ShapeString(fs).c_str());
    PX_SDK_CHECK(px_sdk_is_contiguous(&call.input(0)) && px_sdk_is_contiguous(&call.input(1)),
                 "%s: the input or the filter is not contiguous", op);
    const bool nchw = window_.nchw;
    const int64_t n = xs[0], c = xs[nchw ? 1 : 3], h = xs[nchw ? 2 : 1], w = xs[nchw ? 3 : 2];
    const int64_t kh = fs[0], kw = fs[1];
    int64_t out_c, groups, c_per_group;
    if (depthwise_) {
      PX_SDK_CHECK(c == fs[2], "input depth %lld must equal the filter depth %lld",
                   static_cast<long long>(c), static_cast<long long>(fs[2]));
      out_c = c * fs[3];
      groups = c;
      c_per_group = 1;
    } else {
      PX_SDK_CHECK(fs[2] > 0 && c % fs[2] == 0,
                   "input depth %lld must be a multiple of the filter input depth %lld",
                   static_cast<long long>(c), static_cast<long long>(fs[2]));
      out_c = fs[3];
      groups = c / fs[2];
      c_per_group = fs[2];
      PX_SDK_CHECK(out_c % groups == 0,
                   "%s: the filter's %lld output channels must be a multiple of the %lld groups "
                   "(input depth %lld / filter input depth %lld)",
                   op, static_cast<long long>(out_c), static_cast<long long>(groups),
                   static_cast<long long>(c), static_cast<long long>(fs[2]));
    }
    PX_SDK_CHECK(kh >= 0 && kw >= 0, "%s filter %s has a negative size", op,
                 sdk::ShapeString(fs).c_str());
    const ConvPadding padding = PadConvolution(window_, n, c, h, w, kh, kw);
    const int64_t oh = padding.oh, ow = padding.ow;

    // The fused op's per-channel arguments.
    const void* args[4] = {nullptr, nullptr, nullptr, nullptr};
    if (fused_) {
      static const char* kBnNames[] = {"scale", "offset", "mean", "variance"};
      PX_SDK_CHECK(static_cast<int64_t>(call.num_inputs()) == 2 + spec_.num_args,
                   "%s needs %lld args, got %zu inputs", op,
                   static_cast<long long>(spec_.num_args), call.num_inputs());
      for (int64_t i = 0; i < spec_.num_args; ++i) {
        const Shape s = call.input_shape(2 + i);
        PX_SDK_CHECK(s.size() == 1 && s[0] == out_c, "%s %s must be 1-D with %lld elements, got %s",
                     op, spec_.batch_norm ? kBnNames[i] : "bias", static_cast<long long>(out_c),
                     sdk::ShapeString(s).c_str());
        PX_SDK_CHECK(call.input_dtype(2 + i) == dtype, "%s %s is %s, expected %s", op,
                     spec_.batch_norm ? kBnNames[i] : "bias",
                     sdk::DtypeName(call.input_dtype(2 + i)), sdk::DtypeName(dtype));
        args[i] = call.input_data(2 + i);
      }
    }

    const Shape out_shape = nchw ? Shape{n, out_c, oh, ow} : Shape{n, oh, ow, out_c};
    void* y = call.AllocateOutputRaw(0, out_shape);
    const int64_t total = sdk::NumElements(out_shape);
    if (total == 0) return;
    GpuStream& stream = StreamOf(call);
    conv::EpiloguePlan epilogue;
    epilogue.nchw = nchw;
    epilogue.total = total;
    epilogue.channels = out_c;
    epilogue.spatial = oh * ow;
    epilogue.batch_norm = fused_ && spec_.batch_norm;
    epilogue.act = static_cast<conv::Activation>(static_cast<int>(spec_.activation));
    epilogue.alpha = spec_.leakyrelu_alpha;
    epilogue.epsilon = spec_.epsilon;
    auto run_epilogue = [&] {
      if (!fused_) return;
      conv::LaunchEpilogue(ti.ew, y, args, epilogue, stream.get());
      CheckLaunch(stream, op);
    };
    if (kh == 0 || kw == 0) {
      // An empty window: the empty sum, zeros (all-zero bits in every float type).
      PX_GPU_THROW_IF_FAILED(
          cudaMemsetAsync(y, 0, static_cast<size_t>(total) * ti.size, stream.get()),
          "cudaMemsetAsync(output, 0)");
      CheckLaunch(stream, op);  // waits in synchronous debug mode
      run_epilogue();
      return;
    }

    ScopedHandle handle(stream, op);
    // The filter in cuDNN's order: a constant one once, kept by the kernel;
    // any other in scratch, per call.
    const int64_t r = kh * kw;
    const int64_t filter_in = depthwise_ ? 1 : c_per_group;
    const size_t filter_bytes = static_cast<size_t>(r * filter_in * out_c) * ti.size;
    auto reorder = [&](void* dst) {
      conv::LaunchFilterReorder(ti.ew, call.input_data(1), dst, r, filter_in, out_c, nchw,
                                stream.get());
      CheckLaunch(stream, op);
    };
    const void* filter = nullptr;
    if (constant_filter_) {
      const PreparedWeight::Geometry geometry = {static_cast<int64_t>(dtype), kh, kw, filter_in,
                                                 out_c, nchw ? 1 : 0};
      filter = prepared_filter_.Get(stream, call.input_data(1), geometry, filter_bytes, reorder, op);
    }
    StreamBuffer filter_scratch(stream, filter == nullptr ? filter_bytes : 0,
                                "cudaMallocAsync(reordered filter)");
    if (filter == nullptr) {
      reorder(filter_scratch.get());
      filter = filter_scratch.get();
    }

    // Symmetric padding for cuDNN; the rest in a padded copy of the input.
    const int64_t ph = padding.padded_h, pw = padding.padded_w;
    StreamBuffer padded(stream, padding.has_extra ? static_cast<size_t>(n * c * ph * pw) * ti.size : 0,
                        "cudaMallocAsync(padded input)");
    const void* x = call.input_data(0);
    if (padding.has_extra && n * c * ph * pw > 0) {
      conv::LaunchPadInput(ti.ew, x, padded.get(), padding.extra, stream.get());
      CheckLaunch(stream, op);
      x = padded.get();
    }

    const ConvKey key =
        MakeConvKey(stream.ordinal, dtype, ti, window_, n, c, padding, out_c, c_per_group, groups, kh, kw);
    const std::shared_ptr<Plan> plan = PlanFor(handle.get(), key, ti);
    if (plan->oh != oh || plan->ow != ow) {
      throw sdk::KernelError(
          PX_CODE_INTERNAL,
          sdk::Format("%s: cuDNN's output is %lld x %lld, expected %lld x %lld", op,
                      static_cast<long long>(plan->oh), static_cast<long long>(plan->ow),
                      static_cast<long long>(oh), static_cast<long long>(ow)));
    }
    StreamBuffer workspace(stream, plan->workspace, "cudaMallocAsync(cuDNN workspace)");
    const float one_f = 1.0f, zero_f = 0.0f;
    const double one_d = 1.0, zero_d = 0.0;
    const bool dbl = dtype == PX_DT_DOUBLE;
    const void* one = dbl ? static_cast<const void*>(&one_d) : &one_f;
    const void* zero = dbl ? static_cast<const void*>(&zero_d) : &zero_f;
    PX_CUDNN_THROW_IF_ERROR(
        cudnn::cudnnConvolutionForward(handle.get(), one, plan->x, x, plan->filter, filter,
                                       plan->conv, plan->algo, workspace.get(), plan->workspace,
                                       zero, plan->y, y),
        op);
    CheckLaunch(stream, op);
    run_epilogue();
  }

 private:
  std::shared_ptr<Plan> PlanFor(cudnnHandle_t handle, const ConvKey& key, const TypeInfo& ti) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    if (plans_.size() >= kMaxPlans) plans_.clear();
    std::shared_ptr<Plan> plan = MakePlan(handle, key, ti, op_.c_str());
    plans_.emplace(key, plan);
    return plan;
  }

  std::mutex mu_;
  std::map<ConvKey, std::shared_ptr<Plan>> plans_;
  // The filter is a constant of the graph (sdk::ConstantInput): reordered
  // once, into prepared_filter_.
  bool constant_filter_ = false;
  PreparedWeight prepared_filter_;
};

}  // namespace

PX_Status* RegisterConvKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> types = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF, PX_DT_BFLOAT16};
  for (const sdk::OpSignature* op :
       {&sdk::sig::kConv2D, &sdk::sig::kDepthwiseConv2dNative, &sdk::sig::kFusedConv2D,
        &sdk::sig::kFusedDepthwiseConv2dNative}) {
    PX_SDK_RETURN_IF_ERROR(sdk::RegisterKernel<ConvKernel>(info, registrar, *op, {types}));
  }
  return nullptr;
}

}  // namespace plexus::cuda

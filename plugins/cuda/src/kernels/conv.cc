// The CUDA plugin's convolutions through cuDNN's legacy API: Conv2D,
// DepthwiseConv2dNative, _FusedConv2D and _FusedDepthwiseConv2dNative
// (NHWC or NCHW; strides, dilations; SAME, VALID and EXPLICIT padding).
//
// cuDNN itself is opened with dlopen on the first convolution
// (cudnn_loader.h: every call is cudnn::cudnn...), so the plugin loads where
// libcudnn is missing and only the convolutions fail, UNAVAILABLE.
//
// - Filters: TensorFlow's [kh, kw, in, out] (HWIO) is reordered on the
//   device (conv.cu) to cuDNN's KRSC (NHWC tensors) or KCRS (NCHW) in a
//   stream-ordered scratch buffer on every call. A depthwise filter
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
#include "gpu_error.h"
#include "gpu_stream.h"
#include "kernels/conv_attrs.h"
#include "kernels/conv_launch.h"
#include "kernels/elementwise_launch.h"
#include "kernels/vendor_kernels.h"
#include "plexus/sdk/fused.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/plugin.h"
#include "plexus/sdk/window.h"

namespace plexus::cuda {
namespace {

using sdk::Shape;

// The most workspace an algorithm may ask for.
constexpr size_t kMaxWorkspaceBytes = size_t{1} << 30;
// Cached plans kept per kernel at most; past that the cache starts over.
constexpr size_t kMaxPlans = 256;

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

PX_Code CudnnCode(cudnnStatus_t s) {
  const int code = static_cast<int>(s);
  switch (code) {
    case CUDNN_STATUS_SUCCESS: return PX_CODE_OK;
    case CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER:
    case CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART:
    case CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH:
    case CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE: return PX_CODE_UNAVAILABLE;
    case CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED:
    case CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED: return PX_CODE_RESOURCE_EXHAUSTED;
    default: break;
  }
  switch (code / 1000 * 1000) {
    case 1000: return PX_CODE_UNAVAILABLE;  // not initialized, version mismatch, ...
    case CUDNN_STATUS_BAD_PARAM: return PX_CODE_INVALID_ARGUMENT;
    case CUDNN_STATUS_NOT_SUPPORTED: return PX_CODE_UNIMPLEMENTED;
    default: return PX_CODE_INTERNAL;
  }
}

std::string CudnnText(cudnnStatus_t s) {
  const char* text = cudnn::cudnnGetErrorString(s);
  return sdk::Format("%s (%d)", text != nullptr ? text : "unknown status", static_cast<int>(s));
}

[[noreturn]] void ThrowCudnn(cudnnStatus_t s, const char* expr, const char* op) {
  // The calls go through the loader's wrappers (cudnn_loader.h): name the
  // cuDNN function itself.
  if (std::strncmp(expr, "cudnn::", 7) == 0) expr += 7;
  throw sdk::KernelError(CudnnCode(s),
                         sdk::Format("%s: cuDNN: %s failed: %s", op, expr, CudnnText(s).c_str()));
}

#define PX_CUDNN_THROW_IF_ERROR(expr, op)                      \
  do {                                                         \
    const cudnnStatus_t px_cudnn_status_ = (expr);             \
    if (px_cudnn_status_ != CUDNN_STATUS_SUCCESS) {            \
      ::plexus::cuda::ThrowCudnn(px_cudnn_status_, #expr, op); \
    }                                                          \
  } while (0)


// ---------------------------------------------------------------------------
// cuDNN handles: a pool per device.
// ---------------------------------------------------------------------------

struct HandlePool {
  std::mutex mu;
  std::vector<cudnnHandle_t> free;
};

HandlePool& PoolFor(int32_t ordinal) {
  static std::mutex mu;
  static auto* pools = new std::map<int32_t, std::unique_ptr<HandlePool>>();
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<HandlePool>& p = (*pools)[ordinal];
  if (!p) p = std::make_unique<HandlePool>();
  return *p;
}

// A handle of the stream's device, set to the stream, for one call; back to
// the pool when destroyed.
class ScopedHandle {
 public:
  ScopedHandle(GpuStream& stream, const char* op) : pool_(PoolFor(stream.ordinal)) {
    {
      std::lock_guard<std::mutex> lock(pool_.mu);
      if (!pool_.free.empty()) {
        handle_ = pool_.free.back();
        pool_.free.pop_back();
      }
    }
    if (handle_ == nullptr) {
      // The stream's device is current (StreamOf).
      cudnnHandle_t h = nullptr;
      const cudnnStatus_t s = cudnn::cudnnCreate(&h);
      if (s != CUDNN_STATUS_SUCCESS) {
        const PX_Code code = CudnnCode(s);
        throw sdk::KernelError(
            code == PX_CODE_UNAVAILABLE || code == PX_CODE_RESOURCE_EXHAUSTED ? code
                                                                              : PX_CODE_INTERNAL,
            sdk::Format("%s: cuDNN is unavailable on CUDA:%d: cudnnCreate failed: %s", op,
                        static_cast<int>(stream.ordinal), CudnnText(s).c_str()));
      }
      handle_ = h;
    }
    const cudnnStatus_t s = cudnn::cudnnSetStream(handle_, stream.get());
    if (s != CUDNN_STATUS_SUCCESS) {
      Release();
      ThrowCudnn(s, "cudnnSetStream", op);
    }
  }
  ~ScopedHandle() { Release(); }
  ScopedHandle(const ScopedHandle&) = delete;
  ScopedHandle& operator=(const ScopedHandle&) = delete;

  cudnnHandle_t get() const { return handle_; }

 private:
  void Release() {
    if (handle_ == nullptr) return;
    std::lock_guard<std::mutex> lock(pool_.mu);
    pool_.free.push_back(handle_);
    handle_ = nullptr;
  }

  HandlePool& pool_;
  cudnnHandle_t handle_ = nullptr;
};

// ---------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------

struct TypeInfo {
  cudnnDataType_t data;
  cudnnDataType_t compute;
  cudnnMathType_t math;
  ew::Dtype ew;
  size_t size;
};

TypeInfo TypeInfoFor(PX_DataType t, const char* op) {
  switch (t) {
    case PX_DT_FLOAT:
      return {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
              AllowTf32() ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH, ew::Dtype::kFloat, 4};
    case PX_DT_HALF:
      return {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH, ew::Dtype::kHalf, 2};
    case PX_DT_BFLOAT16:
      return {CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH, ew::Dtype::kBFloat16, 2};
    case PX_DT_DOUBLE:
      return {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DEFAULT_MATH, ew::Dtype::kDouble, 8};
    default:
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                             sdk::Format("%s on CUDA does not support dtype %s", op,
                                         sdk::DtypeName(t)));
  }
}

// ---------------------------------------------------------------------------
// Plans: descriptors and algorithm per problem.
// ---------------------------------------------------------------------------

// One convolution as cuDNN sees it (after the extra padding).
struct PlanKey {
  int32_t ordinal;
  int dtype;  // PX_DataType
  int math;   // cudnnMathType_t asked for
  bool nchw;
  int64_t n, c, h, w;         // the (padded) input
  int64_t k, c_per_group;     // output channels, filter input depth
  int64_t kh, kw;
  int64_t pad_h, pad_w, sh, sw, dh, dw;
  int64_t groups;
  auto Tie() const {
    return std::tie(ordinal, dtype, math, nchw, n, c, h, w, k, c_per_group, kh, kw, pad_h, pad_w,
                    sh, sw, dh, dw, groups);
  }
  bool operator<(const PlanKey& o) const { return Tie() < o.Tie(); }
};

struct Plan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t filter = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t workspace = 0;
  int64_t oh = 0, ow = 0;
  ~Plan() {
    // cuDNN is loaded when a plan exists (its descriptors were created).
    if (conv != nullptr) cudnn::cudnnDestroyConvolutionDescriptor(conv);
    if (filter != nullptr) cudnn::cudnnDestroyFilterDescriptor(filter);
    if (y != nullptr) cudnn::cudnnDestroyTensorDescriptor(y);
    if (x != nullptr) cudnn::cudnnDestroyTensorDescriptor(x);
  }
};

int Int(int64_t v, const char* what, const char* op) {
  if (v < 0 || v > INT32_MAX) {
    throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                           sdk::Format("%s on CUDA: %s %lld does not fit cuDNN's 32-bit sizes",
                                       op, what, static_cast<long long>(v)));
  }
  return static_cast<int>(v);
}

std::shared_ptr<Plan> MakePlan(cudnnHandle_t handle, const PlanKey& key, const TypeInfo& ti,
                               const char* op) {
  auto plan = std::make_shared<Plan>();
  const cudnnTensorFormat_t format = key.nchw ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC;
  PX_CUDNN_THROW_IF_ERROR(cudnn::cudnnCreateTensorDescriptor(&plan->x), op);
  PX_CUDNN_THROW_IF_ERROR(cudnn::cudnnCreateTensorDescriptor(&plan->y), op);
  PX_CUDNN_THROW_IF_ERROR(cudnn::cudnnCreateFilterDescriptor(&plan->filter), op);
  PX_CUDNN_THROW_IF_ERROR(cudnn::cudnnCreateConvolutionDescriptor(&plan->conv), op);
  PX_CUDNN_THROW_IF_ERROR(
      cudnn::cudnnSetTensor4dDescriptor(plan->x, format, ti.data, Int(key.n, "batch", op),
                                        Int(key.c, "input depth", op),
                                        Int(key.h, "input height", op),
                                        Int(key.w, "input width", op)),
      op);
  // The filter: KRSC with NHWC tensors, KCRS with NCHW (conv.cu reorders).
  PX_CUDNN_THROW_IF_ERROR(
      cudnn::cudnnSetFilter4dDescriptor(plan->filter, ti.data, format,
                                        Int(key.k, "output depth", op),
                                        Int(key.c_per_group, "filter depth", op),
                                        Int(key.kh, "filter height", op),
                                        Int(key.kw, "filter width", op)),
      op);
  PX_CUDNN_THROW_IF_ERROR(
      cudnn::cudnnSetConvolution2dDescriptor(
          plan->conv, Int(key.pad_h, "padding", op), Int(key.pad_w, "padding", op),
          Int(key.sh, "stride", op), Int(key.sw, "stride", op), Int(key.dh, "dilation", op),
          Int(key.dw, "dilation", op), CUDNN_CROSS_CORRELATION, ti.compute),
      op);
  PX_CUDNN_THROW_IF_ERROR(
      cudnn::cudnnSetConvolutionGroupCount(plan->conv, Int(key.groups, "groups", op)), op);
  PX_CUDNN_THROW_IF_ERROR(cudnn::cudnnSetConvolutionMathType(plan->conv, ti.math), op);
  int on = 0, oc = 0, oh = 0, ow = 0;
  PX_CUDNN_THROW_IF_ERROR(cudnn::cudnnGetConvolution2dForwardOutputDim(plan->conv, plan->x,
                                                                       plan->filter, &on, &oc,
                                                                       &oh, &ow),
                          op);
  plan->oh = oh;
  plan->ow = ow;
  PX_CUDNN_THROW_IF_ERROR(
      cudnn::cudnnSetTensor4dDescriptor(plan->y, format, ti.data, on, oc, oh, ow), op);

  // The heuristics' algorithms, best first: the first that works within the
  // workspace limit and, for float without TF32, uses no tensor cores.
  int max_count = 0;
  PX_CUDNN_THROW_IF_ERROR(cudnn::cudnnGetConvolutionForwardAlgorithmMaxCount(handle, &max_count),
                          op);
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<size_t>(std::max(max_count, 1)));
  int returned = 0;
  PX_CUDNN_THROW_IF_ERROR(cudnn::cudnnGetConvolutionForwardAlgorithm_v7(
                              handle, plan->x, plan->filter, plan->conv, plan->y,
                              static_cast<int>(perf.size()), &returned, perf.data()),
                          op);
  const bool fma_only = ti.math == CUDNN_FMA_MATH;
  for (int i = 0; i < returned; ++i) {
    const cudnnConvolutionFwdAlgoPerf_t& p = perf[static_cast<size_t>(i)];
    if (p.status != CUDNN_STATUS_SUCCESS || p.memory > kMaxWorkspaceBytes) continue;
    if (fma_only && p.mathType != CUDNN_FMA_MATH) continue;
    // The math type the algorithm was rated with (cuDNN's advice for _v7).
    if (cudnn::cudnnSetConvolutionMathType(plan->conv, p.mathType) != CUDNN_STATUS_SUCCESS) {
      continue;
    }
    size_t workspace = 0;
    if (cudnn::cudnnGetConvolutionForwardWorkspaceSize(handle, plan->x, plan->filter, plan->conv,
                                                       plan->y, p.algo, &workspace) !=
            CUDNN_STATUS_SUCCESS ||
        workspace > kMaxWorkspaceBytes) {
      continue;
    }
    plan->algo = p.algo;
    plan->workspace = workspace;
    return plan;
  }
  // None rated: implicit GEMM, which needs no workspace and takes every
  // geometry, if cuDNN agrees.
  PX_CUDNN_THROW_IF_ERROR(cudnn::cudnnSetConvolutionMathType(plan->conv, ti.math), op);
  size_t workspace = 0;
  const cudnnStatus_t s = cudnn::cudnnGetConvolutionForwardWorkspaceSize(
      handle, plan->x, plan->filter, plan->conv, plan->y, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
      &workspace);
  if (s != CUDNN_STATUS_SUCCESS || workspace > kMaxWorkspaceBytes) {
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
  plan->algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  plan->workspace = workspace;
  return plan;
}

// ---------------------------------------------------------------------------
// The kernel
// ---------------------------------------------------------------------------

// Conv2D, DepthwiseConv2dNative and their fused forms.
class ConvKernel : public ConvKernelBase {
 public:
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
    int64_t oh, ow, top, left;
    window_.Output(h, kh, window_.sh, window_.dh, window_.pad_top, window_.pad_bottom, &oh, &top);
    window_.Output(w, kw, window_.sw, window_.dw, window_.pad_left, window_.pad_right, &ow, &left);
    // The padding after: what makes the last window end at the padded edge
    // (SAME), or the attribute (EXPLICIT).
    int64_t bottom = 0, right = 0;
    if (window_.padding == "SAME") {
      bottom = std::max<int64_t>(0, (oh - 1) * window_.sh + (kh - 1) * window_.dh + 1 - h) - top;
      right = std::max<int64_t>(0, (ow - 1) * window_.sw + (kw - 1) * window_.dw + 1 - w) - left;
      bottom = std::max<int64_t>(bottom, 0);
      right = std::max<int64_t>(right, 0);
    } else if (window_.padding == "EXPLICIT") {
      bottom = window_.pad_bottom;
      right = window_.pad_right;
    }

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
    // The filter in cuDNN's order.
    const int64_t r = kh * kw;
    const int64_t filter_in = depthwise_ ? 1 : c_per_group;
    StreamBuffer filter(stream, static_cast<size_t>(r * filter_in * out_c) * ti.size,
                        "cudaMallocAsync(reordered filter)");
    conv::LaunchFilterReorder(ti.ew, call.input_data(1), filter.get(), r, filter_in, out_c, nchw,
                              stream.get());
    CheckLaunch(stream, op);

    // Symmetric padding for cuDNN; the rest in a padded copy of the input.
    // (An empty input with EXPLICIT padding is padded in full: cuDNN takes
    // no empty spatial dimension.)
    const bool empty_input = h == 0 || w == 0;
    const int64_t pad_h = empty_input ? 0 : std::min(top, bottom);
    const int64_t pad_w = empty_input ? 0 : std::min(left, right);
    conv::PadPlan pad;
    pad.nchw = nchw;
    pad.n = n;
    pad.c = c;
    pad.h = h;
    pad.w = w;
    pad.top = top - pad_h;
    pad.bottom = bottom - pad_h;
    pad.left = left - pad_w;
    pad.right = right - pad_w;
    const bool extra = pad.top != 0 || pad.bottom != 0 || pad.left != 0 || pad.right != 0;
    const int64_t ph = h + pad.top + pad.bottom, pw = w + pad.left + pad.right;
    StreamBuffer padded(stream, extra ? static_cast<size_t>(n * c * ph * pw) * ti.size : 0,
                        "cudaMallocAsync(padded input)");
    const void* x = call.input_data(0);
    if (extra && n * c * ph * pw > 0) {
      conv::LaunchPadInput(ti.ew, x, padded.get(), pad, stream.get());
      CheckLaunch(stream, op);
      x = padded.get();
    }

    PlanKey key{};
    key.ordinal = stream.ordinal;
    key.dtype = static_cast<int>(dtype);
    key.math = static_cast<int>(ti.math);
    key.nchw = nchw;
    key.n = n;
    key.c = c;
    key.h = ph;
    key.w = pw;
    key.k = out_c;
    key.c_per_group = c_per_group;
    key.kh = kh;
    key.kw = kw;
    key.pad_h = pad_h;
    key.pad_w = pad_w;
    key.sh = window_.sh;
    key.sw = window_.sw;
    key.dh = window_.dh;
    key.dw = window_.dw;
    key.groups = groups;
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
        cudnn::cudnnConvolutionForward(handle.get(), one, plan->x, x, plan->filter, filter.get(),
                                       plan->conv, plan->algo, workspace.get(), plan->workspace,
                                       zero, plan->y, y),
        op);
    CheckLaunch(stream, op);
    run_epilogue();
  }

 private:
  std::shared_ptr<Plan> PlanFor(cudnnHandle_t handle, const PlanKey& key, const TypeInfo& ti) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    if (plans_.size() >= kMaxPlans) plans_.clear();
    std::shared_ptr<Plan> plan = MakePlan(handle, key, ti, op_.c_str());
    plans_.emplace(key, plan);
    return plan;
  }

  std::mutex mu_;
  std::map<PlanKey, std::shared_ptr<Plan>> plans_;
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

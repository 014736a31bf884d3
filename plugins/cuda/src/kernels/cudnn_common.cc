// What the CUDA plugin's cuDNN kernels share (cudnn_common.h).
#include "kernels/cudnn_common.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace plexus::cuda {

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

// ---------------------------------------------------------------------------
// cuDNN handles
// ---------------------------------------------------------------------------

struct HandlePool {
  std::mutex mu;
  std::vector<cudnnHandle_t> free;
};

namespace {

HandlePool& PoolFor(int32_t ordinal) {
  static std::mutex mu;
  static auto* pools = new std::map<int32_t, std::unique_ptr<HandlePool>>();
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<HandlePool>& p = (*pools)[ordinal];
  if (!p) p = std::make_unique<HandlePool>();
  return *p;
}

}  // namespace

ScopedHandle::ScopedHandle(GpuStream& stream, const char* op) : pool_(PoolFor(stream.ordinal)) {
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

void ScopedHandle::Release() {
  if (handle_ == nullptr) return;
  std::lock_guard<std::mutex> lock(pool_.mu);
  pool_.free.push_back(handle_);
  handle_ = nullptr;
}

// ---------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------

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

int Int(int64_t v, const char* what, const char* op) {
  if (v < 0 || v > INT32_MAX) {
    throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                           sdk::Format("%s on CUDA: %s %lld does not fit cuDNN's 32-bit sizes",
                                       op, what, static_cast<long long>(v)));
  }
  return static_cast<int>(v);
}

// ---------------------------------------------------------------------------
// Descriptors and padding
// ---------------------------------------------------------------------------

ConvDescriptors::~ConvDescriptors() {
  // cuDNN is loaded when a descriptor exists.
  if (conv != nullptr) cudnn::cudnnDestroyConvolutionDescriptor(conv);
  if (filter != nullptr) cudnn::cudnnDestroyFilterDescriptor(filter);
  if (y != nullptr) cudnn::cudnnDestroyTensorDescriptor(y);
  if (x != nullptr) cudnn::cudnnDestroyTensorDescriptor(x);
}

void SetConvDescriptors(const ConvKey& key, const TypeInfo& ti, const char* op,
                        ConvDescriptors* d) {
  const cudnnTensorFormat_t format = key.nchw ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC;
  PX_CUDNN_THROW_IF_ERROR(cudnn::cudnnCreateTensorDescriptor(&d->x), op);
  PX_CUDNN_THROW_IF_ERROR(cudnn::cudnnCreateTensorDescriptor(&d->y), op);
  PX_CUDNN_THROW_IF_ERROR(cudnn::cudnnCreateFilterDescriptor(&d->filter), op);
  PX_CUDNN_THROW_IF_ERROR(cudnn::cudnnCreateConvolutionDescriptor(&d->conv), op);
  PX_CUDNN_THROW_IF_ERROR(
      cudnn::cudnnSetTensor4dDescriptor(d->x, format, ti.data, Int(key.n, "batch", op),
                                        Int(key.c, "input depth", op),
                                        Int(key.h, "input height", op),
                                        Int(key.w, "input width", op)),
      op);
  PX_CUDNN_THROW_IF_ERROR(
      cudnn::cudnnSetFilter4dDescriptor(d->filter, ti.data, format,
                                        Int(key.k, "output depth", op),
                                        Int(key.c_per_group, "filter depth", op),
                                        Int(key.kh, "filter height", op),
                                        Int(key.kw, "filter width", op)),
      op);
  PX_CUDNN_THROW_IF_ERROR(
      cudnn::cudnnSetConvolution2dDescriptor(
          d->conv, Int(key.pad_h, "padding", op), Int(key.pad_w, "padding", op),
          Int(key.sh, "stride", op), Int(key.sw, "stride", op), Int(key.dh, "dilation", op),
          Int(key.dw, "dilation", op), CUDNN_CROSS_CORRELATION, ti.compute),
      op);
  PX_CUDNN_THROW_IF_ERROR(
      cudnn::cudnnSetConvolutionGroupCount(d->conv, Int(key.groups, "groups", op)), op);
  PX_CUDNN_THROW_IF_ERROR(cudnn::cudnnSetConvolutionMathType(d->conv, ti.math), op);
  int on = 0, oc = 0, oh = 0, ow = 0;
  PX_CUDNN_THROW_IF_ERROR(cudnn::cudnnGetConvolution2dForwardOutputDim(d->conv, d->x, d->filter,
                                                                       &on, &oc, &oh, &ow),
                          op);
  d->oh = oh;
  d->ow = ow;
  PX_CUDNN_THROW_IF_ERROR(cudnn::cudnnSetTensor4dDescriptor(d->y, format, ti.data, on, oc, oh, ow),
                          op);
}

ConvPadding PadConvolution(const sdk::Window& window, int64_t n, int64_t c, int64_t h, int64_t w,
                           int64_t kh, int64_t kw) {
  ConvPadding p;
  window.Output(h, kh, window.sh, window.dh, window.pad_top, window.pad_bottom, &p.oh, &p.top);
  window.Output(w, kw, window.sw, window.dw, window.pad_left, window.pad_right, &p.ow, &p.left);
  // The padding after: what makes the last window end at the padded edge
  // (SAME), or the attribute (EXPLICIT).
  if (window.padding == "SAME") {
    p.bottom = std::max<int64_t>(0, (p.oh - 1) * window.sh + (kh - 1) * window.dh + 1 - h) - p.top;
    p.right = std::max<int64_t>(0, (p.ow - 1) * window.sw + (kw - 1) * window.dw + 1 - w) - p.left;
    p.bottom = std::max<int64_t>(p.bottom, 0);
    p.right = std::max<int64_t>(p.right, 0);
  } else if (window.padding == "EXPLICIT") {
    p.bottom = window.pad_bottom;
    p.right = window.pad_right;
  }
  // Symmetric padding for cuDNN; the rest in a padded copy of the input.
  // (An empty input with EXPLICIT padding is padded in full: cuDNN takes
  // no empty spatial dimension.)
  const bool empty_input = h == 0 || w == 0;
  p.pad_h = empty_input ? 0 : std::min(p.top, p.bottom);
  p.pad_w = empty_input ? 0 : std::min(p.left, p.right);
  p.extra.nchw = window.nchw;
  p.extra.n = n;
  p.extra.c = c;
  p.extra.h = h;
  p.extra.w = w;
  p.extra.top = p.top - p.pad_h;
  p.extra.bottom = p.bottom - p.pad_h;
  p.extra.left = p.left - p.pad_w;
  p.extra.right = p.right - p.pad_w;
  p.has_extra = p.extra.top != 0 || p.extra.bottom != 0 || p.extra.left != 0 || p.extra.right != 0;
  p.padded_h = h + p.extra.top + p.extra.bottom;
  p.padded_w = w + p.extra.left + p.extra.right;
  return p;
}

ConvKey MakeConvKey(int32_t ordinal, PX_DataType dtype, const TypeInfo& ti, const sdk::Window& window,
                    int64_t n, int64_t c, const ConvPadding& padding, int64_t out_c,
                    int64_t c_per_group, int64_t groups, int64_t kh, int64_t kw) {
  ConvKey key{};
  key.ordinal = ordinal;
  key.dtype = static_cast<int>(dtype);
  key.math = static_cast<int>(ti.math);
  key.nchw = window.nchw;
  key.n = n;
  key.c = c;
  key.h = padding.padded_h;
  key.w = padding.padded_w;
  key.k = out_c;
  key.c_per_group = c_per_group;
  key.kh = kh;
  key.kw = kw;
  key.pad_h = padding.pad_h;
  key.pad_w = padding.pad_w;
  key.sh = window.sh;
  key.sw = window.sw;
  key.dh = window.dh;
  key.dw = window.dw;
  key.groups = groups;
  return key;
}

}  // namespace plexus::cuda

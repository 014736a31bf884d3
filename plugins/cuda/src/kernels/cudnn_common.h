// What the CUDA plugin's cuDNN kernels share (conv.cc, conv_backprop.cc):
// cuDNN's status as a kernel error, the per-device pool of cuDNN handles,
// the dtype table, and the descriptors of one convolution as cuDNN sees it.
#ifndef PLEXUS_PLUGINS_CUDA_KERNELS_CUDNN_COMMON_H_
#define PLEXUS_PLUGINS_CUDA_KERNELS_CUDNN_COMMON_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "cudnn_loader.h"
#include "gpu_stream.h"
#include "kernels/conv_launch.h"
#include "kernels/elementwise_launch.h"
#include "plexus/plugin_api.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/window.h"

namespace plexus::cuda {

// The most workspace an algorithm may ask for.
constexpr size_t kMaxWorkspaceBytes = size_t{1} << 30;

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

// The kernel error code of a cuDNN status, and its text with the number.
PX_Code CudnnCode(cudnnStatus_t s);
std::string CudnnText(cudnnStatus_t s);
// Throws sdk::KernelError naming `op` and the cuDNN call `expr`.
[[noreturn]] void ThrowCudnn(cudnnStatus_t s, const char* expr, const char* op);

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

// A handle of the stream's device, set to the stream, for one call; back to
// the pool when destroyed.
// The free handles of one device (cudnn_common.cc).
struct HandlePool;

class ScopedHandle {
 public:
  ScopedHandle(GpuStream& stream, const char* op);
  ~ScopedHandle() { Release(); }
  ScopedHandle(const ScopedHandle&) = delete;
  ScopedHandle& operator=(const ScopedHandle&) = delete;

  cudnnHandle_t get() const { return handle_; }

 private:
  void Release();

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

TypeInfo TypeInfoFor(PX_DataType t, const char* op);

// v as cuDNN's int; UNIMPLEMENTED naming `what` when it does not fit.
int Int(int64_t v, const char* what, const char* op);

// ---------------------------------------------------------------------------
// One convolution as cuDNN sees it
// ---------------------------------------------------------------------------

// The forward convolution (after the extra padding), the key of the plan
// caches.
struct ConvKey {
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
  bool operator<(const ConvKey& o) const { return Tie() < o.Tie(); }
};

// The input (x), output (y), filter and convolution descriptors of a key,
// with the output size cuDNN computes. The filter is KRSC with NHWC
// tensors, KCRS with NCHW (conv.cu reorders TensorFlow's HWIO).
struct ConvDescriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t filter = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  int64_t oh = 0, ow = 0;
  ConvDescriptors() = default;
  ConvDescriptors(const ConvDescriptors&) = delete;
  ConvDescriptors& operator=(const ConvDescriptors&) = delete;
  ~ConvDescriptors();
};
// Creates and sets d's descriptors (math type ti.math).
void SetConvDescriptors(const ConvKey& key, const TypeInfo& ti, const char* op,
                        ConvDescriptors* d);

// Picks the first usable algorithm of a heuristics list (`returned`
// entries of `perf`, best first, from a cudnnGet...Algorithm_v7): its
// status OK, its workspace within kMaxWorkspaceBytes and, for float without
// TF32 (ti.math is CUDNN_FMA_MATH), no tensor cores; `conv` is set to the
// math type the algorithm was rated with (cuDNN's advice for _v7). Else
// `fallback` with the math type asked for, if cuDNN gives it a workspace
// within the limit. workspace_of(algo, &bytes) asks cuDNN for an
// algorithm's workspace (false on failure). False when nothing fits.
template <typename Perf, typename Algo, typename WorkspaceFn>
bool PickAlgorithm(const std::vector<Perf>& perf, int returned, const TypeInfo& ti, Algo fallback,
                   cudnnConvolutionDescriptor_t conv, WorkspaceFn workspace_of, Algo* algo,
                   size_t* workspace) {
  const bool fma_only = ti.math == CUDNN_FMA_MATH;
  for (int i = 0; i < returned; ++i) {
    const Perf& p = perf[static_cast<size_t>(i)];
    if (p.status != CUDNN_STATUS_SUCCESS || p.memory > kMaxWorkspaceBytes) continue;
    if (fma_only && p.mathType != CUDNN_FMA_MATH) continue;
    if (cudnn::cudnnSetConvolutionMathType(conv, p.mathType) != CUDNN_STATUS_SUCCESS) continue;
    size_t bytes = 0;
    if (!workspace_of(p.algo, &bytes) || bytes > kMaxWorkspaceBytes) continue;
    *algo = p.algo;
    *workspace = bytes;
    return true;
  }
  size_t bytes = 0;
  if (cudnn::cudnnSetConvolutionMathType(conv, ti.math) != CUDNN_STATUS_SUCCESS ||
      !workspace_of(fallback, &bytes) || bytes > kMaxWorkspaceBytes) {
    return false;
  }
  *algo = fallback;
  *workspace = bytes;
  return true;
}

// The padding of a convolution of an [h, w] input with a kh x kw window:
// the full padding on each side (SAME's, EXPLICIT's or none), the part
// cuDNN applies itself (symmetric: the smaller of top and bottom, of left
// and right) and the rest, which a zero-padded copy of the input carries
// (extra). oh and ow are the window's output size.
struct ConvPadding {
  int64_t oh = 0, ow = 0;
  int64_t top = 0, bottom = 0, left = 0, right = 0;
  int64_t pad_h = 0, pad_w = 0;
  conv::PadPlan extra;     // n, c, h, w and the extra padding on each side
  bool has_extra = false;
  int64_t padded_h = 0, padded_w = 0;  // h, w with the extra padding
};
ConvPadding PadConvolution(const sdk::Window& window, int64_t n, int64_t c, int64_t h, int64_t w,
                           int64_t kh, int64_t kw);

// The key of a convolution on device `ordinal`: input [n, c, ...] padded as
// `padding` says, out_c output channels in `groups` groups of c_per_group
// input channels, a kh x kw window and the window's strides and dilations.
ConvKey MakeConvKey(int32_t ordinal, PX_DataType dtype, const TypeInfo& ti, const sdk::Window& window,
                    int64_t n, int64_t c, const ConvPadding& padding, int64_t out_c,
                    int64_t c_per_group, int64_t groups, int64_t kh, int64_t kw);

}  // namespace plexus::cuda

#endif  // PLEXUS_PLUGINS_CUDA_KERNELS_CUDNN_COMMON_H_

// cuDNN (libcudnn, version 9) opened at run time rather than linked, so the
// plugin loads on machines without it and only the convolutions fail there
// (with UNAVAILABLE naming the library). cudnn.h is included for its types
// only: every call goes through the table below (cudnn::Name(...) wrappers).
#ifndef PLEXUS_PLUGINS_CUDA_CUDNN_LOADER_H_
#define PLEXUS_PLUGINS_CUDA_CUDNN_LOADER_H_

#include <cudnn.h>

#include <string>
#include <vector>

namespace plexus::cuda {

// The cuDNN functions the plugin uses (the legacy convolution API: forward,
// and the data and filter gradients).
#define PX_CUDNN_FUNCTIONS(X)                           \
  X(cudnnGetVersion)                                    \
  X(cudnnGetErrorString)                                \
  X(cudnnCreate)                                        \
  X(cudnnSetStream)                                     \
  X(cudnnCreateTensorDescriptor)                        \
  X(cudnnDestroyTensorDescriptor)                       \
  X(cudnnSetTensor4dDescriptor)                         \
  X(cudnnCreateFilterDescriptor)                        \
  X(cudnnDestroyFilterDescriptor)                       \
  X(cudnnSetFilter4dDescriptor)                         \
  X(cudnnCreateConvolutionDescriptor)                   \
  X(cudnnDestroyConvolutionDescriptor)                  \
  X(cudnnSetConvolution2dDescriptor)                    \
  X(cudnnSetConvolutionGroupCount)                      \
  X(cudnnSetConvolutionMathType)                        \
  X(cudnnGetConvolution2dForwardOutputDim)              \
  X(cudnnGetConvolutionForwardAlgorithmMaxCount)        \
  X(cudnnGetConvolutionForwardAlgorithm_v7)             \
  X(cudnnGetConvolutionForwardWorkspaceSize)            \
  X(cudnnConvolutionForward)                            \
  X(cudnnGetConvolutionBackwardDataAlgorithmMaxCount)   \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7)        \
  X(cudnnGetConvolutionBackwardDataWorkspaceSize)       \
  X(cudnnConvolutionBackwardData)                       \
  X(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount) \
  X(cudnnGetConvolutionBackwardFilterAlgorithm_v7)      \
  X(cudnnGetConvolutionBackwardFilterWorkspaceSize)     \
  X(cudnnConvolutionBackwardFilter)

// Pointers of the exact types cudnn.h declares.
struct CudnnApi {
#define PX_CUDNN_MEMBER(name) decltype(&::name) name = nullptr;
  PX_CUDNN_FUNCTIONS(PX_CUDNN_MEMBER)
#undef PX_CUDNN_MEMBER
};

// The library names tried, in order: the soname of the cuDNN the plugin was
// built against (libcudnn.so.9), then the unversioned development link.
std::vector<std::string> DefaultCudnnLibraryNames();

// Opens the first of `candidates`, resolves every function into *api and
// checks that the library's major version is the headers' (CUDNN_MAJOR).
// Returns "" on success, else the reason ("libcudnn.so.9 not found (...):
// install cuDNN 9 for CUDA ..."). Does not cache: see Cudnn().
std::string LoadCudnn(const std::vector<std::string>& candidates, CudnnApi* api);

// The process-wide table, loaded from DefaultCudnnLibraryNames() on the
// first call (thread-safe, once). Throws sdk::Error (UNAVAILABLE) with
// LoadCudnn's message when cuDNN cannot be loaded; every later call throws
// the same.
const CudnnApi& Cudnn();

// Call-site wrappers: cudnn::cudnnConvolutionForward(...) calls the loaded
// function (loading cuDNN first if needed). Arguments are scalars and
// pointers, passed on unchanged.
namespace cudnn {
#define PX_CUDNN_WRAPPER(name)                    \
  template <typename... Args>                     \
  inline auto name(Args... args) {                \
    return ::plexus::cuda::Cudnn().name(args...); \
  }
PX_CUDNN_FUNCTIONS(PX_CUDNN_WRAPPER)
#undef PX_CUDNN_WRAPPER
}  // namespace cudnn

}  // namespace plexus::cuda

#endif  // PLEXUS_PLUGINS_CUDA_CUDNN_LOADER_H_

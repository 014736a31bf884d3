// CUDA runtime errors as Plexus statuses.
//
//   PX_CUDA_CHECK(cudaMalloc(&p, n));            // in a method returning PX_Status*
//   PX_CUDA_THROW_IF_ERROR(cudaGetLastError());  // in kernels and constructors
//
// A failed call becomes "cudaMalloc(&p, n) failed at cuda_device.cc:42: out of
// memory (cudaErrorMemoryAllocation)" with the code CudaErrorCode gives:
// RESOURCE_EXHAUSTED for out of memory, UNAVAILABLE where the driver or the
// device is missing or unusable, INVALID_ARGUMENT for bad pointers and
// values, INTERNAL otherwise. PX_CUDA_CHECK needs `host()` (the
// PX_HostServices*) in scope, as every sdk::Plugin and sdk::Device has.
#ifndef PLEXUS_PLUGINS_CUDA_CUDA_ERROR_H_
#define PLEXUS_PLUGINS_CUDA_CUDA_ERROR_H_

#include <cuda_runtime_api.h>

#include <string>

#include "plexus/plugin_api.h"
#include "plexus/sdk/error.h"

namespace plexus::cuda {

PX_Code CudaErrorCode(cudaError_t error);

// "EXPR failed at FILE:LINE: DESCRIPTION (NAME)"; FILE without folders.
std::string CudaErrorMessage(cudaError_t error, const char* expr, const char* file, int line);

// A status owned by the caller.
PX_Status* CudaStatus(const PX_HostServices* host, cudaError_t error, const char* expr,
                      const char* file, int line);

[[noreturn]] void ThrowCudaError(cudaError_t error, const char* expr, const char* file, int line);

}  // namespace plexus::cuda

#define PX_CUDA_CHECK(expr)                                                               \
  do {                                                                                    \
    const cudaError_t px_cuda_error_ = (expr);                                            \
    if (px_cuda_error_ != cudaSuccess) {                                                  \
      return ::plexus::cuda::CudaStatus(host(), px_cuda_error_, #expr, __FILE__, __LINE__); \
    }                                                                                     \
  } while (0)

// Throws sdk::Error for a failed call already made, described by `what`
// (its status code as PX_CUDA_CHECK's; the caller's file and line).
#define PX_CUDA_THROW_IF_FAILED(error, what)                                          \
  do {                                                                                \
    const cudaError_t px_cuda_failed_ = (error);                                      \
    if (px_cuda_failed_ != cudaSuccess) {                                             \
      ::plexus::cuda::ThrowCudaError(px_cuda_failed_, (what), __FILE__, __LINE__);    \
    }                                                                                 \
  } while (0)

#define PX_CUDA_THROW_IF_ERROR(expr)                                                   \
  do {                                                                                 \
    const cudaError_t px_cuda_error_ = (expr);                                         \
    if (px_cuda_error_ != cudaSuccess) {                                               \
      ::plexus::cuda::ThrowCudaError(px_cuda_error_, #expr, __FILE__, __LINE__);       \
    }                                                                                  \
  } while (0)

#endif  // PLEXUS_PLUGINS_CUDA_CUDA_ERROR_H_

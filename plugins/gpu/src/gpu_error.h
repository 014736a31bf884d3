// GPU runtime errors (CUDA or HIP, gpu_runtime.h) as Plexus statuses.
//
//   PX_GPU_CHECK(px_gpu::Malloc(&p, n));            // in a method returning PX_Status*
//   PX_GPU_THROW_IF_ERROR(px_gpu::GetLastError());  // in kernels and constructors
//
// A failed call becomes "cudaMalloc(&p, n) failed at gpu_device.cc:42: out of
// memory (cudaErrorMemoryAllocation)" with the code GpuErrorCode gives:
// RESOURCE_EXHAUSTED for out of memory, UNAVAILABLE where the driver or the
// device is missing or unusable, INVALID_ARGUMENT for bad pointers and
// values, INTERNAL otherwise. PX_GPU_CHECK needs `host()` (the
// PX_HostServices*) in scope, as every sdk::Plugin and sdk::Device has.
#ifndef PLEXUS_PLUGINS_GPU_GPU_ERROR_H_
#define PLEXUS_PLUGINS_GPU_GPU_ERROR_H_

#include "gpu_runtime.h"

#include <string>

#include "plexus/plugin_api.h"
#include "plexus/sdk/error.h"

namespace plexus::cuda {

PX_Code GpuErrorCode(px_gpu::Error error);

// "EXPR failed at FILE:LINE: DESCRIPTION (NAME)"; FILE without folders.
std::string GpuErrorMessage(px_gpu::Error error, const char* expr, const char* file, int line);

// A status owned by the caller.
PX_Status* GpuStatus(const PX_HostServices* host, px_gpu::Error error, const char* expr,
                      const char* file, int line);

[[noreturn]] void ThrowGpuError(px_gpu::Error error, const char* expr, const char* file, int line);

}  // namespace plexus::cuda

#define PX_GPU_CHECK(expr)                                                               \
  do {                                                                                    \
    const px_gpu::Error px_cuda_error_ = (expr);                                            \
    if (px_cuda_error_ != px_gpu::kSuccess) {                                                  \
      return ::plexus::cuda::GpuStatus(host(), px_cuda_error_, #expr, __FILE__, __LINE__); \
    }                                                                                     \
  } while (0)

// Throws sdk::Error for a failed call already made, described by `what`
// (its status code as PX_GPU_CHECK's; the caller's file and line).
#define PX_GPU_THROW_IF_FAILED(error, what)                                          \
  do {                                                                                \
    const px_gpu::Error px_cuda_failed_ = (error);                                      \
    if (px_cuda_failed_ != px_gpu::kSuccess) {                                             \
      ::plexus::cuda::ThrowGpuError(px_cuda_failed_, (what), __FILE__, __LINE__);    \
    }                                                                                 \
  } while (0)

#define PX_GPU_THROW_IF_ERROR(expr)                                                   \
  do {                                                                                 \
    const px_gpu::Error px_cuda_error_ = (expr);                                         \
    if (px_cuda_error_ != px_gpu::kSuccess) {                                               \
      ::plexus::cuda::ThrowGpuError(px_cuda_error_, #expr, __FILE__, __LINE__);       \
    }                                                                                  \
  } while (0)

#endif  // PLEXUS_PLUGINS_GPU_GPU_ERROR_H_

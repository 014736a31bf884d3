#include "gpu_error.h"

#include <cstdio>

namespace plexus::cuda {
namespace {

const char* BaseName(const char* path) {
  const char* base = path;
  for (const char* p = path; *p != '\0'; ++p) {
    if (*p == '/' || *p == '\\') base = p + 1;
  }
  return base;
}

}  // namespace

PX_Code GpuErrorCode(px_gpu::Error error) {
  switch (error) {
    case px_gpu::kSuccess:
      return PX_CODE_OK;
#if defined(PX_GPU_HIP)
    case hipErrorOutOfMemory:
      return PX_CODE_RESOURCE_EXHAUSTED;
    case hipErrorNoDevice:
    case hipErrorInsufficientDriver:
    case hipErrorInitializationError:
    case hipErrorNoBinaryForGpu:
    case hipErrorSharedObjectInitFailed:
      return PX_CODE_UNAVAILABLE;
    case hipErrorInvalidValue:
    case hipErrorInvalidDevicePointer:
    case hipErrorInvalidMemcpyDirection:
    case hipErrorInvalidDevice:
      return PX_CODE_INVALID_ARGUMENT;
#else
    case cudaErrorMemoryAllocation:
      return PX_CODE_RESOURCE_EXHAUSTED;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInitializationError:
    case cudaErrorDevicesUnavailable:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorSystemNotReady:
    case cudaErrorStubLibrary:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorUnsupportedPtxVersion:
    case cudaErrorNoKernelImageForDevice:
      return PX_CODE_UNAVAILABLE;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidDevicePointer:
    case cudaErrorInvalidMemcpyDirection:
    case cudaErrorInvalidDevice:
      return PX_CODE_INVALID_ARGUMENT;
#endif
    default:
      return PX_CODE_INTERNAL;
  }
}

std::string GpuErrorMessage(px_gpu::Error error, const char* expr, const char* file, int line) {
  const char* description = px_gpu::ErrorString(error);
  const char* name = px_gpu::ErrorName(error);
  char buffer[1024];
  std::snprintf(buffer, sizeof(buffer), "%s failed at %s:%d: %s (%s)", expr, BaseName(file), line,
                description != nullptr ? description : "unknown error",
                name != nullptr ? name : "unknown code");
  return buffer;
}

PX_Status* GpuStatus(const PX_HostServices* host, px_gpu::Error error, const char* expr,
                      const char* file, int line) {
  if (error == px_gpu::kSuccess) return nullptr;
  return host->status_create(GpuErrorCode(error),
                             GpuErrorMessage(error, expr, file, line).c_str());
}

void ThrowGpuError(px_gpu::Error error, const char* expr, const char* file, int line) {
  PX_Code code = GpuErrorCode(error);
  if (code == PX_CODE_OK) code = PX_CODE_UNKNOWN;
  throw sdk::Error(code, GpuErrorMessage(error, expr, file, line));
}

}  // namespace plexus::cuda

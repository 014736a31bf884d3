#include "cuda_error.h"

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

PX_Code CudaErrorCode(cudaError_t error) {
  switch (error) {
    case cudaSuccess:
      return PX_CODE_OK;
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
    default:
      return PX_CODE_INTERNAL;
  }
}

std::string CudaErrorMessage(cudaError_t error, const char* expr, const char* file, int line) {
  const char* description = cudaGetErrorString(error);
  const char* name = cudaGetErrorName(error);
  char buffer[1024];
  std::snprintf(buffer, sizeof(buffer), "%s failed at %s:%d: %s (%s)", expr, BaseName(file), line,
                description != nullptr ? description : "unknown error",
                name != nullptr ? name : "unknown code");
  return buffer;
}

PX_Status* CudaStatus(const PX_HostServices* host, cudaError_t error, const char* expr,
                      const char* file, int line) {
  if (error == cudaSuccess) return nullptr;
  return host->status_create(CudaErrorCode(error),
                             CudaErrorMessage(error, expr, file, line).c_str());
}

void ThrowCudaError(cudaError_t error, const char* expr, const char* file, int line) {
  PX_Code code = CudaErrorCode(error);
  if (code == PX_CODE_OK) code = PX_CODE_UNKNOWN;
  throw sdk::Error(code, CudaErrorMessage(error, expr, file, line));
}

}  // namespace plexus::cuda

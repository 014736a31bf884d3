// What the shared kernel classes need around a launch (gpu_stream.h), on the
// runtime names of gpu_runtime.h: built into the CUDA and the ROCm plugin.
#include "gpu_stream.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "gpu_error.h"

namespace plexus::cuda {

// ---------------------------------------------------------------------------
// Kernel launches
// ---------------------------------------------------------------------------

StreamBuffer::StreamBuffer(GpuStream& stream, size_t bytes, const char* what) : stream_(stream.get()) {
  if (bytes == 0) return;
  const px_gpu::Error e = px_gpu::MallocAsync(&p_, bytes, stream_);
  if (e != px_gpu::kSuccess) {
    p_ = nullptr;
    ThrowGpuError(e, what, __FILE__, __LINE__);
  }
}

GpuStream& StreamOf(sdk::Call& call) {
  PX_SDK_CHECK(call.stream() != nullptr, "the " PX_GPU_RUNTIME_NAME " kernels need a stream");
  GpuStream& stream = *sdk::HandleCast<GpuStream>(call.stream());
  const px_gpu::Error error = stream.EnterDevice();
  if (error != px_gpu::kSuccess) {
    ThrowGpuError(error, "SetDevice(stream's device)", __FILE__, __LINE__);
  }
  return stream;
}

bool AllowTf32() {
  static const bool allow = [] {
    const char* v = std::getenv("PX_CUDA_ALLOW_TF32");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();
  return allow;
}

void CheckContiguous(const sdk::Call& call, const char* op) {
  for (size_t i = 0; i < call.num_inputs(); ++i) {
    PX_SDK_CHECK(px_sdk_is_contiguous(&call.input(i)), "%s: input %zu is not contiguous", op, i);
  }
}

void CheckLaunch(GpuStream& stream, const char* what) {
  px_gpu::Error error = px_gpu::GetLastError();
  const char* call = what;
  if (error == px_gpu::kSuccess && stream.synchronous_debug) {
    error = px_gpu::StreamSynchronize(stream.get());
    call = "StreamSynchronize(stream) after the kernel (synchronous debug mode)";
  }
  if (error == px_gpu::kSuccess) return;
  const std::string launch = std::string("the ") + what + " kernel's launch";
  FailStream(stream, error, call == what ? launch.c_str() : call);
}

void FailStream(GpuStream& stream, px_gpu::Error error, const char* call) {
  std::string message = GpuErrorMessage(error, call, __FILE__, __LINE__);
  PX_Code code = GpuErrorCode(error);
  if (code == PX_CODE_OK) code = PX_CODE_UNKNOWN;
  sdk::SavedStatus saved;
  saved.code = code;
  saved.message = message;
  stream.error.Record(std::move(saved));
  throw sdk::Error(code, std::move(message));
}

}  // namespace plexus::cuda

// Constant inputs converted once (prepared_weight.h), on the runtime names
// of gpu_runtime.h: built into the CUDA and the ROCm plugin.
#include "prepared_weight.h"

#include <string>

namespace plexus::cuda {

PreparedWeight::~PreparedWeight() {
  // Every run that read it has finished: the executor that owns the kernel
  // instance is being destroyed.
  if (buffer_ != nullptr) (void)px_gpu::Free(buffer_);
}

const void* PreparedWeight::Ready(const void* source, const Geometry& geometry) {
  std::lock_guard<std::mutex> lock(mu_);
  return buffer_ != nullptr && source == source_ && geometry == geometry_ ? buffer_ : nullptr;
}

const void* PreparedWeight::Fill(GpuStream& stream, const void* source, const Geometry& geometry,
                                 size_t bytes, const std::function<void(void* dst)>& prepare,
                                 const char* what) {
  std::lock_guard<std::mutex> lock(mu_);
  if (buffer_ != nullptr) return source == source_ && geometry == geometry_ ? buffer_ : nullptr;
  if (gave_up_ || bytes == 0) return nullptr;
  bool capturing = true;
  if (px_gpu::StreamIsCapturing(stream.get(), &capturing) != px_gpu::kSuccess) {
    (void)px_gpu::GetLastError();  // cleared for the next launch's check
    return nullptr;
  }
  if (capturing) return nullptr;
  void* buffer = nullptr;
  if (px_gpu::Malloc(&buffer, bytes) != px_gpu::kSuccess) {
    (void)px_gpu::GetLastError();  // not sticky: clear it for the next launch's check
    gave_up_ = true;
    return nullptr;
  }
  try {
    prepare(buffer);
  } catch (...) {
    (void)px_gpu::Free(buffer);
    throw;
  }
  const px_gpu::Error synced = px_gpu::StreamSynchronize(stream.get());
  if (synced != px_gpu::kSuccess) {
    (void)px_gpu::Free(buffer);
    FailStream(stream, synced, (std::string("StreamSynchronize(stream) after preparing the constant weight of ") + what).c_str());
  }
  buffer_ = buffer;
  source_ = source;
  geometry_ = geometry;
  return buffer_;
}

}  // namespace plexus::cuda

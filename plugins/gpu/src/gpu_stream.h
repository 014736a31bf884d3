// The GPU stream object (the PX_Stream* the CUDA and ROCm plugins hand out)
// and what the shared kernel classes need around a launch: StreamOf,
// CheckLaunch, CheckContiguous, StreamBuffer. The device layer (gpu_device.cc) creates the
// streams; it and gpu_stream.cc are built into both plugins, on the runtime
// names of gpu_runtime.h.
#ifndef PLEXUS_PLUGINS_GPU_GPU_STREAM_H_
#define PLEXUS_PLUGINS_GPU_GPU_STREAM_H_

#include "gpu_runtime.h"

#include <cstdint>
#include <mutex>

#include "plexus/plugin_api.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/plugin.h"

namespace plexus::cuda {

// One non-blocking GPU stream and the first error of the work on it
// ("sticky"): a failed enqueue, a failed synchronize, or an error carried in
// from an event the stream waited on.
struct GpuStream {
  sdk::UniqueHandle<px_gpu::Stream, px_gpu::StreamDestroy> handle;
  const PX_HostServices* host = nullptr;
  int32_t ordinal = 0;
  bool set_device = false;         // more than one device: SetDevice before calls
  bool synchronous_debug = false;  // synchronize after every launch
  sdk::StickyStatus error;

  GpuStream() = default;
  GpuStream(const GpuStream&) = delete;
  GpuStream& operator=(const GpuStream&) = delete;
  // Waits for the work still queued (host callbacks read this object)
  // before the CUDA stream is destroyed.
  ~GpuStream() {
    if (handle) (void)px_gpu::StreamSynchronize(handle.get());
  }

  px_gpu::Stream get() const { return handle.get(); }
  // Makes this stream's device current on the calling thread when the
  // process may have several.
  px_gpu::Error EnterDevice() const { return set_device ? px_gpu::SetDevice(ordinal) : px_gpu::kSuccess; }
};


// After a kernel launch on `stream` (inside a kernel's Compute): a launch
// error, or in synchronous debug mode any error of the work, becomes the
// stream's sticky error and is thrown as the kernel's error. `what` names
// the kernel ("Relu").
void CheckLaunch(GpuStream& stream, const char* what);

// A failed call `call` on `stream`'s work: `error` becomes the stream's
// sticky error and is thrown.
[[noreturn]] void FailStream(GpuStream& stream, px_gpu::Error error, const char* call);

// Before a launch that reads its inputs as dense arrays: every input of the
// call is contiguous, else INVALID_ARGUMENT naming `op` and the input.
void CheckContiguous(const sdk::Call& call, const char* op);

// Device memory from the stream-ordered allocator for one kernel call,
// freed (in stream order) when destroyed: the work queued on the stream
// before the free may still use it. Throws sdk::Error, naming `what`, when
// the allocation fails.
class StreamBuffer {
 public:
  StreamBuffer(GpuStream& stream, size_t bytes, const char* what);
  ~StreamBuffer() {
    if (p_ != nullptr) (void)px_gpu::FreeAsync(p_, stream_);
  }
  StreamBuffer(const StreamBuffer&) = delete;
  StreamBuffer& operator=(const StreamBuffer&) = delete;
  void* get() const { return p_; }

 private:
  px_gpu::Stream stream_;
  void* p_ = nullptr;
};

// The stream of a kernel call, with its device made current (throws
// sdk::Error when the call has no stream or the device cannot be entered).
GpuStream& StreamOf(sdk::Call& call);

// True when the environment has PX_CUDA_ALLOW_TF32=1 (read once): float
// matrix products and convolutions may then use TF32 tensor cores.
bool AllowTf32();

}  // namespace plexus::cuda

#endif  // PLEXUS_PLUGINS_GPU_GPU_STREAM_H_

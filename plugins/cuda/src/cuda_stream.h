// The CUDA plugin's stream and event objects (the PX_Stream* and PX_Event*
// it hands out), shared by the device layer (cuda_device.cc) and the kernels,
// which reach their stream with sdk::HandleCast<CudaStream>(call.stream()).
#ifndef PLEXUS_PLUGINS_CUDA_CUDA_STREAM_H_
#define PLEXUS_PLUGINS_CUDA_CUDA_STREAM_H_

#include <cuda_runtime_api.h>

#include <cstdint>
#include <mutex>

#include "plexus/plugin_api.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/plugin.h"

namespace plexus::cuda {

// One non-blocking CUDA stream and the first error of the work on it
// ("sticky"): a failed enqueue, a failed synchronize, or an error carried in
// from an event the stream waited on.
struct CudaStream {
  sdk::UniqueHandle<cudaStream_t, cudaStreamDestroy> handle;
  const PX_HostServices* host = nullptr;
  int32_t ordinal = 0;
  bool set_device = false;         // more than one device: cudaSetDevice before calls
  bool synchronous_debug = false;  // synchronize after every launch
  sdk::StickyStatus error;

  CudaStream() = default;
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  // Waits for the work still queued (host callbacks read this object)
  // before the CUDA stream is destroyed.
  ~CudaStream() {
    if (handle) (void)cudaStreamSynchronize(handle.get());
  }

  cudaStream_t get() const { return handle.get(); }
  // Makes this stream's device current on the calling thread when the
  // process may have several.
  cudaError_t EnterDevice() const { return set_device ? cudaSetDevice(ordinal) : cudaSuccess; }
};

// A CUDA event (without timing) and the status of the work before it,
// captured when it was recorded: an event recorded on a failed stream
// reports that stream's error. A never-recorded event is complete and OK.
struct CudaEvent {
  sdk::UniqueHandle<cudaEvent_t, cudaEventDestroy> handle;
  std::mutex mu;
  sdk::SavedStatus status;
};

// After a kernel launch on `stream` (inside a kernel's Compute): a launch
// error, or in synchronous debug mode any error of the work, becomes the
// stream's sticky error and is thrown as the kernel's error. `what` names
// the kernel ("Relu").
void CheckLaunch(CudaStream& stream, const char* what);

// Device memory from the stream-ordered allocator for one kernel call,
// freed (in stream order) when destroyed: the work queued on the stream
// before the free may still use it. Throws sdk::Error, naming `what`, when
// the allocation fails.
class StreamBuffer {
 public:
  StreamBuffer(CudaStream& stream, size_t bytes, const char* what);
  ~StreamBuffer() {
    if (p_ != nullptr) (void)cudaFreeAsync(p_, stream_);
  }
  StreamBuffer(const StreamBuffer&) = delete;
  StreamBuffer& operator=(const StreamBuffer&) = delete;
  void* get() const { return p_; }

 private:
  cudaStream_t stream_;
  void* p_ = nullptr;
};

// The stream of a kernel call, with its device made current (throws
// sdk::Error when the call has no stream or the device cannot be entered).
CudaStream& StreamOf(sdk::Call& call);

// True when the environment has PX_CUDA_ALLOW_TF32=1 (read once): float
// matrix products and convolutions may then use TF32 tensor cores.
bool AllowTf32();

}  // namespace plexus::cuda

#endif  // PLEXUS_PLUGINS_CUDA_CUDA_STREAM_H_

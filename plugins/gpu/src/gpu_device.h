// One GPU device as the plugin ABI sees it, for the CUDA and the ROCm plugin
// alike (gpu_runtime.h names the runtime): memory through the GPU
// runtime, synchronous and stream-ordered copies, streams and events
// that carry errors, host callbacks. Written on sdk::Device (plexus/sdk/plugin.h).
#ifndef PLEXUS_PLUGINS_GPU_GPU_DEVICE_H_
#define PLEXUS_PLUGINS_GPU_GPU_DEVICE_H_

#include "gpu_runtime.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "gpu_stream.h"
#include "plexus/plugin_api.h"
#include "plexus/sdk/plugin.h"

namespace plexus::cuda {

// A GPU event (without timing) and the status of the work before it,
// captured when it was recorded: an event recorded on a failed stream
// reports that stream's error. A never-recorded event is complete and OK.
struct GpuEvent {
  sdk::UniqueHandle<px_gpu::Event, px_gpu::EventDestroy> handle;
  std::mutex mu;
  sdk::SavedStatus status;
};

struct DeviceOptions {
  bool set_device = false;         // more than one device in the process
  bool synchronous_debug = false;  // the host's synchronous debug mode
  // PX_CUDA_ALLOCATOR=async: allocate from CUDA's stream-ordered allocator
  // (the device's default memory pool, which keeps freed memory for reuse)
  // instead of px_gpu::Malloc. For running with the core's own pool off
  // (PLEXUS_DEVICE_POOL=off), when the plugin manages memory itself.
  bool stream_ordered_allocator = false;
};

class GpuDevice : public sdk::Device {
 public:
  using Stream = GpuStream;
  using Event = GpuEvent;

  GpuDevice(const sdk::Plugin& plugin, int32_t ordinal, DeviceOptions options);
  ~GpuDevice();

  // Makes the device current and its context exist.
  PX_Status* Open();

  // -- memory (px_gpu::Malloc: 256-byte aligned; larger alignments over-allocate)
  PX_Status* Allocate(size_t bytes, size_t alignment, void** out);
  void Deallocate(void* ptr);
  PX_Status* HostAllocate(size_t bytes, void** out);  // pinned (px_gpu::MallocHost)
  void HostDeallocate(void* ptr);
  PX_Status* MemoryStats(PX_MemoryStats* out);

  // -- copies
  PX_Status* MemcpyH2D(void* dst, const void* src, size_t bytes);
  PX_Status* MemcpyD2H(void* dst, const void* src, size_t bytes);
  PX_Status* MemcpyD2D(void* dst, const void* src, size_t bytes);
  PX_Status* MemcpyH2DAsync(Stream& stream, void* dst, const void* src, size_t bytes);
  PX_Status* MemcpyD2HAsync(Stream& stream, void* dst, const void* src, size_t bytes);
  PX_Status* MemcpyD2DAsync(Stream& stream, void* dst, const void* src, size_t bytes);

  // -- streams and events
  PX_Status* StreamCreate(std::unique_ptr<Stream>* out);
  PX_Status* StreamSynchronize(Stream& stream);
  PX_Status* StreamGetStatus(Stream& stream);
  PX_Status* StreamAddCallback(Stream& stream, PX_HostCallbackFn fn, void* arg);
  PX_Status* EventCreate(std::unique_ptr<Event>* out);
  PX_Status* EventRecord(Stream& stream, Event& event);
  PX_Status* EventSynchronize(Event& event);
  PX_Status* StreamWaitEvent(Stream& stream, Event& event);

  // -- stream interop (ABI 0.8): the DLPack stream handshake with PyTorch,
  // CuPy and others. A native handle is a cudaStream_t (hipStream_t) as an
  // integer; DLPack's reserved values: on CUDA 1 is the legacy default
  // stream and 2 the per-thread default stream, on ROCm 0 is the default
  // stream.
  PX_Status* StreamNativeHandle(Stream& stream, uint64_t* out_handle);
  PX_Status* NativeStreamWait(uint64_t native_stream, Stream& stream);

#if !defined(PX_GPU_HIP)
  // -- stream capture (ABI 0.5): CUDA/HIP graphs. Capture is thread-local
  // (cudaStreamCaptureModeThreadLocal), so a call on the capturing thread
  // that could read or wait for device work (a synchronous copy, say) fails
  // and ends the capture instead of silently reading unwritten memory.
  PX_Status* StreamCaptureBegin(Stream& stream);
  PX_Status* StreamCaptureEnd(Stream& stream, PX_Graph** out_graph);
  PX_Status* GraphLaunch(Stream& stream, PX_Graph* graph);
  void GraphDestroy(PX_Graph* graph);
#endif  // HIP 5.2's graphs are not used: the ROCm plugin offers no capture.

 private:
  px_gpu::Error EnterDevice() const {
    return options_.set_device ? px_gpu::SetDevice(ordinal()) : px_gpu::kSuccess;
  }
  PX_Status* Copy(void* dst, const void* src, size_t bytes, px_gpu::CopyKind kind);
  PX_Status* EnqueueCopy(Stream& stream, void* dst, const void* src, size_t bytes,
                         px_gpu::CopyKind kind);
  PX_Status* CopyAsync(Stream& stream, void* dst, const void* src, size_t bytes,
                       px_gpu::CopyKind kind);

  DeviceOptions options_;
  // The synchronous copies' stream (non-blocking, like the host's streams).
  sdk::UniqueHandle<px_gpu::Stream, px_gpu::StreamDestroy> copy_stream_;

  // Live allocations: the pointer handed out -> what px_gpu::Malloc returned and
  // the bytes asked for (the statistics count those).
  struct Block {
    void* base;
    size_t bytes;
  };
  std::mutex mu_;
  std::unordered_map<void*, Block> blocks_;
  uint64_t bytes_in_use_ = 0;
  uint64_t peak_bytes_in_use_ = 0;
  uint64_t num_allocations_ = 0;
};

}  // namespace plexus::cuda

#endif  // PLEXUS_PLUGINS_GPU_GPU_DEVICE_H_

// One CUDA device as the plugin ABI sees it: memory through the CUDA
// runtime, synchronous and stream-ordered copies, CUDA streams and events
// that carry errors, host callbacks. Written on sdk::Device (plexus/sdk/plugin.h).
#ifndef PLEXUS_PLUGINS_CUDA_CUDA_DEVICE_H_
#define PLEXUS_PLUGINS_CUDA_CUDA_DEVICE_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "cuda_stream.h"
#include "plexus/plugin_api.h"
#include "plexus/sdk/plugin.h"

namespace plexus::cuda {

struct DeviceOptions {
  bool set_device = false;         // more than one device in the process
  bool synchronous_debug = false;  // the host's synchronous debug mode
  // PX_CUDA_ALLOCATOR=async: allocate from CUDA's stream-ordered allocator
  // (the device's default memory pool, which keeps freed memory for reuse)
  // instead of cudaMalloc. For running with the core's own pool off
  // (PLEXUS_DEVICE_POOL=off), when the plugin manages memory itself.
  bool stream_ordered_allocator = false;
};

class CudaDevice : public sdk::Device {
 public:
  using Stream = CudaStream;
  using Event = CudaEvent;

  CudaDevice(const sdk::Plugin& plugin, int32_t ordinal, DeviceOptions options);
  ~CudaDevice();

  // Makes the device current and its context exist.
  PX_Status* Open();

  // -- memory (cudaMalloc: 256-byte aligned; larger alignments over-allocate)
  PX_Status* Allocate(size_t bytes, size_t alignment, void** out);
  void Deallocate(void* ptr);
  PX_Status* HostAllocate(size_t bytes, void** out);  // pinned (cudaMallocHost)
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

  // -- stream capture (ABI 0.5): CUDA graphs. Capture is thread-local
  // (cudaStreamCaptureModeThreadLocal), so a call on the capturing thread
  // that could read or wait for device work (a synchronous copy, say) fails
  // and ends the capture instead of silently reading unwritten memory.
  PX_Status* StreamCaptureBegin(Stream& stream);
  PX_Status* StreamCaptureEnd(Stream& stream, PX_Graph** out_graph);
  PX_Status* GraphLaunch(Stream& stream, PX_Graph* graph);
  void GraphDestroy(PX_Graph* graph);

 private:
  cudaError_t EnterDevice() const {
    return options_.set_device ? cudaSetDevice(ordinal()) : cudaSuccess;
  }
  PX_Status* Copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind);
  PX_Status* EnqueueCopy(Stream& stream, void* dst, const void* src, size_t bytes,
                         cudaMemcpyKind kind);
  PX_Status* CopyAsync(Stream& stream, void* dst, const void* src, size_t bytes,
                       cudaMemcpyKind kind);

  DeviceOptions options_;
  // The synchronous copies' stream (non-blocking, like the host's streams).
  sdk::UniqueHandle<cudaStream_t, cudaStreamDestroy> copy_stream_;

  // Live allocations: the pointer handed out -> what cudaMalloc returned and
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

#endif  // PLEXUS_PLUGINS_CUDA_CUDA_DEVICE_H_

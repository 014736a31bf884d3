#include "gpu_device.h"

#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <string>
#include <utility>

#include "gpu_error.h"

namespace plexus::cuda {

// The GPU runtime's allocations are at least this aligned (CUDA and HIP: 256).
constexpr size_t kRuntimeMallocAlignment = 256;

GpuDevice::GpuDevice(const sdk::Plugin& plugin, int32_t ordinal, DeviceOptions options)
    : sdk::Device(plugin, ordinal), options_(options) {}

GpuDevice::~GpuDevice() {
  // Whatever the host did not give back goes with the device.
  (void)EnterDevice();
  for (auto& entry : blocks_) (void)px_gpu::Free(entry.second.base);
}

PX_Status* GpuDevice::Open() {
  PX_GPU_CHECK(px_gpu::SetDevice(ordinal()));
  // Creates the device's primary context now, so that an unusable device is
  // reported when it is opened rather than at its first allocation.
  PX_GPU_CHECK(px_gpu::Free(nullptr));
  PX_GPU_CHECK(px_gpu::StreamCreateNonBlocking(copy_stream_.out()));
  // The stream-ordered allocator's default pool serves the kernels' scratch
  // memory (and, with PX_CUDA_ALLOCATOR=async, all of it): keep freed memory
  // there instead of giving it back to the driver at each synchronization.
  const px_gpu::Error kept = px_gpu::KeepFreedPoolMemory(ordinal());
  if (kept != px_gpu::kSuccess) {
    // Only a missed optimization: the pool then returns freed memory at
    // each synchronization.
    (void)px_gpu::GetLastError();
    Log(PX_LOG_WARNING, "%s", GpuErrorMessage(kept, "KeepFreedPoolMemory", __FILE__, __LINE__).c_str());
  }
  return nullptr;
}

// ---------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------

PX_Status* GpuDevice::Allocate(size_t bytes, size_t alignment, void** out) {
  // Over-allocate for alignments beyond what px_gpu::Malloc guarantees; a
  // zero-byte request still gets a distinct pointer.
  const size_t extra = alignment > kRuntimeMallocAlignment ? alignment - kRuntimeMallocAlignment : 0;
  if (bytes > SIZE_MAX - extra - 1) {
    return Error(PX_CODE_RESOURCE_EXHAUSTED,
                 "out of device memory on %s:%d: %zu bytes (alignment %zu) is more than "
                 "the address space",
                 PX_GPU_DEVICE_NAME, static_cast<int>(ordinal()), bytes, alignment);
  }
  const size_t request = (bytes == 0 ? 1 : bytes) + extra;
  PX_GPU_CHECK(EnterDevice());
  void* base = nullptr;
  px_gpu::Error error;
  const char* call;
  if (options_.stream_ordered_allocator) {
    // On the device's private copy stream, waited for: the memory is usable
    // on any stream when this returns.
    call = "MallocAsync(&base, request, copy stream)";
    error = px_gpu::MallocAsync(&base, request, copy_stream_.get());
    if (error == px_gpu::kSuccess) error = px_gpu::StreamSynchronize(copy_stream_.get());
  } else {
    call = "Malloc(&base, request)";
    error = px_gpu::Malloc(&base, request);
  }
  if (error != px_gpu::kSuccess) {
    (void)px_gpu::GetLastError();  // an allocation failure is not sticky: clear it
    const PX_Code code = GpuErrorCode(error);
    return Error(code == PX_CODE_OK ? PX_CODE_UNKNOWN : code,
                 "out of device memory on %s:%d allocating %zu bytes: %s",
                 PX_GPU_DEVICE_NAME, static_cast<int>(ordinal()), bytes,
                 GpuErrorMessage(error, call, __FILE__, __LINE__).c_str());
  }
  const uintptr_t b = reinterpret_cast<uintptr_t>(base);
  void* ptr = reinterpret_cast<void*>((b + alignment - 1) & ~(uintptr_t{alignment} - 1));
  {
    std::lock_guard<std::mutex> lock(mu_);
    blocks_[ptr] = Block{base, bytes};
    bytes_in_use_ += bytes;
    if (bytes_in_use_ > peak_bytes_in_use_) peak_bytes_in_use_ = bytes_in_use_;
    ++num_allocations_;
  }
  *out = ptr;
  return nullptr;
}

void GpuDevice::Deallocate(void* ptr) {
  Block block{};
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = blocks_.find(ptr);
    if (it == blocks_.end()) {
      Log(PX_LOG_ERROR, "deallocate: %p is not a live allocation of %s:%d", ptr,
          PX_GPU_DEVICE_NAME, static_cast<int>(ordinal()));
      return;
    }
    block = it->second;
    blocks_.erase(it);
    bytes_in_use_ -= block.bytes;
  }
  (void)EnterDevice();
  // The host frees memory only once the work using it has finished, so the
  // stream-ordered free needs no other ordering.
  const px_gpu::Error error = options_.stream_ordered_allocator
                                ? px_gpu::FreeAsync(block.base, copy_stream_.get())
                                : px_gpu::Free(block.base);
  if (error != px_gpu::kSuccess) {
    Log(PX_LOG_ERROR, "%s",
        GpuErrorMessage(error, "Free(block.base)", __FILE__, __LINE__).c_str());
  }
}

PX_Status* GpuDevice::HostAllocate(size_t bytes, void** out) {
  PX_GPU_CHECK(EnterDevice());
  void* ptr = nullptr;
  const px_gpu::Error error = px_gpu::MallocHost(&ptr, bytes == 0 ? 1 : bytes);
  if (error != px_gpu::kSuccess) {
    (void)px_gpu::GetLastError();
    const PX_Code code = GpuErrorCode(error);
    return Error(code == PX_CODE_OK ? PX_CODE_UNKNOWN : code,
                 "out of pinned host memory allocating %zu bytes for %s:%d: %s", bytes,
                 PX_GPU_DEVICE_NAME, static_cast<int>(ordinal()),
                 GpuErrorMessage(error, "MallocHost(&ptr, bytes)", __FILE__, __LINE__).c_str());
  }
  *out = ptr;
  return nullptr;
}

void GpuDevice::HostDeallocate(void* ptr) {
  const px_gpu::Error error = px_gpu::FreeHost(ptr);
  if (error != px_gpu::kSuccess) {
    Log(PX_LOG_ERROR, "%s", GpuErrorMessage(error, "FreeHost(ptr)", __FILE__, __LINE__).c_str());
  }
}

PX_Status* GpuDevice::MemoryStats(PX_MemoryStats* out) {
  PX_GPU_CHECK(EnterDevice());
  size_t free_bytes = 0, total_bytes = 0;
  PX_GPU_CHECK(px_gpu::MemGetInfo(&free_bytes, &total_bytes));
  std::lock_guard<std::mutex> lock(mu_);
  out->bytes_in_use = bytes_in_use_;
  out->peak_bytes_in_use = peak_bytes_in_use_;
  out->num_allocations = num_allocations_;
  out->bytes_limit = total_bytes;
  return nullptr;
}

// ---------------------------------------------------------------------------
// Copies
// ---------------------------------------------------------------------------

// Not the runtime's synchronous Memcpy: it runs on the legacy default stream, which our
// non-blocking streams do not wait for, and returns before the data has
// landed for pageable host-to-device and for device-to-device copies. The
// ABI's synchronous copies are complete when they return: a copy on the
// device's own stream, then a wait for that stream.
PX_Status* GpuDevice::Copy(void* dst, const void* src, size_t bytes, px_gpu::CopyKind kind) {
  PX_GPU_CHECK(EnterDevice());
  PX_GPU_CHECK(px_gpu::MemcpyAsync(dst, src, bytes, kind, copy_stream_.get()));
  PX_GPU_CHECK(px_gpu::StreamSynchronize(copy_stream_.get()));
  return nullptr;
}

PX_Status* GpuDevice::MemcpyH2D(void* dst, const void* src, size_t bytes) {
  return Copy(dst, src, bytes, px_gpu::kHostToDevice);
}
PX_Status* GpuDevice::MemcpyD2H(void* dst, const void* src, size_t bytes) {
  return Copy(dst, src, bytes, px_gpu::kDeviceToHost);
}
PX_Status* GpuDevice::MemcpyD2D(void* dst, const void* src, size_t bytes) {
  return Copy(dst, src, bytes, px_gpu::kDeviceToDevice);
}

PX_Status* GpuDevice::EnqueueCopy(Stream& stream, void* dst, const void* src, size_t bytes,
                                    px_gpu::CopyKind kind) {
  PX_GPU_CHECK(EnterDevice());
  PX_GPU_CHECK(px_gpu::MemcpyAsync(dst, src, bytes, kind, stream.get()));
  if (options_.synchronous_debug) PX_GPU_CHECK(px_gpu::StreamSynchronize(stream.get()));
  return nullptr;
}

// A copy that cannot be queued (a null pointer, say) is also the stream's
// sticky error: the work after it would read what it did not write.
PX_Status* GpuDevice::CopyAsync(Stream& stream, void* dst, const void* src, size_t bytes,
                                 px_gpu::CopyKind kind) {
  PX_Status* status = EnqueueCopy(stream, dst, src, bytes, kind);
  stream.error.Record(host(), status);
  return status;
}

PX_Status* GpuDevice::MemcpyH2DAsync(Stream& stream, void* dst, const void* src, size_t bytes) {
  return CopyAsync(stream, dst, src, bytes, px_gpu::kHostToDevice);
}
PX_Status* GpuDevice::MemcpyD2HAsync(Stream& stream, void* dst, const void* src, size_t bytes) {
  return CopyAsync(stream, dst, src, bytes, px_gpu::kDeviceToHost);
}
PX_Status* GpuDevice::MemcpyD2DAsync(Stream& stream, void* dst, const void* src, size_t bytes) {
  return CopyAsync(stream, dst, src, bytes, px_gpu::kDeviceToDevice);
}

// ---------------------------------------------------------------------------
// Streams
// ---------------------------------------------------------------------------

PX_Status* GpuDevice::StreamCreate(std::unique_ptr<Stream>* out) {
  auto stream = std::make_unique<Stream>();
  stream->host = host();
  stream->ordinal = ordinal();
  stream->set_device = options_.set_device;
  stream->synchronous_debug = options_.synchronous_debug;
  PX_GPU_CHECK(EnterDevice());
  // Non-blocking: no implicit ordering with the legacy default stream, which
  // the synchronous copies use.
  PX_GPU_CHECK(px_gpu::StreamCreateNonBlocking(stream->handle.out()));
  *out = std::move(stream);
  return nullptr;
}

PX_Status* GpuDevice::StreamSynchronize(Stream& stream) {
  const px_gpu::Error error = px_gpu::StreamSynchronize(stream.get());
  if (error != px_gpu::kSuccess) {
    sdk::Status status(host(), GpuStatus(host(), error, "StreamSynchronize(stream)",
                                          __FILE__, __LINE__));
    stream.error.Record(host(), status.get());
  }
  return stream.error.Report(host());
}

PX_Status* GpuDevice::StreamGetStatus(Stream& stream) {
  const px_gpu::Error error = px_gpu::StreamQuery(stream.get());
  if (error != px_gpu::kSuccess && error != px_gpu::kErrorNotReady) {
    sdk::Status status(host(),
                       GpuStatus(host(), error, "StreamQuery(stream)", __FILE__, __LINE__));
    stream.error.Record(host(), status.get());
  }
  return stream.error.Report(host());
}

namespace {

// What a host function queued with px_gpu::LaunchHostFunc needs.
struct PendingCallback {
  GpuStream* stream;
  PX_HostCallbackFn fn;
  void* arg;
};

// Runs on the GPU runtime's callback thread once earlier work finished; it
// must not call the runtime itself (the host's callback must not either, by the ABI:
// no calls back into the same stream).
void RunHostCallback(void* data) {
  std::unique_ptr<PendingCallback> pending(static_cast<PendingCallback*>(data));
  const PX_HostServices* host = pending->stream->host;
  sdk::Status status(host, pending->stream->error.Report(host));
  pending->fn(pending->arg, status.get());
}

}  // namespace

// A recorded graph, instantiated for launching.
struct CudaGraph {
  px_gpu::GraphExec exec = nullptr;
  int32_t ordinal = 0;
};

#if !defined(PX_GPU_HIP)
PX_Status* GpuDevice::StreamCaptureBegin(Stream& stream) {
  if (options_.synchronous_debug) {
    return Error(PX_CODE_UNIMPLEMENTED,
                 "stream capture is off in synchronous debug mode (every launch waits)");
  }
  PX_GPU_CHECK(stream.EnterDevice());
  PX_GPU_CHECK(px_gpu::StreamBeginCapture(stream.get()));
  return nullptr;
}

PX_Status* GpuDevice::StreamCaptureEnd(Stream& stream, PX_Graph** out_graph) {
  PX_GPU_CHECK(stream.EnterDevice());
  px_gpu::Graph graph = nullptr;
  // Ends the capture even when it was invalidated (the error says why).
  const px_gpu::Error ended = px_gpu::StreamEndCapture(stream.get(), &graph);
  // A failed capture leaves its error as the thread's last error, which
  // the next kernel launch on this thread would otherwise report as its own.
  (void)px_gpu::GetLastError();
  PX_GPU_CHECK(ended);
  sdk::UniqueHandle<px_gpu::Graph, px_gpu::GraphDestroy> recorded(graph);
  if (graph == nullptr) return Error(PX_CODE_INTERNAL, "StreamEndCapture returned no graph");
  px_gpu::GraphExec exec = nullptr;
  PX_GPU_CHECK(px_gpu::GraphInstantiate(&exec, graph));
  auto* g = new CudaGraph;
  g->exec = exec;
  g->ordinal = ordinal();
  *out_graph = reinterpret_cast<PX_Graph*>(g);
  return nullptr;
}

PX_Status* GpuDevice::GraphLaunch(Stream& stream, PX_Graph* graph) {
  auto* g = reinterpret_cast<CudaGraph*>(graph);
  if (g->ordinal != ordinal()) {
    return Error(PX_CODE_INVALID_ARGUMENT, "graph_launch: the graph was recorded on another device");
  }
  PX_GPU_CHECK(stream.EnterDevice());
  const px_gpu::Error error = px_gpu::GraphLaunch(g->exec, stream.get());
  if (error != px_gpu::kSuccess) {
    sdk::Status status(host(), GpuStatus(host(), error, "GraphLaunch(graph, stream)", __FILE__,
                                          __LINE__));
    stream.error.Record(host(), status.get());
    return stream.error.Report(host());
  }
  if (options_.synchronous_debug) PX_GPU_CHECK(px_gpu::StreamSynchronize(stream.get()));
  return nullptr;
}

void GpuDevice::GraphDestroy(PX_Graph* graph) {
  auto* g = reinterpret_cast<CudaGraph*>(graph);
  if (EnterDevice() == px_gpu::kSuccess && g->exec != nullptr) (void)px_gpu::GraphExecDestroy(g->exec);
  delete g;
}
#endif  // !PX_GPU_HIP

PX_Status* GpuDevice::StreamAddCallback(Stream& stream, PX_HostCallbackFn fn, void* arg) {
  auto pending = std::make_unique<PendingCallback>(PendingCallback{&stream, fn, arg});
  px_gpu::Error error = EnterDevice();
  if (error == px_gpu::kSuccess) error = px_gpu::LaunchHostFunc(stream.get(), &RunHostCallback, pending.get());
  if (error == px_gpu::kSuccess) {
    pending.release();  // RunHostCallback owns it now
    return nullptr;
  }
  // Not queued: the stream has failed; the callback still runs once, now,
  // with that error.
  sdk::Status status(host(), GpuStatus(host(), error, "LaunchHostFunc(stream, ...)",
                                        __FILE__, __LINE__));
  stream.error.Record(host(), status.get());
  sdk::Status sticky(host(), stream.error.Report(host()));
  fn(arg, sticky.get());
  return nullptr;
}

// ---------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------

PX_Status* GpuDevice::EventCreate(std::unique_ptr<Event>* out) {
  auto event = std::make_unique<Event>();
  PX_GPU_CHECK(EnterDevice());
  PX_GPU_CHECK(px_gpu::EventCreateNoTiming(event->handle.out()));
  *out = std::move(event);
  return nullptr;
}

PX_Status* GpuDevice::EventRecord(Stream& stream, Event& event) {
  px_gpu::Error error = EnterDevice();
  if (error == px_gpu::kSuccess) error = px_gpu::EventRecord(event.handle.get(), stream.get());
  if (error != px_gpu::kSuccess) {
    PX_Status* status =
        GpuStatus(host(), error, "EventRecord(event, stream)", __FILE__, __LINE__);
    stream.error.Record(host(), status);
    std::lock_guard<std::mutex> lock(event.mu);
    event.status = sdk::SavedStatus::From(host(), status);
    return status;
  }
  sdk::SavedStatus status = stream.error.Get();
  std::lock_guard<std::mutex> lock(event.mu);
  event.status = std::move(status);
  return nullptr;
}

PX_Status* GpuDevice::EventSynchronize(Event& event) {
  PX_GPU_CHECK(px_gpu::EventSynchronize(event.handle.get()));
  std::lock_guard<std::mutex> lock(event.mu);
  return event.status.ToStatus(host());
}

// The waiting stream also inherits the event's error: what it runs next
// depends on work that failed.
PX_Status* GpuDevice::StreamWaitEvent(Stream& stream, Event& event) {
  PX_GPU_CHECK(EnterDevice());
  PX_GPU_CHECK(px_gpu::StreamWaitEvent(stream.get(), event.handle.get()));
  sdk::SavedStatus status;
  {
    std::lock_guard<std::mutex> lock(event.mu);
    status = event.status;
  }
  stream.error.Record(std::move(status));
  return nullptr;
}

PX_Status* GpuDevice::StreamNativeHandle(Stream& stream, uint64_t* out_handle) {
  *out_handle = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(stream.get()));
  if (*out_handle <= 2) {
    return Error(PX_CODE_INTERNAL, "stream_native_handle: the stream has no handle of its own");
  }
  return nullptr;
}

PX_Status* GpuDevice::NativeStreamWait(uint64_t native_stream, Stream& stream) {
  px_gpu::Stream target = nullptr;
#if defined(PX_GPU_HIP)
  if (native_stream == 1 || native_stream == 2) {
    return Error(PX_CODE_INVALID_ARGUMENT,
                 "native_stream_wait: stream %llu is not a ROCm stream (DLPack's default "
                 "stream on ROCm is 0)",
                 static_cast<unsigned long long>(native_stream));
  }
  target = reinterpret_cast<px_gpu::Stream>(static_cast<uintptr_t>(native_stream));  // 0: default
#else
  if (native_stream == 0) {
    return Error(PX_CODE_INVALID_ARGUMENT,
                 "native_stream_wait: stream 0 is ambiguous on CUDA (DLPack: 1 is the legacy "
                 "default stream, 2 the per-thread default stream)");
  }
  target = native_stream == 1   ? cudaStreamLegacy
           : native_stream == 2 ? cudaStreamPerThread
                                : reinterpret_cast<px_gpu::Stream>(static_cast<uintptr_t>(native_stream));
#endif
  // The work's error so far is the export's error: the consumer must not
  // read what a failed kernel left.
  if (PX_Status* failed = stream.error.Report(host())) return failed;
  PX_GPU_CHECK(EnterDevice());
#if !defined(PX_GPU_HIP)
  // A stream another library is capturing into a graph cannot wait for an
  // event recorded outside the capture (the capture would be invalidated):
  // wait on the host instead.
  if (native_stream > 2) {
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    PX_GPU_CHECK(cudaStreamIsCapturing(target, &capturing));
    if (capturing != cudaStreamCaptureStatusNone) return StreamSynchronize(stream);
  }
#endif
  px_gpu::Event raw = nullptr;
  PX_GPU_CHECK(px_gpu::EventCreateNoTiming(&raw));
  sdk::UniqueHandle<px_gpu::Event, px_gpu::EventDestroy> event(raw);
  // An event destroyed right after the wait is queued still orders it.
  PX_GPU_CHECK(px_gpu::EventRecord(event.get(), stream.get()));
  PX_GPU_CHECK(px_gpu::StreamWaitEvent(target, event.get()));
  return nullptr;
}

}  // namespace plexus::cuda

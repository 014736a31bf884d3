#include "cuda_device.h"

#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <string>
#include <utility>

#include "cuda_error.h"

namespace plexus::cuda {

// The CUDA runtime's allocations are at least this aligned.
constexpr size_t kCudaMallocAlignment = 256;

CudaDevice::CudaDevice(const sdk::Plugin& plugin, int32_t ordinal, DeviceOptions options)
    : sdk::Device(plugin, ordinal), options_(options) {}

CudaDevice::~CudaDevice() {
  // Whatever the host did not give back goes with the device.
  (void)EnterDevice();
  for (auto& entry : blocks_) (void)cudaFree(entry.second.base);
}

PX_Status* CudaDevice::Open() {
  PX_CUDA_CHECK(cudaSetDevice(ordinal()));
  // Creates the device's primary context now, so that an unusable device is
  // reported when it is opened rather than at its first allocation.
  PX_CUDA_CHECK(cudaFree(nullptr));
  PX_CUDA_CHECK(cudaStreamCreateWithFlags(copy_stream_.out(), cudaStreamNonBlocking));
  // The stream-ordered allocator's default pool serves the kernels' scratch
  // memory (and, with PX_CUDA_ALLOCATOR=async, all of it): keep freed memory
  // there instead of giving it back to the driver at each synchronization.
  cudaMemPool_t pool = nullptr;
  PX_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, ordinal()));
  uint64_t keep = UINT64_MAX;
  PX_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  return nullptr;
}

// ---------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------

PX_Status* CudaDevice::Allocate(size_t bytes, size_t alignment, void** out) {
  // Over-allocate for alignments beyond what cudaMalloc guarantees; a
  // zero-byte request still gets a distinct pointer.
  const size_t extra = alignment > kCudaMallocAlignment ? alignment - kCudaMallocAlignment : 0;
  if (bytes > SIZE_MAX - extra - 1) {
    return Error(PX_CODE_RESOURCE_EXHAUSTED,
                 "out of device memory on CUDA:%d: %zu bytes (alignment %zu) is more than "
                 "the address space",
                 static_cast<int>(ordinal()), bytes, alignment);
  }
  const size_t request = (bytes == 0 ? 1 : bytes) + extra;
  PX_CUDA_CHECK(EnterDevice());
  void* base = nullptr;
  cudaError_t error;
  const char* call;
  if (options_.stream_ordered_allocator) {
    // On the device's private copy stream, waited for: the memory is usable
    // on any stream when this returns.
    call = "cudaMallocAsync(&base, request, copy stream)";
    error = cudaMallocAsync(&base, request, copy_stream_.get());
    if (error == cudaSuccess) error = cudaStreamSynchronize(copy_stream_.get());
  } else {
    call = "cudaMalloc(&base, request)";
    error = cudaMalloc(&base, request);
  }
  if (error != cudaSuccess) {
    (void)cudaGetLastError();  // an allocation failure is not sticky: clear it
    const PX_Code code = CudaErrorCode(error);
    return Error(code == PX_CODE_OK ? PX_CODE_UNKNOWN : code,
                 "out of device memory on CUDA:%d allocating %zu bytes: %s",
                 static_cast<int>(ordinal()), bytes,
                 CudaErrorMessage(error, call, __FILE__, __LINE__).c_str());
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

void CudaDevice::Deallocate(void* ptr) {
  Block block{};
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = blocks_.find(ptr);
    if (it == blocks_.end()) {
      Log(PX_LOG_ERROR, "deallocate: %p is not a live allocation of CUDA:%d", ptr,
          static_cast<int>(ordinal()));
      return;
    }
    block = it->second;
    blocks_.erase(it);
    bytes_in_use_ -= block.bytes;
  }
  (void)EnterDevice();
  // The host frees memory only once the work using it has finished, so the
  // stream-ordered free needs no other ordering.
  const cudaError_t error = options_.stream_ordered_allocator
                                ? cudaFreeAsync(block.base, copy_stream_.get())
                                : cudaFree(block.base);
  if (error != cudaSuccess) {
    Log(PX_LOG_ERROR, "%s",
        CudaErrorMessage(error, "cudaFree(block.base)", __FILE__, __LINE__).c_str());
  }
}

PX_Status* CudaDevice::HostAllocate(size_t bytes, void** out) {
  PX_CUDA_CHECK(EnterDevice());
  void* ptr = nullptr;
  const cudaError_t error = cudaMallocHost(&ptr, bytes == 0 ? 1 : bytes);
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    const PX_Code code = CudaErrorCode(error);
    return Error(code == PX_CODE_OK ? PX_CODE_UNKNOWN : code,
                 "out of pinned host memory allocating %zu bytes for CUDA:%d: %s", bytes,
                 static_cast<int>(ordinal()),
                 CudaErrorMessage(error, "cudaMallocHost(&ptr, bytes)", __FILE__, __LINE__).c_str());
  }
  *out = ptr;
  return nullptr;
}

void CudaDevice::HostDeallocate(void* ptr) {
  const cudaError_t error = cudaFreeHost(ptr);
  if (error != cudaSuccess) {
    Log(PX_LOG_ERROR, "%s", CudaErrorMessage(error, "cudaFreeHost(ptr)", __FILE__, __LINE__).c_str());
  }
}

PX_Status* CudaDevice::MemoryStats(PX_MemoryStats* out) {
  PX_CUDA_CHECK(EnterDevice());
  size_t free_bytes = 0, total_bytes = 0;
  PX_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
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

// Not cudaMemcpy: it runs on the legacy default stream, which our
// non-blocking streams do not wait for, and returns before the data has
// landed for pageable host-to-device and for device-to-device copies. The
// ABI's synchronous copies are complete when they return: a copy on the
// device's own stream, then a wait for that stream.
PX_Status* CudaDevice::Copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  PX_CUDA_CHECK(EnterDevice());
  PX_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, copy_stream_.get()));
  PX_CUDA_CHECK(cudaStreamSynchronize(copy_stream_.get()));
  return nullptr;
}

PX_Status* CudaDevice::MemcpyH2D(void* dst, const void* src, size_t bytes) {
  return Copy(dst, src, bytes, cudaMemcpyHostToDevice);
}
PX_Status* CudaDevice::MemcpyD2H(void* dst, const void* src, size_t bytes) {
  return Copy(dst, src, bytes, cudaMemcpyDeviceToHost);
}
PX_Status* CudaDevice::MemcpyD2D(void* dst, const void* src, size_t bytes) {
  return Copy(dst, src, bytes, cudaMemcpyDeviceToDevice);
}

PX_Status* CudaDevice::EnqueueCopy(Stream& stream, void* dst, const void* src, size_t bytes,
                                    cudaMemcpyKind kind) {
  PX_CUDA_CHECK(EnterDevice());
  PX_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream.get()));
  if (options_.synchronous_debug) PX_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  return nullptr;
}

// A copy that cannot be queued (a null pointer, say) is also the stream's
// sticky error: the work after it would read what it did not write.
PX_Status* CudaDevice::CopyAsync(Stream& stream, void* dst, const void* src, size_t bytes,
                                 cudaMemcpyKind kind) {
  PX_Status* status = EnqueueCopy(stream, dst, src, bytes, kind);
  stream.error.Record(host(), status);
  return status;
}

PX_Status* CudaDevice::MemcpyH2DAsync(Stream& stream, void* dst, const void* src, size_t bytes) {
  return CopyAsync(stream, dst, src, bytes, cudaMemcpyHostToDevice);
}
PX_Status* CudaDevice::MemcpyD2HAsync(Stream& stream, void* dst, const void* src, size_t bytes) {
  return CopyAsync(stream, dst, src, bytes, cudaMemcpyDeviceToHost);
}
PX_Status* CudaDevice::MemcpyD2DAsync(Stream& stream, void* dst, const void* src, size_t bytes) {
  return CopyAsync(stream, dst, src, bytes, cudaMemcpyDeviceToDevice);
}

// ---------------------------------------------------------------------------
// Streams
// ---------------------------------------------------------------------------

PX_Status* CudaDevice::StreamCreate(std::unique_ptr<Stream>* out) {
  auto stream = std::make_unique<Stream>();
  stream->host = host();
  stream->ordinal = ordinal();
  stream->set_device = options_.set_device;
  stream->synchronous_debug = options_.synchronous_debug;
  PX_CUDA_CHECK(EnterDevice());
  // Non-blocking: no implicit ordering with the legacy default stream, which
  // the synchronous copies use.
  PX_CUDA_CHECK(cudaStreamCreateWithFlags(stream->handle.out(), cudaStreamNonBlocking));
  *out = std::move(stream);
  return nullptr;
}

PX_Status* CudaDevice::StreamSynchronize(Stream& stream) {
  const cudaError_t error = cudaStreamSynchronize(stream.get());
  if (error != cudaSuccess) {
    sdk::Status status(host(), CudaStatus(host(), error, "cudaStreamSynchronize(stream)",
                                          __FILE__, __LINE__));
    stream.error.Record(host(), status.get());
  }
  return stream.error.Report(host());
}

PX_Status* CudaDevice::StreamGetStatus(Stream& stream) {
  const cudaError_t error = cudaStreamQuery(stream.get());
  if (error != cudaSuccess && error != cudaErrorNotReady) {
    sdk::Status status(host(),
                       CudaStatus(host(), error, "cudaStreamQuery(stream)", __FILE__, __LINE__));
    stream.error.Record(host(), status.get());
  }
  return stream.error.Report(host());
}

namespace {

// What a host function queued with cudaLaunchHostFunc needs.
struct PendingCallback {
  CudaStream* stream;
  PX_HostCallbackFn fn;
  void* arg;
};

// Runs on the CUDA runtime's callback thread once earlier work finished; it
// must not call CUDA itself (the host's callback must not either, by the ABI:
// no calls back into the same stream).
void CUDART_CB RunHostCallback(void* data) {
  std::unique_ptr<PendingCallback> pending(static_cast<PendingCallback*>(data));
  const PX_HostServices* host = pending->stream->host;
  sdk::Status status(host, pending->stream->error.Report(host));
  pending->fn(pending->arg, status.get());
}

}  // namespace

// A recorded graph, instantiated for launching.
struct CudaGraph {
  cudaGraphExec_t exec = nullptr;
  int32_t ordinal = 0;
};

PX_Status* CudaDevice::StreamCaptureBegin(Stream& stream) {
  if (options_.synchronous_debug) {
    return Error(PX_CODE_UNIMPLEMENTED,
                 "stream capture is off in synchronous debug mode (every launch waits)");
  }
  PX_CUDA_CHECK(stream.EnterDevice());
  PX_CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
  return nullptr;
}

PX_Status* CudaDevice::StreamCaptureEnd(Stream& stream, PX_Graph** out_graph) {
  PX_CUDA_CHECK(stream.EnterDevice());
  cudaGraph_t graph = nullptr;
  // Ends the capture even when it was invalidated (the error says why).
  const cudaError_t ended = cudaStreamEndCapture(stream.get(), &graph);
  // A failed capture leaves its error as the thread's last error, which
  // the next kernel launch on this thread would otherwise report as its own.
  (void)cudaGetLastError();
  PX_CUDA_CHECK(ended);
  sdk::UniqueHandle<cudaGraph_t, cudaGraphDestroy> recorded(graph);
  if (graph == nullptr) return Error(PX_CODE_INTERNAL, "cudaStreamEndCapture returned no graph");
  cudaGraphExec_t exec = nullptr;
  PX_CUDA_CHECK(cudaGraphInstantiateWithFlags(&exec, graph, 0));
  auto* g = new CudaGraph;
  g->exec = exec;
  g->ordinal = ordinal();
  *out_graph = reinterpret_cast<PX_Graph*>(g);
  return nullptr;
}

PX_Status* CudaDevice::GraphLaunch(Stream& stream, PX_Graph* graph) {
  auto* g = reinterpret_cast<CudaGraph*>(graph);
  if (g->ordinal != ordinal()) {
    return Error(PX_CODE_INVALID_ARGUMENT, "graph_launch: the graph was recorded on another device");
  }
  PX_CUDA_CHECK(stream.EnterDevice());
  const cudaError_t error = cudaGraphLaunch(g->exec, stream.get());
  if (error != cudaSuccess) {
    sdk::Status status(host(), CudaStatus(host(), error, "cudaGraphLaunch(graph, stream)", __FILE__,
                                          __LINE__));
    stream.error.Record(host(), status.get());
    return stream.error.Report(host());
  }
  if (options_.synchronous_debug) PX_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  return nullptr;
}

void CudaDevice::GraphDestroy(PX_Graph* graph) {
  auto* g = reinterpret_cast<CudaGraph*>(graph);
  if (EnterDevice() == cudaSuccess && g->exec != nullptr) (void)cudaGraphExecDestroy(g->exec);
  delete g;
}

PX_Status* CudaDevice::StreamAddCallback(Stream& stream, PX_HostCallbackFn fn, void* arg) {
  auto pending = std::make_unique<PendingCallback>(PendingCallback{&stream, fn, arg});
  cudaError_t error = EnterDevice();
  if (error == cudaSuccess) error = cudaLaunchHostFunc(stream.get(), &RunHostCallback, pending.get());
  if (error == cudaSuccess) {
    pending.release();  // RunHostCallback owns it now
    return nullptr;
  }
  // Not queued: the stream has failed; the callback still runs once, now,
  // with that error.
  sdk::Status status(host(), CudaStatus(host(), error, "cudaLaunchHostFunc(stream, ...)",
                                        __FILE__, __LINE__));
  stream.error.Record(host(), status.get());
  sdk::Status sticky(host(), stream.error.Report(host()));
  fn(arg, sticky.get());
  return nullptr;
}

// ---------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------

PX_Status* CudaDevice::EventCreate(std::unique_ptr<Event>* out) {
  auto event = std::make_unique<Event>();
  PX_CUDA_CHECK(EnterDevice());
  PX_CUDA_CHECK(cudaEventCreateWithFlags(event->handle.out(), cudaEventDisableTiming));
  *out = std::move(event);
  return nullptr;
}

PX_Status* CudaDevice::EventRecord(Stream& stream, Event& event) {
  cudaError_t error = EnterDevice();
  if (error == cudaSuccess) error = cudaEventRecord(event.handle.get(), stream.get());
  if (error != cudaSuccess) {
    PX_Status* status =
        CudaStatus(host(), error, "cudaEventRecord(event, stream)", __FILE__, __LINE__);
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

PX_Status* CudaDevice::EventSynchronize(Event& event) {
  PX_CUDA_CHECK(cudaEventSynchronize(event.handle.get()));
  std::lock_guard<std::mutex> lock(event.mu);
  return event.status.ToStatus(host());
}

// The waiting stream also inherits the event's error: what it runs next
// depends on work that failed.
PX_Status* CudaDevice::StreamWaitEvent(Stream& stream, Event& event) {
  PX_CUDA_CHECK(EnterDevice());
  PX_CUDA_CHECK(cudaStreamWaitEvent(stream.get(), event.handle.get(), 0));
  sdk::SavedStatus status;
  {
    std::lock_guard<std::mutex> lock(event.mu);
    status = event.status;
  }
  stream.error.Record(std::move(status));
  return nullptr;
}

// ---------------------------------------------------------------------------
// Kernel launches
// ---------------------------------------------------------------------------

StreamBuffer::StreamBuffer(CudaStream& stream, size_t bytes, const char* what) : stream_(stream.get()) {
  if (bytes == 0) return;
  const cudaError_t e = cudaMallocAsync(&p_, bytes, stream_);
  if (e != cudaSuccess) {
    p_ = nullptr;
    ThrowCudaError(e, what, __FILE__, __LINE__);
  }
}

CudaStream& StreamOf(sdk::Call& call) {
  PX_SDK_CHECK(call.stream() != nullptr, "the CUDA kernels need a stream");
  CudaStream& stream = *sdk::HandleCast<CudaStream>(call.stream());
  const cudaError_t error = stream.EnterDevice();
  if (error != cudaSuccess) {
    ThrowCudaError(error, "cudaSetDevice(stream's device)", __FILE__, __LINE__);
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

void CheckLaunch(CudaStream& stream, const char* what) {
  cudaError_t error = cudaGetLastError();
  const char* call = what;
  if (error == cudaSuccess && stream.synchronous_debug) {
    error = cudaStreamSynchronize(stream.get());
    call = "cudaStreamSynchronize(stream) after the kernel (synchronous debug mode)";
  }
  if (error == cudaSuccess) return;
  const std::string launch = std::string("the ") + what + " kernel's launch";
  std::string message =
      CudaErrorMessage(error, call == what ? launch.c_str() : call, __FILE__, __LINE__);
  PX_Code code = CudaErrorCode(error);
  if (code == PX_CODE_OK) code = PX_CODE_UNKNOWN;
  sdk::SavedStatus saved;
  saved.code = code;
  saved.message = message;
  stream.error.Record(std::move(saved));
  throw sdk::Error(code, std::move(message));
}

}  // namespace plexus::cuda

// The XPU device layer on Level Zero (see xpu_device.h).
//
// UNVERIFIED ON HARDWARE: no Intel GPU was available. Everything below
// follows the Level Zero 1.x specification and headers (the 1.4 API of
// loader 1.8); it compiles, and the plugin's no-device path is tested, but
// no call here has run against a real driver.
#include "xpu_device.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "spirv_entry_points.h"
#include "spirv_modules.h"
#include "xpu_error.h"
#include "ze_loader.h"

namespace plexus::xpu {
namespace {

// Scratch memory waiting for a synchronization before it is freed: past
// this, the stream is synchronized early so that the memory comes back.
constexpr size_t kMaxDeferredScratchBytes = size_t{256} << 20;

// The alignment of scratch and host memory (as the core's default).
constexpr size_t kDefaultAlignment = 64;
// The work-group size of 1-D launches that do not name one.
constexpr uint32_t kDefaultGroupSize = 256;

sdk::SavedStatus Saved(ze_result_t result, const std::string& message) {
  sdk::SavedStatus s;
  s.code = ZeResultCode(result);
  if (s.code == PX_CODE_OK) s.code = PX_CODE_UNKNOWN;
  s.message = message;
  return s;
}

// A host-visible event pool with one event (index 0), for the stream's host
// waits and for XpuEvent. Host scope on signal and wait: the host reads the
// memory the work before the event wrote.
ze_result_t CreateHostVisibleEvent(const XpuDeviceHandles& h, ze_event_pool_handle_t* pool,
                                   ze_event_handle_t* event) {
  const ZeApi& ze = Ze();
  ze_event_pool_desc_t pool_desc{};
  pool_desc.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
  pool_desc.pNext = nullptr;
  pool_desc.flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE;
  pool_desc.count = 1;
  // Visible to every device of the context (one per driver), so that a
  // stream of another device may wait for the event.
  ze_result_t r = ze.zeEventPoolCreate(h.context, &pool_desc, 0, nullptr, pool);
  if (r != ZE_RESULT_SUCCESS) {
    *pool = nullptr;
    return r;
  }
  ze_event_desc_t event_desc{};
  event_desc.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
  event_desc.pNext = nullptr;
  event_desc.index = 0;
  event_desc.signal = ZE_EVENT_SCOPE_FLAG_HOST;
  event_desc.wait = ZE_EVENT_SCOPE_FLAG_HOST;
  r = ze.zeEventCreate(*pool, &event_desc, event);
  if (r != ZE_RESULT_SUCCESS) {
    *event = nullptr;
    (void)ze.zeEventPoolDestroy(*pool);
    *pool = nullptr;
  }
  return r;
}

// A failed Level Zero call on a stream: "EXPR failed at FILE:LINE: NAME".
struct ZeFailure {
  ze_result_t result = ZE_RESULT_SUCCESS;
  const char* expr = nullptr;
  int line = 0;
  bool ok() const { return result == ZE_RESULT_SUCCESS; }
  std::string Message() const { return ZeErrorMessage(result, expr, __FILE__, line); }
};

#define PX_ZE_TRY(failure, expr)                     \
  do {                                               \
    const ze_result_t px_ze_r_ = (expr);             \
    if (px_ze_r_ != ZE_RESULT_SUCCESS) {             \
      (failure) = ZeFailure{px_ze_r_, #expr, __LINE__}; \
      return (failure);                              \
    }                                                \
  } while (0)

// Frees the stream's deferred scratch memory (under stream.mu, after a
// completed wait).
void FreeDeferredLocked(XpuStream& stream) {
  const ZeApi& ze = Ze();
  for (void* p : stream.deferred_frees) {
    (void)ze.zeMemFree(stream.device->handles().context, p);
  }
  stream.deferred_frees.clear();
  stream.deferred_bytes = 0;
}

// Waits for everything appended to the stream so far (under stream.mu): a
// barrier that signals the stream's host-visible event once all earlier
// commands completed, a host wait for it, and a reset for the next wait.
ZeFailure WaitLocked(XpuStream& stream) {
  const ZeApi& ze = Ze();
  ZeFailure f;
  PX_ZE_TRY(f, ze.zeCommandListAppendBarrier(stream.list, stream.sync_event, 0, nullptr));
  PX_ZE_TRY(f, ze.zeEventHostSynchronize(stream.sync_event, UINT64_MAX));
  PX_ZE_TRY(f, ze.zeEventHostReset(stream.sync_event));
  FreeDeferredLocked(stream);
  return f;
}

// After a command was appended (under stream.mu): the barrier that keeps the
// stream in order, and in synchronous debug mode the wait.
ZeFailure FinishAppendLocked(XpuStream& stream) {
  ZeFailure f;
  PX_ZE_TRY(f, Ze().zeCommandListAppendBarrier(stream.list, nullptr, 0, nullptr));
  if (stream.synchronous_debug) return WaitLocked(stream);
  return f;
}

ZeFailure AppendCopyLocked(XpuStream& stream, void* dst, const void* src, size_t bytes) {
  ZeFailure f;
  PX_ZE_TRY(f, Ze().zeCommandListAppendMemoryCopy(stream.list, dst, src, bytes, nullptr, 0,
                                                  nullptr));
  return FinishAppendLocked(stream);
}

// Records a failure as the stream's sticky error and returns it as a status
// (owned by the caller) that names `what`.
PX_Status* StreamFailure(XpuStream& stream, const ZeFailure& f, const char* what) {
  std::string message = f.Message();
  if (what != nullptr) message = std::string(what) + ": " + message;
  sdk::SavedStatus saved = Saved(f.result, message);
  stream.error.Record(saved);
  return saved.ToStatus(stream.host);
}

[[noreturn]] void ThrowStreamFailure(XpuStream& stream, const ZeFailure& f, const std::string& what) {
  sdk::SavedStatus saved = Saved(f.result, what + ": " + f.Message());
  stream.error.Record(saved);
  throw sdk::Error(saved.code, saved.message);
}

// Kernel name -> index of the embedded module that has it (read once).
const std::unordered_map<std::string, size_t>& KernelModuleIndex() {
  static const auto* index = [] {
    auto* m = new std::unordered_map<std::string, size_t>();
    for (size_t i = 0; i < kSpirvModuleCount; ++i) {
      for (std::string& name : SpirvKernelNames(kSpirvModules[i].data, kSpirvModules[i].size)) {
        m->emplace(std::move(name), i);  // the first module wins
      }
    }
    return m;
  }();
  return *index;
}

}  // namespace

// ---------------------------------------------------------------------------
// Streams and events (objects)
// ---------------------------------------------------------------------------

XpuStream::~XpuStream() {
  const ZeApi& ze = Ze();
  std::lock_guard<std::mutex> lock(mu);
  if (list != nullptr && sync_event != nullptr) {
    // The work still queued may use memory the host frees next.
    (void)WaitLocked(*this);
  }
  // If the wait failed, the deferred memory may still be in use: leak it.
  if (list != nullptr) (void)ze.zeCommandListDestroy(list);
  if (sync_event != nullptr) (void)ze.zeEventDestroy(sync_event);
  if (sync_pool != nullptr) (void)ze.zeEventPoolDestroy(sync_pool);
}

XpuEvent::~XpuEvent() {
  const ZeApi& ze = Ze();
  if (handle != nullptr) {
    // A recorded signal may still be pending on a stream: wait for it
    // before the event goes away (a stream waiting on it would hang).
    if (recorded) (void)ze.zeEventHostSynchronize(handle, UINT64_MAX);
    (void)ze.zeEventDestroy(handle);
  }
  if (pool != nullptr) (void)ze.zeEventPoolDestroy(pool);
}

// ---------------------------------------------------------------------------
// The device
// ---------------------------------------------------------------------------

XpuDevice::XpuDevice(const sdk::Plugin& plugin, int32_t ordinal, const XpuDeviceHandles& handles,
                     bool synchronous_debug)
    : sdk::Device(plugin, ordinal),
      handles_(handles),
      synchronous_debug_(synchronous_debug),
      modules_(kSpirvModuleCount, nullptr),
      module_errors_(kSpirvModuleCount) {}

XpuDevice::~XpuDevice() {
  const ZeApi& ze = Ze();
  copy_stream_.reset();  // waits for its work
  // Whatever the host did not give back goes with the device.
  for (auto& entry : blocks_) (void)ze.zeMemFree(handles_.context, entry.first);
  for (auto& entry : kernels_) {
    if (entry.second->handle != nullptr) (void)ze.zeKernelDestroy(entry.second->handle);
  }
  for (ze_module_handle_t m : modules_) {
    if (m != nullptr) (void)ze.zeModuleDestroy(m);
  }
}

PX_Status* XpuDevice::Open() {
  std::unique_ptr<XpuStream> stream;
  PX_SDK_RETURN_IF_ERROR(StreamCreate(&stream));
  stream->synchronous_debug = false;  // every synchronous copy waits anyway
  copy_stream_ = std::move(stream);
  return nullptr;
}

// -- memory -------------------------------------------------------------------

PX_Status* XpuDevice::Allocate(size_t bytes, size_t alignment, void** out) {
  const ZeApi& ze = Ze();
  ze_device_mem_alloc_desc_t desc{};
  desc.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC;
  desc.pNext = nullptr;
  desc.flags = 0;
  desc.ordinal = 0;  // the device's first memory
  // A zero-byte request still gets a distinct pointer.
  const size_t request = bytes == 0 ? 1 : bytes;
  void* ptr = nullptr;
  const ze_result_t r =
      ze.zeMemAllocDevice(handles_.context, &desc, request, alignment, handles_.device, &ptr);
  if (r != ZE_RESULT_SUCCESS || ptr == nullptr) {
    const PX_Code code = r == ZE_RESULT_SUCCESS ? PX_CODE_INTERNAL : ZeResultCode(r);
    return Error(code == PX_CODE_OK ? PX_CODE_UNKNOWN : code,
                 "out of device memory on XPU:%d allocating %zu bytes (alignment %zu): %s",
                 static_cast<int>(ordinal()), bytes, alignment,
                 ZeErrorMessage(r, "zeMemAllocDevice(context, &desc, bytes, alignment, device, &ptr)",
                                __FILE__, __LINE__)
                     .c_str());
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    blocks_[ptr] = bytes;
    bytes_in_use_ += bytes;
    if (bytes_in_use_ > peak_bytes_in_use_) peak_bytes_in_use_ = bytes_in_use_;
    ++num_allocations_;
  }
  *out = ptr;
  return nullptr;
}

void XpuDevice::Deallocate(void* ptr) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = blocks_.find(ptr);
    if (it == blocks_.end()) {
      Log(PX_LOG_ERROR, "deallocate: %p is not a live allocation of XPU:%d", ptr,
          static_cast<int>(ordinal()));
      return;
    }
    bytes_in_use_ -= it->second;
    blocks_.erase(it);
  }
  // The host frees memory only once the work using it has finished.
  const ze_result_t r = Ze().zeMemFree(handles_.context, ptr);
  if (r != ZE_RESULT_SUCCESS) {
    Log(PX_LOG_ERROR, "%s",
        ZeErrorMessage(r, "zeMemFree(context, ptr)", __FILE__, __LINE__).c_str());
  }
}

PX_Status* XpuDevice::HostAllocate(size_t bytes, void** out) {
  ze_host_mem_alloc_desc_t desc{};
  desc.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC;
  desc.pNext = nullptr;
  desc.flags = 0;
  void* ptr = nullptr;
  const ze_result_t r = Ze().zeMemAllocHost(handles_.context, &desc, bytes == 0 ? 1 : bytes,
                                            kDefaultAlignment, &ptr);
  if (r != ZE_RESULT_SUCCESS || ptr == nullptr) {
    const PX_Code code = r == ZE_RESULT_SUCCESS ? PX_CODE_INTERNAL : ZeResultCode(r);
    return Error(code == PX_CODE_OK ? PX_CODE_UNKNOWN : code,
                 "out of pinned host memory allocating %zu bytes for XPU:%d: %s", bytes,
                 static_cast<int>(ordinal()),
                 ZeErrorMessage(r, "zeMemAllocHost(context, &desc, bytes, 64, &ptr)", __FILE__,
                                __LINE__)
                     .c_str());
  }
  *out = ptr;
  return nullptr;
}

void XpuDevice::HostDeallocate(void* ptr) {
  const ze_result_t r = Ze().zeMemFree(handles_.context, ptr);
  if (r != ZE_RESULT_SUCCESS) {
    Log(PX_LOG_ERROR, "%s",
        ZeErrorMessage(r, "zeMemFree(context, host ptr)", __FILE__, __LINE__).c_str());
  }
}

PX_Status* XpuDevice::MemoryStats(PX_MemoryStats* out) {
  std::lock_guard<std::mutex> lock(mu_);
  out->bytes_in_use = bytes_in_use_;
  out->peak_bytes_in_use = peak_bytes_in_use_;
  out->num_allocations = num_allocations_;
  out->bytes_limit = handles_.total_memory_bytes;
  return nullptr;
}

void* XpuDevice::AllocateScratch(size_t bytes, const char* what) {
  ze_device_mem_alloc_desc_t desc{};
  desc.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC;
  desc.pNext = nullptr;
  desc.flags = 0;
  desc.ordinal = 0;
  void* ptr = nullptr;
  const ze_result_t r = Ze().zeMemAllocDevice(handles_.context, &desc, bytes, kDefaultAlignment,
                                              handles_.device, &ptr);
  if (r != ZE_RESULT_SUCCESS || ptr == nullptr) {
    PX_Code code = r == ZE_RESULT_SUCCESS ? PX_CODE_INTERNAL : ZeResultCode(r);
    if (code == PX_CODE_OK) code = PX_CODE_UNKNOWN;
    sdk::ThrowError(code, "%s: out of device memory on XPU:%d for %zu bytes of scratch: %s",
                    what != nullptr ? what : "kernel", static_cast<int>(ordinal()), bytes,
                    ZeErrorMessage(r, "zeMemAllocDevice(scratch)", __FILE__, __LINE__).c_str());
  }
  return ptr;
}

// -- copies ---------------------------------------------------------------------

// The ABI's synchronous copies are complete when they return: a copy on the
// device's own stream, then a wait for it. Not the stream's sticky error:
// a failed synchronous copy fails only itself.
PX_Status* XpuDevice::Copy(void* dst, const void* src, size_t bytes, const char* what) {
  XpuStream& s = *copy_stream_;
  std::lock_guard<std::mutex> lock(s.mu);
  ZeFailure f = AppendCopyLocked(s, dst, src, bytes);
  if (f.ok()) f = WaitLocked(s);
  if (f.ok()) return nullptr;
  PX_Code code = ZeResultCode(f.result);
  return Error(code == PX_CODE_OK ? PX_CODE_UNKNOWN : code, "%s of %zu bytes on XPU:%d: %s", what,
               bytes, static_cast<int>(ordinal()), f.Message().c_str());
}

PX_Status* XpuDevice::MemcpyH2D(void* dst, const void* src, size_t bytes) {
  return Copy(dst, src, bytes, "memcpy_h2d");
}
PX_Status* XpuDevice::MemcpyD2H(void* dst, const void* src, size_t bytes) {
  return Copy(dst, src, bytes, "memcpy_d2h");
}
PX_Status* XpuDevice::MemcpyD2D(void* dst, const void* src, size_t bytes) {
  return Copy(dst, src, bytes, "memcpy_d2d");
}

// A copy that cannot be queued (a null pointer, say) is also the stream's
// sticky error: the work after it would read what it did not write.
PX_Status* XpuDevice::CopyOnStream(Stream& stream, void* dst, const void* src, size_t bytes) {
  if (dst == nullptr || src == nullptr) {
    sdk::SavedStatus saved;
    saved.code = PX_CODE_INVALID_ARGUMENT;
    saved.message = std::string("asynchronous copy of ") + std::to_string(bytes) +
                    " bytes with a null " + (dst == nullptr ? "destination" : "source") +
                    " pointer";
    stream.error.Record(saved);
    return saved.ToStatus(host());
  }
  std::lock_guard<std::mutex> lock(stream.mu);
  const ZeFailure f = AppendCopyLocked(stream, dst, src, bytes);
  if (f.ok()) return nullptr;
  return StreamFailure(stream, f, "asynchronous copy");
}

PX_Status* XpuDevice::MemcpyH2DAsync(Stream& stream, void* dst, const void* src, size_t bytes) {
  return CopyOnStream(stream, dst, src, bytes);
}
PX_Status* XpuDevice::MemcpyD2HAsync(Stream& stream, void* dst, const void* src, size_t bytes) {
  return CopyOnStream(stream, dst, src, bytes);
}
PX_Status* XpuDevice::MemcpyD2DAsync(Stream& stream, void* dst, const void* src, size_t bytes) {
  return CopyOnStream(stream, dst, src, bytes);
}

// -- streams ----------------------------------------------------------------------

PX_Status* XpuDevice::StreamCreate(std::unique_ptr<Stream>* out) {
  const ZeApi& ze = Ze();
  auto stream = std::make_unique<Stream>();
  stream->host = host();
  stream->device = this;
  stream->synchronous_debug = synchronous_debug_;
  // The implicit queue of the immediate list: the compute group, in the
  // asynchronous mode (appends return before the work is done).
  ze_command_queue_desc_t desc{};
  desc.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
  desc.pNext = nullptr;
  desc.ordinal = handles_.compute_ordinal;
  desc.index = 0;
  desc.flags = 0;
  desc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
  desc.priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL;
  PX_ZE_CHECK(ze.zeCommandListCreateImmediate(handles_.context, handles_.device, &desc,
                                              &stream->list));
  PX_ZE_CHECK(CreateHostVisibleEvent(handles_, &stream->sync_pool, &stream->sync_event));
  *out = std::move(stream);
  return nullptr;
}

PX_Status* XpuDevice::StreamSynchronize(Stream& stream) {
  ZeFailure f;
  {
    std::lock_guard<std::mutex> lock(stream.mu);
    f = WaitLocked(stream);
  }
  if (!f.ok()) {
    sdk::Status ignored(host(), StreamFailure(stream, f, "stream_synchronize"));
  }
  return stream.error.Report(host());
}

// Without waiting: the sticky error of what was queued (a failure of the
// device itself shows at the next synchronization).
PX_Status* XpuDevice::StreamGetStatus(Stream& stream) { return stream.error.Report(host()); }

// Level Zero has no host callbacks on a command list: the callback runs
// inline, once the stream's work so far has finished (the ABI allows it to
// run before stream_add_callback returns).
PX_Status* XpuDevice::StreamAddCallback(Stream& stream, PX_HostCallbackFn fn, void* arg) {
  ZeFailure f;
  {
    std::lock_guard<std::mutex> lock(stream.mu);
    f = WaitLocked(stream);
  }
  if (!f.ok()) {
    sdk::Status ignored(host(), StreamFailure(stream, f, "stream_add_callback (waiting)"));
  }
  sdk::Status status(host(), stream.error.Report(host()));
  fn(arg, status.get());
  return nullptr;
}

// -- events -------------------------------------------------------------------------

PX_Status* XpuDevice::EventCreate(std::unique_ptr<Event>* out) {
  auto event = std::make_unique<Event>();
  PX_ZE_CHECK(CreateHostVisibleEvent(handles_, &event->pool, &event->handle));
  *out = std::move(event);
  return nullptr;
}

// Record: a barrier that signals the event once every earlier command of
// the stream has completed (zeCommandListAppendBarrier with a signal event;
// a bare zeCommandListAppendSignalEvent is not specified to wait for them).
// Re-recording an event first waits for its previous signal (normally long
// done) and resets it on the host: Level Zero events are not re-armed by a
// new signal.
PX_Status* XpuDevice::EventRecord(Stream& stream, Event& event) {
  const ZeApi& ze = Ze();
  std::lock_guard<std::mutex> event_lock(event.mu);
  ZeFailure f;
  auto record = [&]() -> ZeFailure {
    ZeFailure g;
    if (event.recorded) {
      PX_ZE_TRY(g, ze.zeEventHostSynchronize(event.handle, UINT64_MAX));
      PX_ZE_TRY(g, ze.zeEventHostReset(event.handle));
      event.recorded = false;
    }
    std::lock_guard<std::mutex> lock(stream.mu);
    PX_ZE_TRY(g, ze.zeCommandListAppendBarrier(stream.list, event.handle, 0, nullptr));
    event.recorded = true;
    if (stream.synchronous_debug) return WaitLocked(stream);
    return g;
  };
  f = record();
  if (!f.ok()) {
    PX_Status* status = StreamFailure(stream, f, "event_record");
    event.status = sdk::SavedStatus::From(host(), status);
    return status;
  }
  event.status = stream.error.Get();
  return nullptr;
}

PX_Status* XpuDevice::EventSynchronize(Event& event) {
  bool recorded;
  {
    std::lock_guard<std::mutex> lock(event.mu);
    recorded = event.recorded;
  }
  if (recorded) PX_ZE_CHECK(Ze().zeEventHostSynchronize(event.handle, UINT64_MAX));
  std::lock_guard<std::mutex> lock(event.mu);
  return event.status.ToStatus(host());
}

// The waiting stream also inherits the event's error: what it runs next
// depends on work that failed. A never-recorded event is complete.
PX_Status* XpuDevice::StreamWaitEvent(Stream& stream, Event& event) {
  sdk::SavedStatus status;
  bool recorded;
  {
    std::lock_guard<std::mutex> lock(event.mu);
    recorded = event.recorded;
    status = event.status;
  }
  if (recorded) {
    std::lock_guard<std::mutex> lock(stream.mu);
    ze_event_handle_t handle = event.handle;
    const ze_result_t r = Ze().zeCommandListAppendWaitOnEvents(stream.list, 1, &handle);
    if (r != ZE_RESULT_SUCCESS) {
      return StreamFailure(stream, ZeFailure{r, "zeCommandListAppendWaitOnEvents(list, 1, &event)", __LINE__},
                           "stream_wait_event");
    }
  }
  stream.error.Record(std::move(status));
  return nullptr;
}

// -- kernels -------------------------------------------------------------------------

ze_module_handle_t XpuDevice::BuildModuleLocked(size_t index) {
  if (modules_[index] != nullptr) return modules_[index];
  const SpirvModule& spirv = kSpirvModules[index];
  if (!module_errors_[index].empty()) {
    throw sdk::Error(PX_CODE_UNAVAILABLE, module_errors_[index]);
  }
  const ZeApi& ze = Ze();
  ze_module_desc_t desc{};
  desc.stype = ZE_STRUCTURE_TYPE_MODULE_DESC;
  desc.pNext = nullptr;
  desc.format = ZE_MODULE_FORMAT_IL_SPIRV;
  desc.inputSize = spirv.size;
  desc.pInputModule = spirv.data;
  desc.pBuildFlags = "";
  desc.pConstants = nullptr;
  ze_module_handle_t module = nullptr;
  ze_module_build_log_handle_t log = nullptr;
  const ze_result_t r = ze.zeModuleCreate(handles_.context, handles_.device, &desc, &module, &log);
  std::string log_text;
  if (log != nullptr) {
    if (r != ZE_RESULT_SUCCESS) {
      size_t size = 0;
      if (ze.zeModuleBuildLogGetString(log, &size, nullptr) == ZE_RESULT_SUCCESS && size > 0) {
        std::string text(size, '\0');
        if (ze.zeModuleBuildLogGetString(log, &size, &text[0]) == ZE_RESULT_SUCCESS) {
          text.resize(std::strlen(text.c_str()));
          log_text = text;
        }
      }
    }
    (void)ze.zeModuleBuildLogDestroy(log);
  }
  if (r != ZE_RESULT_SUCCESS || module == nullptr) {
    std::string message = std::string("the XPU kernel module '") + spirv.name +
                          "' does not build for " + handles_.name + ": " +
                          ZeErrorMessage(r, "zeModuleCreate(context, device, SPIR-V)", __FILE__,
                                         __LINE__);
    if (!log_text.empty()) message += "; build log: " + log_text;
    module_errors_[index] = message;
    if (module != nullptr) (void)ze.zeModuleDestroy(module);
    PX_Code code = ZeResultCode(r);
    if (code == PX_CODE_OK) code = PX_CODE_INTERNAL;
    throw sdk::Error(code, message);
  }
  modules_[index] = module;
  return module;
}

XpuDevice::Kernel& XpuDevice::FindKernel(const char* name) {
  std::lock_guard<std::mutex> lock(kernels_mu_);
  auto it = kernels_.find(name);
  if (it != kernels_.end()) return *it->second;
  const auto& index = KernelModuleIndex();
  auto where = index.find(name);
  if (where == index.end()) {
    std::string modules;
    for (size_t i = 0; i < kSpirvModuleCount; ++i) {
      if (!modules.empty()) modules += ", ";
      modules += kSpirvModules[i].name;
    }
    sdk::ThrowError(PX_CODE_INTERNAL, "no XPU kernel named '%s' in the embedded SPIR-V modules (%s)",
                    name, modules.empty() ? "none" : modules.c_str());
  }
  ze_module_handle_t module = BuildModuleLocked(where->second);
  ze_kernel_desc_t desc{};
  desc.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC;
  desc.pNext = nullptr;
  desc.flags = 0;
  desc.pKernelName = name;
  auto kernel = std::make_unique<Kernel>();
  const ze_result_t r = Ze().zeKernelCreate(module, &desc, &kernel->handle);
  if (r != ZE_RESULT_SUCCESS) {
    PX_Code code = ZeResultCode(r);
    if (code == PX_CODE_OK) code = PX_CODE_INTERNAL;
    throw sdk::Error(code, std::string("the XPU kernel '") + name + "' (module " +
                               kSpirvModules[where->second].name + "): " +
                               ZeErrorMessage(r, "zeKernelCreate(module, name)", __FILE__, __LINE__));
  }
  Kernel& k = *kernel;
  kernels_.emplace(name, std::move(kernel));
  return k;
}

// ---------------------------------------------------------------------------
// What kernels use (xpu_stream.h)
// ---------------------------------------------------------------------------

XpuStream& StreamOf(sdk::Call& call) {
  PX_SDK_CHECK(call.stream() != nullptr, "the XPU kernels need a stream");
  return *sdk::HandleCast<XpuStream>(call.stream());
}

void Launch(XpuStream& stream, const char* kernel, int dims, const size_t* global,
            const size_t* local, std::initializer_list<KernelArg> args) {
  PX_SDK_CHECK(kernel != nullptr, "Launch: no kernel name");
  PX_SDK_CHECK(dims >= 1 && dims <= 3, "Launch of XPU kernel '%s': %d dimensions (1 to 3)",
               kernel, dims);
  PX_SDK_CHECK(global != nullptr, "Launch of XPU kernel '%s': no global size", kernel);
  size_t g[3] = {1, 1, 1};
  for (int i = 0; i < dims; ++i) g[i] = global[i];
  if (g[0] == 0 || g[1] == 0 || g[2] == 0) return;  // nothing to run
  for (int i = 0; i < 3; ++i) {
    PX_SDK_CHECK(g[i] <= UINT32_MAX, "Launch of XPU kernel '%s': global size %zu in dimension %d "
                 "is more than 2^32-1", kernel, g[i], i);
  }
  const ZeApi& ze = Ze();
  XpuDevice::Kernel& k = stream.device->FindKernel(kernel);  // throws

  std::lock_guard<std::mutex> stream_lock(stream.mu);
  std::lock_guard<std::mutex> kernel_lock(k.mu);
  uint32_t l[3] = {1, 1, 1};
  if (local != nullptr) {
    for (int i = 0; i < dims; ++i) {
      PX_SDK_CHECK(local[i] >= 1 && local[i] <= UINT32_MAX,
                   "Launch of XPU kernel '%s': work-group size %zu in dimension %d", kernel,
                   local[i], i);
      l[i] = static_cast<uint32_t>(local[i]);
    }
  } else if (dims == 1) {
    // Not zeKernelSuggestGroupSize: it picks a size dividing the global size
    // exactly (1 for a prime element count). The global size is rounded up
    // to whole groups below, and kernels check their own bounds.
    l[0] = kDefaultGroupSize;
  } else {
    const ze_result_t r = ze.zeKernelSuggestGroupSize(
        k.handle, static_cast<uint32_t>(g[0]), static_cast<uint32_t>(g[1]),
        static_cast<uint32_t>(g[2]), &l[0], &l[1], &l[2]);
    if (r != ZE_RESULT_SUCCESS) {
      ThrowStreamFailure(stream, ZeFailure{r, "zeKernelSuggestGroupSize(kernel, global...)", __LINE__},
                         std::string("the XPU kernel '") + kernel + "'");
    }
    for (uint32_t& v : l) v = std::max<uint32_t>(v, 1);
  }
  ze_group_count_t groups{};
  groups.groupCountX = static_cast<uint32_t>((g[0] + l[0] - 1) / l[0]);
  groups.groupCountY = static_cast<uint32_t>((g[1] + l[1] - 1) / l[1]);
  groups.groupCountZ = static_cast<uint32_t>((g[2] + l[2] - 1) / l[2]);

  ze_result_t r = ze.zeKernelSetGroupSize(k.handle, l[0], l[1], l[2]);
  if (r != ZE_RESULT_SUCCESS) {
    char what[160];
    std::snprintf(what, sizeof(what), "the XPU kernel '%s' (group size %ux%ux%u)", kernel, l[0],
                  l[1], l[2]);
    ThrowStreamFailure(stream, ZeFailure{r, "zeKernelSetGroupSize(kernel, x, y, z)", __LINE__}, what);
  }
  uint32_t index = 0;
  for (const KernelArg& arg : args) {
    r = ze.zeKernelSetArgumentValue(k.handle, index, arg.size, arg.data);
    if (r != ZE_RESULT_SUCCESS) {
      char what[160];
      std::snprintf(what, sizeof(what), "the XPU kernel '%s' (argument %u, %zu bytes)", kernel,
                    index, arg.size);
      ThrowStreamFailure(stream, ZeFailure{r, "zeKernelSetArgumentValue(kernel, index, size, value)",
                                           __LINE__},
                         what);
    }
    ++index;
  }
  r = ze.zeCommandListAppendLaunchKernel(stream.list, k.handle, &groups, nullptr, 0, nullptr);
  if (r != ZE_RESULT_SUCCESS) {
    ThrowStreamFailure(stream, ZeFailure{r, "zeCommandListAppendLaunchKernel(list, kernel, groups)",
                                         __LINE__},
                       std::string("the XPU kernel '") + kernel + "'");
  }
  const ZeFailure f = FinishAppendLocked(stream);
  if (!f.ok()) ThrowStreamFailure(stream, f, std::string("the XPU kernel '") + kernel + "'");
}

void CopyAsync(XpuStream& stream, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  PX_SDK_CHECK(dst != nullptr && src != nullptr, "CopyAsync of %zu bytes with a null pointer",
               bytes);
  std::lock_guard<std::mutex> lock(stream.mu);
  const ZeFailure f = AppendCopyLocked(stream, dst, src, bytes);
  if (!f.ok()) ThrowStreamFailure(stream, f, "CopyAsync");
}

void FillAsync(XpuStream& stream, void* dst, unsigned char byte, size_t bytes) {
  if (bytes == 0) return;
  PX_SDK_CHECK(dst != nullptr, "FillAsync of %zu bytes with a null pointer", bytes);
  std::lock_guard<std::mutex> lock(stream.mu);
  ZeFailure f;
  // The pattern is copied at append time; one byte repeated.
  const ze_result_t r = Ze().zeCommandListAppendMemoryFill(stream.list, dst, &byte, 1, bytes,
                                                           nullptr, 0, nullptr);
  if (r != ZE_RESULT_SUCCESS) {
    f = ZeFailure{r, "zeCommandListAppendMemoryFill(list, dst, &byte, 1, bytes)", __LINE__};
  } else {
    f = FinishAppendLocked(stream);
  }
  if (!f.ok()) ThrowStreamFailure(stream, f, "FillAsync");
}

void Synchronize(XpuStream& stream) {
  ZeFailure f;
  {
    std::lock_guard<std::mutex> lock(stream.mu);
    f = WaitLocked(stream);
  }
  if (!f.ok()) ThrowStreamFailure(stream, f, "Synchronize");
  const sdk::SavedStatus error = stream.error.Get();
  if (!error.ok()) throw sdk::Error(error.code, error.message);
}

ScratchBuffer::ScratchBuffer(XpuStream& stream, size_t bytes, const char* what)
    : stream_(&stream), bytes_(bytes) {
  if (bytes == 0) return;
  ptr_ = stream.device->AllocateScratch(bytes, what);  // throws
}

// Level Zero frees at once (zeMemFree), so the free waits for the stream's
// next synchronization, when the work queued before it is known complete;
// past kMaxDeferredScratchBytes the stream is synchronized now.
ScratchBuffer::~ScratchBuffer() {
  if (ptr_ == nullptr) return;
  XpuStream& stream = *stream_;
  std::lock_guard<std::mutex> lock(stream.mu);
  stream.deferred_frees.push_back(ptr_);
  stream.deferred_bytes += bytes_;
  if (stream.deferred_bytes > kMaxDeferredScratchBytes) {
    const ZeFailure f = WaitLocked(stream);
    if (!f.ok()) {
      stream.error.Record(Saved(f.result, "freeing XPU scratch memory: " + f.Message()));
    }
  }
}

}  // namespace plexus::xpu

// The asynchronous test device: device and pinned memory, copies, and the
// streams' creation, destruction and callbacks.
#include "async_device.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace plexus::async_device {

constexpr size_t kQuarantineBytes = size_t{256} << 20;
constexpr size_t kQuarantineBlocks = 8192;


bool IsDeviceMemory(Device* device, const void* p, size_t bytes) {
  std::lock_guard<std::mutex> lock(device->mu);
  return InBlocks(device->live, p, bytes);
}

// The device whose stream this is, for argument checks inside compute.
std::mutex g_stream_devices_mu;
std::map<const Stream*, Device*> g_stream_devices;
// Native handles: a number per stream, never reused (a GPU runtime may reuse
// a destroyed stream's handle; here a handle kept past its stream's end is
// an error, so a host that holds one that long is caught).
std::map<uint64_t, Stream*> g_native_streams;
std::map<const Stream*, uint64_t> g_native_ids;
uint64_t g_next_native = 4096;

Device* DeviceOfStream(const Stream* s) {
  std::lock_guard<std::mutex> lock(g_stream_devices_mu);
  auto it = g_stream_devices.find(s);
  return it == g_stream_devices.end() ? nullptr : it->second;
}

PX_Status* Allocate(PX_Device* d, size_t bytes, size_t alignment, void** out) {
  Device* device = DeviceOf(d);
  if (alignment == 0) alignment = 64;
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  void* p = nullptr;
  if (posix_memalign(&p, alignment, bytes == 0 ? 1 : bytes) != 0) {
    return Error(PX_CODE_RESOURCE_EXHAUSTED, "%s is out of memory allocating %zu bytes",
                 device->name.c_str(), bytes);
  }
  std::memset(p, kPoison, bytes);
  std::lock_guard<std::mutex> lock(device->mu);
  device->live[reinterpret_cast<uintptr_t>(p)] = bytes;
  device->bytes_in_use += bytes;
  device->peak = std::max(device->peak, device->bytes_in_use);
  ++device->allocations;
  *out = p;
  return nullptr;
}

// The host promises to free memory only once the work using it has finished.
// Freed memory is poisoned at once and returned to the system only later, so
// work that still reads it reads NaN instead of crashing the process.
void Deallocate(PX_Device* d, void* p) {
  if (p == nullptr) return;
  Device* device = DeviceOf(d);
  std::vector<void*> release;
  {
    std::lock_guard<std::mutex> lock(device->mu);
    auto it = device->live.find(reinterpret_cast<uintptr_t>(p));
    if (it == device->live.end()) {
      g_plugin->real->log(g_plugin->real->host_context, PX_LOG_ERROR,
                          "ASYNC:0: deallocate of a pointer that is not a live allocation");
      return;
    }
    const size_t bytes = it->second;
    device->live.erase(it);
    device->bytes_in_use -= bytes;
    std::memset(p, kPoison, bytes);
    device->freed.emplace_back(p, bytes);
    device->freed_bytes += bytes;
    while (device->freed_bytes > kQuarantineBytes || device->freed.size() > kQuarantineBlocks) {
      release.push_back(device->freed.front().first);
      device->freed_bytes -= device->freed.front().second;
      device->freed.pop_front();
    }
  }
  for (void* q : release) std::free(q);
}

PX_Status* HostAllocate(PX_Device*, size_t bytes, void** out) {
  void* p = nullptr;
  if (posix_memalign(&p, 64, bytes == 0 ? 1 : bytes) != 0) {
    return Error(PX_CODE_RESOURCE_EXHAUSTED, "out of pinned host memory allocating %zu bytes", bytes);
  }
  std::lock_guard<std::mutex> lock(g_plugin->pinned_mu);
  g_plugin->pinned[reinterpret_cast<uintptr_t>(p)] = bytes;
  *out = p;
  return nullptr;
}

void HostDeallocate(PX_Device*, void* p) {
  if (p == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(g_plugin->pinned_mu);
    g_plugin->pinned.erase(reinterpret_cast<uintptr_t>(p));
  }
  std::free(p);
}

PX_Status* MemoryStats(PX_Device* d, PX_MemoryStats* out) {
  Device* device = DeviceOf(d);
  PX_MemoryStats full{};
  {
    std::lock_guard<std::mutex> lock(device->mu);
    full.bytes_in_use = device->bytes_in_use;
    full.peak_bytes_in_use = device->peak;
    full.num_allocations = device->allocations;
  }
  sdk::FillSized(out, full);  // never past the host's (maybe shorter) struct
  return nullptr;
}

PX_Status* CheckCopy(Device* device, const char* what, void* dst, bool dst_device, const void* src,
                     bool src_device, size_t bytes) {
  if (dst == nullptr || src == nullptr) {
    return Error(PX_CODE_INVALID_ARGUMENT, "%s: %s of %zu bytes with a NULL %s", device->name.c_str(),
                 what, bytes, dst == nullptr ? "destination" : "source");
  }
  if (dst_device && !IsDeviceMemory(device, dst, bytes)) {
    return Error(PX_CODE_INVALID_ARGUMENT, "%s: %s into %zu bytes that are not %s memory",
                 device->name.c_str(), what, bytes, device->name.c_str());
  }
  if (src_device && !IsDeviceMemory(device, src, bytes)) {
    return Error(PX_CODE_INVALID_ARGUMENT, "%s: %s from %zu bytes that are not %s memory",
                 device->name.c_str(), what, bytes, device->name.c_str());
  }
  return nullptr;
}

// Synchronous copies: done when they return, ordered with no stream.
PX_Status* CopyNow(PX_Device* d, const char* what, void* dst, bool dst_device, const void* src,
                   bool src_device, size_t bytes) {
  if (bytes == 0) return nullptr;
  if (PX_Status* s = CheckCopy(DeviceOf(d), what, dst, dst_device, src, src_device, bytes)) return s;
  std::memcpy(dst, src, bytes);
  return nullptr;
}
PX_Status* MemcpyH2D(PX_Device* d, void* dst, const void* src, size_t bytes) {
  return CopyNow(d, "host-to-device copy", dst, true, src, false, bytes);
}
PX_Status* MemcpyD2H(PX_Device* d, void* dst, const void* src, size_t bytes) {
  return CopyNow(d, "device-to-host copy", dst, false, src, true, bytes);
}
PX_Status* MemcpyD2D(PX_Device* d, void* dst, const void* src, size_t bytes) {
  return CopyNow(d, "device-to-device copy", dst, true, src, true, bytes);
}

// A copy that cannot be queued is also the stream's sticky error, from its
// place in the stream's order on (an event recorded before it stays OK).
PX_Status* Refuse(Stream* stream, PX_Status* status) {
  const PX_Code code = g_plugin->real->status_code(status);
  std::string message = g_plugin->real->status_message(status);
  stream->Enqueue([code, message](Stream&) -> PX_Status* {
    return g_plugin->real->status_create(code, message.c_str());
  });
  return status;
}

PX_Status* MemcpyH2DAsync(PX_Device* d, PX_Stream* s, void* dst, const void* src, size_t bytes) {
  Stream* stream = StreamOf(s);
  if (bytes == 0) return nullptr;
  if (PX_Status* e = CheckCopy(DeviceOf(d), "async host-to-device copy", dst, true, src, false, bytes)) {
    return Refuse(stream, e);
  }
  if (IsPinned(src, bytes)) {
    // Pinned memory is read when the copy runs, as a GPU's DMA engine does.
    stream->Enqueue([dst, src, bytes](Stream&) -> PX_Status* {
      std::memcpy(dst, src, bytes);
      return nullptr;
    });
  } else {
    // Pageable memory is staged when the copy is queued.
    auto staged = std::make_shared<std::vector<char>>(static_cast<const char*>(src),
                                                      static_cast<const char*>(src) + bytes);
    stream->Enqueue([dst, staged](Stream&) -> PX_Status* {
      std::memcpy(dst, staged->data(), staged->size());
      return nullptr;
    });
  }
  if (g_plugin->synchronous_debug) return stream->Synchronize();
  return nullptr;
}

PX_Status* MemcpyD2HAsync(PX_Device* d, PX_Stream* s, void* dst, const void* src, size_t bytes) {
  Stream* stream = StreamOf(s);
  if (bytes == 0) return nullptr;
  if (PX_Status* e = CheckCopy(DeviceOf(d), "async device-to-host copy", dst, false, src, true, bytes)) {
    return Refuse(stream, e);
  }
  if (IsPinned(dst, bytes) && !g_plugin->synchronous_debug) {
    stream->Enqueue([dst, src, bytes](Stream&) -> PX_Status* {
      std::memcpy(dst, src, bytes);
      return nullptr;
    });
    return nullptr;
  }
  // Into pageable memory the copy waits for the stream and is done on return.
  if (PX_Status* e = stream->Synchronize()) return e;
  std::memcpy(dst, src, bytes);
  return nullptr;
}

PX_Status* MemcpyD2DAsync(PX_Device* d, PX_Stream* s, void* dst, const void* src, size_t bytes) {
  Stream* stream = StreamOf(s);
  if (bytes == 0) return nullptr;
  if (PX_Status* e = CheckCopy(DeviceOf(d), "async device-to-device copy", dst, true, src, true, bytes)) {
    return Refuse(stream, e);
  }
  stream->Enqueue([dst, src, bytes](Stream&) -> PX_Status* {
    std::memcpy(dst, src, bytes);
    return nullptr;
  });
  if (g_plugin->synchronous_debug) return stream->Synchronize();
  return nullptr;
}

PX_Status* StreamCreate(PX_Device* d, PX_Stream** out) {
  auto* stream = new (std::nothrow) Stream(DeviceOf(d)->name);
  if (stream == nullptr) return Error(PX_CODE_RESOURCE_EXHAUSTED, "out of host memory");
  {
    std::lock_guard<std::mutex> lock(g_stream_devices_mu);
    g_stream_devices[stream] = DeviceOf(d);
    const uint64_t id = g_next_native++;
    g_native_streams[id] = stream;
    g_native_ids[stream] = id;
  }
  *out = reinterpret_cast<PX_Stream*>(stream);
  return nullptr;
}

PX_Status* StreamNativeHandle(PX_Device*, PX_Stream* s, uint64_t* out) {
  std::lock_guard<std::mutex> lock(g_stream_devices_mu);
  *out = g_native_ids.at(StreamOf(s));
  return nullptr;
}

PX_Status* NativeStreamWait(PX_Device* d, uint64_t native, PX_Stream* s) {
  // The error so far of the work on `s` is the caller's (the consumer must
  // not read what a failed kernel left).
  if (PX_Status* failed = StreamOf(s)->ErrorStatus()) return failed;
  Stream* target = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_stream_devices_mu);
    auto it = g_native_streams.find(native);
    if (it != g_native_streams.end()) target = it->second;
  }
  // (A test plugin: the caller keeps the target stream alive, as a native
  // stream's owner must; the registry turns a wrong or dead handle into an
  // error.)
  if (target == nullptr || DeviceOfStream(target) != DeviceOf(d)) {
    return Error(PX_CODE_INVALID_ARGUMENT, "%s: %llu is not the native handle of one of its streams",
                 DeviceOf(d)->name.c_str(), static_cast<unsigned long long>(native));
  }
  // An event recorded on `s` that the target stream waits for, as a GPU
  // plugin does with the platform's events.
  PX_Event* event = nullptr;
  if (PX_Status* st = EventCreate(d, &event)) return st;
  PX_Status* st = EventRecord(d, s, event);
  if (st == nullptr) st = StreamWaitEvent(d, reinterpret_cast<PX_Stream*>(target), event);
  EventDestroy(d, event);  // the queued wait holds the event's state
  return st;
}

void StreamDestroy(PX_Device*, PX_Stream* s) {
  Stream* stream = StreamOf(s);
  {
    std::lock_guard<std::mutex> lock(g_stream_devices_mu);
    g_stream_devices.erase(stream);
    auto id = g_native_ids.find(stream);
    if (id != g_native_ids.end()) {
      g_native_streams.erase(id->second);
      g_native_ids.erase(id);
    }
  }
  delete stream;  // waits for its work
}

PX_Status* StreamSynchronize(PX_Device*, PX_Stream* s) { return StreamOf(s)->Synchronize(); }
PX_Status* StreamGetStatus(PX_Device*, PX_Stream* s) { return StreamOf(s)->ErrorStatus(); }

PX_Status* StreamAddCallback(PX_Device*, PX_Stream* s, PX_HostCallbackFn fn, void* arg) {
  StreamOf(s)->Enqueue([fn, arg](Stream& stream) -> PX_Status* {
    PX_Status* status = stream.ErrorStatus();
    fn(arg, status);
    if (status != nullptr) g_plugin->real->status_destroy(status);
    return nullptr;
  }, Stream::Kind::kControl);
  return nullptr;
}

}  // namespace plexus::async_device

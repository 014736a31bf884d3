// The reference plugin: one device ("REF:0") whose memory is host memory,
// whose streams run every launch inline, and whose kernels are the reference
// kernels. It is not installed beside the real plugins (nothing discovers it
// by default); tests and the conformance tool load it by path to compare
// another plugin's kernels against it.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include "plexus/plugin_api.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/plugin_sdk.h"
#include "reference_collectives.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

struct PluginState {
  sdk::RegistrationInfo info;
};

struct RefDevice {
  const PX_HostServices* host;
};

struct RefStream {
  PX_Status* error = nullptr;  // sticky; owned
};

struct RefEvent {
  PX_Code code = PX_CODE_OK;
  std::string message;
};

const PX_HostServices* HostOf(PX_Device* d) { return reinterpret_cast<RefDevice*>(d)->host; }

PX_Status* RegisterKernels(void* plugin, PX_KernelRegistrar* registrar) {
  return RegisterAllKernels(&static_cast<PluginState*>(plugin)->info, registrar);
}

void Shutdown(void* plugin) { delete static_cast<PluginState*>(plugin); }

PX_Status* DeviceCount(void*, int32_t* out_count) {
  *out_count = 1;
  return nullptr;
}

PX_Status* DeviceGetInfo(void* plugin, int32_t ordinal, PX_DeviceInfo* info) {
  const PX_HostServices* host = static_cast<PluginState*>(plugin)->info.host;
  if (ordinal != 0) return px_sdk_error(host, PX_CODE_INVALID_ARGUMENT, "no REF device %d", ordinal);
  // Filled here, then copied into as much of the host's struct as it has.
  PX_DeviceInfo* out = info;
  PX_DeviceInfo full{};
  info = &full;
  std::snprintf(info->name, sizeof(info->name), "reference kernels (host memory)");
  std::snprintf(info->vendor, sizeof(info->vendor), "Plexus");
  info->total_memory_bytes = 0;
  info->free_memory_bytes = 0;
  info->host_accessible = 1;
  // Plain loops in either layout: no preference, so the host's layout pass
  // leaves graphs as they are.
  info->preferred_layout = PX_LAYOUT_ANY;
  const size_t size = out->struct_size < sizeof(full) ? out->struct_size : sizeof(full);
  const size_t skip = sizeof(full.struct_size);
  if (size > skip) std::memcpy(reinterpret_cast<char*>(out) + skip, reinterpret_cast<char*>(&full) + skip, size - skip);
  return nullptr;
}

PX_Status* DeviceOpen(void* plugin, int32_t ordinal, PX_Device** out) {
  const PX_HostServices* host = static_cast<PluginState*>(plugin)->info.host;
  if (ordinal != 0) return px_sdk_error(host, PX_CODE_INVALID_ARGUMENT, "no REF device %d", ordinal);
  auto* d = new (std::nothrow) RefDevice{host};
  if (d == nullptr) return px_sdk_error(host, PX_CODE_RESOURCE_EXHAUSTED, "out of host memory");
  *out = reinterpret_cast<PX_Device*>(d);
  return nullptr;
}

void DeviceClose(void*, PX_Device* d) { delete reinterpret_cast<RefDevice*>(d); }

PX_Status* Allocate(PX_Device* d, size_t bytes, size_t alignment, void** out) {
  if (alignment == 0) alignment = 64;  // the ABI's default
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  void* p = nullptr;
  if (posix_memalign(&p, alignment, bytes == 0 ? 1 : bytes) != 0) {
    return px_sdk_error(HostOf(d), PX_CODE_RESOURCE_EXHAUSTED,
                        "REF:0 is out of memory allocating %zu bytes", bytes);
  }
  *out = p;
  return nullptr;
}

void Deallocate(PX_Device*, void* p) { std::free(p); }

PX_Status* Memcpy(PX_Device* d, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return nullptr;
  if (dst == nullptr || src == nullptr) {
    return px_sdk_error(HostOf(d), PX_CODE_INVALID_ARGUMENT, "REF:0: copy of %zu bytes with a NULL %s",
                        bytes, dst == nullptr ? "destination" : "source");
  }
  std::memcpy(dst, src, bytes);
  return nullptr;
}

PX_Status* StreamCreate(PX_Device* d, PX_Stream** out) {
  auto* s = new (std::nothrow) RefStream();
  if (s == nullptr) return px_sdk_error(HostOf(d), PX_CODE_RESOURCE_EXHAUSTED, "out of host memory");
  *out = reinterpret_cast<PX_Stream*>(s);
  return nullptr;
}

void StreamDestroy(PX_Device* d, PX_Stream* s) {
  auto* stream = reinterpret_cast<RefStream*>(s);
  if (stream->error) HostOf(d)->status_destroy(stream->error);
  delete stream;
}

PX_Status* CopyOf(const PX_HostServices* host, const PX_Status* s) {
  if (s == nullptr) return nullptr;
  return host->status_create(host->status_code(s), host->status_message(s));
}

PX_Status* StreamSynchronize(PX_Device* d, PX_Stream* s) {
  return CopyOf(HostOf(d), reinterpret_cast<RefStream*>(s)->error);
}

// Runs now; a failure is also the stream's sticky error, as a device would
// report it at the next synchronize.
PX_Status* MemcpyAsync(PX_Device* d, PX_Stream* s, void* dst, const void* src, size_t bytes) {
  PX_Status* status = Memcpy(d, dst, src, bytes);
  auto* stream = reinterpret_cast<RefStream*>(s);
  if (status != nullptr && stream->error == nullptr) stream->error = CopyOf(HostOf(d), status);
  return status;
}

PX_Status* EventCreate(PX_Device* d, PX_Event** out) {
  auto* e = new (std::nothrow) RefEvent();
  if (e == nullptr) return px_sdk_error(HostOf(d), PX_CODE_RESOURCE_EXHAUSTED, "out of host memory");
  *out = reinterpret_cast<PX_Event*>(e);
  return nullptr;
}

void EventDestroy(PX_Device*, PX_Event* e) { delete reinterpret_cast<RefEvent*>(e); }

PX_Status* EventRecord(PX_Device* d, PX_Stream* s, PX_Event* e) {
  auto* event = reinterpret_cast<RefEvent*>(e);
  const PX_Status* error = reinterpret_cast<RefStream*>(s)->error;
  event->code = error ? HostOf(d)->status_code(error) : PX_CODE_OK;
  event->message = error ? HostOf(d)->status_message(error) : "";
  return nullptr;
}

PX_Status* EventSynchronize(PX_Device* d, PX_Event* e) {
  auto* event = reinterpret_cast<RefEvent*>(e);
  if (event->code == PX_CODE_OK) return nullptr;
  return HostOf(d)->status_create(event->code, event->message.c_str());
}

PX_Status* StreamWaitEvent(PX_Device*, PX_Stream*, PX_Event*) { return nullptr; }

}  // namespace
}  // namespace plexus::reference

extern "C" {

PX_PLUGIN_EXPORT void PX_PluginProbe(PX_PluginProbeInfo* info) {
  // The probe struct is frozen; still, never write past what the host has.
  if (info == nullptr || info->struct_size < sizeof(PX_PluginProbeInfo)) return;
  info->plugin_name = "reference";
  info->abi_major = PX_ABI_VERSION_MAJOR;
  info->abi_min_minor = 2;
  info->abi_max_minor = PX_ABI_VERSION_MINOR;
  info->score = -100;  // never preferred over a real device
}

PX_PLUGIN_EXPORT PX_Status* PX_PluginInitialize(const PX_HostInitArgs* args, PX_PluginTable* t) {
  using namespace plexus::reference;
  if (args == nullptr || args->services == nullptr) return nullptr;
  uint32_t minor = 0;
  if (PX_Status* s = px_sdk_negotiate(args, 2, PX_ABI_VERSION_MINOR, &minor)) return s;
  auto* state = new (std::nothrow) PluginState{{args->services, "reference"}};
  if (state == nullptr) {
    return px_sdk_error(args->services, PX_CODE_RESOURCE_EXHAUSTED, "out of host memory");
  }
  // Filled here, then copied into as much of the host's table as it has.
  PX_PluginTable* out = t;
  PX_PluginTable full;
  std::memset(&full, 0, sizeof(full));
  t = &full;
  t->struct_size = out->struct_size < sizeof(full) ? out->struct_size : sizeof(full);
  t->abi_minor = minor;
  t->plugin_name = "reference";
  t->plugin_version = "0.1.0";
  t->platform_name = "Host";
  t->device_type = "REF";
  t->dlpack_device_type = kDLCPU;
  t->plugin_state = state;
  t->plugin_shutdown = Shutdown;
  t->register_kernels = RegisterKernels;
  t->device_count = DeviceCount;
  t->device_get_info = DeviceGetInfo;
  t->device_open = DeviceOpen;
  t->device_close = DeviceClose;
  t->allocate = Allocate;
  t->deallocate = Deallocate;
  t->memcpy_h2d = Memcpy;
  t->memcpy_d2h = Memcpy;
  t->memcpy_d2d = Memcpy;
  t->stream_create = StreamCreate;
  t->stream_destroy = StreamDestroy;
  t->stream_synchronize = StreamSynchronize;
  t->stream_get_status = StreamSynchronize;
  t->memcpy_h2d_async = MemcpyAsync;
  t->memcpy_d2h_async = MemcpyAsync;
  t->memcpy_d2d_async = MemcpyAsync;
  t->event_create = EventCreate;
  t->event_destroy = EventDestroy;
  t->event_record = EventRecord;
  t->event_synchronize = EventSynchronize;
  t->stream_wait_event = StreamWaitEvent;
  // Collectives through the host's key-value store (ABI 0.7).
  if (minor >= 7) t->collectives = Collectives(args->services);
  std::memcpy(out, &full, full.struct_size);
  return nullptr;
}

}  // extern "C"

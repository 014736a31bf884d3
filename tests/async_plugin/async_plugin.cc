// The asynchronous test device, "ASYNC:0": a device that finishes its work
// later, on another thread, the way a GPU does, so that ordering and
// synchronization faults of the host show up on a machine without a GPU.
//
// - Kernels are the reference kernels (sdk/reference). A launch whose outputs
//   the host has allocated is queued on the stream and run by the stream's
//   worker thread after a delay (PX_ASYNC_DELAY_US, default 200 us an item);
//   compute returns at once. A launch that must size its outputs or fill
//   host-memory outputs waits for the stream first and runs at once, as a
//   GPU kernel that reads back a size would.
// - Memory is host memory that the host is told it cannot touch
//   (host_accessible = 0, DLPack kDLExtDev), so the host moves every value
//   through the copies. New allocations and freed ones are filled with 0xFF
//   bytes (NaN as floats), so a value read before it was written, or after it
//   was freed, shows. Kernel arguments that are not live ASYNC:0 memory are
//   refused with an error that names the node and the argument.
// - Copies follow CUDA's rules: the synchronous ones complete at once and are
//   not ordered with any stream (as the CUDA plugin's private copy stream);
//   an async host-to-device copy reads a pinned source (host_allocate) when
//   it runs and a pageable one when it is queued; an async device-to-host
//   copy into pageable memory waits for the stream and copies at once, into
//   pinned memory it runs later.
// - Events, cross-stream waits and host callbacks run in stream order; every
//   wait has a deadline (PX_ASYNC_DEADLINE_S, default 120 s).
// - Stream interop (ABI 0.8): a stream's native handle is a number never
//   reused (a handle used after its stream was destroyed is an error), and
//   native_stream_wait orders a live stream of the plugin after another, so
//   the DLPack stream handshake of the Python package runs here too.
//
// It is a test plugin: it lives in the build tree's test-plugins folder, and
// nothing discovers it unless asked to.
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "async_device.h"

namespace plexus::async_device {

Plugin* g_plugin = nullptr;

PX_Status* Error(PX_Code code, const char* format, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  return g_plugin->real->status_create(code, buffer);
}

bool InBlocks(const std::map<uintptr_t, size_t>& blocks, const void* p, size_t bytes) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  auto it = blocks.upper_bound(a);
  if (it == blocks.begin()) return false;
  --it;
  return a >= it->first && a + bytes <= it->first + std::max<size_t>(it->second, 1);
}

bool IsPinned(const void* p, size_t bytes) {
  std::lock_guard<std::mutex> lock(g_plugin->pinned_mu);
  return InBlocks(g_plugin->pinned, p, bytes);
}

namespace {

long EnvNumber(const char* name, long fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  return (end != nullptr && *end == '\0' && n >= 0) ? n : fallback;
}

// ---------------------------------------------------------------------------
// The device and the table
// ---------------------------------------------------------------------------

PX_Status* DeviceCount(void*, int32_t* out) {
  *out = 1;
  return nullptr;
}

PX_Status* DeviceGetInfo(void*, int32_t ordinal, PX_DeviceInfo* info) {
  if (ordinal != 0) return Error(PX_CODE_INVALID_ARGUMENT, "no ASYNC device %d", ordinal);
  PX_DeviceInfo full{};
  std::snprintf(full.name, sizeof(full.name), "asynchronous test device (reference kernels, %lld us delay)",
                static_cast<long long>(g_plugin->delay.count()));
  std::snprintf(full.vendor, sizeof(full.vendor), "Plexus tests");
  full.host_accessible = 0;
  full.preferred_layout = PX_LAYOUT_ANY;
  sdk::FillSized(info, full);
  return nullptr;
}

PX_Status* DeviceOpen(void*, int32_t ordinal, PX_Device** out) {
  if (ordinal != 0) return Error(PX_CODE_INVALID_ARGUMENT, "no ASYNC device %d", ordinal);
  auto* d = new (std::nothrow) Device();
  if (d == nullptr) return Error(PX_CODE_RESOURCE_EXHAUSTED, "out of host memory");
  *out = reinterpret_cast<PX_Device*>(d);
  return nullptr;
}

void DeviceClose(void*, PX_Device* d) {
  Device* device = DeviceOf(d);
  for (auto& [p, bytes] : device->live) std::free(reinterpret_cast<void*>(p));
  for (auto& [p, bytes] : device->freed) std::free(p);
  delete device;
}

void Shutdown(void*) {
  delete g_plugin;
  g_plugin = nullptr;
}

}  // namespace
}  // namespace plexus::async_device

extern "C" {

PX_PLUGIN_EXPORT void PX_PluginProbe(PX_PluginProbeInfo* info) {
  if (info == nullptr || info->struct_size < sizeof(PX_PluginProbeInfo)) return;
  info->plugin_name = "async";
  info->abi_major = PX_ABI_VERSION_MAJOR;
  info->abi_min_minor = 2;
  info->abi_max_minor = PX_ABI_VERSION_MINOR;
  info->score = -50;  // a test device: never preferred over cpu
}

PX_PLUGIN_EXPORT PX_Status* PX_PluginInitialize(const PX_HostInitArgs* args, PX_PluginTable* t) {
  using namespace plexus::async_device;
  if (args == nullptr || !PX_STRUCT_HAS(args, PX_HostInitArgs, services) || args->services == nullptr) {
    return nullptr;
  }
  uint32_t minor = 0;
  if (PX_Status* s = px_sdk_negotiate(args, 2, PX_ABI_VERSION_MINOR, &minor)) return s;
  if (g_plugin != nullptr) return px_sdk_error(args->services, PX_CODE_FAILED_PRECONDITION, "already initialized");
  auto* plugin = new (std::nothrow) Plugin();
  if (plugin == nullptr) return px_sdk_error(args->services, PX_CODE_RESOURCE_EXHAUSTED, "out of host memory");
  plugin->real = args->services;
  const size_t services = std::min(args->services->struct_size, sizeof(PX_HostServices));
  std::memcpy(&plugin->wrapped, args->services, services);
  plugin->wrapped.struct_size = services;
  plugin->wrapped.kernel_register = RegisterWrapped;
  plugin->wrapped.output_allocate = OutputAllocate;
  plugin->wrapped.kernel_node_name = KernelNodeName;
  plugin->info = plexus::sdk::RegistrationInfo{&plugin->wrapped, "async"};
  plugin->delay = std::chrono::microseconds(EnvNumber("PX_ASYNC_DELAY_US", 200));
  plugin->deadline = std::chrono::seconds(std::max(1L, EnvNumber("PX_ASYNC_DEADLINE_S", 120)));
  plugin->synchronous_debug =
      PX_STRUCT_HAS(args, PX_HostInitArgs, synchronous_debug) && args->synchronous_debug != 0;
  g_plugin = plugin;

  PX_PluginTable full;
  std::memset(&full, 0, sizeof(full));
  full.struct_size = std::min(t->struct_size, sizeof(full));
  full.abi_minor = minor;
  full.plugin_name = "async";
  full.plugin_version = "0.1.0";
  full.platform_name = "Asynchronous test device";
  full.device_type = "ASYNC";
  full.dlpack_device_type = kDLExtDev;
  full.plugin_state = plugin;
  full.plugin_shutdown = Shutdown;
  full.register_kernels = RegisterKernels;
  full.device_count = DeviceCount;
  full.device_get_info = DeviceGetInfo;
  full.device_open = DeviceOpen;
  full.device_close = DeviceClose;
  full.allocate = Allocate;
  full.deallocate = Deallocate;
  full.host_allocate = HostAllocate;
  full.host_deallocate = HostDeallocate;
  full.memory_stats = MemoryStats;
  full.memcpy_h2d = MemcpyH2D;
  full.memcpy_d2h = MemcpyD2H;
  full.memcpy_d2d = MemcpyD2D;
  full.stream_create = StreamCreate;
  full.stream_destroy = StreamDestroy;
  full.stream_synchronize = StreamSynchronize;
  full.stream_get_status = StreamGetStatus;
  full.memcpy_h2d_async = MemcpyH2DAsync;
  full.memcpy_d2h_async = MemcpyD2HAsync;
  full.memcpy_d2d_async = MemcpyD2DAsync;
  full.event_create = EventCreate;
  full.event_destroy = EventDestroy;
  full.event_record = EventRecord;
  full.event_synchronize = EventSynchronize;
  full.stream_wait_event = StreamWaitEvent;
  full.stream_add_callback = StreamAddCallback;
  if (minor >= 8) {
    full.stream_native_handle = StreamNativeHandle;
    full.native_stream_wait = NativeStreamWait;
  }
  std::memcpy(t, &full, full.struct_size);
  return nullptr;
}

}  // extern "C"

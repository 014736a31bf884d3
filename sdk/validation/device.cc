// The layer's entry point (PX_ValidationWrap) and its wrappers of the
// plugin-level, device and memory slots.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "layer.h"

namespace pxv {
namespace {

Layer* LayerOf(void* plugin) { return static_cast<Layer*>(plugin); }

// Enumeration, open and close are serialized by the host (the ABI's
// threading contract); a second one entering meanwhile is a breach.
struct Serialized {
  Serialized(Layer* layer, const char* call) : layer(layer) {
    if (layer->serialized.fetch_add(1) != 0) {
      BreachLater(layer, call, "", "called concurrently with another device enumeration, open or close "
                                   "(the host must serialize them)");
    }
  }
  ~Serialized() { layer->serialized.fetch_sub(1); }
  Layer* layer;
};

void Shutdown(void* plugin) {
  Layer* layer = LayerOf(plugin);
  if (layer->real.plugin_shutdown != nullptr) layer->real.plugin_shutdown(layer->real.plugin_state);
  ForgetHandles(layer);
  delete layer;
}

PX_Status* DeviceCount(void* plugin, int32_t* out_count) {
  Layer* layer = LayerOf(plugin);
  Serialized serialized(layer, "device_count");
  if (out_count == nullptr) return Breach(layer, "device_count", "out_count", "is NULL");
  PX_Status* s = layer->real.device_count(layer->real.plugin_state, out_count);
  if (s != nullptr) return s;
  if (*out_count < 0) {
    return Breach(layer, "device_count", "out_count", "the plugin reported " + std::to_string(*out_count) +
                  " devices", PX_CODE_INTERNAL);
  }
  layer->device_count = *out_count;
  return nullptr;
}

std::string Unterminated(const char* field, size_t capacity) {
  return std::memchr(field, '\0', capacity) == nullptr ? "is not NUL-terminated" : "";
}

PX_Status* DeviceGetInfo(void* plugin, int32_t ordinal, PX_DeviceInfo* info) {
  Layer* layer = LayerOf(plugin);
  Serialized serialized(layer, "device_get_info");
  if (info == nullptr) return Breach(layer, "device_get_info", "out_info", "is NULL");
  if (info->struct_size < offsetof(PX_DeviceInfo, host_accessible) + sizeof(int32_t)) {
    return Breach(layer, "device_get_info", "out_info",
                  "struct_size " + std::to_string(info->struct_size) + " does not reach host_accessible");
  }
  if (layer->device_count >= 0 && (ordinal < 0 || ordinal >= layer->device_count)) {
    if (PX_Status* s = Breach(layer, "device_get_info", "ordinal",
                              std::to_string(ordinal) + " is outside the " + std::to_string(layer->device_count) +
                              " devices device_count reported")) {
      return s;
    }
  }
  const size_t host_size = info->struct_size;
  PX_Status* s = layer->real.device_get_info(layer->real.plugin_state, ordinal, info);
  if (s != nullptr) return s;
  if (info->struct_size != host_size) {
    return Breach(layer, "device_get_info", "out_info", "the plugin changed struct_size from " +
                  std::to_string(host_size) + " to " + std::to_string(info->struct_size), PX_CODE_INTERNAL);
  }
  std::string bad = Unterminated(info->name, sizeof(info->name));
  const char* field = "out_info->name";
  if (bad.empty()) {
    bad = Unterminated(info->vendor, sizeof(info->vendor));
    field = "out_info->vendor";
  }
  if (!bad.empty()) return Breach(layer, "device_get_info", field, bad, PX_CODE_INTERNAL);
  std::lock_guard<std::mutex> lock(layer->mu);
  layer->host_accessible[ordinal] = info->host_accessible != 0;
  return nullptr;
}

bool HostAccessible(Layer* layer, int32_t ordinal) {
  {
    std::lock_guard<std::mutex> lock(layer->mu);
    auto it = layer->host_accessible.find(ordinal);
    if (it != layer->host_accessible.end()) return it->second;
  }
  PX_DeviceInfo info;
  std::memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  PX_Status* s = layer->real.device_get_info(layer->real.plugin_state, ordinal, &info);
  if (s != nullptr) {
    FreeStatus(layer, s);
    return false;
  }
  return info.host_accessible != 0;
}

PX_Status* DeviceOpen(void* plugin, int32_t ordinal, PX_Device** out_device) {
  Layer* layer = LayerOf(plugin);
  Serialized serialized(layer, "device_open");
  if (out_device == nullptr) return Breach(layer, "device_open", "out_device", "is NULL");
  PX_Device* real = nullptr;
  PX_Status* s = layer->real.device_open(layer->real.plugin_state, ordinal, &real);
  if (s != nullptr) return s;
  if (real == nullptr) {
    return Breach(layer, "device_open", "out_device", "the plugin returned OK with a NULL device",
                  PX_CODE_INTERNAL);
  }
  auto* device = new DeviceWrap();
  device->layer = layer;
  device->real = real;
  device->ordinal = ordinal;
  device->host_accessible = HostAccessible(layer, ordinal);
  AddHandle(device, Kind::kDevice, layer);
  *out_device = reinterpret_cast<PX_Device*>(device);
  return nullptr;
}

void DeviceClose(void* plugin, PX_Device* handle) {
  Layer* layer = LayerOf(plugin);
  Serialized serialized(layer, "device_close");
  std::string why = CheckHandle(handle, Kind::kDevice, nullptr);
  if (!why.empty()) {
    BreachLater(layer, "device_close", "device", why);
    return;
  }
  auto* device = reinterpret_cast<DeviceWrap*>(handle);
  {
    std::lock_guard<std::mutex> lock(device->mu);
    for (const auto& [user, a] : device->allocations) {
      std::string broken = CheckGuards(a, reinterpret_cast<const unsigned char*>(user));
      if (!broken.empty()) BreachLater(layer, "device_close", "device", broken);
    }
    if (!device->allocations.empty()) {
      Log(layer, PX_LOG_WARNING, "validation layer: plugin '" + layer->name + "': device_close: " +
                                     std::to_string(device->allocations.size()) +
                                     " allocation(s) of the device were never deallocated");
    }
  }
  layer->real.device_close(layer->real.plugin_state, device->real);
  KillHandle(device);
}

size_t PowerOfTwoAtLeast(size_t alignment) { return alignment == 0 ? 64 : alignment; }

PX_Status* Allocate(PX_Device* handle, size_t bytes, size_t alignment, void** out_ptr) {
  DeviceWrap* device = nullptr;
  if (PX_Status* s = EnterDevice(handle, "allocate", &device)) return s;
  Layer* layer = device->layer;
  if (out_ptr == nullptr) return Breach(layer, "allocate", "out_ptr", "is NULL");
  if (alignment != 0 && (alignment & (alignment - 1)) != 0) {
    return Breach(layer, "allocate", "alignment", std::to_string(alignment) + " is not a power of two");
  }
  if (PX_Status* s = FaultAllocate(layer, bytes)) return s;
  const size_t align = PowerOfTwoAtLeast(alignment);
  Allocation a;
  a.bytes = bytes;
  if (device->host_accessible && bytes < (SIZE_MAX >> 2) && align <= 65536) {
    a.front = align > kGuardBytes ? align : kGuardBytes;
    a.back = kGuardBytes + (align - bytes % align) % align;
  }
  void* base = nullptr;
  PX_Status* s = layer->real.allocate(device->real, a.front + bytes + a.back, alignment, &base);
  if (s != nullptr) return s;
  if (base == nullptr) {
    return Breach(layer, "allocate", "out_ptr", "the plugin returned OK with a NULL pointer for " +
                  std::to_string(bytes) + " bytes", PX_CODE_INTERNAL);
  }
  if (reinterpret_cast<uintptr_t>(base) % align != 0) {
    layer->real.deallocate(device->real, base);
    return Breach(layer, "allocate", "out_ptr", "the plugin returned a pointer not aligned to " +
                  std::to_string(align) + " bytes", PX_CODE_INTERNAL);
  }
  a.base = base;
  auto* user = static_cast<unsigned char*>(base) + a.front;
  if (a.front != 0) {
    std::memset(base, kGuardByte, a.front);
    std::memset(user + bytes, kGuardByte, a.back);
  }
  {
    std::lock_guard<std::mutex> lock(device->mu);
    device->allocations[reinterpret_cast<uintptr_t>(user)] = a;
  }
  layer->bytes_in_use += bytes;
  *out_ptr = user;
  return nullptr;
}

void Deallocate(PX_Device* handle, void* ptr) {
  DeviceWrap* device = nullptr;
  Layer* layer = nullptr;
  std::string why = CheckHandle(handle, Kind::kDevice, &layer);
  if (!why.empty()) {
    BreachLater(layer ? layer : AnyLayer(), "deallocate", "device", why);
    return;
  }
  device = reinterpret_cast<DeviceWrap*>(handle);
  layer = device->layer;
  if (ptr == nullptr) return;
  Allocation a;
  {
    std::lock_guard<std::mutex> lock(device->mu);
    auto it = device->allocations.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == device->allocations.end()) {
      BreachLater(layer, "deallocate", "ptr", "is not a live allocation of this device (freed twice, or "
                                              "never returned by allocate); not passed on");
      return;
    }
    a = it->second;
    device->allocations.erase(it);
  }
  std::string broken = CheckGuards(a, static_cast<const unsigned char*>(ptr));
  if (!broken.empty()) BreachLater(layer, "deallocate", "ptr", broken);
  layer->bytes_in_use -= a.bytes;
  layer->real.deallocate(device->real, a.base);
}

PX_Status* HostAllocate(PX_Device* handle, size_t bytes, void** out_ptr) {
  DeviceWrap* device = nullptr;
  if (PX_Status* s = EnterDevice(handle, "host_allocate", &device)) return s;
  if (out_ptr == nullptr) return Breach(device->layer, "host_allocate", "out_ptr", "is NULL");
  PX_Status* s = device->layer->real.host_allocate(device->real, bytes, out_ptr);
  if (s == nullptr && *out_ptr == nullptr) {
    return Breach(device->layer, "host_allocate", "out_ptr", "the plugin returned OK with a NULL pointer",
                  PX_CODE_INTERNAL);
  }
  return s;
}

void HostDeallocate(PX_Device* handle, void* ptr) {
  Layer* layer = nullptr;
  std::string why = CheckHandle(handle, Kind::kDevice, &layer);
  if (!why.empty()) {
    BreachLater(layer ? layer : AnyLayer(), "host_deallocate", "device", why);
    return;
  }
  auto* device = reinterpret_cast<DeviceWrap*>(handle);
  device->layer->real.host_deallocate(device->real, ptr);
}

PX_Status* MemoryStats(PX_Device* handle, PX_MemoryStats* stats) {
  DeviceWrap* device = nullptr;
  if (PX_Status* s = EnterDevice(handle, "memory_stats", &device)) return s;
  if (stats == nullptr) return Breach(device->layer, "memory_stats", "out_stats", "is NULL");
  if (stats->struct_size < sizeof(size_t)) {
    return Breach(device->layer, "memory_stats", "out_stats", "struct_size " +
                  std::to_string(stats->struct_size) + " is too small");
  }
  return device->layer->real.memory_stats(device->real, stats);
}

}  // namespace

// A copy that reaches past the end of the allocation `ptr` lies in (when it
// lies in one made through the layer).
std::string CopyOverrun(DeviceWrap* device, const void* ptr, size_t bytes) {
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(device->mu);
  auto it = device->allocations.upper_bound(p);
  if (it == device->allocations.begin()) return "";
  --it;
  const uintptr_t start = it->first, end = start + it->second.bytes;
  if (p >= end || p + bytes <= end) return "";
  return "copies " + std::to_string(bytes) + " bytes from offset " + std::to_string(p - start) +
         " of a " + std::to_string(it->second.bytes) + "-byte allocation, past its end";
}

PX_Status* CheckCopy(DeviceWrap* device, const char* call, void* dst, const void* src, size_t bytes,
                     bool dst_on_device, bool src_on_device) {
  Layer* layer = device->layer;
  if (bytes == 0) return nullptr;
  if (dst == nullptr) return Breach(layer, call, "dst", "is NULL for a " + std::to_string(bytes) + "-byte copy");
  if (src == nullptr) return Breach(layer, call, "src", "is NULL for a " + std::to_string(bytes) + "-byte copy");
  std::string why = dst_on_device ? CopyOverrun(device, dst, bytes) : "";
  if (!why.empty()) return Breach(layer, call, "dst", why);
  why = src_on_device ? CopyOverrun(device, src, bytes) : "";
  if (!why.empty()) return Breach(layer, call, "src", why);
  return nullptr;
}

namespace {

template <bool kDstDevice, bool kSrcDevice>
PX_Status* Copy(PX_Device* handle, void* dst, const void* src, size_t bytes) {
  const char* call = kDstDevice ? (kSrcDevice ? "memcpy_d2d" : "memcpy_h2d") : "memcpy_d2h";
  DeviceWrap* device = nullptr;
  if (PX_Status* s = EnterDevice(handle, call, &device)) return s;
  if (PX_Status* s = CheckCopy(device, call, dst, src, bytes, kDstDevice, kSrcDevice)) return s;
  const PX_PluginTable& t = device->layer->real;
  auto fn = kDstDevice ? (kSrcDevice ? t.memcpy_d2d : t.memcpy_h2d) : t.memcpy_d2h;
  return fn(device->real, dst, src, bytes);
}

// The plugin's table must be usable before the layer copies it.
PX_Status* CheckTable(Layer* layer, const PX_PluginTable& t, size_t host_size) {
  if (t.struct_size < offsetof(PX_PluginTable, stream_add_callback) || t.struct_size > host_size) {
    return Breach(layer, "PX_PluginInitialize", "out_table", "struct_size " + std::to_string(t.struct_size) +
                  " is not between the ABI 0.0 table and the host's " + std::to_string(host_size) + " bytes",
                  PX_CODE_INTERNAL);
  }
  const bool capture = t.stream_capture_begin || t.stream_capture_end || t.graph_launch || t.graph_destroy;
  if (capture && !(t.stream_capture_begin && t.stream_capture_end && t.graph_launch && t.graph_destroy)) {
    return Breach(layer, "PX_PluginInitialize", "out_table",
                  "fills some of the four stream-capture slots but not all", PX_CODE_INTERNAL);
  }
  if (PX_STRUCT_HAS(&t, PX_PluginTable, native_stream_wait) &&
      (t.stream_native_handle == nullptr) != (t.native_stream_wait == nullptr)) {
    return Breach(layer, "PX_PluginInitialize", "out_table",
                  "fills only one of stream_native_handle and native_stream_wait", PX_CODE_INTERNAL);
  }
  if ((t.host_allocate == nullptr) != (t.host_deallocate == nullptr)) {
    return Breach(layer, "PX_PluginInitialize", "out_table",
                  "fills only one of host_allocate and host_deallocate", PX_CODE_INTERNAL);
  }
  return nullptr;
}

template <typename T>
void Slot(T* wrapped, T real, T wrapper) { *wrapped = real != nullptr ? wrapper : nullptr; }

void FillDeviceSlots(Layer* layer, PX_PluginTable* out) {
  const PX_PluginTable& t = layer->real;
  out->plugin_state = layer;
  out->plugin_shutdown = Shutdown;  // the layer's state is freed there
  Slot(&out->register_kernels, t.register_kernels, RegisterKernels);
  Slot(&out->device_count, t.device_count, DeviceCount);
  Slot(&out->device_get_info, t.device_get_info, DeviceGetInfo);
  Slot(&out->device_open, t.device_open, DeviceOpen);
  Slot(&out->device_close, t.device_close, DeviceClose);
  Slot(&out->allocate, t.allocate, Allocate);
  Slot(&out->deallocate, t.deallocate, Deallocate);
  Slot(&out->host_allocate, t.host_allocate, HostAllocate);
  Slot(&out->host_deallocate, t.host_deallocate, HostDeallocate);
  Slot(&out->memory_stats, t.memory_stats, MemoryStats);
  Slot(&out->memcpy_h2d, t.memcpy_h2d, Copy<true, false>);
  Slot(&out->memcpy_d2h, t.memcpy_d2h, Copy<false, true>);
  Slot(&out->memcpy_d2d, t.memcpy_d2d, Copy<true, true>);
}

}  // namespace

void RegisterLayer(Layer* layer);

}  // namespace pxv

extern "C" __attribute__((visibility("default"))) PX_Status* PX_ValidationWrap(
    const PX_ValidationArgs* validation, const PX_HostInitArgs* args, PX_PluginTable* out_table) {
  using namespace pxv;
  if (validation == nullptr || args == nullptr || out_table == nullptr || args->services == nullptr ||
      validation->plugin_initialize == nullptr) {
    return nullptr;  // no services to make a status with; the host finds the table empty
  }
  auto* layer = new Layer();
  layer->name = validation->plugin_name ? validation->plugin_name : "?";
  layer->mode = validation->mode;
  layer->host = args->services;
  std::memcpy(&layer->services, args->services,
              std::min(sizeof(layer->services), args->services->struct_size));
  layer->services.struct_size = std::min(sizeof(layer->services), args->services->struct_size);
  FillKernelServices(layer);
  PX_HostInitArgs plugin_args = *args;
  plugin_args.services = &layer->services;
  const size_t host_size = out_table->struct_size;
  PX_PluginTable real;
  std::memset(&real, 0, sizeof(real));
  real.struct_size = std::min(host_size, sizeof(real));
  PX_Status* s = validation->plugin_initialize(&plugin_args, &real);
  if (s == nullptr) {
    s = CheckTable(layer, real, std::min(host_size, sizeof(real)));
    if (s != nullptr && real.plugin_shutdown != nullptr) real.plugin_shutdown(real.plugin_state);
  }
  if (s != nullptr) {
    delete layer;
    return s;
  }
  layer->real = real;
  RegisterLayer(layer);
  // The wrapped table: the plugin's strings and version, the layer's slots.
  PX_PluginTable wrapped = real;
  FillDeviceSlots(layer, &wrapped);
  FillStreamSlots(layer, &wrapped);
  FillCollectives(layer, &wrapped);
  std::memcpy(out_table, &wrapped, real.struct_size);
  return nullptr;
}

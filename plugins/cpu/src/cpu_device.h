// The one CPU device: enumeration, info, host memory and copies. Every
// function here fills a PX_PluginTable slot of the same name.
#ifndef PLEXUS_PLUGINS_CPU_CPU_DEVICE_H_
#define PLEXUS_PLUGINS_CPU_CPU_DEVICE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "cpu_plugin.h"
#include "plexus/plugin_api.h"

namespace plexus::cpu {

// What a PX_Device* points to: one per device_open.
struct CpuDevice {
  explicit CpuDevice(const PluginState* p) : plugin(p) {}
  const PluginState* plugin;
  // Counted with atomics: allocate / deallocate may run on many threads.
  std::atomic<uint64_t> bytes_in_use{0};
  std::atomic<uint64_t> peak_bytes_in_use{0};
  std::atomic<uint64_t> num_allocations{0};  // since open, not live ones
};

inline CpuDevice* AsCpuDevice(PX_Device* device) {
  return reinterpret_cast<CpuDevice*>(device);
}
inline const PX_HostServices* DeviceHost(PX_Device* device) {
  return AsCpuDevice(device)->plugin->host;
}

PX_Status* DeviceCount(void* plugin, int32_t* out_count);
PX_Status* DeviceGetInfo(void* plugin, int32_t ordinal,
                         PX_DeviceInfo* out_info);
PX_Status* DeviceOpen(void* plugin, int32_t ordinal, PX_Device** out_device);
void DeviceClose(void* plugin, PX_Device* device);

PX_Status* Allocate(PX_Device* device, size_t bytes, size_t alignment,
                    void** out_ptr);
void Deallocate(PX_Device* device, void* ptr);
PX_Status* HostAllocate(PX_Device* device, size_t bytes, void** out_ptr);
void HostDeallocate(PX_Device* device, void* ptr);
PX_Status* MemoryStats(PX_Device* device, PX_MemoryStats* out_stats);

// All device memory is host memory: the three directions are one memcpy.
PX_Status* Memcpy(PX_Device* device, void* dst, const void* src, size_t bytes);

}  // namespace plexus::cpu

#endif  // PLEXUS_PLUGINS_CPU_CPU_DEVICE_H_

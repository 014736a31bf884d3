#include "cpu_device.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <string>

#include "plexus/sdk/plugin_sdk.h"

namespace plexus::cpu {
namespace {

constexpr size_t kMinAlignment = 64;  // a cache line; enough for AVX-512

// Value of the first "key : value" line of /proc/cpuinfo with this key, or
// `fallback` (the file is absent or has no such key on some platforms).
std::string CpuInfoField(const char* key, const char* fallback) {
  std::ifstream file("/proc/cpuinfo");
  std::string line;
  const size_t key_length = std::strlen(key);
  while (std::getline(file, line)) {
    if (line.compare(0, key_length, key) != 0) continue;
    const size_t colon = line.find(':', key_length);
    // The key must be followed only by blanks before the colon.
    if (colon == std::string::npos ||
        line.find_first_not_of(" \t", key_length) != colon) {
      continue;
    }
    const size_t start = line.find_first_not_of(" \t", colon + 1);
    if (start == std::string::npos) continue;
    return line.substr(start);
  }
  return fallback;
}

void CopyString(char* dst, size_t capacity, const std::string& src) {
  const size_t n = src.size() < capacity - 1 ? src.size() : capacity - 1;
  std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
}

uint64_t PagesToBytes(int pages_name) {
  const long pages = sysconf(pages_name);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages < 0 || page_size < 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

PX_Status* CheckOrdinal(const PX_HostServices* host, int32_t ordinal) {
  if (ordinal == 0) return nullptr;
  return px_sdk_error(host, PX_CODE_INVALID_ARGUMENT,
                      "CPU device ordinal %d is out of range: the cpu plugin "
                      "has one device, ordinal 0",
                      (int)ordinal);
}

// Allocation layout: [padding | BlockHeader][user bytes], with the user
// pointer aligned. The header lets deallocate find the block and its size
// without a lock-protected map.
struct BlockHeader {
  void* base;
  size_t bytes;
};
static_assert(sizeof(BlockHeader) <= kMinAlignment, "header must fit");

void* AlignedAllocate(size_t bytes, size_t alignment) {
  if (alignment < kMinAlignment) alignment = kMinAlignment;
  // One aligned slot in front holds the header; zero bytes still get a unique
  // pointer this way.
  if (bytes > SIZE_MAX - alignment) return nullptr;
  void* base = nullptr;
  if (posix_memalign(&base, alignment, alignment + bytes) != 0) return nullptr;
  char* user = static_cast<char*>(base) + alignment;
  BlockHeader* header = reinterpret_cast<BlockHeader*>(user) - 1;
  header->base = base;
  header->bytes = bytes;
  return user;
}

// Returns the user size of the block and frees it.
size_t AlignedFree(void* ptr) {
  const BlockHeader* header = static_cast<const BlockHeader*>(ptr) - 1;
  const size_t bytes = header->bytes;
  std::free(header->base);
  return bytes;
}

}  // namespace

PX_Status* DeviceCount(void* plugin, int32_t* out_count) {
  *out_count = 1;
  return nullptr;
}

PX_Status* DeviceGetInfo(void* plugin, int32_t ordinal,
                         PX_DeviceInfo* out_info) {
  const PX_HostServices* host = static_cast<PluginState*>(plugin)->host;
  if (PX_Status* s = CheckOrdinal(host, ordinal)) return s;
  try {
    PX_DeviceInfo info;
    std::memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    CopyString(info.name, sizeof(info.name),
               CpuInfoField("model name", "Host CPU"));
    CopyString(info.vendor, sizeof(info.vendor),
               CpuInfoField("vendor_id", "unknown"));
    info.total_memory_bytes = PagesToBytes(_SC_PHYS_PAGES);
    info.free_memory_bytes = PagesToBytes(_SC_AVPHYS_PAGES);
    info.host_accessible = 1;
    // The convolution and pooling kernels work channels-last; NCHW inputs
    // are transposed inside each kernel, so the host should hand us NHWC.
    info.preferred_layout = PX_LAYOUT_NHWC;
    FillSized(out_info, info);
    return nullptr;
  } catch (...) {
    return px_sdk_error(host, PX_CODE_INTERNAL,
                        "reading the CPU's description failed");
  }
}

PX_Status* DeviceOpen(void* plugin, int32_t ordinal, PX_Device** out_device) {
  const auto* state = static_cast<PluginState*>(plugin);
  if (PX_Status* s = CheckOrdinal(state->host, ordinal)) return s;
  auto* device = new (std::nothrow) CpuDevice(state);
  if (device == nullptr) {
    return px_sdk_error(state->host, PX_CODE_RESOURCE_EXHAUSTED,
                        "out of host memory opening the CPU device");
  }
  *out_device = reinterpret_cast<PX_Device*>(device);
  return nullptr;
}

void DeviceClose(void* plugin, PX_Device* device) {
  delete AsCpuDevice(device);
}

PX_Status* Allocate(PX_Device* device, size_t bytes, size_t alignment,
                    void** out_ptr) {
  CpuDevice* cpu = AsCpuDevice(device);
  if (alignment != 0 && (alignment & (alignment - 1)) != 0) {
    return px_sdk_error(DeviceHost(device), PX_CODE_INVALID_ARGUMENT,
                        "alignment %zu is not a power of two", alignment);
  }
  void* ptr = AlignedAllocate(bytes, alignment);
  if (ptr == nullptr) {
    return px_sdk_error(DeviceHost(device), PX_CODE_RESOURCE_EXHAUSTED,
                        "out of host memory allocating %zu bytes on the CPU "
                        "device",
                        bytes);
  }
  const uint64_t in_use = cpu->bytes_in_use.fetch_add(bytes) + bytes;
  uint64_t peak = cpu->peak_bytes_in_use.load();
  while (in_use > peak &&
         !cpu->peak_bytes_in_use.compare_exchange_weak(peak, in_use)) {
  }
  cpu->num_allocations.fetch_add(1);
  *out_ptr = ptr;
  return nullptr;
}

void Deallocate(PX_Device* device, void* ptr) {
  if (ptr == nullptr) return;
  AsCpuDevice(device)->bytes_in_use.fetch_sub(AlignedFree(ptr));
}

PX_Status* HostAllocate(PX_Device* device, size_t bytes, void** out_ptr) {
  // Host memory is not counted in the device's stats.
  void* ptr = AlignedAllocate(bytes, kMinAlignment);
  if (ptr == nullptr) {
    return px_sdk_error(DeviceHost(device), PX_CODE_RESOURCE_EXHAUSTED,
                        "out of host memory allocating %zu bytes of host "
                        "memory",
                        bytes);
  }
  *out_ptr = ptr;
  return nullptr;
}

void HostDeallocate(PX_Device* device, void* ptr) {
  if (ptr != nullptr) AlignedFree(ptr);
}

PX_Status* MemoryStats(PX_Device* device, PX_MemoryStats* out_stats) {
  const CpuDevice* cpu = AsCpuDevice(device);
  PX_MemoryStats stats;
  std::memset(&stats, 0, sizeof(stats));
  stats.struct_size = sizeof(stats);
  stats.bytes_in_use = cpu->bytes_in_use.load();
  stats.peak_bytes_in_use = cpu->peak_bytes_in_use.load();
  stats.num_allocations = cpu->num_allocations.load();
  stats.bytes_limit = 0;  // no limit of our own: the OS decides
  FillSized(out_stats, stats);
  return nullptr;
}

PX_Status* Memcpy(PX_Device* device, void* dst, const void* src,
                  size_t bytes) {
  if (bytes == 0) return nullptr;
  if (dst == nullptr || src == nullptr) {
    return px_sdk_error(DeviceHost(device), PX_CODE_INVALID_ARGUMENT,
                        "memcpy of %zu bytes with a null %s pointer", bytes,
                        dst == nullptr ? "destination" : "source");
  }
  // memmove: an overlapping copy (the host may copy within one buffer) stays
  // well defined.
  std::memmove(dst, src, bytes);
  return nullptr;
}

}  // namespace plexus::cpu

// The emulated driver (see fake_driver.h). Nothing here is Plexus-specific.
#include "fake_driver.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>

namespace {

constexpr int kDeviceCount = 1;

// Memory in use on each device, across its contexts (for free_memory).
std::mutex g_mu;
uint64_t g_device_in_use[kDeviceCount] = {};

}  // namespace

struct tdrvContext {
  int ordinal = 0;
  std::mutex mu;
  std::map<uintptr_t, size_t> blocks;  // start address -> size in bytes
  tdrvMemStats stats = {};
};

namespace {

// True when [p, p + bytes) lies inside one live allocation of ctx.
bool InDeviceMemory(tdrvContext* ctx, const void* p, size_t bytes) {
  const uintptr_t start = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(ctx->mu);
  auto it = ctx->blocks.upper_bound(start);
  if (it == ctx->blocks.begin()) return false;
  --it;
  const uintptr_t block_end = it->first + it->second;
  return start >= it->first && start <= block_end && bytes <= block_end - start;
}

}  // namespace

const char* tdrvGetErrorString(tdrvError error) {
  switch (error) {
    case tdrvSuccess: return "no error";
    case tdrvErrorInvalidValue: return "invalid argument";
    case tdrvErrorOutOfMemory: return "out of device memory";
    case tdrvErrorInvalidDevice: return "no such device";
    case tdrvErrorInvalidPointer: return "not a live device pointer";
  }
  return "unknown error";
}

tdrvError tdrvGetDeviceCount(int* count) {
  if (count == nullptr) return tdrvErrorInvalidValue;
  *count = kDeviceCount;
  return tdrvSuccess;
}

tdrvError tdrvGetDeviceProperties(tdrvDeviceProperties* props, int ordinal) {
  if (props == nullptr) return tdrvErrorInvalidValue;
  if (ordinal < 0 || ordinal >= kDeviceCount) return tdrvErrorInvalidDevice;
  std::memset(props, 0, sizeof(*props));
  std::strncpy(props->name, "Template emulated device", sizeof(props->name) - 1);
  std::strncpy(props->vendor, "Plexus SDK", sizeof(props->vendor) - 1);
  props->total_memory = kTdrvDeviceMemoryBytes;
  std::lock_guard<std::mutex> lock(g_mu);
  props->free_memory = kTdrvDeviceMemoryBytes - g_device_in_use[ordinal];
  return tdrvSuccess;
}

tdrvError tdrvCtxCreate(tdrvContext** ctx, int ordinal) {
  if (ctx == nullptr) return tdrvErrorInvalidValue;
  if (ordinal < 0 || ordinal >= kDeviceCount) return tdrvErrorInvalidDevice;
  tdrvContext* c = new (std::nothrow) tdrvContext();
  if (c == nullptr) return tdrvErrorOutOfMemory;
  c->ordinal = ordinal;
  c->stats.bytes_limit = kTdrvDeviceMemoryBytes;
  *ctx = c;
  return tdrvSuccess;
}

tdrvError tdrvCtxDestroy(tdrvContext* ctx) {
  if (ctx == nullptr) return tdrvErrorInvalidValue;
  uint64_t freed = 0;
  for (const auto& block : ctx->blocks) {
    std::free(reinterpret_cast<void*>(block.first));
    freed += block.second;
  }
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_device_in_use[ctx->ordinal] -= freed;
  }
  delete ctx;
  return tdrvSuccess;
}

tdrvError tdrvMalloc(tdrvContext* ctx, void** ptr, size_t bytes, size_t alignment) {
  if (ctx == nullptr || ptr == nullptr) return tdrvErrorInvalidValue;
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) return tdrvErrorInvalidValue;
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  {
    // Reserve the bytes first: a request beyond the device's memory fails
    // here, before any host memory is touched.
    std::lock_guard<std::mutex> lock(g_mu);
    if (bytes > kTdrvDeviceMemoryBytes - g_device_in_use[ctx->ordinal]) return tdrvErrorOutOfMemory;
    g_device_in_use[ctx->ordinal] += bytes;
  }
  void* p = nullptr;
  if (posix_memalign(&p, alignment, bytes == 0 ? 1 : bytes) != 0) {
    std::lock_guard<std::mutex> lock(g_mu);
    g_device_in_use[ctx->ordinal] -= bytes;
    return tdrvErrorOutOfMemory;
  }
  std::lock_guard<std::mutex> lock(ctx->mu);
  ctx->blocks[reinterpret_cast<uintptr_t>(p)] = bytes;
  ctx->stats.bytes_in_use += bytes;
  if (ctx->stats.bytes_in_use > ctx->stats.peak_bytes_in_use) {
    ctx->stats.peak_bytes_in_use = ctx->stats.bytes_in_use;
  }
  ctx->stats.num_allocations += 1;
  *ptr = p;
  return tdrvSuccess;
}

tdrvError tdrvFree(tdrvContext* ctx, void* ptr) {
  if (ctx == nullptr) return tdrvErrorInvalidValue;
  if (ptr == nullptr) return tdrvSuccess;
  size_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(ctx->mu);
    auto it = ctx->blocks.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == ctx->blocks.end()) return tdrvErrorInvalidPointer;
    bytes = it->second;
    ctx->blocks.erase(it);
    ctx->stats.bytes_in_use -= bytes;
  }
  std::free(ptr);
  std::lock_guard<std::mutex> lock(g_mu);
  g_device_in_use[ctx->ordinal] -= bytes;
  return tdrvSuccess;
}

tdrvError tdrvMemGetStats(tdrvContext* ctx, tdrvMemStats* stats) {
  if (ctx == nullptr || stats == nullptr) return tdrvErrorInvalidValue;
  std::lock_guard<std::mutex> lock(ctx->mu);
  *stats = ctx->stats;
  return tdrvSuccess;
}

tdrvError tdrvMemcpy(tdrvContext* ctx, void* dst, const void* src, size_t bytes, tdrvMemcpyKind kind) {
  if (ctx == nullptr) return tdrvErrorInvalidValue;
  if (bytes == 0) return tdrvSuccess;
  if (dst == nullptr || src == nullptr) return tdrvErrorInvalidValue;
  const bool dst_on_device = kind == tdrvMemcpyHostToDevice || kind == tdrvMemcpyDeviceToDevice;
  const bool src_on_device = kind == tdrvMemcpyDeviceToHost || kind == tdrvMemcpyDeviceToDevice;
  if (dst_on_device && !InDeviceMemory(ctx, dst, bytes)) return tdrvErrorInvalidPointer;
  if (src_on_device && !InDeviceMemory(ctx, src, bytes)) return tdrvErrorInvalidPointer;
  std::memmove(dst, src, bytes);
  return tdrvSuccess;
}

tdrvError tdrvMallocHost(void** ptr, size_t bytes) {
  if (ptr == nullptr) return tdrvErrorInvalidValue;
  void* p = nullptr;
  if (posix_memalign(&p, 64, bytes == 0 ? 1 : bytes) != 0) return tdrvErrorOutOfMemory;
  *ptr = p;
  return tdrvSuccess;
}

tdrvError tdrvFreeHost(void* ptr) {
  std::free(ptr);
  return tdrvSuccess;
}

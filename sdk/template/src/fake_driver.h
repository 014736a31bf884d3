// A stand-in for your vendor's driver library, so that the template builds
// and runs anywhere. Replace it with the real one (CUDA's runtime, a Level
// Zero or OpenCL wrapper, your own driver): the plugin calls it exactly the
// way it would call a real driver, through error codes, and turns the codes
// into statuses with PX_SDK_VENDOR_CALL (template_plugin.cc).
//
// The "device" is emulated: its memory is the driver's own, allocated from
// host RAM but handed out only through tdrvMalloc, limited to
// kTdrvDeviceMemoryBytes per device, and checked on every copy (a pointer
// that is not inside a live device allocation is refused). The host cannot
// read it directly (the plugin reports host_accessible = 0), so Plexus copies
// every tensor in and out, as it does for a real accelerator.
#ifndef PLEXUS_TEMPLATE_FAKE_DRIVER_H_
#define PLEXUS_TEMPLATE_FAKE_DRIVER_H_

#include <cstddef>
#include <cstdint>

enum tdrvError {
  tdrvSuccess = 0,
  tdrvErrorInvalidValue = 1,
  tdrvErrorOutOfMemory = 2,
  tdrvErrorInvalidDevice = 3,
  tdrvErrorInvalidPointer = 4,
};

enum tdrvMemcpyKind {
  tdrvMemcpyHostToDevice = 0,
  tdrvMemcpyDeviceToHost = 1,
  tdrvMemcpyDeviceToDevice = 2,
};

// Memory of each emulated device.
constexpr uint64_t kTdrvDeviceMemoryBytes = uint64_t{1} << 30;  // 1 GiB

struct tdrvDeviceProperties {
  char name[64];
  char vendor[32];
  uint64_t total_memory;
  uint64_t free_memory;
};

// Counted per context (from tdrvCtxCreate on).
struct tdrvMemStats {
  uint64_t bytes_in_use;
  uint64_t peak_bytes_in_use;
  uint64_t num_allocations;
  uint64_t bytes_limit;
};

struct tdrvContext;  // one opened device

const char* tdrvGetErrorString(tdrvError error);
tdrvError tdrvGetDeviceCount(int* count);
tdrvError tdrvGetDeviceProperties(tdrvDeviceProperties* props, int ordinal);

tdrvError tdrvCtxCreate(tdrvContext** ctx, int ordinal);
tdrvError tdrvCtxDestroy(tdrvContext* ctx);  // frees what the context still holds

// Device memory. alignment: a power of two. Zero bytes gives a unique pointer.
tdrvError tdrvMalloc(tdrvContext* ctx, void** ptr, size_t bytes, size_t alignment);
tdrvError tdrvFree(tdrvContext* ctx, void* ptr);
tdrvError tdrvMemGetStats(tdrvContext* ctx, tdrvMemStats* stats);
// Synchronous copy; the device side must lie inside one live allocation.
tdrvError tdrvMemcpy(tdrvContext* ctx, void* dst, const void* src, size_t bytes, tdrvMemcpyKind kind);

// Host memory for fast transfers ("page-locked" on real hardware).
tdrvError tdrvMallocHost(void** ptr, size_t bytes);
tdrvError tdrvFreeHost(void* ptr);

#endif  // PLEXUS_TEMPLATE_FAKE_DRIVER_H_

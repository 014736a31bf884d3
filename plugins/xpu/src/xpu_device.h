// One Intel GPU as the plugin ABI sees it, on Level Zero: device USM
// (zeMemAllocDevice) and pinned host USM (zeMemAllocHost), synchronous and
// stream-ordered copies, streams that carry errors, events, host callbacks,
// and the kernels of the embedded SPIR-V modules (built lazily, cached per
// device). Written on sdk::Device (plexus/sdk/plugin.h).
//
// Every Level Zero call goes through the process's loader (ze_loader.h); a
// device exists only when the loader initialized, so none of this code runs
// on a machine without a Level Zero GPU driver. NOTHING HERE HAS RUN ON AN
// INTEL GPU: it is written from the Level Zero 1.x headers and specification
// and was only compiled, and its no-device path run, on a machine without one.
#ifndef PLEXUS_PLUGINS_XPU_XPU_DEVICE_H_
#define PLEXUS_PLUGINS_XPU_XPU_DEVICE_H_

#include <level_zero/ze_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "plexus/plugin_api.h"
#include "plexus/sdk/plugin.h"
#include "xpu_stream.h"

namespace plexus::xpu {

class XpuDevice;

// What enumeration found for one GPU (xpu_plugin.cc); the context belongs to
// the plugin (one per driver) and outlives every device opened on it.
struct XpuDeviceHandles {
  ze_driver_handle_t driver = nullptr;
  ze_device_handle_t device = nullptr;
  ze_context_handle_t context = nullptr;
  std::string name;
  uint64_t total_memory_bytes = 0;  // the sum of the device's memories
  uint32_t compute_ordinal = 0;     // a command queue group with compute
};

// One stream: a Level Zero immediate command list (whose implicit command
// queue is created from a compute queue group's descriptor), a host-visible
// event for host waits, and the first error of the work on it ("sticky"),
// like the CUDA plugin's CudaStream.
//
// Why an immediate command list and not a command queue with regular
// command lists that are closed and executed: the ABI's streams behave like
// CUDA streams. Work starts once it is queued, another stream may wait at
// any time for an event recorded here, and the host may wait for any point.
// With regular lists the plugin would have to guess when to close and
// submit, and a wait on an event in a list not yet submitted could hang. An
// immediate list submits each command as it is appended, which is exactly
// the stream model; its implicit queue is still the compute group's.
//
// Ordering: without ZE_COMMAND_LIST_FLAG_RELAXED_ORDERING commands are not
// reordered, but the specification does not promise that one finishes
// before the next starts, so every append is followed by a barrier
// (zeCommandListAppendBarrier): CUDA's in-order stream semantics.
struct XpuStream {
  const PX_HostServices* host = nullptr;
  XpuDevice* device = nullptr;
  ze_command_list_handle_t list = nullptr;
  ze_event_pool_handle_t sync_pool = nullptr;
  ze_event_handle_t sync_event = nullptr;  // signalled by a barrier, waited for by the host
  bool synchronous_debug = false;          // wait after every command
  sdk::StickyStatus error;

  // Held around every append (and the waits that follow one), so that
  // commands from several threads do not interleave with their barriers.
  std::mutex mu;
  // Scratch memory whose free waits for the next synchronization (under mu).
  std::vector<void*> deferred_frees;
  size_t deferred_bytes = 0;

  XpuStream() = default;
  XpuStream(const XpuStream&) = delete;
  XpuStream& operator=(const XpuStream&) = delete;
  // Waits for the work still queued, frees the deferred scratch memory and
  // destroys the list and the event.
  ~XpuStream();
};

// A Level Zero event (host-visible, from a pool of its own) and the status of
// the work before it, captured when it was recorded: an event recorded on a
// failed stream reports that stream's error. A never-recorded event is
// complete and OK.
struct XpuEvent {
  ze_event_pool_handle_t pool = nullptr;
  ze_event_handle_t handle = nullptr;
  std::mutex mu;
  bool recorded = false;
  sdk::SavedStatus status;

  XpuEvent() = default;
  XpuEvent(const XpuEvent&) = delete;
  XpuEvent& operator=(const XpuEvent&) = delete;
  ~XpuEvent();
};

class XpuDevice : public sdk::Device {
 public:
  using Stream = XpuStream;
  using Event = XpuEvent;

  XpuDevice(const sdk::Plugin& plugin, int32_t ordinal, const XpuDeviceHandles& handles,
            bool synchronous_debug);
  ~XpuDevice();

  // Creates the device's own stream for the synchronous copies.
  PX_Status* Open();

  // -- memory (device USM; the alignment is passed to zeMemAllocDevice)
  PX_Status* Allocate(size_t bytes, size_t alignment, void** out);
  void Deallocate(void* ptr);
  PX_Status* HostAllocate(size_t bytes, void** out);  // host USM (pinned)
  void HostDeallocate(void* ptr);
  PX_Status* MemoryStats(PX_MemoryStats* out);

  // -- copies (zeCommandListAppendMemoryCopy takes any USM or host pointer)
  PX_Status* MemcpyH2D(void* dst, const void* src, size_t bytes);
  PX_Status* MemcpyD2H(void* dst, const void* src, size_t bytes);
  PX_Status* MemcpyD2D(void* dst, const void* src, size_t bytes);
  PX_Status* MemcpyH2DAsync(Stream& stream, void* dst, const void* src, size_t bytes);
  PX_Status* MemcpyD2HAsync(Stream& stream, void* dst, const void* src, size_t bytes);
  PX_Status* MemcpyD2DAsync(Stream& stream, void* dst, const void* src, size_t bytes);

  // -- streams and events
  PX_Status* StreamCreate(std::unique_ptr<Stream>* out);
  PX_Status* StreamSynchronize(Stream& stream);
  PX_Status* StreamGetStatus(Stream& stream);
  PX_Status* StreamAddCallback(Stream& stream, PX_HostCallbackFn fn, void* arg);
  PX_Status* EventCreate(std::unique_ptr<Event>* out);
  PX_Status* EventRecord(Stream& stream, Event& event);
  PX_Status* EventSynchronize(Event& event);
  PX_Status* StreamWaitEvent(Stream& stream, Event& event);

  // -- for the kernel launches (xpu_stream.h)
  const XpuDeviceHandles& handles() const { return handles_; }

  // A kernel of the embedded modules, its module built on first use. The
  // handle is shared by every stream of the device: hold `mu` from setting
  // the group size and the arguments until the launch is appended (Level
  // Zero copies the arguments at append time).
  struct Kernel {
    ze_kernel_handle_t handle = nullptr;
    std::mutex mu;
  };
  // Throws sdk::Error when no embedded module has `name`, or its module
  // does not build (with the build log).
  Kernel& FindKernel(const char* name);

  // Device memory for a ScratchBuffer (throws sdk::Error naming `what`).
  void* AllocateScratch(size_t bytes, const char* what);

 private:
  PX_Status* Copy(void* dst, const void* src, size_t bytes, const char* what);
  PX_Status* CopyOnStream(Stream& stream, void* dst, const void* src, size_t bytes);
  ze_module_handle_t BuildModuleLocked(size_t index);  // under kernels_mu_

  XpuDeviceHandles handles_;
  bool synchronous_debug_;
  // The synchronous copies' stream.
  std::unique_ptr<XpuStream> copy_stream_;

  // Live allocations and statistics.
  std::mutex mu_;
  std::unordered_map<void*, size_t> blocks_;
  uint64_t bytes_in_use_ = 0;
  uint64_t peak_bytes_in_use_ = 0;
  uint64_t num_allocations_ = 0;

  // Modules (one slot per embedded module; null until built) and kernels.
  std::mutex kernels_mu_;
  std::vector<ze_module_handle_t> modules_;
  std::vector<std::string> module_errors_;  // a failed build, reported again
  std::unordered_map<std::string, std::unique_ptr<Kernel>> kernels_;
};

}  // namespace plexus::xpu

#endif  // PLEXUS_PLUGINS_XPU_XPU_DEVICE_H_

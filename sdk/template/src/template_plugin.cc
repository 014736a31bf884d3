// The template plugin: one "TEMPLATE" device driven through a stand-in
// driver library (fake_driver.h), written on the SDK's C++ helpers
// (plexus/sdk/plugin.h). Copy this project, rename it, and replace the
// driver calls with your hardware's.
//
// Execution model: every piece of work (kernels, copies) runs synchronously
// on the calling thread, so a stream is only its sticky error and an event
// only the status it captured. A real accelerator enqueues the work on its
// own queue instead (keep a vendor stream handle in TemplateStream, record
// vendor events in TemplateEvent) and reports failures found later through
// the stream's sticky error.
#include <cstdint>
#include <memory>
#include <mutex>

#include "fake_driver.h"
#include "plexus/plugin_api.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/plugin.h"
#include "template_kernels.h"

namespace sdk = plexus::sdk;

// How the driver's error codes become statuses: out of memory is
// RESOURCE_EXHAUSTED (the host and the conformance tool rely on it), bad
// arguments INVALID_ARGUMENT, anything else INTERNAL. Used by every
// PX_SDK_VENDOR_CALL on a tdrvError.
template <>
struct plexus::sdk::VendorErrorTraits<tdrvError> {
  static PX_Code ToPxCode(tdrvError error) {
    switch (error) {
      case tdrvErrorOutOfMemory: return PX_CODE_RESOURCE_EXHAUSTED;
      case tdrvErrorInvalidValue:
      case tdrvErrorInvalidPointer: return PX_CODE_INVALID_ARGUMENT;
      case tdrvErrorInvalidDevice: return PX_CODE_NOT_FOUND;
      default: return PX_CODE_INTERNAL;
    }
  }
};

namespace template_plugin {
namespace {

// What the plugin tells the host about itself. Rename here.
constexpr sdk::PluginInfo kInfo{
    /*name=*/"template",
    /*version=*/"0.1.0",
    /*platform=*/"Template",
    /*device_type=*/"TEMPLATE",  // upper case: devices are named DEVICE_TYPE:0, ...
    /*dlpack_device_type=*/kDLExtDev,
    /*score=*/-10,  // below the cpu plugin's 0: never the default device
};

// A stream: the first error of the work on it.
struct TemplateStream {
  sdk::StickyStatus error;
};

// An event: the status of the work before it, captured when recorded. An
// event that was never recorded is complete and OK.
struct TemplateEvent {
  std::mutex mu;
  sdk::SavedStatus status;
};

class TemplatePlugin;

class TemplateDevice : public sdk::Device {
 public:
  using Stream = TemplateStream;
  using Event = TemplateEvent;

  TemplateDevice(const sdk::Plugin& plugin, int32_t ordinal) : sdk::Device(plugin, ordinal) {}

  // Opens the driver context; the context (and any memory still in it) is
  // released when the device closes.
  PX_Status* Open() {
    PX_SDK_VENDOR_CALL(host(), tdrvCtxCreate(context_.out(), ordinal()), tdrvSuccess,
                       tdrvGetErrorString);
    return nullptr;
  }

  // -- memory --------------------------------------------------------------

  // alignment is a power of two (the SDK turned 0 into 64).
  PX_Status* Allocate(size_t bytes, size_t alignment, void** out) {
    PX_SDK_VENDOR_CALL(host(), tdrvMalloc(ctx(), out, bytes, alignment), tdrvSuccess,
                       tdrvGetErrorString);
    return nullptr;
  }
  void Deallocate(void* ptr) {
    if (tdrvFree(ctx(), ptr) != tdrvSuccess) {
      Log(PX_LOG_ERROR, "deallocate: %p is not a live allocation of device %d", ptr,
          static_cast<int>(ordinal()));
    }
  }
  PX_Status* HostAllocate(size_t bytes, void** out) {
    PX_SDK_VENDOR_CALL(host(), tdrvMallocHost(out, bytes), tdrvSuccess, tdrvGetErrorString);
    return nullptr;
  }
  void HostDeallocate(void* ptr) { tdrvFreeHost(ptr); }
  PX_Status* MemoryStats(PX_MemoryStats* out) {
    tdrvMemStats stats{};
    PX_SDK_VENDOR_CALL(host(), tdrvMemGetStats(ctx(), &stats), tdrvSuccess, tdrvGetErrorString);
    out->bytes_in_use = stats.bytes_in_use;
    out->peak_bytes_in_use = stats.peak_bytes_in_use;
    out->num_allocations = stats.num_allocations;
    out->bytes_limit = stats.bytes_limit;
    return nullptr;
  }

  // -- synchronous copies (zero-byte copies never get here) -----------------

  PX_Status* MemcpyH2D(void* dst, const void* src, size_t bytes) {
    return Copy(dst, src, bytes, tdrvMemcpyHostToDevice);
  }
  PX_Status* MemcpyD2H(void* dst, const void* src, size_t bytes) {
    return Copy(dst, src, bytes, tdrvMemcpyDeviceToHost);
  }
  PX_Status* MemcpyD2D(void* dst, const void* src, size_t bytes) {
    return Copy(dst, src, bytes, tdrvMemcpyDeviceToDevice);
  }

  // -- copies ordered on a stream --------------------------------------------

  PX_Status* MemcpyH2DAsync(Stream& stream, void* dst, const void* src, size_t bytes) {
    return CopyOnStream(stream, dst, src, bytes, tdrvMemcpyHostToDevice);
  }
  PX_Status* MemcpyD2HAsync(Stream& stream, void* dst, const void* src, size_t bytes) {
    return CopyOnStream(stream, dst, src, bytes, tdrvMemcpyDeviceToHost);
  }
  PX_Status* MemcpyD2DAsync(Stream& stream, void* dst, const void* src, size_t bytes) {
    return CopyOnStream(stream, dst, src, bytes, tdrvMemcpyDeviceToDevice);
  }

  // -- streams and events ----------------------------------------------------
  // (StreamCreate and EventCreate are not defined: the SDK default-constructs
  // TemplateStream and TemplateEvent.)

  // All work already ran: waiting is reporting the sticky error.
  PX_Status* StreamSynchronize(Stream& stream) { return stream.error.Report(host()); }
  PX_Status* StreamGetStatus(Stream& stream) { return stream.error.Report(host()); }

  PX_Status* EventRecord(Stream& stream, Event& event) {
    sdk::SavedStatus status = stream.error.Get();
    std::lock_guard<std::mutex> lock(event.mu);
    event.status = std::move(status);
    return nullptr;
  }
  PX_Status* EventSynchronize(Event& event) {
    std::lock_guard<std::mutex> lock(event.mu);
    return event.status.ToStatus(host());
  }
  // The event's work finished when it was recorded: nothing to wait for.
  PX_Status* StreamWaitEvent(Stream&, Event&) { return nullptr; }

  // Earlier work is done, so the callback runs now, on this thread, with the
  // stream's error (borrowed for the call).
  PX_Status* StreamAddCallback(Stream& stream, PX_HostCallbackFn fn, void* arg) {
    sdk::Status status(host(), stream.error.Report(host()));
    fn(arg, status.get());
    return nullptr;
  }

 private:
  tdrvContext* ctx() const { return context_.get(); }

  PX_Status* Copy(void* dst, const void* src, size_t bytes, tdrvMemcpyKind kind) {
    PX_SDK_VENDOR_CALL(host(), tdrvMemcpy(ctx(), dst, src, bytes, kind), tdrvSuccess,
                       tdrvGetErrorString);
    return nullptr;
  }

  // A copy is work on the stream: its failure is also the stream's sticky
  // error, as a device would report it at the next synchronize.
  PX_Status* CopyOnStream(Stream& stream, void* dst, const void* src, size_t bytes,
                          tdrvMemcpyKind kind) {
    PX_Status* status = Copy(dst, src, bytes, kind);
    stream.error.Record(host(), status);
    return status;
  }

  sdk::UniqueHandle<tdrvContext*, tdrvCtxDestroy> context_;
};

class TemplatePlugin : public sdk::Plugin {
 public:
  using Device = TemplateDevice;

  explicit TemplatePlugin(const sdk::PluginContext& context)
      : sdk::Plugin(context), kernel_info_{host(), name()} {}

  PX_Status* RegisterKernels(PX_KernelRegistrar* registrar) {
    return RegisterTemplateKernels(&kernel_info_, registrar);
  }

  // No hardware is 0 devices, not an error.
  PX_Status* DeviceCount(int32_t* count) {
    int n = 0;
    PX_SDK_VENDOR_CALL(host(), tdrvGetDeviceCount(&n), tdrvSuccess, tdrvGetErrorString);
    *count = n;
    return nullptr;
  }

  // `info` is zeroed; the SDK copies it to the host's struct (and has
  // already checked the ordinal against DeviceCount).
  PX_Status* GetDeviceInfo(int32_t ordinal, PX_DeviceInfo* info) {
    tdrvDeviceProperties props{};
    PX_SDK_VENDOR_CALL(host(), tdrvGetDeviceProperties(&props, ordinal), tdrvSuccess,
                       tdrvGetErrorString);
    sdk::CopyString(info->name, props.name);
    sdk::CopyString(info->vendor, props.vendor);
    info->total_memory_bytes = props.total_memory;
    info->free_memory_bytes = props.free_memory;
    info->host_accessible = 0;  // device memory: the host copies in and out
    return nullptr;
  }

  PX_Status* OpenDevice(int32_t ordinal, std::unique_ptr<TemplateDevice>* out) {
    auto device = std::make_unique<TemplateDevice>(*this, ordinal);
    PX_SDK_RETURN_IF_ERROR(device->Open());
    *out = std::move(device);
    return nullptr;
  }

 private:
  // user_data of every kernel (plexus/sdk/kernel.h): lives as long as the plugin.
  sdk::RegistrationInfo kernel_info_;
};

}  // namespace
}  // namespace template_plugin

PX_SDK_DEFINE_PLUGIN(template_plugin::TemplatePlugin, template_plugin::kInfo)

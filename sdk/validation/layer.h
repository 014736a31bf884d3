// Internal state of the validation layer (validation_layer.h): the wrapped
// plugin, the layer's own handles, the breach reports and the fault knobs.
// Only plugin_api.h and the SDK are used, as in any plugin.
#ifndef PLEXUS_SDK_VALIDATION_LAYER_INTERNAL_H_
#define PLEXUS_SDK_VALIDATION_LAYER_INTERNAL_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "plexus/plugin_api.h"
#include "validation_layer.h"

namespace pxv {

enum class Kind { kDevice, kStream, kEvent, kGraph, kKernel, kComm };
const char* KindName(Kind kind);

struct Layer;

// One allocation made through the layer. `base` is what the plugin returned;
// the caller got base + front. On host-accessible devices the bytes before
// the caller's pointer and after its end are guard bytes.
struct Allocation {
  void* base = nullptr;
  size_t bytes = 0;   // what the caller asked for
  size_t front = 0;   // guard bytes before (0: no guards)
  size_t back = 0;    // guard bytes after
};

struct DeviceWrap {
  Layer* layer = nullptr;
  PX_Device* real = nullptr;
  int32_t ordinal = 0;
  bool host_accessible = false;
  std::mutex mu;
  std::map<uintptr_t, Allocation> allocations;  // by the caller's pointer
};

struct StreamWrap {
  Layer* layer = nullptr;
  DeviceWrap* device = nullptr;
  PX_Stream* real = nullptr;
  std::atomic<int> busy{0};
  bool capturing = false;
};

struct EventWrap {
  Layer* layer = nullptr;
  DeviceWrap* device = nullptr;
  PX_Event* real = nullptr;
};

struct KernelWrap;
// What compute receives as `kernel`: a created instance, or (stateless
// kernels) the one inside its KernelWrap.
struct InstanceWrap {
  KernelWrap* kernel = nullptr;
  void* real = nullptr;
  std::atomic<int> computing{0};
};

struct KernelWrap {
  Layer* layer = nullptr;
  std::string op;
  void* user_data = nullptr;
  PX_KernelCreateFn create = nullptr;
  PX_KernelComputeFn compute = nullptr;
  PX_KernelDestroyFn destroy = nullptr;
  InstanceWrap stateless;
};

struct Layer {
  std::string name;
  int32_t mode = PX_VALIDATION_MODE_ERROR;
  const PX_HostServices* host = nullptr;
  PX_HostServices services{};  // what the plugin sees
  PX_PluginTable real{};       // the plugin's table (zero past its size)
  PX_CollectivesExt collectives{};
  std::mutex mu;
  std::string pending;  // a breach in a call that returns nothing
  std::map<int32_t, bool> host_accessible;
  int32_t device_count = -1;
  std::atomic<int> serialized{0};  // enumeration, open and close
  std::vector<std::unique_ptr<KernelWrap>> kernels;
  std::atomic<uint64_t> bytes_in_use{0};
  std::mutex fault_mu;
  std::map<std::string, std::pair<std::string, long>> fault_counters;
};

// ---- Handles: every handle the layer gives out, process-wide ----
void AddHandle(const void* handle, Kind kind, Layer* layer);
// Marks a handle destroyed; the object stays allocated for a while so that a
// later use is reported rather than read from freed memory.
void KillHandle(const void* handle);
// Empty when `handle` is a live handle of `kind`; else why not.
std::string CheckHandle(const void* handle, Kind kind, Layer** layer);
// Frees every handle of `layer` (at shutdown).
void ForgetHandles(Layer* layer);
// Some layer, to report a breach with when the handle names none.
Layer* AnyLayer();

// ---- Breaches ----
// Logs "validation layer: plugin 'NAME': CALL: argument 'ARG': WHAT" and, in
// error mode, returns it as a status with `code` (null in warn mode).
PX_Status* Breach(Layer* layer, const char* call, const char* arg, const std::string& what,
                  PX_Code code = PX_CODE_FAILED_PRECONDITION);
// For calls that return nothing: logs, and keeps the message for the next
// call of the plugin that can return a status.
void BreachLater(Layer* layer, const char* call, const char* arg, const std::string& what);
PX_Status* TakePending(Layer* layer);
void Log(Layer* layer, PX_LogLevel level, const std::string& message);
PX_Status* MakeStatus(Layer* layer, PX_Code code, const std::string& message);
void FreeStatus(Layer* layer, PX_Status* status);

// Checks a device handle argument (and returns the pending breach, if any).
PX_Status* EnterDevice(PX_Device* device, const char* call, DeviceWrap** out);
PX_Status* EnterStream(DeviceWrap* device, PX_Stream* stream, const char* call, const char* arg,
                       StreamWrap** out);
void LeaveStream(StreamWrap* stream);

// Checks the pointers of a copy; a device-side range must not run past the
// end of the allocation it starts in.
PX_Status* CheckCopy(DeviceWrap* device, const char* call, void* dst, const void* src, size_t bytes,
                     bool dst_on_device, bool src_on_device);

// ---- Guards and poison ----
constexpr unsigned char kGuardByte = 0xCD;
constexpr unsigned char kPoisonByte = 0xA5;
constexpr size_t kGuardBytes = 64;
// Empty when the guards of `a` (allocated at `user`) are intact.
std::string CheckGuards(const Allocation& a, const unsigned char* user);

// ---- Faults (faults.cc) ----
PX_Status* FaultAllocate(Layer* layer, size_t bytes);
PX_Status* FaultCall(Layer* layer, const char* knob, const char* call);
PX_Status* FaultKernel(Layer* layer, const std::string& op, const std::string& node);

// ---- Table wrappers (streams.cc, kernels.cc) ----
void FillStreamSlots(Layer* layer, PX_PluginTable* table);
void FillCollectives(Layer* layer, PX_PluginTable* table);
void FillKernelServices(Layer* layer);
PX_Status* RegisterKernels(void* plugin, PX_KernelRegistrar* registrar);

}  // namespace pxv

#endif  // PLEXUS_SDK_VALIDATION_LAYER_INTERNAL_H_

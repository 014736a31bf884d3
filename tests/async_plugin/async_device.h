// The asynchronous test device ("ASYNC:0"): what its parts share. See
// async_plugin.cc for what the device is and why.
//
//   async_plugin.cc   the table, the device, initialization
//   async_memory.cc   device and pinned memory, copies, streams' creation
//   async_events.cc   events and cross-stream waits
//   async_kernels.cc  the reference kernels, queued on the streams
#ifndef PLEXUS_TESTS_ASYNC_PLUGIN_ASYNC_DEVICE_H_
#define PLEXUS_TESTS_ASYNC_PLUGIN_ASYNC_DEVICE_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "plexus/plugin_api.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/plugin.h"  // FillSized
#include "plexus/sdk/plugin_sdk.h"

namespace plexus::async_device {

using Clock = std::chrono::steady_clock;
constexpr unsigned char kPoison = 0xFF;  // NaN in every float format

struct WrappedDef;

struct Plugin {
  const PX_HostServices* real = nullptr;  // the host's services
  PX_HostServices wrapped{};               // what the reference kernels see
  sdk::RegistrationInfo info;
  std::chrono::microseconds delay{200};
  std::chrono::seconds deadline{120};
  bool synchronous_debug = false;
  std::mutex defs_mu;
  std::vector<std::shared_ptr<WrappedDef>> defs;  // shared_ptr: fine with WrappedDef incomplete here
  // Pinned host memory (host_allocate), by start address.
  std::mutex pinned_mu;
  std::map<uintptr_t, size_t> pinned;
};
extern Plugin* g_plugin;  // one per process: the host initializes a plugin file once

// A status made through the host's services.
PX_Status* Error(PX_Code code, const char* format, ...) __attribute__((format(printf, 2, 3)));
// Whether [p, p + bytes) lies inside one of `blocks` (start -> size).
bool InBlocks(const std::map<uintptr_t, size_t>& blocks, const void* p, size_t bytes);
bool IsPinned(const void* p, size_t bytes);

// ---------------------------------------------------------------------------
// Streams: a queue of work and the thread that runs it
// ---------------------------------------------------------------------------

class Stream {
 public:
  using Work = std::function<PX_Status*(Stream&)>;
  // Kernels and copies are skipped once the stream has failed, as on a GPU;
  // event records, waits and callbacks still run (they report the error).
  enum class Kind { kWork, kControl };

  explicit Stream(std::string device) : device_(std::move(device)), worker_([this] { Run(); }) {}

  ~Stream() {
    (void)Drain();
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    work_cv_.notify_all();
    worker_.join();
  }

  void Enqueue(Work work, Kind kind = Kind::kWork) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back({std::move(work), kind});
      ++enqueued_;
    }
    work_cv_.notify_one();
  }

  // Waits for every item queued so far; false when the deadline passed.
  bool Drain() {
    std::unique_lock<std::mutex> lock(mu_);
    if (std::this_thread::get_id() == worker_.get_id()) return true;  // from a callback
    const uint64_t target = enqueued_;
    return done_cv_.wait_for(lock, g_plugin->deadline, [&] { return done_ >= target; });
  }

  // The sticky error as a new status (NULL when none).
  PX_Status* ErrorStatus() {
    std::lock_guard<std::mutex> lock(mu_);
    return failed_ ? g_plugin->real->status_create(code_, message_.c_str()) : nullptr;
  }

  void RecordError(PX_Code code, const std::string& message) {
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_) return;
    failed_ = true;
    code_ = code;
    message_ = message;
  }

  PX_Status* Synchronize() {
    if (!Drain()) {
      return Error(PX_CODE_DEADLINE_EXCEEDED, "%s: a stream's work did not finish within %lld s",
                   device_.c_str(), static_cast<long long>(g_plugin->deadline.count()));
    }
    return ErrorStatus();
  }

  const std::string& device() const { return device_; }

 private:
  void Run() {
    for (;;) {
      Item item;
      bool failed;
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;
        item = std::move(queue_.front());
        queue_.pop_front();
        failed = failed_;
      }
      // The host runs ahead meanwhile: whatever it reads or overwrites
      // without waiting for this stream, it does before the work below.
      if (g_plugin->delay.count() > 0) std::this_thread::sleep_for(g_plugin->delay);
      PX_Status* status = failed && item.kind == Kind::kWork ? nullptr : item.work(*this);
      if (status != nullptr) {
        const PX_HostServices* host = g_plugin->real;
        RecordError(host->status_code(status), host->status_message(status));
        host->status_destroy(status);
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++done_;
      }
      done_cv_.notify_all();
    }
  }

  const std::string device_;
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  struct Item {
    Work work;
    Kind kind = Kind::kWork;
  };
  std::deque<Item> queue_;
  uint64_t enqueued_ = 0, done_ = 0;
  bool stop_ = false;
  bool failed_ = false;
  PX_Code code_ = PX_CODE_OK;
  std::string message_;
  std::thread worker_;  // last: starts once the rest is constructed
};

// ---------------------------------------------------------------------------
// Devices
// ---------------------------------------------------------------------------

struct Device {
  std::string name = "ASYNC:0";
  std::mutex mu;
  std::map<uintptr_t, size_t> live;             // device allocations
  std::deque<std::pair<void*, size_t>> freed;   // poisoned, not yet returned
  size_t freed_bytes = 0;
  uint64_t bytes_in_use = 0, peak = 0, allocations = 0;
};

inline Device* DeviceOf(PX_Device* d) { return reinterpret_cast<Device*>(d); }
inline Stream* StreamOf(PX_Stream* s) { return reinterpret_cast<Stream*>(s); }
bool IsDeviceMemory(Device* device, const void* p, size_t bytes);
// The device whose stream this is, for argument checks inside compute.
Device* DeviceOfStream(const Stream* s);

// The table's slots, by the file that defines them.
PX_Status* Allocate(PX_Device* d, size_t bytes, size_t alignment, void** out);
void Deallocate(PX_Device* d, void* p);
PX_Status* HostAllocate(PX_Device*, size_t bytes, void** out);
void HostDeallocate(PX_Device*, void* p);
PX_Status* MemoryStats(PX_Device* d, PX_MemoryStats* out);
PX_Status* MemcpyH2D(PX_Device* d, void* dst, const void* src, size_t bytes);
PX_Status* MemcpyD2H(PX_Device* d, void* dst, const void* src, size_t bytes);
PX_Status* MemcpyD2D(PX_Device* d, void* dst, const void* src, size_t bytes);
PX_Status* MemcpyH2DAsync(PX_Device* d, PX_Stream* s, void* dst, const void* src, size_t bytes);
PX_Status* MemcpyD2HAsync(PX_Device* d, PX_Stream* s, void* dst, const void* src, size_t bytes);
PX_Status* MemcpyD2DAsync(PX_Device* d, PX_Stream* s, void* dst, const void* src, size_t bytes);
PX_Status* StreamCreate(PX_Device* d, PX_Stream** out);
void StreamDestroy(PX_Device*, PX_Stream* s);
PX_Status* StreamSynchronize(PX_Device*, PX_Stream* s);
PX_Status* StreamGetStatus(PX_Device*, PX_Stream* s);
PX_Status* StreamAddCallback(PX_Device*, PX_Stream* s, PX_HostCallbackFn fn, void* arg);
PX_Status* EventCreate(PX_Device*, PX_Event** out);
void EventDestroy(PX_Device*, PX_Event* e);
PX_Status* EventRecord(PX_Device*, PX_Stream* s, PX_Event* e);
PX_Status* EventSynchronize(PX_Device* d, PX_Event* e);
PX_Status* StreamWaitEvent(PX_Device* d, PX_Stream* s, PX_Event* e);
// Stream interop (ABI 0.8): a stream's native handle is its address; a
// native stream to order must be a live stream of this plugin.
PX_Status* StreamNativeHandle(PX_Device* d, PX_Stream* s, uint64_t* out);
PX_Status* NativeStreamWait(PX_Device* d, uint64_t native, PX_Stream* s);
// Kernels: the host services the reference kernels see instead of the
// host's, and their registration.
PX_Status* RegisterWrapped(PX_KernelRegistrar* registrar, const PX_KernelDef* def);
PX_Status* OutputAllocate(PX_KernelContext* ctx, size_t index, int32_t ndim, const int64_t* shape);
const char* KernelNodeName(PX_KernelContext* ctx);
PX_Status* RegisterKernels(void*, PX_KernelRegistrar* registrar);

}  // namespace plexus::async_device

#endif  // PLEXUS_TESTS_ASYNC_PLUGIN_ASYNC_DEVICE_H_

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
//
// It is a test plugin: it lives in the build tree's test-plugins folder, and
// nothing discovers it unless asked to.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "plexus/plugin_api.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/plugin_sdk.h"
#include "reference_kernels.h"

namespace plexus::async_device {
namespace {

using Clock = std::chrono::steady_clock;
constexpr unsigned char kPoison = 0xFF;  // NaN in every float format

long EnvNumber(const char* name, long fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  return (end != nullptr && *end == '\0' && n >= 0) ? n : fallback;
}

struct WrappedDef;

struct Plugin {
  const PX_HostServices* real = nullptr;  // the host's services
  PX_HostServices wrapped{};               // what the reference kernels see
  sdk::RegistrationInfo info;
  std::chrono::microseconds delay{200};
  std::chrono::seconds deadline{120};
  bool synchronous_debug = false;
  std::mutex defs_mu;
  std::vector<std::unique_ptr<WrappedDef>> defs;
  // Pinned host memory (host_allocate), by start address.
  std::mutex pinned_mu;
  std::map<uintptr_t, size_t> pinned;
};
Plugin* g_plugin = nullptr;  // one per process: the host initializes a plugin file once

PX_Status* Error(PX_Code code, const char* format, ...) __attribute__((format(printf, 2, 3)));
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
// Devices and memory
// ---------------------------------------------------------------------------

struct Device {
  std::string name = "ASYNC:0";
  std::mutex mu;
  std::map<uintptr_t, size_t> live;             // device allocations
  std::deque<std::pair<void*, size_t>> freed;   // poisoned, not yet returned
  size_t freed_bytes = 0;
  uint64_t bytes_in_use = 0, peak = 0, allocations = 0;
};

constexpr size_t kQuarantineBytes = size_t{256} << 20;
constexpr size_t kQuarantineBlocks = 8192;

Device* DeviceOf(PX_Device* d) { return reinterpret_cast<Device*>(d); }
Stream* StreamOf(PX_Stream* s) { return reinterpret_cast<Stream*>(s); }

bool IsDeviceMemory(Device* device, const void* p, size_t bytes) {
  std::lock_guard<std::mutex> lock(device->mu);
  return InBlocks(device->live, p, bytes);
}

// The device whose stream this is, for argument checks inside compute.
std::mutex g_stream_devices_mu;
std::map<const Stream*, Device*> g_stream_devices;

Device* DeviceOfStream(const Stream* s) {
  std::lock_guard<std::mutex> lock(g_stream_devices_mu);
  auto it = g_stream_devices.find(s);
  return it == g_stream_devices.end() ? nullptr : it->second;
}

PX_Status* Allocate(PX_Device* d, size_t bytes, size_t alignment, void** out) {
  Device* device = DeviceOf(d);
  if (alignment == 0) alignment = 64;
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  void* p = nullptr;
  if (posix_memalign(&p, alignment, bytes == 0 ? 1 : bytes) != 0) {
    return Error(PX_CODE_RESOURCE_EXHAUSTED, "%s is out of memory allocating %zu bytes",
                 device->name.c_str(), bytes);
  }
  std::memset(p, kPoison, bytes);
  std::lock_guard<std::mutex> lock(device->mu);
  device->live[reinterpret_cast<uintptr_t>(p)] = bytes;
  device->bytes_in_use += bytes;
  device->peak = std::max(device->peak, device->bytes_in_use);
  ++device->allocations;
  *out = p;
  return nullptr;
}

// The host promises to free memory only once the work using it has finished.
// Freed memory is poisoned at once and returned to the system only later, so
// work that still reads it reads NaN instead of crashing the process.
void Deallocate(PX_Device* d, void* p) {
  if (p == nullptr) return;
  Device* device = DeviceOf(d);
  std::vector<void*> release;
  {
    std::lock_guard<std::mutex> lock(device->mu);
    auto it = device->live.find(reinterpret_cast<uintptr_t>(p));
    if (it == device->live.end()) {
      g_plugin->real->log(g_plugin->real->host_context, PX_LOG_ERROR,
                          "ASYNC:0: deallocate of a pointer that is not a live allocation");
      return;
    }
    const size_t bytes = it->second;
    device->live.erase(it);
    device->bytes_in_use -= bytes;
    std::memset(p, kPoison, bytes);
    device->freed.emplace_back(p, bytes);
    device->freed_bytes += bytes;
    while (device->freed_bytes > kQuarantineBytes || device->freed.size() > kQuarantineBlocks) {
      release.push_back(device->freed.front().first);
      device->freed_bytes -= device->freed.front().second;
      device->freed.pop_front();
    }
  }
  for (void* q : release) std::free(q);
}

PX_Status* HostAllocate(PX_Device*, size_t bytes, void** out) {
  void* p = nullptr;
  if (posix_memalign(&p, 64, bytes == 0 ? 1 : bytes) != 0) {
    return Error(PX_CODE_RESOURCE_EXHAUSTED, "out of pinned host memory allocating %zu bytes", bytes);
  }
  std::lock_guard<std::mutex> lock(g_plugin->pinned_mu);
  g_plugin->pinned[reinterpret_cast<uintptr_t>(p)] = bytes;
  *out = p;
  return nullptr;
}

void HostDeallocate(PX_Device*, void* p) {
  if (p == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(g_plugin->pinned_mu);
    g_plugin->pinned.erase(reinterpret_cast<uintptr_t>(p));
  }
  std::free(p);
}

PX_Status* MemoryStats(PX_Device* d, PX_MemoryStats* out) {
  Device* device = DeviceOf(d);
  PX_MemoryStats full{};
  {
    std::lock_guard<std::mutex> lock(device->mu);
    full.bytes_in_use = device->bytes_in_use;
    full.peak_bytes_in_use = device->peak;
    full.num_allocations = device->allocations;
  }
  // Never past what the host's (maybe older, shorter) struct has.
  const size_t size = std::min(out->struct_size, sizeof(full));
  const size_t skip = sizeof(full.struct_size);
  if (size > skip) std::memcpy(reinterpret_cast<char*>(out) + skip, reinterpret_cast<char*>(&full) + skip, size - skip);
  return nullptr;
}

PX_Status* CheckCopy(Device* device, const char* what, void* dst, bool dst_device, const void* src,
                     bool src_device, size_t bytes) {
  if (dst == nullptr || src == nullptr) {
    return Error(PX_CODE_INVALID_ARGUMENT, "%s: %s of %zu bytes with a NULL %s", device->name.c_str(),
                 what, bytes, dst == nullptr ? "destination" : "source");
  }
  if (dst_device && !IsDeviceMemory(device, dst, bytes)) {
    return Error(PX_CODE_INVALID_ARGUMENT, "%s: %s into %zu bytes that are not %s memory",
                 device->name.c_str(), what, bytes, device->name.c_str());
  }
  if (src_device && !IsDeviceMemory(device, src, bytes)) {
    return Error(PX_CODE_INVALID_ARGUMENT, "%s: %s from %zu bytes that are not %s memory",
                 device->name.c_str(), what, bytes, device->name.c_str());
  }
  return nullptr;
}

// Synchronous copies: done when they return, ordered with no stream.
PX_Status* MemcpyH2D(PX_Device* d, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return nullptr;
  if (PX_Status* s = CheckCopy(DeviceOf(d), "host-to-device copy", dst, true, src, false, bytes)) return s;
  std::memcpy(dst, src, bytes);
  return nullptr;
}
PX_Status* MemcpyD2H(PX_Device* d, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return nullptr;
  if (PX_Status* s = CheckCopy(DeviceOf(d), "device-to-host copy", dst, false, src, true, bytes)) return s;
  std::memcpy(dst, src, bytes);
  return nullptr;
}
PX_Status* MemcpyD2D(PX_Device* d, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return nullptr;
  if (PX_Status* s = CheckCopy(DeviceOf(d), "device-to-device copy", dst, true, src, true, bytes)) return s;
  std::memcpy(dst, src, bytes);
  return nullptr;
}

// A copy that cannot be queued is also the stream's sticky error, from its
// place in the stream's order on (an event recorded before it stays OK).
PX_Status* Refuse(Stream* stream, PX_Status* status) {
  const PX_Code code = g_plugin->real->status_code(status);
  std::string message = g_plugin->real->status_message(status);
  stream->Enqueue([code, message](Stream&) -> PX_Status* {
    return g_plugin->real->status_create(code, message.c_str());
  });
  return status;
}

PX_Status* MemcpyH2DAsync(PX_Device* d, PX_Stream* s, void* dst, const void* src, size_t bytes) {
  Stream* stream = StreamOf(s);
  if (bytes == 0) return nullptr;
  if (PX_Status* e = CheckCopy(DeviceOf(d), "async host-to-device copy", dst, true, src, false, bytes)) {
    return Refuse(stream, e);
  }
  if (IsPinned(src, bytes)) {
    // Pinned memory is read when the copy runs, as a GPU's DMA engine does.
    stream->Enqueue([dst, src, bytes](Stream&) -> PX_Status* {
      std::memcpy(dst, src, bytes);
      return nullptr;
    });
  } else {
    // Pageable memory is staged when the copy is queued.
    auto staged = std::make_shared<std::vector<char>>(static_cast<const char*>(src),
                                                      static_cast<const char*>(src) + bytes);
    stream->Enqueue([dst, staged](Stream&) -> PX_Status* {
      std::memcpy(dst, staged->data(), staged->size());
      return nullptr;
    });
  }
  if (g_plugin->synchronous_debug) return stream->Synchronize();
  return nullptr;
}

PX_Status* MemcpyD2HAsync(PX_Device* d, PX_Stream* s, void* dst, const void* src, size_t bytes) {
  Stream* stream = StreamOf(s);
  if (bytes == 0) return nullptr;
  if (PX_Status* e = CheckCopy(DeviceOf(d), "async device-to-host copy", dst, false, src, true, bytes)) {
    return Refuse(stream, e);
  }
  if (IsPinned(dst, bytes) && !g_plugin->synchronous_debug) {
    stream->Enqueue([dst, src, bytes](Stream&) -> PX_Status* {
      std::memcpy(dst, src, bytes);
      return nullptr;
    });
    return nullptr;
  }
  // Into pageable memory the copy waits for the stream and is done on return.
  if (PX_Status* e = stream->Synchronize()) return e;
  std::memcpy(dst, src, bytes);
  return nullptr;
}

PX_Status* MemcpyD2DAsync(PX_Device* d, PX_Stream* s, void* dst, const void* src, size_t bytes) {
  Stream* stream = StreamOf(s);
  if (bytes == 0) return nullptr;
  if (PX_Status* e = CheckCopy(DeviceOf(d), "async device-to-device copy", dst, true, src, true, bytes)) {
    return Refuse(stream, e);
  }
  stream->Enqueue([dst, src, bytes](Stream&) -> PX_Status* {
    std::memcpy(dst, src, bytes);
    return nullptr;
  });
  if (g_plugin->synchronous_debug) return stream->Synchronize();
  return nullptr;
}

PX_Status* StreamCreate(PX_Device* d, PX_Stream** out) {
  auto* stream = new (std::nothrow) Stream(DeviceOf(d)->name);
  if (stream == nullptr) return Error(PX_CODE_RESOURCE_EXHAUSTED, "out of host memory");
  {
    std::lock_guard<std::mutex> lock(g_stream_devices_mu);
    g_stream_devices[stream] = DeviceOf(d);
  }
  *out = reinterpret_cast<PX_Stream*>(stream);
  return nullptr;
}

void StreamDestroy(PX_Device*, PX_Stream* s) {
  Stream* stream = StreamOf(s);
  {
    std::lock_guard<std::mutex> lock(g_stream_devices_mu);
    g_stream_devices.erase(stream);
  }
  delete stream;  // waits for its work
}

PX_Status* StreamSynchronize(PX_Device*, PX_Stream* s) { return StreamOf(s)->Synchronize(); }
PX_Status* StreamGetStatus(PX_Device*, PX_Stream* s) { return StreamOf(s)->ErrorStatus(); }

PX_Status* StreamAddCallback(PX_Device*, PX_Stream* s, PX_HostCallbackFn fn, void* arg) {
  StreamOf(s)->Enqueue([fn, arg](Stream& stream) -> PX_Status* {
    PX_Status* status = stream.ErrorStatus();
    fn(arg, status);
    if (status != nullptr) g_plugin->real->status_destroy(status);
    return nullptr;
  }, Stream::Kind::kControl);
  return nullptr;
}

// ---------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------

// Each record is a generation; a wait is for the generation recorded last
// when it was asked for, not for any later one (an event recorded again on
// a faster stream must not release it), as CUDA's events behave.
struct EventState {
  struct Outcome {
    PX_Code code = PX_CODE_OK;
    std::string message;
  };
  std::mutex mu;
  std::condition_variable cv;
  uint64_t recorded = 0;
  std::map<uint64_t, Outcome> done;  // the last kKeep generations finished
  static constexpr uint64_t kKeep = 1024;
  // With mu held.
  bool Finished(uint64_t generation) const {
    return generation == 0 || generation + kKeep <= recorded || done.count(generation) > 0;
  }
  Outcome OutcomeOf(uint64_t generation) const {
    auto it = done.find(generation);
    return it == done.end() ? Outcome{} : it->second;
  }
};
// Work queued on a stream may outlive the event it records.
struct Event {
  std::shared_ptr<EventState> state = std::make_shared<EventState>();
};

PX_Status* EventCreate(PX_Device*, PX_Event** out) {
  auto* e = new (std::nothrow) Event();
  if (e == nullptr) return Error(PX_CODE_RESOURCE_EXHAUSTED, "out of host memory");
  *out = reinterpret_cast<PX_Event*>(e);
  return nullptr;
}

void EventDestroy(PX_Device*, PX_Event* e) { delete reinterpret_cast<Event*>(e); }

PX_Status* EventRecord(PX_Device*, PX_Stream* s, PX_Event* e) {
  std::shared_ptr<EventState> state = reinterpret_cast<Event*>(e)->state;
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(state->mu);
    generation = ++state->recorded;
  }
  StreamOf(s)->Enqueue([state, generation](Stream& stream) -> PX_Status* {
    PX_Status* error = stream.ErrorStatus();
    {
      std::lock_guard<std::mutex> lock(state->mu);
      EventState::Outcome& outcome = state->done[generation];
      outcome.code = error ? g_plugin->real->status_code(error) : PX_CODE_OK;
      outcome.message = error ? g_plugin->real->status_message(error) : "";
      while (!state->done.empty() && state->done.begin()->first + EventState::kKeep <= state->recorded) {
        state->done.erase(state->done.begin());
      }
    }
    if (error != nullptr) g_plugin->real->status_destroy(error);
    state->cv.notify_all();
    return nullptr;
  }, Stream::Kind::kControl);
  return nullptr;
}

PX_Status* EventSynchronize(PX_Device* d, PX_Event* e) {
  EventState& state = *reinterpret_cast<Event*>(e)->state;
  std::unique_lock<std::mutex> lock(state.mu);
  const uint64_t target = state.recorded;
  if (!state.cv.wait_for(lock, g_plugin->deadline, [&] { return state.Finished(target); })) {
    return Error(PX_CODE_DEADLINE_EXCEEDED, "%s: an event did not complete within %lld s",
                 DeviceOf(d)->name.c_str(), static_cast<long long>(g_plugin->deadline.count()));
  }
  const EventState::Outcome outcome = state.OutcomeOf(target);
  if (outcome.code == PX_CODE_OK) return nullptr;
  return g_plugin->real->status_create(outcome.code, outcome.message.c_str());
}

PX_Status* StreamWaitEvent(PX_Device* d, PX_Stream* s, PX_Event* e) {
  std::shared_ptr<EventState> state = reinterpret_cast<Event*>(e)->state;
  uint64_t target;
  {
    std::lock_guard<std::mutex> lock(state->mu);
    target = state->recorded;
  }
  const std::string device = DeviceOf(d)->name;
  StreamOf(s)->Enqueue([state, target, device](Stream&) -> PX_Status* {
    std::unique_lock<std::mutex> lock(state->mu);
    if (!state->cv.wait_for(lock, g_plugin->deadline, [&] { return state->Finished(target); })) {
      return Error(PX_CODE_DEADLINE_EXCEEDED, "%s: a stream waited more than %lld s for an event",
                   device.c_str(), static_cast<long long>(g_plugin->deadline.count()));
    }
    return nullptr;
  }, Stream::Kind::kControl);
  return nullptr;
}

// ---------------------------------------------------------------------------
// Kernels: the reference kernels, queued
// ---------------------------------------------------------------------------

struct WrappedDef {
  PX_KernelCreateFn create = nullptr;
  PX_KernelComputeFn compute = nullptr;
  PX_KernelDestroyFn destroy = nullptr;
  void* user_data = nullptr;
  std::vector<bool> host_input;  // by input index
  bool host_outputs = false;
};

struct Instance {
  const WrappedDef* def;
  void* inner;
  std::atomic<int> refs{1};
};

void Release(Instance* k) {
  if (k->refs.fetch_sub(1) != 1) return;
  if (k->def->create != nullptr && k->def->destroy != nullptr) k->def->destroy(k->inner);
  delete k;
}

// What the reference kernels get as their PX_KernelContext: the host's
// context while compute runs (null once it has returned) and the node name.
struct LaunchContext {
  PX_KernelContext* host;
  const std::string* node;
};

PX_Status* OutputAllocate(PX_KernelContext* ctx, size_t index, int32_t ndim, const int64_t* shape) {
  auto* launch = reinterpret_cast<LaunchContext*>(ctx);
  if (launch->host == nullptr) {
    return Error(PX_CODE_INTERNAL, "node '%s': output %zu allocated after compute returned",
                 launch->node->c_str(), index);
  }
  return g_plugin->real->output_allocate(launch->host, index, ndim, shape);
}

const char* KernelNodeName(PX_KernelContext* ctx) {
  return reinterpret_cast<LaunchContext*>(ctx)->node->c_str();
}

PX_Status* CreateWrapped(void* user_data, const PX_NodeView* node, void** out) {
  const auto* def = static_cast<const WrappedDef*>(user_data);
  void* inner = def->user_data;  // a stateless kernel's compute gets its user_data
  if (def->create != nullptr) {
    if (PX_Status* s = def->create(def->user_data, node, &inner)) return s;
  }
  auto* k = new (std::nothrow) Instance{def, inner};
  if (k == nullptr) {
    if (def->create != nullptr && def->destroy != nullptr) def->destroy(inner);
    return Error(PX_CODE_RESOURCE_EXHAUSTED, "out of host memory");
  }
  *out = k;
  return nullptr;
}

void DestroyWrapped(void* kernel) { Release(static_cast<Instance*>(kernel)); }

// One queued launch: descriptors and host-memory inputs copied, since the
// host's are borrowed for the call only.
struct Launch {
  Instance* kernel = nullptr;
  std::string node;
  std::vector<DLTensor> inputs, outputs;
  std::deque<std::vector<int64_t>> dims;  // shapes and strides the descriptors point at
  std::deque<std::vector<char>> host_data;
  ~Launch() {
    if (kernel != nullptr) Release(kernel);
  }
  DLTensor Copy(const DLTensor& t, bool copy_data) {
    DLTensor c = t;
    dims.emplace_back(t.shape, t.shape + std::max(t.ndim, 0));
    c.shape = dims.back().data();
    if (t.strides != nullptr) {
      dims.emplace_back(t.strides, t.strides + std::max(t.ndim, 0));
      c.strides = dims.back().data();
    }
    if (copy_data) {
      const char* p = static_cast<const char*>(px_sdk_data(&t));
      const size_t bytes = p == nullptr ? 0 : px_sdk_nbytes(&t);
      host_data.emplace_back(p, p + bytes);
      c.data = host_data.back().data();
      c.byte_offset = 0;
    }
    return c;
  }
};

PX_Status* CheckArgument(Device* device, const std::string& node, const char* what, size_t i,
                         const DLTensor& t) {
  if (device == nullptr || t.data == nullptr) return nullptr;
  const size_t bytes = px_sdk_nbytes(&t);
  if (bytes == 0 || IsDeviceMemory(device, px_sdk_data(&t), bytes)) return nullptr;
  return Error(PX_CODE_INVALID_ARGUMENT, "node '%s': %s %zu (%zu bytes) is not %s memory",
               node.c_str(), what, i, bytes, device->name.c_str());
}

PX_Status* ComputeWrapped(void* kernel, PX_KernelContext* ctx, const DLTensor* inputs,
                          size_t num_inputs, DLTensor* outputs, size_t num_outputs,
                          PX_Stream* s) {
  auto* k = static_cast<Instance*>(kernel);
  Stream* stream = StreamOf(s);
  const WrappedDef& def = *k->def;
  std::string node = g_plugin->real->kernel_node_name(ctx);
  Device* device = DeviceOfStream(stream);
  bool later = !def.host_outputs && !g_plugin->synchronous_debug;
  for (size_t i = 0; i < num_inputs; ++i) {
    const bool host = i < def.host_input.size() && def.host_input[i];
    if (inputs[i].dtype.code == PX_DL_STRING) later = false;
    if (!host) {
      if (PX_Status* e = CheckArgument(device, node, "input", i, inputs[i])) return e;
    }
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    if (outputs[i].ndim < 0) {
      later = false;
    } else if (!def.host_outputs) {
      if (PX_Status* e = CheckArgument(device, node, "output", i, outputs[i])) return e;
    }
  }
  if (!later) {
    // Sizes its outputs or fills host memory: waits for the stream, runs now.
    if (PX_Status* e = stream->Synchronize()) return e;
    LaunchContext launch{ctx, &node};
    return def.compute(k->inner, reinterpret_cast<PX_KernelContext*>(&launch), inputs, num_inputs,
                       outputs, num_outputs, s);
  }
  auto launch = std::make_shared<Launch>();
  launch->node = std::move(node);
  for (size_t i = 0; i < num_inputs; ++i) {
    const bool host = i < def.host_input.size() && def.host_input[i];
    launch->inputs.push_back(launch->Copy(inputs[i], host));
  }
  for (size_t i = 0; i < num_outputs; ++i) launch->outputs.push_back(launch->Copy(outputs[i], false));
  k->refs.fetch_add(1);
  launch->kernel = k;
  stream->Enqueue([launch, s](Stream&) -> PX_Status* {
    LaunchContext context{nullptr, &launch->node};
    Instance* kernel = launch->kernel;
    PX_Status* status = kernel->def->compute(
        kernel->inner, reinterpret_cast<PX_KernelContext*>(&context), launch->inputs.data(),
        launch->inputs.size(), launch->outputs.data(), launch->outputs.size(), s);
    if (status == nullptr) return nullptr;
    PX_Status* named = Error(g_plugin->real->status_code(status), "node '%s': %s",
                             launch->node.c_str(), g_plugin->real->status_message(status));
    g_plugin->real->status_destroy(status);
    return named;
  });
  return nullptr;
}

PX_Status* RegisterWrapped(PX_KernelRegistrar* registrar, const PX_KernelDef* def) {
  auto wrapped = std::make_unique<WrappedDef>();
  wrapped->create = def->create;
  wrapped->compute = def->compute;
  wrapped->destroy = def->destroy;
  wrapped->user_data = def->user_data;
  for (size_t i = 0; i < def->num_host_memory_inputs; ++i) {
    const int32_t index = def->host_memory_inputs[i];
    if (index < 0) continue;
    if (wrapped->host_input.size() <= static_cast<size_t>(index)) wrapped->host_input.resize(index + 1);
    wrapped->host_input[index] = true;
  }
  wrapped->host_outputs = def->num_host_memory_outputs > 0;
  PX_KernelDef copy = *def;
  copy.create = CreateWrapped;
  copy.compute = ComputeWrapped;
  copy.destroy = DestroyWrapped;
  copy.user_data = wrapped.get();
  {
    std::lock_guard<std::mutex> lock(g_plugin->defs_mu);
    g_plugin->defs.push_back(std::move(wrapped));
  }
  return g_plugin->real->kernel_register(registrar, &copy);
}

PX_Status* RegisterKernels(void*, PX_KernelRegistrar* registrar) {
  return reference::RegisterAllKernels(&g_plugin->info, registrar);
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
  const size_t size = std::min(info->struct_size, sizeof(full));
  const size_t skip = sizeof(full.struct_size);
  if (size > skip) std::memcpy(reinterpret_cast<char*>(info) + skip, reinterpret_cast<char*>(&full) + skip, size - skip);
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
  std::memcpy(t, &full, full.struct_size);
  return nullptr;
}

}  // extern "C"

// Every device of a plugin, not only the one under --device: each must
// open, and each must keep the stream contract: events that complete only
// after the work recorded before them, waits that order two streams,
// asynchronous copies of every size and alignment that move exactly the
// bytes asked for, host callbacks that run once, after earlier work, and
// native stream handles that another library's stream can wait with.
//
// These checks are written so that a plugin whose work really runs later
// (a GPU, or tests/async_plugin) is caught when it lies: each one reads
// host memory that only the queued work writes, right after the call that
// claims the work is done, without synchronizing the stream first.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "checks.h"

namespace plexus::conformance {
namespace {

bool HasSlot(const PX_PluginTable& t, size_t offset) { return t.struct_size >= offset + sizeof(void*); }
#define PX_ASYNC_HAS(table, field) \
  (HasSlot(table, offsetof(PX_PluginTable, field)) && (table).field != nullptr)

bool HasAsyncCopies(const PX_PluginTable& t) {
  return PX_ASYNC_HAS(t, memcpy_h2d_async) && PX_ASYNC_HAS(t, memcpy_d2h_async) &&
         PX_ASYNC_HAS(t, memcpy_d2d_async);
}

std::vector<unsigned char> Bytes(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  uint32_t x = 2246822519u * (seed + 7);
  for (size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    v[i] = static_cast<unsigned char>(x >> 23);
  }
  return v;
}

// Device memory, a stream and an event, released at scope exit. A stream
// is synchronized before it is destroyed, so declare it after the buffers
// its work touches: it is then destroyed first, and no queued copy outlives
// them on an early return.
struct Buffer {
  HarnessDevice& device;
  void* ptr = nullptr;
  absl::Status status;
  // 0 bytes: nothing is allocated (the checks of a plugin without
  // asynchronous copies need no memory).
  Buffer(HarnessDevice& d, size_t bytes) : device(d) {
    if (bytes == 0) return;
    status = d.Check(d.table().allocate(d.handle(), bytes, 0, &ptr));
    if (status.ok() && bytes > 0 && ptr == nullptr) status = absl::InternalError("allocate returned NULL");
  }
  ~Buffer() {
    if (status.ok() && ptr != nullptr) device.table().deallocate(device.handle(), ptr);
  }
  char* at(size_t offset) const { return static_cast<char*>(ptr) + offset; }
};
struct Stream {
  HarnessDevice& device;
  PX_Stream* stream = nullptr;
  absl::Status status;
  explicit Stream(HarnessDevice& d) : device(d) {
    status = d.Check(d.table().stream_create(d.handle(), &stream));
  }
  ~Stream() {
    if (!status.ok()) return;
    device.Check(device.table().stream_synchronize(device.handle(), stream)).IgnoreError();
    device.table().stream_destroy(device.handle(), stream);
  }
};
struct Event {
  HarnessDevice& device;
  PX_Event* event = nullptr;
  absl::Status status;
  explicit Event(HarnessDevice& d) : device(d) {
    status = d.Check(d.table().event_create(d.handle(), &event));
  }
  ~Event() {
    if (status.ok()) device.table().event_destroy(device.handle(), event);
  }
};

// "call: STATUS: message".
std::string Failed(const char* call, const absl::Status& s) { return absl::StrCat(call, ": ", DescribeStatus(s)); }

// One round of a cross-stream order check: n bytes written on stream A,
// stream B ordered after A by `order` (named `how`), the bytes read back on
// B, and an event f recorded on B after the read synchronized: B must have
// read A's write. Returns "" or what went wrong; a wrong result that is still
// wrong once A has finished is a copy that changed the data, not an ordering
// fault. `back` (n bytes) is the host buffer B reads into: the caller's,
// declared before the streams, so a copy still queued on an early return
// never writes freed memory.
std::string WriteOnAReadOnB(HarnessDevice& device, Stream& a, Stream& b, Event& f, const Buffer& x,
                            std::vector<unsigned char>& back, unsigned seed, const char* how, int round,
                            const std::function<absl::Status()>& order) {
  const PX_PluginTable& t = device.table();
  PX_Device* d = device.handle();
  const size_t n = back.size();
  const std::vector<unsigned char> src = Bytes(n, seed);
  std::fill(back.begin(), back.end(), 0);
  absl::Status s = device.Check(t.memcpy_h2d_async(d, a.stream, x.ptr, src.data(), n));
  if (!s.ok()) return Failed("memcpy_h2d_async on stream A", s);
  s = order();
  if (!s.ok()) return Failed(how, s);
  s = device.Check(t.memcpy_d2h_async(d, b.stream, back.data(), x.ptr, n));
  if (s.ok()) s = device.Check(t.event_record(d, b.stream, f.event));
  if (s.ok()) s = device.Check(t.event_synchronize(d, f.event));
  if (!s.ok()) return Failed("memcpy_d2h_async, event_record, event_synchronize on stream B", s);
  const bool ordered = back == src;
  s = device.Check(t.stream_synchronize(d, a.stream));
  if (s.ok()) s = device.Check(t.stream_synchronize(d, b.stream));
  if (!ordered) {
    // Was it the order, or the data? Read again, now that A has finished.
    std::fill(back.begin(), back.end(), 0);
    absl::Status again = device.Check(t.memcpy_d2h(d, back.data(), x.ptr, n));
    if (!again.ok()) return Failed("memcpy_d2h", again);
    if (back != src) return "h2d and d2h asynchronous copies of 8 MiB changed the data";
    return absl::StrCat("stream B read stream A's buffer before A's write finished, although B was ordered after "
                        "the write (", how, " did not order them; round ", round + 1, ")");
  }
  if (!s.ok()) return Failed("stream_synchronize", s);
  return "";
}

// Events on one device. Returns "" or what went wrong.
std::string CheckEvents(HarnessDevice& device) {
  const PX_PluginTable& t = device.table();
  PX_Device* d = device.handle();
  const bool async = HasAsyncCopies(t);
  const size_t n = async ? 8 << 20 : 0;
  std::vector<unsigned char> back(n);
  Buffer x(device, n), y(device, n);
  if (!x.status.ok()) return Failed("allocate", x.status);
  if (!y.status.ok()) return Failed("allocate", y.status);
  Event e(device), f(device);
  Stream a(device), b(device);
  if (!a.status.ok()) return Failed("stream_create", a.status);
  if (!b.status.ok()) return Failed("stream_create", b.status);
  if (!e.status.ok()) return Failed("event_create", e.status);
  if (!f.status.ok()) return Failed("event_create", f.status);
  // An event on a stream with no work completes at once, and synchronizes
  // OK as often as asked.
  absl::Status s = device.Check(t.event_record(d, a.stream, e.event));
  if (!s.ok()) return Failed("event_record on an idle stream", s);
  for (int i = 0; i < 2; ++i) {
    s = device.Check(t.event_synchronize(d, e.event));
    if (!s.ok()) return Failed("event_synchronize of an event on an idle stream", s);
  }
  // A wait on that completed event does not block stream B.
  s = device.Check(t.stream_wait_event(d, b.stream, e.event));
  if (s.ok()) s = device.Check(t.stream_synchronize(d, b.stream));
  if (!s.ok()) return Failed("stream_wait_event on a completed event, then stream_synchronize", s);
  if (!async) return "";
  for (int round = 0; round < 3; ++round) {
    // event_synchronize waits for the work recorded before the event: the
    // bytes the queued d2h copy writes are there when it returns. The same
    // event is recorded again each round, so it must also follow the
    // latest record.
    const std::vector<unsigned char> src = Bytes(n, 100 + round);
    std::fill(back.begin(), back.end(), 0);
    s = device.Check(t.memcpy_h2d_async(d, a.stream, x.ptr, src.data(), n));
    if (s.ok()) s = device.Check(t.memcpy_d2d_async(d, a.stream, y.ptr, x.ptr, n));
    if (s.ok()) s = device.Check(t.memcpy_d2h_async(d, a.stream, back.data(), y.ptr, n));
    if (!s.ok()) return Failed("memcpy_*_async", s);
    s = device.Check(t.event_record(d, a.stream, e.event));
    if (!s.ok()) return Failed("event_record", s);
    s = device.Check(t.event_synchronize(d, e.event));
    if (!s.ok()) return Failed("event_synchronize", s);
    const bool complete = back == src;
    s = device.Check(t.stream_synchronize(d, a.stream));
    if (!complete && back != src) return "h2d, d2d and d2h asynchronous copies of 8 MiB changed the data";
    if (!complete) {
      return absl::StrCat("event_synchronize returned before the copies recorded before the event had finished "
                          "(round ", round + 1, ": the host buffer the queued d2h copy writes was not yet written)");
    }
    if (!s.ok()) return Failed("stream_synchronize", s);
  }
  for (int round = 0; round < 3; ++round) {
    // Stream B waits on an event recorded on stream A after A's write, then
    // reads: it must see the write.
    const std::string failed =
        WriteOnAReadOnB(device, a, b, f, x, back, 200 + round, "event_record on A, stream_wait_event on B", round,
                        [&] {
                          absl::Status st = device.Check(t.event_record(d, a.stream, e.event));
                          if (st.ok()) st = device.Check(t.stream_wait_event(d, b.stream, e.event));
                          return st;
                        });
    if (!failed.empty()) return failed;
  }
  return "";
}

// Asynchronous h2d, d2d and d2h copies of many sizes at unaligned offsets
// on one device: each moves exactly its bytes, and nothing around them.
std::string CheckAsyncCopies(HarnessDevice& device) {
  const PX_PluginTable& t = device.table();
  PX_Device* d = device.handle();
  const size_t sizes[] = {0, 1, 3, 7, 64, 100, 4095, 65537, (1 << 20) + 3};
  const size_t offsets[] = {0, 1, 3};
  const size_t room = (1 << 20) + 64;
  const std::vector<unsigned char> fill = Bytes(room, 1);
  std::vector<unsigned char> src, host;
  Buffer a(device, room), b(device, room);
  if (!a.status.ok()) return Failed("allocate", a.status);
  if (!b.status.ok()) return Failed("allocate", b.status);
  Stream stream(device);
  if (!stream.status.ok()) return Failed("stream_create", stream.status);
  for (size_t n : sizes) {
    for (size_t off : offsets) {
      src = Bytes(n + off, static_cast<unsigned>(n + off));
      host.assign(n + 2 * off + 16, 0xEE);
      absl::Status s = device.Check(t.memcpy_h2d(d, b.ptr, fill.data(), room));
      if (!s.ok()) return Failed("memcpy_h2d", s);
      // Offsets differ on each side: device a at off, device b at 2 * off
      // + 1, host at off.
      const size_t boff = 2 * off + 1;
      s = device.Check(t.memcpy_h2d_async(d, stream.stream, a.at(off), src.data() + off, n));
      if (s.ok()) s = device.Check(t.memcpy_d2d_async(d, stream.stream, b.at(boff), a.at(off), n));
      if (s.ok()) s = device.Check(t.memcpy_d2h_async(d, stream.stream, host.data() + off, b.at(boff), n));
      if (s.ok()) s = device.Check(t.stream_synchronize(d, stream.stream));
      const std::string what = absl::StrCat(n, " bytes at offset ", off);
      if (!s.ok()) return absl::StrCat("asynchronous copies of ", what, ": ", DescribeStatus(s));
      if (n != 0 && std::memcmp(host.data() + off, src.data() + off, n) != 0) {
        return absl::StrCat("h2d, d2d and d2h asynchronous copies of ", what, " changed the data");
      }
      for (size_t i = 0; i < host.size(); ++i) {
        if ((i < off || i >= off + n) && host[i] != 0xEE) {
          return absl::StrCat("memcpy_d2h_async of ", what, " wrote host byte ", i, ", outside its target");
        }
      }
      std::vector<unsigned char> whole(room);
      s = device.Check(t.memcpy_d2h(d, whole.data(), b.ptr, room));
      if (!s.ok()) return Failed("memcpy_d2h", s);
      for (size_t i = 0; i < room; ++i) {
        if ((i < boff || i >= boff + n) && whole[i] != fill[i]) {
          return absl::StrCat("memcpy_d2d_async of ", what, " wrote device byte ", i, ", outside its target");
        }
      }
    }
  }
  return "";
}

// What a host callback saw; shared with the callback, and leaked when the
// callback has not run by the time the check gives up (it may still run).
struct CallbackState {
  std::atomic<int> calls{0};
  std::atomic<bool> saw_data{false};
  std::atomic<bool> saw_error{false};
  const unsigned char* host = nullptr;
  const unsigned char* want = nullptr;
  size_t n = 0;
};

void OnCallback(void* arg, const PX_Status* status) {
  auto* state = static_cast<CallbackState*>(arg);
  if (state->calls.fetch_add(1) == 0) {
    state->saw_data = state->n == 0 || std::memcmp(state->host, state->want, state->n) == 0;
  }
  if (status != nullptr) state->saw_error = true;
}

// A host callback queued after copies runs once they have finished, and
// exactly once.
std::string CheckCallback(HarnessDevice& device) {
  const PX_PluginTable& t = device.table();
  PX_Device* d = device.handle();
  const bool async = HasAsyncCopies(t);
  const size_t n = async ? 8 << 20 : 0;
  auto src = std::make_shared<std::vector<unsigned char>>(Bytes(n, 77));
  auto back = std::make_shared<std::vector<unsigned char>>(n, 0);
  Buffer x(device, n);
  if (!x.status.ok()) return Failed("allocate", x.status);
  Stream stream(device);
  if (!stream.status.ok()) return Failed("stream_create", stream.status);
  auto* state = new CallbackState();
  state->host = back->data();
  state->want = src->data();
  state->n = n;
  absl::Status s;
  if (async) {
    s = device.Check(t.memcpy_h2d_async(d, stream.stream, x.ptr, src->data(), n));
    if (s.ok()) s = device.Check(t.memcpy_d2h_async(d, stream.stream, back->data(), x.ptr, n));
    if (!s.ok()) {
      delete state;
      return Failed("memcpy_*_async", s);
    }
  }
  s = device.Check(t.stream_add_callback(d, stream.stream, OnCallback, state));
  if (!s.ok()) {
    delete state;
    return Failed("stream_add_callback", s);
  }
  s = device.Check(t.stream_synchronize(d, stream.stream));
  // The callback may run on the plugin's thread a little after the stream
  // drains: wait for it (up to 10 s), then a while longer for a second call.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (state->calls.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (state->calls.load() == 0) {
    // Leak state, src and back: a late call would otherwise touch freed memory.
    new std::shared_ptr<std::vector<unsigned char>>(src);
    new std::shared_ptr<std::vector<unsigned char>>(back);
    return "the host callback did not run within 10 s of stream_synchronize";
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::unique_ptr<CallbackState> owned(state);
  if (!s.ok()) return Failed("stream_synchronize", s);
  if (state->calls.load() != 1) return absl::StrCat("the host callback ran ", state->calls.load(), " times, not once");
  if (!state->saw_data && *back != *src) return "h2d and d2h asynchronous copies of 8 MiB changed the data";
  if (!state->saw_data) {
    return "the host callback ran before the copies queued before it had finished (the host buffer the "
           "d2h copy writes was not yet written)";
  }
  if (state->saw_error) return "the host callback was passed an error on a healthy stream";
  return "";
}

// The devices to check: `device` itself and every other ordinal, opened
// here. A device that does not open is left out (memory.every_device_open
// reports it).
struct Devices {
  std::vector<std::unique_ptr<HarnessDevice>> owned;
  std::vector<HarnessDevice*> open;
  std::vector<int> not_open;
};

Devices OpenAll(HarnessDevice& device) {
  Devices out;
  HarnessPlugin& plugin = device.plugin();
  const PX_PluginTable& t = plugin.table();
  int32_t count = 0;
  if (!TakeStatus(plugin.services(), t.device_count(t.plugin_state, &count)).ok()) count = 0;
  for (int32_t i = 0; i < count; ++i) {
    if (i == device.ordinal()) {
      out.open.push_back(&device);
      continue;
    }
    auto other = HarnessDevice::Open(&plugin, i);
    if (!other.ok()) {
      out.not_open.push_back(i);
      continue;
    }
    out.owned.push_back(*std::move(other));
    out.open.push_back(out.owned.back().get());
  }
  if (out.open.empty()) out.open.push_back(&device);
  return out;
}

// Runs `body` on every open device; the first failure names its device.
void ForEachDevice(Report& report, const char* section, const std::string& name, const std::string& what,
                   const Devices& devices, const std::function<std::string(HarnessDevice&)>& body) {
  report.Begin(section, name);
  std::vector<int> checked;
  for (HarnessDevice* d : devices.open) {
    std::string failure = body(*d);
    if (!failure.empty()) {
      report.Fail(section, name, absl::StrCat("device ", d->ordinal(), ": ", failure));
      return;
    }
    checked.push_back(d->ordinal());
  }
  std::string detail = absl::StrCat(what, "; device(s) ", absl::StrJoin(checked, ", "));
  if (!devices.not_open.empty()) {
    absl::StrAppend(&detail, "; not checked, as they do not open: ", absl::StrJoin(devices.not_open, ", "));
  }
  report.Pass(section, name, detail);
}

bool HasInterop(const PX_PluginTable& t) {
  return t.abi_minor >= 8 && PX_ASYNC_HAS(t, stream_native_handle) && PX_ASYNC_HAS(t, native_stream_wait);
}

// Stream interop (ABI 0.8) on one device: a stream's native handle is none
// of DLPack's reserved values, differs from another stream's and stays the
// same; a native stream made to wait for a stream's work sees that work.
std::string CheckNativeInterop(HarnessDevice& device) {
  const PX_PluginTable& t = device.table();
  PX_Device* d = device.handle();
  const bool async = HasAsyncCopies(t);
  const size_t n = async ? 8 << 20 : 0;
  std::vector<unsigned char> back(n);
  Buffer x(device, n);
  if (!x.status.ok()) return Failed("allocate", x.status);
  Event f(device);
  Stream a(device), b(device);
  if (!a.status.ok()) return Failed("stream_create", a.status);
  if (!b.status.ok()) return Failed("stream_create", b.status);
  if (!f.status.ok()) return Failed("event_create", f.status);
  uint64_t ha = 0, hb = 0, again = 0;
  absl::Status s = device.Check(t.stream_native_handle(d, a.stream, &ha));
  if (s.ok()) s = device.Check(t.stream_native_handle(d, b.stream, &hb));
  if (s.ok()) s = device.Check(t.stream_native_handle(d, a.stream, &again));
  if (!s.ok()) return Failed("stream_native_handle", s);
  if (ha <= 2 || hb <= 2) {
    return absl::StrCat("stream_native_handle gave ", ha <= 2 ? ha : hb,
                        ", a value DLPack reserves for the platform's default streams (0, 1, 2)");
  }
  if (ha == hb) return absl::StrCat("two streams have the same native handle ", ha);
  if (again != ha) return absl::StrCat("a stream's native handle changed from ", ha, " to ", again);
  // Waiting for an idle stream does not block the native one.
  s = device.Check(t.native_stream_wait(d, hb, a.stream));
  if (s.ok()) s = device.Check(t.stream_synchronize(d, b.stream));
  if (!s.ok()) return Failed("native_stream_wait for an idle stream, then stream_synchronize", s);
  if (!async) return "";
  for (int round = 0; round < 3; ++round) {
    // Stream B, named by its native handle, waits for stream A's write, then
    // reads: it must see the write.
    const std::string failed =
        WriteOnAReadOnB(device, a, b, f, x, back, 300 + round, "native_stream_wait (stream B's handle after stream A)",
                        round, [&] { return device.Check(t.native_stream_wait(d, hb, a.stream)); });
    if (!failed.empty()) return failed;
  }
  return "";
}

}  // namespace

void CheckEveryDeviceOpens(const CheckOptions& options, HarnessDevice& device, Report& report) {
  const char* kSection = "memory";
  report.Begin(kSection, "every_device_open");
  HarnessPlugin& plugin = device.plugin();
  const PX_PluginTable& t = plugin.table();
  int32_t count = 0;
  absl::Status s = TakeStatus(plugin.services(), t.device_count(t.plugin_state, &count));
  if (!s.ok()) {
    report.Fail(kSection, "every_device_open", Failed("device_count", s));
    return;
  }
  std::vector<std::string> problems;
  for (int32_t i = 0; i < count; ++i) {
    if (i == device.ordinal()) continue;  // open already (memory.device_open)
    auto other = HarnessDevice::Open(&plugin, i);
    if (!other.ok()) {
      problems.push_back(absl::StrCat("device ", i, " does not open: device_open(", i, "): ",
                                      DescribeStatus(other.status())));
      continue;
    }
    // A 4 KiB round trip: the device works, not only opens.
    const std::vector<unsigned char> src = Bytes(4096, static_cast<unsigned>(i));
    std::vector<unsigned char> back(4096, 0);
    Buffer b(**other, 4096);
    s = b.status;
    if (s.ok()) s = (*other)->Check(t.memcpy_h2d((*other)->handle(), b.ptr, src.data(), 4096));
    if (s.ok()) s = (*other)->Check(t.memcpy_d2h((*other)->handle(), back.data(), b.ptr, 4096));
    if (!s.ok()) {
      problems.push_back(absl::StrCat("device ", i, ": allocate and copy 4 KiB: ", DescribeStatus(s)));
    } else if (back != src) {
      problems.push_back(absl::StrCat("device ", i, ": a 4 KiB round trip changed the data"));
    }
  }
  if (problems.empty()) {
    report.Pass(kSection, "every_device_open",
                absl::StrCat("all ", count, " device(s) open, allocate and copy (device ", device.ordinal(),
                             " is the one under check)"));
  } else {
    report.Fail(kSection, "every_device_open", absl::StrJoin(problems, "; "));
  }
}

void CheckStreamsEveryDevice(const CheckOptions& options, HarnessDevice& device, Report& report) {
  const char* kSection = "streams";
  const PX_PluginTable& t = device.table();
  Devices devices = OpenAll(device);
  ForEachDevice(report, kSection, "events_every_device",
                HasAsyncCopies(t)
                    ? "events on idle streams complete; event_synchronize waits for the 8 MiB of copies recorded "
                      "before it, also when the event is recorded again; a wait on stream A's event orders "
                      "stream B's read after A's write"
                    : "events on idle streams complete and a wait on them does not block (no asynchronous "
                      "copies to order: optional slots)",
                devices, CheckEvents);
  if (HasAsyncCopies(t)) {
    ForEachDevice(report, kSection, "async_copies_every_device",
                  "h2d, d2d and d2h queued on a stream, 0 B to 1 MiB + 3 at offsets 0, 1 and 3 (host) and 1, 3 "
                  "and 7 (device): exactly the bytes asked for, nothing around them",
                  devices, CheckAsyncCopies);
  } else {
    report.Skip(kSection, "async_copies_every_device", "memcpy_*_async not implemented (optional slots)");
  }
  if (HasInterop(t)) {
    ForEachDevice(report, kSection, "native_interop_every_device",
                  HasAsyncCopies(t)
                      ? "native stream handles are not 0, 1 or 2, differ between streams and stay the same; a "
                        "stream named by its native handle and made to wait for stream A's 8 MiB write reads it"
                      : "native stream handles are not 0, 1 or 2, differ between streams and stay the same; a "
                        "wait for an idle stream does not block",
                  devices, CheckNativeInterop);
  } else {
    report.Skip(kSection, "native_interop_every_device",
                "stream_native_handle and native_stream_wait not implemented (optional slots, ABI 0.8)");
  }
  if (PX_ASYNC_HAS(t, stream_add_callback)) {
    ForEachDevice(report, kSection, "callback_every_device",
                  HasAsyncCopies(t) ? "a host callback queued after 8 MiB of copies runs after them, exactly once"
                                    : "a host callback runs exactly once",
                  devices, CheckCallback);
  } else {
    report.Skip(kSection, "callback_every_device", "stream_add_callback not implemented (optional slot)");
  }
}

}  // namespace plexus::conformance

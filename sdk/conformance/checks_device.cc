// The memory and streams sections, and device enumeration.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "checks.h"

namespace plexus::conformance {
namespace {

// A pattern that differs per byte and per seed, so a copy of the wrong
// range or an uncopied buffer shows.
std::vector<unsigned char> Pattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  uint32_t x = 2654435761u * (seed + 1);
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    v[i] = static_cast<unsigned char>(x >> 24);
  }
  return v;
}

// Device memory freed at scope exit.
class DeviceBuffer {
 public:
  DeviceBuffer(HarnessDevice& device, size_t bytes, size_t alignment = 0) : device_(device) {
    status_ = device.Check(device.table().allocate(device.handle(), bytes, alignment, &ptr_));
  }
  ~DeviceBuffer() {
    if (status_.ok()) device_.table().deallocate(device_.handle(), ptr_);
  }
  const absl::Status& status() const { return status_; }
  void* get() const { return ptr_; }
  char* bytes() const { return static_cast<char*>(ptr_); }

 private:
  HarnessDevice& device_;
  void* ptr_ = nullptr;
  absl::Status status_;
};

// Streams and events destroyed at scope exit.
class StreamHandle {
 public:
  explicit StreamHandle(HarnessDevice& device) : device_(device) {
    status_ = device.Check(device.table().stream_create(device.handle(), &stream_));
  }
  ~StreamHandle() {
    if (status_.ok()) device_.table().stream_destroy(device_.handle(), stream_);
  }
  const absl::Status& status() const { return status_; }
  PX_Stream* get() const { return stream_; }

 private:
  HarnessDevice& device_;
  PX_Stream* stream_ = nullptr;
  absl::Status status_;
};

class EventHandle {
 public:
  explicit EventHandle(HarnessDevice& device) : device_(device) {
    status_ = device.Check(device.table().event_create(device.handle(), &event_));
  }
  ~EventHandle() {
    if (status_.ok()) device_.table().event_destroy(device_.handle(), event_);
  }
  const absl::Status& status() const { return status_; }
  PX_Event* get() const { return event_; }

 private:
  HarnessDevice& device_;
  PX_Event* event_ = nullptr;
  absl::Status status_;
};

bool HasSlot(const PX_PluginTable& t, size_t offset) {
  return t.struct_size >= offset + sizeof(void*);
}
#define PX_HAS(table, field) (HasSlot(table, offsetof(PX_PluginTable, field)) && (table).field != nullptr)

// Runs a check body that returns "" on success or a failure message.
void Run(Report& report, const char* section, const std::string& name, const std::string& pass_detail,
         const std::function<std::string()>& body) {
  report.Begin(section, name);
  std::string failure = body();
  if (failure.empty()) {
    report.Pass(section, name, pass_detail);
  } else if (failure.rfind("skip: ", 0) == 0) {
    report.Skip(section, name, failure.substr(6));
  } else {
    report.Fail(section, name, failure);
  }
}

// Runs `body` in a forked child, so that a plugin that crashes on the
// deliberately bad call the body makes cannot take the tool down. Returns the
// body's result, or sets *signal to the signal that ended the child.
std::string RunIsolated(const std::function<std::string()>& body, int* signal) {
  *signal = 0;
  int fds[2];
  if (pipe(fds) != 0) return body();
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return body();
  }
  if (pid == 0) {
    close(fds[0]);
    std::string result = body();
    ssize_t ignored = write(fds[1], result.data(), result.size());
    (void)ignored;
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[512];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) *signal = WTERMSIG(status);
  return out;
}

}  // namespace

void CheckDevices(const CheckOptions& options, HarnessPlugin& plugin, Report& report) {
  const char* kSection = "memory";
  report.Begin(kSection, "devices");
  const PX_PluginTable& t = plugin.table();
  int32_t count = -1;
  absl::Status s = TakeStatus(plugin.services(), t.device_count(t.plugin_state, &count));
  if (!s.ok()) {
    report.Fail(kSection, "device_count",
                absl::StrCat("failed: ", DescribeStatus(s),
                             " (report 0 devices when the hardware or driver is missing)"));
    return;
  }
  if (count < 0) {
    report.Fail(kSection, "device_count", absl::StrCat("reported ", count, " devices"));
    return;
  }
  std::vector<std::string> names, problems;
  for (int32_t i = 0; i < count; ++i) {
    struct {
      PX_DeviceInfo info;
      unsigned char guard[32];
    } buf;
    std::memset(&buf, 0, sizeof(buf));
    std::memset(buf.guard, 0xA5, sizeof(buf.guard));
    buf.info.struct_size = sizeof(PX_DeviceInfo);
    s = TakeStatus(plugin.services(), t.device_get_info(t.plugin_state, i, &buf.info));
    if (!s.ok()) {
      problems.push_back(absl::StrCat("device_get_info(", i, "): ", DescribeStatus(s)));
      continue;
    }
    for (unsigned char c : buf.guard) {
      if (c != 0xA5) {
        problems.push_back(absl::StrCat("device_get_info(", i, ") wrote past PX_DeviceInfo"));
        break;
      }
    }
    if (std::memchr(buf.info.name, 0, sizeof(buf.info.name)) == nullptr ||
        std::memchr(buf.info.vendor, 0, sizeof(buf.info.vendor)) == nullptr) {
      problems.push_back(absl::StrCat("device ", i, ": name or vendor not NUL-terminated"));
      continue;
    }
    if (buf.info.name[0] == '\0') problems.push_back(absl::StrCat("device ", i, ": empty name"));
    if (buf.info.struct_size != sizeof(PX_DeviceInfo)) {
      problems.push_back(absl::StrCat("device_get_info(", i, ") changed struct_size"));
    }
    // [0.4] preferred_layout: one of the PX_LAYOUT_* constants.
    const int32_t layout = buf.info.preferred_layout;
    if (layout != PX_LAYOUT_ANY && layout != PX_LAYOUT_NHWC && layout != PX_LAYOUT_NCHW) {
      problems.push_back(absl::StrCat("device ", i, ": preferred_layout is ", layout,
                                      ", not PX_LAYOUT_ANY (0), PX_LAYOUT_NHWC (1) or PX_LAYOUT_NCHW (2)"));
    }
    // An older host (0.3 and before) whose struct ends before
    // preferred_layout: the plugin must not write that far.
    {
      struct {
        PX_DeviceInfo info;
        unsigned char guard[32];
      } old;
      std::memset(&old, 0xA5, sizeof(old));
      std::memset(&old.info, 0, offsetof(PX_DeviceInfo, preferred_layout));
      old.info.struct_size = offsetof(PX_DeviceInfo, preferred_layout);
      s = TakeStatus(plugin.services(), t.device_get_info(t.plugin_state, i, &old.info));
      if (!s.ok()) {
        problems.push_back(absl::StrCat("device_get_info(", i, ") with an older host's struct_size ",
                                        offsetof(PX_DeviceInfo, preferred_layout), ": ", DescribeStatus(s)));
      } else {
        const auto* bytes = reinterpret_cast<const unsigned char*>(&old);
        for (size_t k = offsetof(PX_DeviceInfo, preferred_layout); k < sizeof(old); ++k) {
          if (bytes[k] != 0xA5) {
            problems.push_back(absl::StrCat("device_get_info(", i, ") wrote past an older host's struct_size ",
                                            offsetof(PX_DeviceInfo, preferred_layout)));
            break;
          }
        }
        if (old.info.struct_size != offsetof(PX_DeviceInfo, preferred_layout)) {
          problems.push_back(absl::StrCat("device_get_info(", i, ") changed an older host's struct_size"));
        }
      }
    }
    static const char* kLayouts[] = {"any layout", "prefers NHWC", "prefers NCHW"};
    names.push_back(absl::StrCat(i, ": ", buf.info.name, " (", buf.info.vendor, ", ",
                                 buf.info.total_memory_bytes >> 20, " MiB",
                                 buf.info.host_accessible ? ", host-accessible" : "",
                                 layout >= 0 && layout <= 2 ? absl::StrCat(", ", kLayouts[layout]) : "", ")"));
  }
  // An ordinal past the end is an error, not a crash.
  PX_DeviceInfo info{};
  info.struct_size = sizeof(info);
  s = TakeStatus(plugin.services(), t.device_get_info(t.plugin_state, count, &info));
  if (s.ok()) problems.push_back(absl::StrCat("device_get_info(", count, ") succeeded past the last device"));
  PX_Device* handle = nullptr;
  s = TakeStatus(plugin.services(), t.device_open(t.plugin_state, count + 7, &handle));
  if (s.ok()) {
    problems.push_back(absl::StrCat("device_open(", count + 7, ") succeeded past the last device"));
    if (handle != nullptr) t.device_close(t.plugin_state, handle);
  }
  report.SetInfo("devices", count == 0 ? "none" : absl::StrJoin(names, "; "));
  if (problems.empty()) {
    report.Pass(kSection, "devices",
                absl::StrCat(count,
                             " device(s); info fits PX_DeviceInfo (and an older host's shorter one), "
                             "preferred_layout valid; ordinals past the end refused"));
  } else {
    report.Fail(kSection, "devices", absl::StrJoin(problems, "; "));
  }
}

void CheckMemory(const CheckOptions& options, HarnessDevice& device, Report& report) {
  const char* kSection = "memory";
  const PX_PluginTable& t = device.table();

  Run(report, kSection, "allocate_sizes",
      "0 B to 64 MiB at alignments 0 (= 64) to 4096: aligned, writable, readable, freed", [&]() -> std::string {
        const size_t sizes[] = {0, 1, 3, 64, 1000, 4096, 65537, 1 << 20, 64 << 20};
        const size_t aligns[] = {0, 8, 64, 256, 4096};
        for (size_t bytes : sizes) {
          for (size_t align : aligns) {
            DeviceBuffer b(device, bytes, align);
            if (!b.status().ok()) {
              return absl::StrCat("allocate(", bytes, ", alignment ", align, "): ", DescribeStatus(b.status()));
            }
            if (bytes > 0 && b.get() == nullptr) return absl::StrCat("allocate(", bytes, ") returned NULL");
            size_t need = align == 0 ? 64 : align;
            if (bytes > 0 && reinterpret_cast<uintptr_t>(b.get()) % need != 0) {
              return absl::StrCat("allocate(", bytes, ", alignment ", align, ") returned ", absl::Hex(reinterpret_cast<uintptr_t>(b.get())),
                                  ", not aligned to ", need);
            }
            if (bytes == 0 || align != 64) continue;
            // Whole-buffer round trip.
            std::vector<unsigned char> in = Pattern(bytes, static_cast<unsigned>(bytes)), out(bytes);
            absl::Status s = device.Check(t.memcpy_h2d(device.handle(), b.get(), in.data(), bytes));
            if (s.ok()) s = device.Check(t.memcpy_d2h(device.handle(), out.data(), b.get(), bytes));
            if (!s.ok()) return absl::StrCat("round trip of ", bytes, " bytes: ", DescribeStatus(s));
            if (in != out) return absl::StrCat("round trip of ", bytes, " bytes changed the data");
          }
        }
        t.deallocate(device.handle(), nullptr);  // a no-op by the ABI
        return "";
      });

  Run(report, kSection, "out_of_memory",
      "allocate(2^62 bytes) and allocate(SIZE_MAX - 63) return RESOURCE_EXHAUSTED; the device works after",
      [&]() -> std::string {
        for (size_t bytes : {size_t{1} << 62, SIZE_MAX - 63}) {
          void* p = nullptr;
          absl::Status s = device.Check(t.allocate(device.handle(), bytes, 64, &p));
          if (s.ok()) {
            t.deallocate(device.handle(), p);
            return absl::StrCat("allocate(", bytes, ") succeeded");
          }
          if (s.code() != absl::StatusCode::kResourceExhausted) {
            return absl::StrCat("allocate(", bytes, ") returned ", DescribeStatus(s), ", not RESOURCE_EXHAUSTED");
          }
        }
        DeviceBuffer after(device, 4096);
        if (!after.status().ok()) return absl::StrCat("allocation after an out-of-memory failed: ", DescribeStatus(after.status()));
        return "";
      });

  if (PX_HAS(t, memory_stats)) {
    Run(report, kSection, "memory_stats",
        "bytes_in_use and num_allocations follow allocate and deallocate; a shorter struct is respected",
        [&]() -> std::string {
          PX_MemoryStats before{}, during{}, after{};
          before.struct_size = during.struct_size = after.struct_size = sizeof(PX_MemoryStats);
          absl::Status s = device.Check(t.memory_stats(device.handle(), &before));
          if (!s.ok()) return absl::StrCat("memory_stats: ", DescribeStatus(s));
          {
            DeviceBuffer b(device, 1 << 20);
            if (!b.status().ok()) return DescribeStatus(b.status());
            s = device.Check(t.memory_stats(device.handle(), &during));
            if (!s.ok()) return absl::StrCat("memory_stats: ", DescribeStatus(s));
          }
          s = device.Check(t.memory_stats(device.handle(), &after));
          if (!s.ok()) return absl::StrCat("memory_stats: ", DescribeStatus(s));
          if (during.bytes_in_use < before.bytes_in_use + (1 << 20)) {
            return absl::StrCat("bytes_in_use went from ", before.bytes_in_use, " to ", during.bytes_in_use,
                                " for a 1 MiB allocation");
          }
          if (after.bytes_in_use != before.bytes_in_use) {
            return absl::StrCat("bytes_in_use is ", after.bytes_in_use, " after freeing, was ", before.bytes_in_use);
          }
          if (during.num_allocations <= before.num_allocations) return "num_allocations did not grow";
          if (during.peak_bytes_in_use < during.bytes_in_use) return "peak_bytes_in_use below bytes_in_use";
          // A host whose PX_MemoryStats ends before num_allocations: nothing
          // may be written past its struct_size.
          struct {
            PX_MemoryStats stats;
            unsigned char guard[16];
          } small;
          std::memset(&small, 0xA5, sizeof(small));
          small.stats.struct_size = offsetof(PX_MemoryStats, num_allocations);
          s = device.Check(t.memory_stats(device.handle(), &small.stats));
          if (!s.ok()) return absl::StrCat("memory_stats with a shorter struct: ", DescribeStatus(s));
          const auto* bytes = reinterpret_cast<const unsigned char*>(&small);
          for (size_t i = offsetof(PX_MemoryStats, num_allocations); i < sizeof(small); ++i) {
            if (bytes[i] != 0xA5) return "memory_stats wrote past the struct_size of a shorter PX_MemoryStats";
          }
          if (small.stats.struct_size != offsetof(PX_MemoryStats, num_allocations)) {
            return "memory_stats changed struct_size";
          }
          return "";
        });
  } else {
    report.Skip(kSection, "memory_stats", "memory_stats is not implemented (optional slot)");
  }

  Run(report, kSection, "copies_sync",
      "h2d, d2h and d2d at odd offsets and sizes, and zero-byte copies", [&]() -> std::string {
        const size_t n = 10000;
        DeviceBuffer a(device, n), b(device, n);
        if (!a.status().ok() || !b.status().ok()) return "allocate failed";
        std::vector<unsigned char> src = Pattern(n, 7), back(n, 0);
        for (size_t off : {size_t{0}, size_t{1}, size_t{3}, size_t{61}}) {
          size_t len = n - off - 5;
          absl::Status s = device.Check(t.memcpy_h2d(device.handle(), a.bytes() + off, src.data() + off, len));
          if (s.ok()) s = device.Check(t.memcpy_d2d(device.handle(), b.bytes() + 5, a.bytes() + off, len));
          std::fill(back.begin(), back.end(), 0);
          if (s.ok()) s = device.Check(t.memcpy_d2h(device.handle(), back.data(), b.bytes() + 5, len));
          if (!s.ok()) return absl::StrCat("offset ", off, ": ", DescribeStatus(s));
          if (std::memcmp(back.data(), src.data() + off, len) != 0) {
            return absl::StrCat("h2d -> d2d -> d2h at offset ", off, " changed the data");
          }
        }
        for (auto* fn : {t.memcpy_h2d, t.memcpy_d2h, t.memcpy_d2d}) {
          absl::Status s = device.Check(fn(device.handle(), a.get(), b.get(), 0));
          if (!s.ok()) return absl::StrCat("a zero-byte copy failed: ", DescribeStatus(s));
        }
        return "";
      });

  if (PX_HAS(t, memcpy_h2d_async) && PX_HAS(t, memcpy_d2h_async) && PX_HAS(t, memcpy_d2d_async)) {
    Run(report, kSection, "copies_async", "h2d, d2d and d2h queued on one stream, then synchronized",
        [&]() -> std::string {
          const size_t n = 1 << 16;
          StreamHandle stream(device);
          if (!stream.status().ok()) return DescribeStatus(stream.status());
          DeviceBuffer a(device, n), b(device, n);
          if (!a.status().ok() || !b.status().ok()) return "allocate failed";
          std::vector<unsigned char> src = Pattern(n, 11), back(n, 0);
          absl::Status s = device.Check(t.memcpy_h2d_async(device.handle(), stream.get(), a.get(), src.data(), n));
          if (s.ok()) s = device.Check(t.memcpy_d2d_async(device.handle(), stream.get(), b.get(), a.get(), n));
          if (s.ok()) s = device.Check(t.memcpy_d2h_async(device.handle(), stream.get(), back.data(), b.get(), n));
          if (s.ok()) s = device.Check(t.stream_synchronize(device.handle(), stream.get()));
          if (!s.ok()) return DescribeStatus(s);
          if (back != src) return "the data changed on the way";
          return "";
        });
  } else {
    report.Skip(kSection, "copies_async",
                "memcpy_*_async not implemented (optional slots; the host then copies synchronously)");
  }

  if (PX_HAS(t, host_allocate) && PX_HAS(t, host_deallocate)) {
    Run(report, kSection, "pinned_memory", "host_allocate memory is host-writable and works as a copy source and target",
        [&]() -> std::string {
          const size_t n = 1 << 20;
          void* pinned = nullptr;
          absl::Status s = device.Check(t.host_allocate(device.handle(), n, &pinned));
          if (!s.ok()) return absl::StrCat("host_allocate: ", DescribeStatus(s));
          if (pinned == nullptr) return "host_allocate returned NULL";
          std::vector<unsigned char> src = Pattern(n, 13);
          std::memcpy(pinned, src.data(), n);
          std::string failure;
          {
            DeviceBuffer d(device, n);
            s = d.status();
            if (s.ok()) s = device.Check(t.memcpy_h2d(device.handle(), d.get(), pinned, n));
            if (s.ok()) std::memset(pinned, 0, n);
            if (s.ok()) s = device.Check(t.memcpy_d2h(device.handle(), pinned, d.get(), n));
            if (!s.ok()) {
              failure = DescribeStatus(s);
            } else if (std::memcmp(pinned, src.data(), n) != 0) {
              failure = "round trip through pinned memory changed the data";
            }
          }
          t.host_deallocate(device.handle(), pinned);
          t.host_deallocate(device.handle(), nullptr);
          void* huge = nullptr;
          s = device.Check(t.host_allocate(device.handle(), size_t{1} << 62, &huge));
          if (s.ok()) {
            t.host_deallocate(device.handle(), huge);
            return "host_allocate(2^62) succeeded";
          }
          return failure;
        });
  } else {
    report.Skip(kSection, "pinned_memory", "host_allocate not implemented (optional slot)");
  }
  CheckEveryDeviceOpens(options, device, report);
}

void CheckStreams(const CheckOptions& options, HarnessDevice& device, Report& report) {
  const char* kSection = "streams";
  const PX_PluginTable& t = device.table();
  const bool async = PX_HAS(t, memcpy_h2d_async) && PX_HAS(t, memcpy_d2h_async) && PX_HAS(t, memcpy_d2d_async);

  Run(report, kSection, "create_destroy", "64 streams and 64 events created, recorded, synchronized and destroyed",
      [&]() -> std::string {
        std::vector<std::unique_ptr<StreamHandle>> streams;
        std::vector<std::unique_ptr<EventHandle>> events;
        for (int i = 0; i < 64; ++i) {
          streams.push_back(std::make_unique<StreamHandle>(device));
          if (!streams.back()->status().ok()) return absl::StrCat("stream_create: ", DescribeStatus(streams.back()->status()));
          events.push_back(std::make_unique<EventHandle>(device));
          if (!events.back()->status().ok()) return absl::StrCat("event_create: ", DescribeStatus(events.back()->status()));
          absl::Status s = device.Check(t.event_record(device.handle(), streams.back()->get(), events.back()->get()));
          if (s.ok()) s = device.Check(t.event_synchronize(device.handle(), events.back()->get()));
          if (s.ok()) s = device.Check(t.stream_synchronize(device.handle(), streams.back()->get()));
          if (s.ok()) s = device.Check(t.stream_get_status(device.handle(), streams.back()->get()));
          if (!s.ok()) return DescribeStatus(s);
        }
        return "";
      });

  Run(report, kSection, "ordering", "work on one stream runs in order (write, copy, overwrite, read back)",
      [&]() -> std::string {
        if (!async) return "skip: no asynchronous copies to order (optional slots)";
        const size_t n = 1 << 20;
        StreamHandle stream(device);
        DeviceBuffer a(device, n), b(device, n);
        if (!stream.status().ok() || !a.status().ok() || !b.status().ok()) return "setup failed";
        std::vector<unsigned char> first = Pattern(n, 1), second = Pattern(n, 2), back(n, 0);
        absl::Status s;
        for (int round = 0; round < 4 && s.ok(); ++round) {
          s = device.Check(t.memcpy_h2d_async(device.handle(), stream.get(), a.get(), first.data(), n));
          if (s.ok()) s = device.Check(t.memcpy_d2d_async(device.handle(), stream.get(), b.get(), a.get(), n));
          if (s.ok()) s = device.Check(t.memcpy_h2d_async(device.handle(), stream.get(), a.get(), second.data(), n));
          if (s.ok()) s = device.Check(t.memcpy_d2h_async(device.handle(), stream.get(), back.data(), b.get(), n));
          if (s.ok()) s = device.Check(t.stream_synchronize(device.handle(), stream.get()));
          if (s.ok() && back != first) return "a later copy overtook an earlier one on the same stream";
        }
        return s.ok() ? "" : DescribeStatus(s);
      });

  Run(report, kSection, "cross_stream_wait",
      "stream B waits on an event recorded on stream A and then sees A's writes", [&]() -> std::string {
        if (!async) return "skip: no asynchronous copies to order across streams (optional slots)";
        const size_t n = 1 << 20;
        StreamHandle sa(device), sb(device);
        EventHandle event(device);
        DeviceBuffer a(device, n);
        if (!sa.status().ok() || !sb.status().ok() || !event.status().ok() || !a.status().ok()) {
          return "setup failed";
        }
        for (int round = 0; round < 4; ++round) {
          std::vector<unsigned char> src = Pattern(n, 20 + round), back(n, 0);
          absl::Status s = device.Check(t.memcpy_h2d_async(device.handle(), sa.get(), a.get(), src.data(), n));
          if (s.ok()) s = device.Check(t.event_record(device.handle(), sa.get(), event.get()));
          if (s.ok()) s = device.Check(t.stream_wait_event(device.handle(), sb.get(), event.get()));
          if (s.ok()) s = device.Check(t.memcpy_d2h_async(device.handle(), sb.get(), back.data(), a.get(), n));
          if (s.ok()) s = device.Check(t.stream_synchronize(device.handle(), sb.get()));
          if (s.ok()) s = device.Check(t.event_synchronize(device.handle(), event.get()));
          if (!s.ok()) return DescribeStatus(s);
          if (back != src) return "stream B read before stream A's write completed";
          s = device.Check(t.stream_synchronize(device.handle(), sa.get()));
          if (!s.ok()) return DescribeStatus(s);
        }
        return "";
      });

  Run(report, kSection, "event_status", "an event recorded after finished work synchronizes OK, repeatedly",
      [&]() -> std::string {
        StreamHandle stream(device);
        EventHandle event(device);
        if (!stream.status().ok() || !event.status().ok()) return "setup failed";
        for (int i = 0; i < 3; ++i) {
          absl::Status s = device.Check(t.event_record(device.handle(), stream.get(), event.get()));
          if (s.ok()) s = device.Check(t.event_synchronize(device.handle(), event.get()));
          if (s.ok()) s = device.Check(t.event_synchronize(device.handle(), event.get()));
          if (!s.ok()) return DescribeStatus(s);
        }
        return "";
      });

  // The body makes a copy to a NULL pointer, which the ABI does not require
  // a plugin to survive: it runs in a child process.
  const std::function<std::string()> errors_carried = [&]() -> std::string {
        if (!async) return "skip: no asynchronous copies with which to put an error on a stream";
        StreamHandle bad(device), good(device);
        EventHandle before(device), after(device), other(device);
        DeviceBuffer a(device, 64);
        if (!bad.status().ok() || !good.status().ok() || !before.status().ok() || !after.status().ok() ||
            !other.status().ok() || !a.status().ok()) {
          return "skip: the device does not work in a forked child process (CUDA, for one, cannot)";
        }
        std::vector<unsigned char> src(64, 1);
        absl::Status s = device.Check(t.event_record(device.handle(), bad.get(), before.get()));
        if (!s.ok()) return DescribeStatus(s);
        // A copy into a NULL device pointer: the plugin either refuses it
        // when it is queued or fails the stream.
        absl::Status enqueue = device.Check(t.memcpy_h2d_async(device.handle(), bad.get(), nullptr, src.data(), 64));
        absl::Status sticky = device.Check(t.stream_get_status(device.handle(), bad.get()));
        if (sticky.ok()) {
          sticky = device.Check(t.stream_synchronize(device.handle(), bad.get()));
        }
        if (sticky.ok()) {
          if (enqueue.ok()) return "a copy to a NULL pointer succeeded";
          return absl::StrCat("skip: the plugin refuses a bad copy when it is queued (", enqueue.message(),
                              "), so no error reaches the stream this way");
        }
        // The stream has failed: later events and syncs report it, earlier
        // events do not, and another stream is untouched.
        s = device.Check(t.event_record(device.handle(), bad.get(), after.get()));
        absl::Status carried = s.ok() ? device.Check(t.event_synchronize(device.handle(), after.get())) : s;
        if (carried.ok()) return "an event recorded after the failure synchronized OK";
        if (!device.Check(t.event_synchronize(device.handle(), before.get())).ok()) {
          return "an event recorded before the failure reports it";
        }
        if (device.Check(t.stream_get_status(device.handle(), bad.get())).ok()) {
          return "the stream's error was not sticky";
        }
        s = device.Check(t.memcpy_h2d_async(device.handle(), good.get(), a.get(), src.data(), 64));
        if (s.ok()) s = device.Check(t.event_record(device.handle(), good.get(), other.get()));
        if (s.ok()) s = device.Check(t.event_synchronize(device.handle(), other.get()));
        if (s.ok()) s = device.Check(t.stream_synchronize(device.handle(), good.get()));
        if (!s.ok()) return absl::StrCat("another stream was affected: ", DescribeStatus(s));
        return "";
      };
  Run(report, kSection, "errors_carried",
      "a failed copy on a stream is sticky, reported by events recorded after it and by stream status, "
      "and does not touch other streams", [&]() -> std::string {
        int signal = 0;
        std::string result = RunIsolated(errors_carried, &signal);
        if (signal != 0) {
          return absl::StrCat("skip: the plugin crashes (signal ", signal, ") on a copy to a NULL pointer, which "
                              "the ABI does not forbid, so this check cannot put an error on a stream");
        }
        return result;
      });

  if (PX_HAS(t, stream_add_callback)) {
    Run(report, kSection, "host_callbacks", "callbacks run once each, in order, after earlier work",
        [&]() -> std::string {
          StreamHandle stream(device);
          if (!stream.status().ok()) return "setup failed";
          struct State {
            std::mutex mu;
            std::vector<int> order;
            int errors = 0;
          } state;
          struct Arg {
            State* state;
            int index;
          };
          std::vector<Arg> args;
          for (int i = 0; i < 8; ++i) args.push_back({&state, i});
          for (Arg& arg : args) {
            absl::Status s = device.Check(t.stream_add_callback(
                device.handle(), stream.get(),
                [](void* p, const PX_Status* status) {
                  auto* a = static_cast<Arg*>(p);
                  std::lock_guard<std::mutex> lock(a->state->mu);
                  a->state->order.push_back(a->index);
                  if (status != nullptr) a->state->errors++;
                },
                &arg));
            if (!s.ok()) return DescribeStatus(s);
          }
          absl::Status s = device.Check(t.stream_synchronize(device.handle(), stream.get()));
          if (!s.ok()) return DescribeStatus(s);
          std::lock_guard<std::mutex> lock(state.mu);
          if (state.order != std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}) {
            return absl::StrCat("callbacks ran as [", absl::StrJoin(state.order, ","), "]");
          }
          if (state.errors > 0) return "a callback on a healthy stream saw an error";
          return "";
        });
  } else {
    report.Skip(kSection, "host_callbacks", "stream_add_callback not implemented (optional slot)");
  }

  // Stream capture (ABI 0.5): all four slots or none; a recording of two
  // queued copies runs nothing until launched, and each launch copies the
  // source's current contents.
  const int capture_slots = (PX_HAS(t, stream_capture_begin) ? 1 : 0) + (PX_HAS(t, stream_capture_end) ? 1 : 0) +
                            (PX_HAS(t, graph_launch) ? 1 : 0) + (PX_HAS(t, graph_destroy) ? 1 : 0);
  if (t.abi_minor < 5 || capture_slots == 0) {
    report.Skip(kSection, "stream_capture",
                t.abi_minor < 5 ? "the plugin speaks an ABI older than 0.5" : "stream capture not implemented (optional slots)");
  } else if (capture_slots != 4) {
    Run(report, kSection, "stream_capture", "", [&]() -> std::string {
      return absl::StrCat("fills ", capture_slots, " of the four stream capture slots (all or none)");
    });
  } else if (!async) {
    report.Skip(kSection, "stream_capture", "needs memcpy_*_async to record something");
  } else {
    Run(report, kSection, "stream_capture",
        "two recorded copies ran only when launched, twice, each time with the source's current data",
        [&]() -> std::string {
          const size_t n = 1 << 16;
          StreamHandle stream(device);
          if (!stream.status().ok()) return DescribeStatus(stream.status());
          DeviceBuffer a(device, n), b(device, n), c(device, n);
          if (!a.status().ok() || !b.status().ok() || !c.status().ok()) return "allocate failed";
          const std::vector<unsigned char> zeros(n, 0), first = Pattern(n, 21), second = Pattern(n, 22);
          std::vector<unsigned char> back(n, 1);
          absl::Status s = device.Check(t.memcpy_h2d(device.handle(), a.get(), first.data(), n));
          if (s.ok()) s = device.Check(t.memcpy_h2d(device.handle(), c.get(), zeros.data(), n));
          if (!s.ok()) return DescribeStatus(s);
          s = device.Check(t.stream_capture_begin(device.handle(), stream.get()));
          if (!s.ok()) return absl::StrCat("stream_capture_begin: ", DescribeStatus(s));
          s = device.Check(t.memcpy_d2d_async(device.handle(), stream.get(), b.get(), a.get(), n));
          if (s.ok()) s = device.Check(t.memcpy_d2d_async(device.handle(), stream.get(), c.get(), b.get(), n));
          PX_Graph* graph = nullptr;
          absl::Status end = device.Check(t.stream_capture_end(device.handle(), stream.get(), &graph));
          if (!s.ok()) {
            if (graph != nullptr) t.graph_destroy(device.handle(), graph);
            return absl::StrCat("a copy queued while capturing: ", DescribeStatus(s));
          }
          if (!end.ok()) return absl::StrCat("stream_capture_end: ", DescribeStatus(end));
          if (graph == nullptr) return "stream_capture_end returned no graph";
          std::string failure;
          s = device.Check(t.memcpy_d2h(device.handle(), back.data(), c.get(), n));
          if (!s.ok()) failure = DescribeStatus(s);
          if (failure.empty() && back != zeros) failure = "the recorded copies ran before graph_launch";
          for (const auto* want : {&first, &second}) {
            if (!failure.empty()) break;
            s = device.Check(t.memcpy_h2d(device.handle(), a.get(), want->data(), n));
            if (s.ok()) s = device.Check(t.graph_launch(device.handle(), stream.get(), graph));
            if (s.ok()) s = device.Check(t.stream_synchronize(device.handle(), stream.get()));
            if (s.ok()) s = device.Check(t.memcpy_d2h(device.handle(), back.data(), c.get(), n));
            if (!s.ok()) failure = absl::StrCat("graph_launch: ", DescribeStatus(s));
            if (failure.empty() && back != *want) failure = "a launch did not copy the source's current data";
          }
          t.graph_destroy(device.handle(), graph);
          return failure;
        });
  }
  CheckStreamsEveryDevice(options, device, report);
}

}  // namespace plexus::conformance

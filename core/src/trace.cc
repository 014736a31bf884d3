#include "trace.h"

#include <atomic>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace plexus {
namespace {

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      out += absl::StrFormat("\\u%04x", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace

uint64_t TraceThreadId() {
  static std::atomic<uint64_t> next{1};
  thread_local uint64_t id = next++;
  return id;
}

void TraceRecorder::Add(Event event) {
  std::lock_guard<std::mutex> lock(mu_);
  events_.push_back(std::move(event));
}

size_t TraceRecorder::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return events_.size();
}

std::string TraceRecorder::Json() const {
  std::lock_guard<std::mutex> lock(mu_);
  // One process per device (its track group), one thread track per thread.
  std::map<std::string, int> pids;
  for (const Event& e : events_) pids.emplace(e.device, 0);
  int next = 1;
  for (auto& [device, pid] : pids) pid = next++;
  std::string out = "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
  bool first = true;
  auto add = [&](const std::string& line) {
    absl::StrAppend(&out, first ? "" : ",\n", line);
    first = false;
  };
  std::map<std::pair<int, uint64_t>, bool> threads;
  for (const auto& [device, pid] : pids) {
    add(absl::StrCat("{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": ", pid,
                     ", \"args\": {\"name\": ", Quote(device), "}}"));
  }
  for (const Event& e : events_) {
    int pid = pids[e.device];
    if (threads.emplace(std::make_pair(pid, e.thread), true).second) {
      add(absl::StrCat("{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": ", pid, ", \"tid\": ", e.thread,
                       ", \"args\": {\"name\": ", Quote(absl::StrCat(e.device, " thread ", e.thread)), "}}"));
    }
    add(absl::StrCat("{\"ph\": \"X\", \"name\": ", Quote(e.name), ", \"cat\": ", Quote(e.op), ", \"pid\": ", pid,
                     ", \"tid\": ", e.thread, ", \"ts\": ", absl::StrFormat("%.3f", e.start_ns / 1000.0),
                     ", \"dur\": ", absl::StrFormat("%.3f", e.duration_ns / 1000.0),
                     ", \"args\": {\"op\": ", Quote(e.op), ", \"device\": ", Quote(e.device), "}}"));
  }
  return out + "\n]}\n";
}

absl::Status TraceRecorder::WriteFile(const std::string& path) const {
  std::ofstream f(path);
  f << Json();
  f.close();
  if (!f) return absl::InternalError(absl::StrCat("cannot write the trace to ", path));
  return absl::OkStatus();
}

}  // namespace plexus

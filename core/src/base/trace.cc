#include "base/trace.h"

#include <atomic>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace plexus {
namespace {

// Length of the well-formed UTF-8 sequence starting at s[i], or 0.
size_t Utf8Length(const std::string& s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
  }
  // No overlong forms, surrogates or code points past U+10FFFF.
  if (n == 3 && ((c == 0xe0 && byte(i + 1) < 0xa0) || (c == 0xed && byte(i + 1) >= 0xa0))) return 0;
  if (n == 4 && ((c == 0xf0 && byte(i + 1) < 0x90) || (c == 0xf4 && byte(i + 1) >= 0x90))) return 0;
  return n;
}

// A JSON string. Well-formed UTF-8 passes through; any other byte is
// written as the code point of the same value (Latin-1), so the file is
// always valid JSON.
std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      out += absl::StrFormat("\\u%04x", c);
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (size_t n = Utf8Length(s, i); n > 0) {
      out.append(s, i, n);
      i += n - 1;
    } else {
      out += absl::StrFormat("\\u%04x", c);
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

std::vector<TraceRecorder::Event> TraceRecorder::events() const {
  std::lock_guard<std::mutex> lock(mu_);
  return events_;
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

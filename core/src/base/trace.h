// Run timelines in Chrome's trace event format (chrome://tracing, Perfetto):
// one complete event per node the executor runs, on a track per device and
// thread. Internal to the core; sessions own one when tracing is on.
#ifndef PLEXUS_SRC_TRACE_H_
#define PLEXUS_SRC_TRACE_H_

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace plexus {

class TraceRecorder {
 public:
  struct Event {
    std::string name;    // the node
    std::string op;
    std::string device;  // the device (its track) or "core"
    int64_t start_ns;    // since the recorder was made
    int64_t duration_ns;
    uint64_t thread;     // a small id per thread
  };

  TraceRecorder() : origin_(std::chrono::steady_clock::now()) {}

  int64_t Now() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - origin_)
        .count();
  }
  void Add(Event event);
  size_t size() const;
  std::vector<Event> events() const;

  // The whole timeline as Chrome trace JSON.
  std::string Json() const;
  absl::Status WriteFile(const std::string& path) const;

 private:
  std::chrono::steady_clock::time_point origin_;
  mutable std::mutex mu_;
  std::vector<Event> events_;
};

// A small, stable id for the calling thread.
uint64_t TraceThreadId();

}  // namespace plexus

#endif  // PLEXUS_SRC_TRACE_H_

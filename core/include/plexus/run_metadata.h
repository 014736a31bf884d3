// Per-run reports and checks a caller asks for around its runs, in the
// style of ScopedRunDeadline (plexus/session.h): set for every Session::Run
// the current thread makes in the scope (the C API's run options and
// session options use them).
//
//   RunMetadata metadata;
//   {
//     ScopedRunMetadata scope(&metadata);
//     session->Run(feeds, fetches);
//   }
//   // metadata.nodes: what ran, where and for how long
//
// Runs nested in a run (functions that host ops call) do not report into
// the outer run's metadata.
#ifndef PLEXUS_RUN_METADATA_H_
#define PLEXUS_RUN_METADATA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace plexus {

// One node of a run: where it ran and when.
struct NodeTiming {
  std::string node;
  std::string op;
  std::string device;   // its device, or "core" for the core's own work
  int64_t start_ns = 0; // since the run began
  int64_t duration_ns = 0;
};

struct RunMetadata {
  std::vector<NodeTiming> nodes;  // in the order they finished
  int64_t wall_ns = 0;            // the whole run
  bool built_executor = false;    // this run prepared its signature (the first run's cost)
};

// Fills `metadata` (cleared first) for each run in the scope.
class ScopedRunMetadata {
 public:
  explicit ScopedRunMetadata(RunMetadata* metadata);
  ~ScopedRunMetadata();
  ScopedRunMetadata(const ScopedRunMetadata&) = delete;
  ScopedRunMetadata& operator=(const ScopedRunMetadata&) = delete;

 private:
  RunMetadata* previous_;
};
RunMetadata* CurrentRunMetadata();

// Strict placement for the runs in the scope: a node that requests a device
// this runtime does not have, or whose kernel runs on a device other than
// the one it asked for (its requested device, else the session's), fails
// the run before anything runs, with an error naming the node, the op and
// the devices. Host ops and the core's own work run on the host either way.
class ScopedStrictPlacement {
 public:
  explicit ScopedStrictPlacement(bool strict);
  ~ScopedStrictPlacement();
  ScopedStrictPlacement(const ScopedStrictPlacement&) = delete;
  ScopedStrictPlacement& operator=(const ScopedStrictPlacement&) = delete;

 private:
  bool previous_;
};
bool StrictPlacement();

// Writes `metadata`'s nodes in Chrome's trace event format (Perfetto,
// chrome://tracing), a track per device.
absl::Status WriteRunTrace(const RunMetadata& metadata, const std::string& path);

}  // namespace plexus

#endif  // PLEXUS_RUN_METADATA_H_

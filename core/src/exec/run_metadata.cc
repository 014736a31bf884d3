// Run metadata and strict placement (plexus/run_metadata.h): thread-local
// scopes the session reads at the start of each run, the strict-placement
// check and the trace file of one run.
#include "plexus/run_metadata.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "base/trace.h"
#include "exec/strict_placement.h"
#include "plexus/runtime.h"

namespace plexus {
namespace {

thread_local RunMetadata* t_run_metadata = nullptr;
thread_local bool t_strict_placement = false;

}  // namespace

ScopedRunMetadata::ScopedRunMetadata(RunMetadata* metadata) : previous_(t_run_metadata) {
  t_run_metadata = metadata;
}
ScopedRunMetadata::~ScopedRunMetadata() { t_run_metadata = previous_; }
RunMetadata* CurrentRunMetadata() { return t_run_metadata; }

ScopedStrictPlacement::ScopedStrictPlacement(bool strict) : previous_(t_strict_placement) {
  t_strict_placement = strict;
}
ScopedStrictPlacement::~ScopedStrictPlacement() { t_strict_placement = previous_; }
bool StrictPlacement() { return t_strict_placement; }

absl::Status CheckStrictPlacement(const PlacementReport& placement, const Graph& graph, const Runtime& runtime,
                                  const Device& session_device) {
  for (const NodePlacement& p : placement.nodes) {
    const Node* node = graph.FindNode(p.node);
    std::string wanted = session_device.name();
    if (node != nullptr && !node->requested_device.empty()) {
      auto spec = ParseDeviceSpec(node->requested_device);
      if (!spec.ok()) {
        return absl::FailedPreconditionError(absl::StrCat("strict placement: node '", p.node, "' (op ", p.op,
                                                          ") requests device '", node->requested_device,
                                                          "': ", spec.status().message(), "; nothing ran"));
      }
      if (!spec->type.empty()) {
        std::shared_ptr<Device> requested = runtime.FindDevice(*spec);
        if (requested == nullptr) {
          return absl::FailedPreconditionError(absl::StrCat(
              "strict placement: node '", p.node, "' (op ", p.op, ") requests device '", node->requested_device,
              "', which this runtime does not have; nothing ran. Use soft placement to run it on ",
              session_device.name(), "."));
        }
        wanted = requested->name();
      }
    }
    if (p.how != PlacedBy::kKernel || p.device == wanted) continue;
    return absl::FailedPreconditionError(absl::StrCat(
        "strict placement: node '", p.node, "' (op ", p.op, ") would run on ", p.device, ", not on ", wanted,
        p.reason.empty() ? "" : absl::StrCat(" (", p.reason, ")"),
        "; nothing ran. Use soft placement to let it run there."));
  }
  return absl::OkStatus();
}

absl::Status WriteRunTrace(const RunMetadata& metadata, const std::string& path) {
  TraceRecorder recorder;
  for (const NodeTiming& n : metadata.nodes) {
    recorder.Add(TraceRecorder::Event{n.node, n.op, n.device, n.start_ns, n.duration_ns, 0});
  }
  return recorder.WriteFile(path);
}

}  // namespace plexus

// Strict placement (plexus/run_metadata.h, ScopedStrictPlacement): the check
// a session makes of an executor's placement before running it.
#ifndef PLEXUS_CORE_SRC_EXEC_STRICT_PLACEMENT_H_
#define PLEXUS_CORE_SRC_EXEC_STRICT_PLACEMENT_H_

#include "absl/status/status.h"
#include "plexus/device.h"
#include "plexus/graph.h"
#include "plexus/placement.h"
#include "plexus/runtime.h"

namespace plexus {

// FAILED_PRECONDITION naming the first node whose kernel runs on a device
// other than the one it asked for (its requested device when that names a
// device here, else `session_device`).
absl::Status CheckStrictPlacement(const PlacementReport& placement, const Graph& graph, const Runtime& runtime,
                                  const Device& session_device);

}  // namespace plexus

#endif  // PLEXUS_CORE_SRC_EXEC_STRICT_PLACEMENT_H_

// Running under px_run_options: the scopes a run's options set (deadline,
// cancel flag, metadata, strict placement) and what is filled in after it
// (metadata, trace file). Shared by px_session_run_with_options,
// px_saved_model_run_with_options and callables. Private to c_api/src/.
#ifndef PLEXUS_C_API_SRC_RUN_SCOPE_H_
#define PLEXUS_C_API_SRC_RUN_SCOPE_H_

#include <functional>

#include "handles.h"
#include "plexus/placement.h"
#include "plexus/run_metadata.h"

struct px_run_metadata {
  plexus::RunMetadata run;
  plexus::ExecutionInfo info;
  plexus::PlacementReport placement;
};

// Checks `options` (NULL: none), then calls `run` under them. `session` (may
// be null) is the session that runs, for the metadata; `strict` is its
// placement policy.
px_code RunWithOptions(const char* fn, const px_run_options* options, const plexus::Session* session, bool strict,
                       px_status* status, const std::function<px_code()>& run);

#endif  // PLEXUS_C_API_SRC_RUN_SCOPE_H_

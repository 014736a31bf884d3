// The C API: sessions over graphs.
#include "plexus/c_api.h"

#include "handles.h"
#include "plexus/run_metadata.h"

extern "C" {

// ---- Sessions ------------------------------------------------------------------

px_code px_session_create(px_runtime* runtime, const px_graph* graph, const char* device,
                          px_session** out_session, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(runtime);
    PX_REQUIRE_ARG(graph);
    PX_REQUIRE_ARG(out_session);
    plexus::SessionOptions options;
    if (device != nullptr) options.device = device;
    auto finished = graph->Finished();
    if (!finished.ok()) return FromAbsl(finished.status(), status);
    auto session = plexus::Session::Create(runtime->runtime.get(), *std::move(finished), options);
    if (!session.ok()) return FromAbsl(session.status(), status);
    auto result = std::make_unique<px_session>();
    result->session = *std::move(session);
    result->device_name = result->session->device().name();
    *out_session = result.release();
    return Ok(status);
  });
}

void px_session_destroy(px_session* session) { delete session; }

const char* px_session_device_name(const px_session* session) {
  return session == nullptr ? "" : session->device_name.c_str();
}

px_code px_session_run(px_session* session, const char* const* feed_names,
                       const px_tensor* const* feed_values, size_t num_feeds,
                       const char* const* fetch_names, size_t num_fetches,
                       const char* const* target_names, size_t num_targets,
                       px_tensor** out_fetches, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(session);
    if (num_feeds > 0) {
      PX_REQUIRE_ARG(feed_names);
      PX_REQUIRE_ARG(feed_values);
    }
    if (num_fetches > 0) {
      PX_REQUIRE_ARG(fetch_names);
      PX_REQUIRE_ARG(out_fetches);
    }
    if (num_targets > 0) PX_REQUIRE_ARG(target_names);
    auto null_entry = [&](const char* array, size_t i) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(fn, ": ", array, "[", i, "] must not be NULL"));
    };

    std::vector<std::pair<std::string, plexus::Tensor>> feeds;
    feeds.reserve(num_feeds);
    for (size_t i = 0; i < num_feeds; ++i) {
      if (feed_names[i] == nullptr) return null_entry("feed_names", i);
      if (feed_values[i] == nullptr) return null_entry("feed_values", i);
      absl::Status ready = WaitForEagerWriters(*feed_values[i]);
      if (!ready.ok()) return FromAbsl(ready, status);
      feeds.emplace_back(feed_names[i], feed_values[i]->tensor);
    }
    std::vector<std::string> fetches;
    fetches.reserve(num_fetches);
    for (size_t i = 0; i < num_fetches; ++i) {
      if (fetch_names[i] == nullptr) return null_entry("fetch_names", i);
      fetches.emplace_back(fetch_names[i]);
    }
    std::vector<std::string> targets;
    targets.reserve(num_targets);
    for (size_t i = 0; i < num_targets; ++i) {
      if (target_names[i] == nullptr) return null_entry("target_names", i);
      targets.emplace_back(target_names[i]);
    }

    plexus::ScopedStrictPlacement strict(session->strict_placement);
    auto results = session->session->Run(feeds, fetches, targets);
    if (!results.ok()) return FromAbsl(results.status(), status);
    if (results->size() != num_fetches) {
      return SetStatus(status, PX_STATUS_INTERNAL,
                       absl::StrCat(fn, ": the session returned ", results->size(),
                                    " tensors for ", num_fetches, " fetches"));
    }
    // out_fetches is written all at once or not at all.
    return WriteResults(*results, out_fetches, status, session->fetch_to_host);
  });
}

}  // extern "C"

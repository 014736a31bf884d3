// The C API: callables (one feed/fetch signature of a session, checked
// once) and asynchronous runs (c_api_run.h).
#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <thread>

#include "run_scope.h"

struct px_callable {
  std::shared_ptr<plexus::Session> session;  // kept alive by the callable
  bool fetch_to_host = true;
  bool strict_placement = false;
  std::vector<std::string> feeds, fetches, targets;
};

// A run in flight on a thread of its own.
struct RunState {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  px_code code = PX_STATUS_OK;
  std::string message;
  std::vector<plexus::Tensor> results;
  bool taken = false;
};

struct px_run_event {
  std::shared_ptr<RunState> state;
  std::thread thread;
};

namespace {

px_code CheckNames(const char* fn, const char* what, const char* const* names, size_t n, std::vector<std::string>* out,
                   px_status* status) {
  if (n > 0 && names == nullptr) return NullArgument(fn, what, status);
  for (size_t i = 0; i < n; ++i) {
    if (names[i] == nullptr) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT, absl::StrCat(fn, ": ", what, "[", i, "] is NULL"));
    }
    out->emplace_back(names[i]);
  }
  return PX_STATUS_OK;
}

// The callable's feeds with these values, waiting for eager writers.
px_code Feeds(const char* fn, const px_callable& c, const px_tensor* const* values,
              std::vector<std::pair<std::string, plexus::Tensor>>* out, px_status* status) {
  if (!c.feeds.empty() && values == nullptr) return NullArgument(fn, "feed_values", status);
  for (size_t i = 0; i < c.feeds.size(); ++i) {
    if (values[i] == nullptr) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(fn, ": feed_values[", i, "] (for '", c.feeds[i], "') is NULL"));
    }
    absl::Status ready = WaitForEagerWriters(*values[i]);
    if (!ready.ok()) return FromAbsl(ready, status);
    out->emplace_back(c.feeds[i], values[i]->tensor);
  }
  return PX_STATUS_OK;
}

// One run of the callable under `options`, results into `results`.
px_code RunOnce(const char* fn, const px_callable& c, const px_run_options* options,
                const std::vector<std::pair<std::string, plexus::Tensor>>& feeds,
                std::vector<plexus::Tensor>* results, px_status* status) {
  return RunWithOptions(fn, options, c.session.get(), c.strict_placement, status, [&]() -> px_code {
    auto out = c.session->Run(feeds, c.fetches, c.targets);
    if (!out.ok()) {
      return SetStatus(status, static_cast<px_code>(out.status().code()), absl::StrCat(fn, ": ", out.status().message()));
    }
    *results = *std::move(out);
    return Ok(status);
  });
}

}  // namespace

extern "C" {

px_code px_session_make_callable(px_session* session, const char* const* feed_names, size_t num_feeds,
                                 const char* const* fetch_names, size_t num_fetches,
                                 const char* const* target_names, size_t num_targets, px_callable** out_callable,
                                 px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(session);
    PX_REQUIRE_ARG(out_callable);
    auto c = std::make_unique<px_callable>();
    c->session = session->session;
    c->fetch_to_host = session->fetch_to_host;
    c->strict_placement = session->strict_placement;
    px_code code = CheckNames(fn, "feed_names", feed_names, num_feeds, &c->feeds, status);
    if (code == PX_STATUS_OK) code = CheckNames(fn, "fetch_names", fetch_names, num_fetches, &c->fetches, status);
    if (code == PX_STATUS_OK) code = CheckNames(fn, "target_names", target_names, num_targets, &c->targets, status);
    if (code != PX_STATUS_OK) return code;
    if (c->fetches.empty() && c->targets.empty()) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT, absl::StrCat(fn, ": give at least one fetch or target"));
    }
    const plexus::Graph& graph = c->session->graph();
    for (const auto* names : {&c->feeds, &c->fetches}) {
      for (const std::string& name : *names) {
        auto e = graph.ResolveTensor(name);
        if (!e.ok()) return SetStatus(status, static_cast<px_code>(e.status().code()), absl::StrCat(fn, ": ", e.status().message()));
      }
    }
    for (const std::string& name : c->targets) {
      absl::string_view node = name;
      if (!node.empty() && node[0] == '^') node.remove_prefix(1);
      if (graph.FindNode(node) == nullptr) {
        return SetStatus(status, PX_STATUS_NOT_FOUND,
                         absl::StrCat(fn, ": target '", name, "' names no node in the graph"));
      }
    }
    *out_callable = c.release();
    return Ok(status);
  });
}

void px_callable_destroy(px_callable* callable) { delete callable; }

size_t px_callable_num_feeds(const px_callable* callable) { return callable == nullptr ? 0 : callable->feeds.size(); }

size_t px_callable_num_fetches(const px_callable* callable) {
  return callable == nullptr ? 0 : callable->fetches.size();
}

px_code px_callable_run(px_callable* callable, const px_run_options* options, const px_tensor* const* feed_values,
                        px_tensor** out_fetches, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(callable);
    if (!callable->fetches.empty()) PX_REQUIRE_ARG(out_fetches);
    std::vector<std::pair<std::string, plexus::Tensor>> feeds;
    px_code code = Feeds(fn, *callable, feed_values, &feeds, status);
    if (code != PX_STATUS_OK) return code;
    std::vector<plexus::Tensor> results;
    code = RunOnce(fn, *callable, options, feeds, &results, status);
    if (code != PX_STATUS_OK) return code;
    return WriteResults(results, out_fetches, status, callable->fetch_to_host);
  });
}

px_code px_callable_run_async(px_callable* callable, const px_run_options* options,
                              const px_tensor* const* feed_values, px_run_event** out_event, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(callable);
    PX_REQUIRE_ARG(out_event);
    std::vector<std::pair<std::string, plexus::Tensor>> feeds;
    px_code code = Feeds(fn, *callable, feed_values, &feeds, status);
    if (code != PX_STATUS_OK) return code;
    px_run_options copied{};
    const px_run_options* run_options = nullptr;
    if (options != nullptr) {
      std::memcpy(&copied, options, std::min(options->struct_size, sizeof(copied)));
      copied.struct_size = std::min(options->struct_size, sizeof(copied));
      run_options = &copied;
    }
    auto event = std::make_unique<px_run_event>();
    event->state = std::make_shared<RunState>();
    // The thread holds the callable's session, the feeds and the state.
    px_callable c = *callable;
    std::string trace_path = run_options != nullptr && PX_HAS_FIELD(run_options, trace_path) &&
                                     copied.trace_path != nullptr ? copied.trace_path : "";
    event->thread = std::thread([c = std::move(c), feeds = std::move(feeds), copied, has_options = run_options != nullptr,
                                 trace_path, state = event->state, fn]() mutable {
      if (!trace_path.empty()) copied.trace_path = trace_path.c_str();
      px_status run_status;
      std::vector<plexus::Tensor> results;
      px_code code = Guard(fn, &run_status, [&] {
        return RunOnce(fn, c, has_options ? &copied : nullptr, feeds, &results, &run_status);
      });
      if (code == PX_STATUS_OK && c.fetch_to_host) {
        for (plexus::Tensor& t : results) {
          if (t.host_readable()) continue;
          auto host = plexus::CopyTensorTo(t, nullptr);
          if (!host.ok()) {
            code = static_cast<px_code>(host.status().code());
            run_status.message = absl::StrCat(fn, ": ", host.status().message());
            break;
          }
          t = *std::move(host);
        }
      }
      std::lock_guard<std::mutex> lock(state->mu);
      state->code = code;
      state->message = run_status.message;
      state->results = std::move(results);
      state->done = true;
      state->cv.notify_all();
    });
    *out_event = event.release();
    return Ok(status);
  });
}

int px_run_event_is_done(const px_run_event* event) {
  if (event == nullptr) return 0;
  std::lock_guard<std::mutex> lock(event->state->mu);
  return event->state->done ? 1 : 0;
}

px_code px_run_event_wait(px_run_event* event, double timeout_seconds, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(event);
    RunState& s = *event->state;
    std::unique_lock<std::mutex> lock(s.mu);
    if (timeout_seconds < 0 || std::isnan(timeout_seconds)) {
      s.cv.wait(lock, [&] { return s.done; });
    } else if (!s.cv.wait_for(lock, std::chrono::duration<double>(std::min(timeout_seconds, 1e9)),
                              [&] { return s.done; })) {
      return SetStatus(status, PX_STATUS_DEADLINE_EXCEEDED,
                       absl::StrCat(fn, ": the run has not ended after ", timeout_seconds,
                                    " s; it goes on (cancel it with its token)"));
    }
    return SetStatus(status, s.code, s.message);
  });
}

px_code px_run_event_take_results(px_run_event* event, px_tensor** out_fetches, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(event);
    RunState& s = *event->state;
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.done) {
      return SetStatus(status, PX_STATUS_FAILED_PRECONDITION, absl::StrCat(fn, ": the run has not ended"));
    }
    if (s.code != PX_STATUS_OK) {
      return SetStatus(status, PX_STATUS_FAILED_PRECONDITION,
                       absl::StrCat(fn, ": the run failed, so it has no results: ", s.message));
    }
    if (s.taken) {
      return SetStatus(status, PX_STATUS_FAILED_PRECONDITION, absl::StrCat(fn, ": the results were taken already"));
    }
    if (!s.results.empty()) PX_REQUIRE_ARG(out_fetches);
    px_code code = WriteResults(s.results, out_fetches, status, false);
    if (code == PX_STATUS_OK) {
      s.taken = true;
      s.results.clear();
    }
    return code;
  });
}

void px_run_event_destroy(px_run_event* event) {
  if (event == nullptr) return;
  if (event->thread.joinable()) event->thread.join();
  delete event;
}

}  // extern "C"

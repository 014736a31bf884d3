// Run options for the C API: a timeout and a cancel token per run.
// px_session_run_with_options and px_saved_model_run_with_options set the
// run's deadline and cancel flag on the calling thread, then make the same
// run as px_session_run / px_saved_model_run, which inherit them.

#include <atomic>
#include <cmath>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "run_scope.h"

struct px_cancel_token {
  std::atomic<bool> cancelled{false};
};

px_code RunWithOptions(const char* fn, const px_run_options* options, const plexus::Session* session, bool strict,
                       px_status* status, const std::function<px_code()>& run) {
  double timeout = 0;
  const std::atomic<bool>* cancel = nullptr;
  px_run_metadata* metadata = nullptr;
  const char* trace_path = nullptr;
  if (options != nullptr) {
    if (options->struct_size < offsetof(px_run_options, cancel) + sizeof(options->cancel)) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(fn, ": options->struct_size is ", options->struct_size,
                                    "; set it to sizeof(px_run_options)"));
    }
    timeout = options->timeout_seconds;
    if (std::isnan(timeout) || timeout < 0) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(fn, ": options->timeout_seconds must be 0 (none) or positive, got ",
                                    timeout));
    }
    if (options->cancel != nullptr) cancel = &options->cancel->cancelled;
    if (PX_HAS_FIELD(options, metadata)) metadata = options->metadata;
    if (PX_HAS_FIELD(options, trace_path)) trace_path = options->trace_path;
  }
  // The trace file needs the run's timeline: a metadata of our own when the
  // caller gave none.
  px_run_metadata own_metadata;
  if (metadata == nullptr && trace_path != nullptr) metadata = &own_metadata;
  // Whether this timeout, not an enclosing earlier deadline, is the one in force.
  const bool own = timeout > 0 && std::isfinite(timeout) &&
                   absl::Now() + absl::Seconds(timeout) < plexus::CurrentRunDeadline();
  px_code code;
  bool passed = false;
  {
    plexus::ScopedRunCancelFlag scoped_cancel(cancel);
    plexus::ScopedRunDeadline deadline(timeout > 0 && std::isfinite(timeout) ? absl::Seconds(timeout)
                                                                             : absl::InfiniteDuration());
    plexus::ScopedRunMetadata scoped_metadata(metadata == nullptr ? nullptr : &metadata->run);
    plexus::ScopedStrictPlacement scoped_strict(strict);
    code = run();
    passed = deadline.passed();
  }
  if (code == PX_STATUS_DEADLINE_EXCEEDED && own && passed && status != nullptr) {
    status->message = absl::StrCat(fn, ": the run took longer than its timeout of ", timeout,
                                   " s and was stopped (", status->message, ")");
  }
  if (metadata != nullptr && session != nullptr) {
    metadata->info = session->last_execution_info();
    metadata->placement = session->placement();
  }
  if (code == PX_STATUS_OK && trace_path != nullptr) {
    absl::Status s = plexus::WriteRunTrace(metadata->run, trace_path);
    if (!s.ok()) return SetStatus(status, static_cast<px_code>(s.code()), absl::StrCat(fn, ": ", s.message()));
  }
  return code;
}

extern "C" {

px_code px_cancel_token_create(px_cancel_token** out_token, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    PX_REQUIRE_ARG(out_token);
    *out_token = new px_cancel_token();
    return Ok(status);
  });
}

void px_cancel_token_cancel(px_cancel_token* token) {
  if (token != nullptr) token->cancelled.store(true);
}

void px_cancel_token_reset(px_cancel_token* token) {
  if (token != nullptr) token->cancelled.store(false);
}

int px_cancel_token_is_cancelled(const px_cancel_token* token) {
  return token != nullptr && token->cancelled.load() ? 1 : 0;
}

void px_cancel_token_destroy(px_cancel_token* token) { delete token; }

px_code px_session_run_with_options(px_session* session, const px_run_options* options,
                                    const char* const* feed_names, const px_tensor* const* feed_values,
                                    size_t num_feeds, const char* const* fetch_names, size_t num_fetches,
                                    const char* const* target_names, size_t num_targets,
                                    px_tensor** out_fetches, px_status* status) {
  if (session == nullptr) return NullArgument(__func__, "session", status);
  return RunWithOptions(__func__, options, session->session.get(), session->strict_placement, status, [&] {
    return px_session_run(session, feed_names, feed_values, num_feeds, fetch_names, num_fetches, target_names,
                          num_targets, out_fetches, status);
  });
}

px_code px_saved_model_run_with_options(px_saved_model* model, const px_run_options* options,
                                        const char* key, const char* const* input_keys,
                                        const px_tensor* const* input_values, size_t num_inputs,
                                        const char* const* output_keys, size_t num_outputs,
                                        px_tensor** out_outputs, px_status* status) {
  if (model == nullptr) return NullArgument(__func__, "model", status);
  return RunWithOptions(__func__, options, &model->model->session(), false, status, [&] {
    return px_saved_model_run(model, key, input_keys, input_values, num_inputs, output_keys, num_outputs,
                              out_outputs, status);
  });
}

}  // extern "C"

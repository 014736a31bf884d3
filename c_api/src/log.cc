// The C API: the process's log level and a log callback (c_api_run.h).
#include "handles.h"
#include "plexus/logging.h"

namespace {

struct Callback {
  px_log_callback fn = nullptr;
  void* user = nullptr;
};

Callback& TheCallback() {
  static auto* c = new Callback();
  return *c;
}

// The core's sink: the message NUL-terminated for C. Exceptions stay here.
void Forward(void* user, plexus::LogLevel level, const char* message, size_t length) noexcept {
  auto* c = static_cast<Callback*>(user);
  try {
    std::string text(message, length);
    c->fn(c->user, static_cast<px_log_level>(level), text.c_str());
  } catch (...) {
  }
}

}  // namespace

extern "C" {

px_code px_log_set_level(px_log_level level, px_status* status) {
  const char* const fn = __func__;
  return Guard(fn, status, [&]() -> px_code {
    if (level < PX_LOG_LEVEL_DEBUG || level > PX_LOG_LEVEL_ERROR) {
      return SetStatus(status, PX_STATUS_INVALID_ARGUMENT,
                       absl::StrCat(fn, ": level ", static_cast<int>(level),
                                    " is not PX_LOG_LEVEL_DEBUG, PX_LOG_LEVEL_INFO, PX_LOG_LEVEL_WARNING or PX_LOG_LEVEL_ERROR"));
    }
    plexus::SetLogThreshold(static_cast<plexus::LogLevel>(level));
    return Ok(status);
  });
}

px_log_level px_log_get_level(void) { return static_cast<px_log_level>(plexus::LogThreshold()); }

void px_log_set_callback(px_log_callback callback, void* user) {
  if (callback == nullptr) {
    plexus::SetLogSink(nullptr, nullptr);
    return;
  }
  // Swapped under the core's sink lock: no message sees half a callback.
  plexus::SetLogSink(nullptr, nullptr);
  TheCallback().fn = callback;
  TheCallback().user = user;
  plexus::SetLogSink(&Forward, &TheCallback());
}

}  // extern "C"

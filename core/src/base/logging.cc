#include "plexus/logging.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "absl/strings/str_cat.h"
#include "google/protobuf/stubs/logging.h"
#include "plexus/status.h"

namespace plexus {
namespace {

LogLevel ThresholdFromEnvironment() {
  const char* env = std::getenv("PLEXUS_LOG_LEVEL");
  if (env == nullptr) return LogLevel::kWarning;
  if (std::strcmp(env, "debug") == 0) return LogLevel::kDebug;
  if (std::strcmp(env, "info") == 0) return LogLevel::kInfo;
  if (std::strcmp(env, "error") == 0) return LogLevel::kError;
  return LogLevel::kWarning;
}

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kError: return "error";
  }
  return "?";
}

// protobuf reports what it meets in malformed files ("invalid UTF-8 data",
// fields too deep) on stderr itself. Every such failure also comes back as a
// status naming the file, so its lines go through Plexus's levels: info
// (shown with PLEXUS_LOG_LEVEL=info or debug), and error for its fatal ones.
void ProtobufLog(google::protobuf::LogLevel level, const char* filename, int line,
                 const std::string& message) {
  LogLevel ours = level == google::protobuf::LOGLEVEL_FATAL ? LogLevel::kError
                  : level == google::protobuf::LOGLEVEL_INFO ? LogLevel::kDebug
                                                             : LogLevel::kInfo;
  Log(ours, absl::StrCat("protobuf: ", message, " (", filename ? filename : "?", ":", line, ")"));
}

// Installed when the library loads, before any file is parsed.
const bool kProtobufLogRouted = [] {
  google::protobuf::SetLogHandler(&ProtobufLog);
  return true;
}();

std::atomic<int>& Threshold() {
  static std::atomic<int> threshold{static_cast<int>(ThresholdFromEnvironment())};
  return threshold;
}

std::mutex& SinkMutex() {
  static auto* mu = new std::mutex;
  return *mu;
}
LogSink g_sink = nullptr;
void* g_sink_user = nullptr;

}  // namespace

bool LogEnabled(LogLevel level) {
  return static_cast<int>(level) >= Threshold().load(std::memory_order_relaxed);
}

void SetLogThreshold(LogLevel level) { Threshold().store(static_cast<int>(level), std::memory_order_relaxed); }

LogLevel LogThreshold() { return static_cast<LogLevel>(Threshold().load(std::memory_order_relaxed)); }

void SetLogSink(LogSink sink, void* user) {
  std::lock_guard<std::mutex> lock(SinkMutex());
  g_sink = sink;
  g_sink_user = user;
}

void Log(LogLevel level, absl::string_view message) {
  if (!LogEnabled(level)) return;
  // A sink that logs (through a call back into Plexus) writes to stderr
  // rather than waiting on itself.
  static thread_local bool in_sink = false;
  std::unique_lock<std::mutex> lock(SinkMutex(), std::defer_lock);
  if (!in_sink) lock.lock();
  if (g_sink != nullptr && !in_sink) {
    in_sink = true;
    g_sink(g_sink_user, level, message.data(), message.size());
    in_sink = false;
    return;
  }
  std::fprintf(stderr, "plexus %s: %.*s\n", LevelName(level),
               static_cast<int>(message.size()), message.data());
}

absl::Status Annotate(const absl::Status& status, absl::string_view prefix) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(prefix, ": ", status.message()));
}

}  // namespace plexus

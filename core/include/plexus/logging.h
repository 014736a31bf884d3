// Minimal leveled logging to stderr. The threshold comes from the
// PLEXUS_LOG_LEVEL environment variable: debug, info, warning (default) or
// error.
#ifndef PLEXUS_LOGGING_H_
#define PLEXUS_LOGGING_H_

#include <cstddef>

#include "absl/strings/string_view.h"

namespace plexus {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

bool LogEnabled(LogLevel level);
void Log(LogLevel level, absl::string_view message);

// The threshold: messages below it are dropped. Set here, it replaces
// PLEXUS_LOG_LEVEL's for the rest of the process.
void SetLogThreshold(LogLevel level);
LogLevel LogThreshold();

// Where messages go: a sink gets each message at or above the threshold
// instead of stderr (one call at a time, from the thread that logs);
// nullptr restores stderr. Protobuf's own messages about malformed files
// come through here too.
using LogSink = void (*)(void* user, LogLevel level, const char* message, size_t length);
void SetLogSink(LogSink sink, void* user);

}  // namespace plexus

#endif  // PLEXUS_LOGGING_H_

// Minimal leveled logging to stderr. The threshold comes from the
// PLEXUS_LOG_LEVEL environment variable: debug, info, warning (default) or
// error.
#ifndef PLEXUS_LOGGING_H_
#define PLEXUS_LOGGING_H_

#include "absl/strings/string_view.h"

namespace plexus {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

bool LogEnabled(LogLevel level);
void Log(LogLevel level, absl::string_view message);

}  // namespace plexus

#endif  // PLEXUS_LOGGING_H_

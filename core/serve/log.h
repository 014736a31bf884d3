// Lines the server writes about itself (loads, unloads, shutdown) on
// stderr, one whole line per write so threads never interleave them.
#ifndef PLEXUS_SERVE_LOG_H_
#define PLEXUS_SERVE_LOG_H_

#include <string>

namespace plexus::serve {

// "2026-11-29T10:00:00.123Z plexus-serve: MESSAGE\n" on stderr.
void LogLine(const std::string& message);

}  // namespace plexus::serve

#endif  // PLEXUS_SERVE_LOG_H_

// How an absl::Status becomes an HTTP status and an error kind for the
// metrics. gRPC's codes are absl's codes, number for number.
#ifndef PLEXUS_SERVE_STATUS_MAP_H_
#define PLEXUS_SERVE_STATUS_MAP_H_

#include "absl/status/status.h"

namespace plexus::serve {

// INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE -> 400; NOT_FOUND ->
// 404; RESOURCE_EXHAUSTED -> 429; UNAVAILABLE -> 503; DEADLINE_EXCEEDED ->
// 504; UNIMPLEMENTED -> 501; CANCELLED -> 499; others 500.
inline int HttpStatusOf(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kOk: return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange: return 400;
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kResourceExhausted: return 429;
    case absl::StatusCode::kUnavailable: return 503;
    case absl::StatusCode::kDeadlineExceeded: return 504;
    case absl::StatusCode::kUnimplemented: return 501;
    case absl::StatusCode::kCancelled: return 499;
    default: return 500;
  }
}

// The metrics' error kind of a failed status.
inline const char* ErrorKindOf(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange: return "bad_request";
    case absl::StatusCode::kNotFound: return "not_found";
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kUnavailable: return "overloaded";
    case absl::StatusCode::kDeadlineExceeded: return "deadline";
    case absl::StatusCode::kUnimplemented: return "unimplemented";
    default: return "internal";
  }
}

}  // namespace plexus::serve

#endif  // PLEXUS_SERVE_STATUS_MAP_H_

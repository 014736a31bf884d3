// Status conventions of the core: absl::Status everywhere, with two macros
// for early return. Codes are Abseil's canonical codes, the same numbers as
// PX_Code in the plugin ABI.
#ifndef PLEXUS_STATUS_H_
#define PLEXUS_STATUS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define PX_CONCAT_INNER_(a, b) a##b
#define PX_CONCAT_(a, b) PX_CONCAT_INNER_(a, b)

// Returns from the calling function when `expr` yields a non-OK status.
#define PX_RETURN_IF_ERROR(expr)               \
  do {                                         \
    ::absl::Status px_status_ = (expr);        \
    if (!px_status_.ok()) return px_status_;   \
  } while (0)

// `lhs` = value of the StatusOr `expr`, or return its status.
#define PX_ASSIGN_OR_RETURN(lhs, expr) \
  PX_ASSIGN_OR_RETURN_IMPL_(PX_CONCAT_(px_statusor_, __LINE__), lhs, expr)
#define PX_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()

namespace plexus {

// Returns `status` with `prefix: ` put before its message (same code).
absl::Status Annotate(const absl::Status& status, absl::string_view prefix);

}  // namespace plexus

#endif  // PLEXUS_STATUS_H_

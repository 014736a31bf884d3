/* Checks for the C API's C tests: CHECK counts a condition, CHECK_OK a call
 * that must succeed (printing its status message when it does not),
 * CHECK_CODE a call that must fail with a given code and a message that
 * names something. Each test file defines the counters with
 * C_CHECK_DEFINE_COUNTERS once and reports with c_check_report(). */
#ifndef PLEXUS_TESTS_C_API_C_CHECK_H_
#define PLEXUS_TESTS_C_API_C_CHECK_H_

#include <stdio.h>
#include <string.h>

#include "plexus/c_api.h"

extern int g_passed;
extern int g_failed;
#define C_CHECK_DEFINE_COUNTERS \
  int g_passed = 0;             \
  int g_failed = 0

#define CHECK(cond)                                                      \
  do {                                                                   \
    if (cond) {                                                          \
      ++g_passed;                                                        \
    } else {                                                             \
      ++g_failed;                                                        \
      fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                    \
  } while (0)

#define CHECK_OK(call, status)                                                     \
  do {                                                                             \
    px_code code_ = (call);                                                        \
    if (code_ == PX_STATUS_OK) {                                                   \
      ++g_passed;                                                                  \
    } else {                                                                       \
      ++g_failed;                                                                  \
      fprintf(stderr, "%s:%d: FAILED: %s returned %d: %s\n", __FILE__, __LINE__,   \
              #call, (int)code_, px_status_message(status));                       \
    }                                                                              \
  } while (0)

/* The call fails with `want` and its message contains `needle`. */
#define CHECK_CODE(call, want, needle, status)                                         \
  do {                                                                                 \
    px_code code_ = (call);                                                            \
    if (code_ == (want) && strstr(px_status_message(status), (needle)) != NULL) {      \
      ++g_passed;                                                                      \
    } else {                                                                           \
      ++g_failed;                                                                      \
      fprintf(stderr, "%s:%d: FAILED: %s returned %d (want %d) with message '%s' "     \
              "(want it to contain '%s')\n", __FILE__, __LINE__, #call, (int)code_,    \
              (int)(want), px_status_message(status), (needle));                       \
    }                                                                                  \
  } while (0)

static inline int c_check_report(const char* name) {
  printf("%s: %d passed, %d failed\n", name, g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}

#endif /* PLEXUS_TESTS_C_API_C_CHECK_H_ */

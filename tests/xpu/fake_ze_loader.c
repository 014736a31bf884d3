/* A stand-in for the Level Zero loader (libze_loader.so.1) for
 * xpu_plugin_test, opened by the XPU plugin through PX_XPU_LOADER.
 *
 * It exports every entry point the plugin resolves (the list of
 * plugins/xpu/src/ze_functions.h). zeInit fails with
 * ZE_RESULT_ERROR_UNINITIALIZED, as the real loader does on a machine
 * without a Level Zero GPU driver; every other entry point aborts the
 * process, because the plugin must call nothing else after a failed zeInit
 * (the real loader can crash in zeDriverGet then). Each call is first
 * appended, one name a line, to the file named by FAKE_ZE_LOADER_LOG (when
 * set), so the test can read back exactly what was called. */
#include <stdio.h>
#include <stdlib.h>

#include "ze_functions.h"

#define FAKE_ZE_RESULT_ERROR_UNINITIALIZED 0x78000001u

static void fake_ze_record(const char* name) {
  const char* path = getenv("FAKE_ZE_LOADER_LOG");
  if (path == NULL || path[0] == '\0') return;
  FILE* f = fopen(path, "a");
  if (f == NULL) return;
  fprintf(f, "%s\n", name);
  fclose(f);
}

/* zeInit(ze_init_flags_t flags) -> ze_result_t: both 32-bit values. */
unsigned zeInit(unsigned flags);
unsigned zeInit(unsigned flags) {
  (void)flags;
  fake_ze_record("zeInit");
  return FAKE_ZE_RESULT_ERROR_UNINITIALIZED;
}

/* Everything else: recorded, then abort(). The real signatures differ, but
 * these are only reached through the plugin's function pointers and abort
 * before reading any argument. */
#define FAKE_ZE_ABORTING(name)                                                    \
  void name(void);                                                                \
  void name(void) {                                                               \
    fake_ze_record(#name);                                                        \
    fprintf(stderr, "fake_ze_loader: %s called after a failed zeInit\n", #name); \
    abort();                                                                      \
  }
PX_ZE_FUNCTIONS_AFTER_INIT(FAKE_ZE_ABORTING)

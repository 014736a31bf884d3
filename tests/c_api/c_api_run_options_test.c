/* Run options through the C API, in plain C11 against c_api.h alone: a
 * timeout stops a long loop and leaves the session usable, a cancel token
 * stops a run from another thread, and bad options are refused by name.
 *
 * Usage: c_api_run_options_test <path of the cpu plugin>
 * Uses $PLEXUS_TEST_DATA/tf_graphs/pbtxt_graphs/functional_while.pbtxt, a
 * While loop counting its input up (about 2*10^9 steps from -2*10^9). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "c_check.h"

C_CHECK_DEFINE_COUNTERS;

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static px_code run_loop(px_session* session, const px_run_options* options, int32_t start, int32_t* result,
                        px_status* status) {
  px_tensor* x = NULL;
  px_tensor* out = NULL;
  const char* feed_names[1] = {"input"};
  const char* fetch_names[1] = {"while:0"};
  px_code code = px_tensor_create_from_data(PX_DTYPE_INT32, NULL, 0, &start, sizeof(start), &x, status);
  if (code != PX_STATUS_OK) return code;
  {
    const px_tensor* feed_values[1] = {x};
    code = px_session_run_with_options(session, options, feed_names, feed_values, 1, fetch_names, 1, NULL, 0,
                                       &out, status);
  }
  if (code == PX_STATUS_OK) {
    *result = *(const int32_t*)px_tensor_data(out);
    px_tensor_destroy(out);
  }
  px_tensor_destroy(x);
  return code;
}

struct canceller {
  px_cancel_token* token;
  double delay;
};

static void* cancel_later(void* arg) {
  struct canceller* c = (struct canceller*)arg;
  struct timespec ts;
  ts.tv_sec = (time_t)c->delay;
  ts.tv_nsec = (long)((c->delay - (double)ts.tv_sec) * 1e9);
  nanosleep(&ts, NULL);
  px_cancel_token_cancel(c->token);
  return NULL;
}

static void test_run_options(px_runtime* runtime, const char* graph_file) {
  px_status* status = px_status_create();
  px_graph* graph = NULL;
  px_session* session = NULL;
  px_cancel_token* token = NULL;
  px_run_options options;
  int32_t result = 0, expected = -1;
  double start;

  if (px_graph_import_file(graph_file, &graph, status) != PX_STATUS_OK) {
    fprintf(stderr, "import: %s\n", px_status_message(status));
    ++g_failed;
    goto done;
  }
  CHECK(px_session_create(runtime, graph, NULL, &session, status) == PX_STATUS_OK);
  px_graph_destroy(graph);
  if (session == NULL) goto done;

  memset(&options, 0, sizeof(options));
  options.struct_size = sizeof(options);
  /* No options, and zero options: the loop runs to its end. */
  CHECK(run_loop(session, NULL, 3, &expected, status) == PX_STATUS_OK);
  CHECK(run_loop(session, &options, 3, &result, status) == PX_STATUS_OK && result == expected);

  /* A timeout stops two billion steps, says so, and the session goes on. */
  options.timeout_seconds = 0.3;
  start = now_seconds();
  CHECK(run_loop(session, &options, -2000000000, &result, status) == PX_STATUS_DEADLINE_EXCEEDED);
  CHECK(now_seconds() - start < 30.0);
  CHECK(strstr(px_status_message(status), "px_session_run_with_options") != NULL);
  CHECK(strstr(px_status_message(status), "took longer than its timeout of 0.3 s") != NULL);
  printf("timeout: %s\n", px_status_message(status));
  options.timeout_seconds = 60;
  CHECK(run_loop(session, &options, 3, &result, status) == PX_STATUS_OK && result == expected);

  /* A cancel token, cancelled from another thread. */
  CHECK(px_cancel_token_create(&token, status) == PX_STATUS_OK);
  if (token != NULL) {
    pthread_t thread;
    struct canceller c;
    c.token = token;
    c.delay = 0.3;
    options.timeout_seconds = 0;
    options.cancel = token;
    CHECK(pthread_create(&thread, NULL, cancel_later, &c) == 0);
    CHECK(run_loop(session, &options, -2000000000, &result, status) == PX_STATUS_CANCELLED);
    pthread_join(thread, NULL);
    CHECK(px_cancel_token_is_cancelled(token) == 1);
    /* Still cancelled: the next run stops at once; after a reset it runs. */
    CHECK(run_loop(session, &options, 5, &result, status) == PX_STATUS_CANCELLED);
    px_cancel_token_reset(token);
    CHECK(px_cancel_token_is_cancelled(token) == 0);
    CHECK(run_loop(session, &options, 3, &result, status) == PX_STATUS_OK && result == expected);
    px_cancel_token_destroy(token);
  }
  options.cancel = NULL;

  /* Bad options are refused by name; NULL handles are harmless. */
  options.timeout_seconds = -1;
  CHECK(run_loop(session, &options, 5, &result, status) == PX_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(px_status_message(status), "timeout_seconds") != NULL);
  options.timeout_seconds = 0;
  options.struct_size = 4;
  CHECK(run_loop(session, &options, 5, &result, status) == PX_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(px_status_message(status), "struct_size") != NULL);
  CHECK(px_cancel_token_create(NULL, status) == PX_STATUS_INVALID_ARGUMENT);
  px_cancel_token_cancel(NULL);
  px_cancel_token_reset(NULL);
  CHECK(px_cancel_token_is_cancelled(NULL) == 0);
  px_cancel_token_destroy(NULL);
done:
  px_session_destroy(session);
  px_status_destroy(status);
}

int main(int argc, char** argv) {
  const char* data = getenv("PLEXUS_TEST_DATA");
  char graph_file[4096];
  px_status* status = px_status_create();
  px_runtime_options options;
  px_runtime* runtime = NULL;

  if (argc < 2 || data == NULL || data[0] == '\0') {
    fprintf(stderr, "usage: PLEXUS_TEST_DATA=... %s <cpu plugin file>\n", argv[0]);
    return 2;
  }
  snprintf(graph_file, sizeof(graph_file), "%s/tf_graphs/pbtxt_graphs/functional_while.pbtxt", data);
  memset(&options, 0, sizeof(options));
  options.struct_size = sizeof(options);
  options.discover_plugins = 0;
  CHECK(px_runtime_create(&options, &runtime, status) == PX_STATUS_OK);
  if (runtime != NULL && px_runtime_load_plugin(runtime, argv[1], status) == PX_STATUS_OK) {
    test_run_options(runtime, graph_file);
  } else {
    fprintf(stderr, "runtime: %s\n", px_status_message(status));
    ++g_failed;
  }
  px_runtime_destroy(runtime);
  px_status_destroy(status);
  printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 && g_passed > 0 ? 0 : 1;
}

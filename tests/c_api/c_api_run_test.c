/* Session options, run metadata, callables, asynchronous runs, checkpoints,
 * logging and plugin unload through the C API (c_api_run.h), in plain C11.
 *
 * Usage: c_api_run_test <path of the cpu plugin>; reads
 * $PLEXUS_TEST_DATA/tf_graphs and writes under $TMPDIR (or /tmp). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "c_check.h"

C_CHECK_DEFINE_COUNTERS;

static px_status* g_status;
static px_runtime* g_runtime;
static char g_tmp[1024];

static const char* tmp_path(const char* name) {
  static char path[1200];
  snprintf(path, sizeof path, "%s/%s", g_tmp, name);
  return path;
}

static int file_contains(const char* path, const char* needle) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return 0;
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return strstr(buf, needle) != NULL;
}

/* y = relu(x) + x on a [4] float placeholder, with an optional device on relu. */
static px_graph* small_graph(const char* relu_device) {
  px_graph* g = NULL;
  px_attrs* a = NULL;
  px_operation* x = NULL;
  px_operation* relu = NULL;
  const int64_t dims[1] = {4};
  CHECK_OK(px_graph_create(&g, g_status), g_status);
  CHECK_OK(px_attrs_create(&a, g_status), g_status);
  CHECK_OK(px_attrs_set_type(a, "dtype", PX_DTYPE_FLOAT, g_status), g_status);
  CHECK_OK(px_attrs_set_shape(a, "shape", dims, 1, g_status), g_status);
  px_operation_spec ps = {sizeof ps, "Placeholder", "x", NULL, 0, NULL, 0, a, NULL};
  CHECK_OK(px_graph_add_operation(g, &ps, &x, g_status), g_status);
  px_output rin[1] = {{x, 0}};
  px_operation_spec rs = {sizeof rs, "Relu", "relu", rin, 1, NULL, 0, NULL, relu_device};
  CHECK_OK(px_graph_add_operation(g, &rs, &relu, g_status), g_status);
  px_output yin[2] = {{relu, 0}, {x, 0}};
  px_operation_spec ys = {sizeof ys, "AddV2", "y", yin, 2, NULL, 0, NULL, NULL};
  CHECK_OK(px_graph_add_operation(g, &ys, NULL, g_status), g_status);
  px_attrs_destroy(a);
  return g;
}

static px_tensor* x_tensor(float base) {
  const int64_t dims[1] = {4};
  const float v[4] = {base, -base, 2 * base, -3};
  px_tensor* t = NULL;
  CHECK_OK(px_tensor_create_from_data(PX_DTYPE_FLOAT, dims, 1, v, sizeof v, &t, g_status), g_status);
  return t;
}

static int y_matches(px_tensor* y, float base) {
  const float v[4] = {base, -base, 2 * base, -3};
  if (y == NULL || px_tensor_num_elements(y) != 4) return 0;
  const float* o = (const float*)px_tensor_data(y);
  for (int i = 0; i < 4; ++i) {
    if (o[i] != (v[i] > 0 ? v[i] : 0) + v[i]) return 0;
  }
  return 1;
}

static void test_session_options(void) {
  px_graph* g = small_graph(NULL);
  px_session* s = NULL;
  px_session_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.device = "CPU:0";
  o.optimizer = 0;
  o.inter_op_parallelism = -1;
  o.device_graphs = -1;
  o.memory_plan = 1;
  o.fetch_to_host = -1;
  o.trace = 1;
  o.placement = -1;
  o.max_shape_specializations = -1;
  o.disabled_passes = "cse, fuse";
  CHECK_OK(px_session_create_with_options(g_runtime, g, &o, &s, g_status), g_status);
  CHECK(s != NULL && strcmp(px_session_device_name(s), "CPU:0") == 0);
  px_tensor* x = x_tensor(1.5f);
  px_tensor* y = NULL;
  const char* feed[1] = {"x"};
  const char* fetch[1] = {"y"};
  const px_tensor* xs[1] = {x};
  if (s != NULL) {
    CHECK_OK(px_session_run(s, feed, xs, 1, fetch, 1, NULL, 0, &y, g_status), g_status);
    CHECK(y_matches(y, 1.5f));
    CHECK_OK(px_session_write_trace(s, tmp_path("session_trace.json"), g_status), g_status);
    CHECK(file_contains(tmp_path("session_trace.json"), "traceEvents"));
    CHECK(file_contains(tmp_path("session_trace.json"), "relu"));
  }
  px_tensor_destroy(y);
  px_session_destroy(s);

  /* Bad options name the field; nothing is made. */
  px_session* bad = (px_session*)0x1;
  o.disabled_passes = "cse,no_such_pass";
  CHECK_CODE(px_session_create_with_options(g_runtime, g, &o, &bad, g_status), PX_STATUS_INVALID_ARGUMENT,
             "no_such_pass", g_status);
  o.disabled_passes = NULL;
  o.memory_plan = 7;
  CHECK_CODE(px_session_create_with_options(g_runtime, g, &o, &bad, g_status), PX_STATUS_INVALID_ARGUMENT,
             "options->memory_plan is 7", g_status);
  o.memory_plan = -1;
  o.intra_op_threads = -2;
  CHECK_CODE(px_session_create_with_options(g_runtime, g, &o, &bad, g_status), PX_STATUS_INVALID_ARGUMENT,
             "intra_op_threads", g_status);
  o.intra_op_threads = 0;
  o.placement = 5;
  CHECK_CODE(px_session_create_with_options(g_runtime, g, &o, &bad, g_status), PX_STATUS_INVALID_ARGUMENT,
             "PX_PLACEMENT_STRICT", g_status);
  o.placement = -1;
  o.device = "TPU:0";
  CHECK_CODE(px_session_create_with_options(g_runtime, g, &o, &bad, g_status), PX_STATUS_NOT_FOUND, "TPU:0",
             g_status);
  o.struct_size = 0;
  CHECK_CODE(px_session_create_with_options(g_runtime, g, &o, &bad, g_status), PX_STATUS_INVALID_ARGUMENT,
             "struct_size", g_status);
  CHECK(bad == (px_session*)0x1);

  /* Without options.trace there is no trace to write. */
  px_session* plain = NULL;
  CHECK_OK(px_session_create_with_options(g_runtime, g, NULL, &plain, g_status), g_status);
  CHECK_CODE(px_session_write_trace(plain, tmp_path("none.json"), g_status), PX_STATUS_FAILED_PRECONDITION,
             "trace", g_status);
  px_session_destroy(plain);
  px_tensor_destroy(x);
  px_graph_destroy(g);
}

/* A node asking for a device the runtime lacks: soft placement runs it on
 * the session's device, strict placement refuses before running. */
static void test_strict_placement(void) {
  px_graph* g = small_graph("GPU:3");
  px_session_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.optimizer = o.inter_op_parallelism = o.device_graphs = o.memory_plan = -1;
  o.fetch_to_host = o.trace = o.max_shape_specializations = -1;
  o.placement = PX_PLACEMENT_SOFT;
  px_session* soft = NULL;
  px_session* strict = NULL;
  CHECK_OK(px_session_create_with_options(g_runtime, g, &o, &soft, g_status), g_status);
  o.placement = PX_PLACEMENT_STRICT;
  CHECK_OK(px_session_create_with_options(g_runtime, g, &o, &strict, g_status), g_status);
  px_tensor* x = x_tensor(2);
  px_tensor* y = NULL;
  const char* feed[1] = {"x"};
  const char* fetch[1] = {"y"};
  const px_tensor* xs[1] = {x};
  CHECK_OK(px_session_run(soft, feed, xs, 1, fetch, 1, NULL, 0, &y, g_status), g_status);
  CHECK(y_matches(y, 2));
  px_tensor_destroy(y);
  y = NULL;
  CHECK_CODE(px_session_run(strict, feed, xs, 1, fetch, 1, NULL, 0, &y, g_status), PX_STATUS_FAILED_PRECONDITION,
             "strict placement: node 'relu' (op Relu) requests device 'GPU:3'", g_status);
  CHECK(y == NULL);
  px_tensor_destroy(x);
  px_session_destroy(soft);
  px_session_destroy(strict);
  px_graph_destroy(g);
}

static void test_run_metadata(void) {
  px_graph* g = small_graph(NULL);
  px_session* s = NULL;
  /* The optimizer off, so that relu and y stay two nodes (it fuses them). */
  px_session_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = offsetof(px_session_options, disabled_passes);
  o.device = "CPU:0";
  o.optimizer = 0;
  CHECK_OK(px_session_create_with_options(g_runtime, g, &o, &s, g_status), g_status);
  px_run_metadata* md = NULL;
  CHECK_OK(px_run_metadata_create(&md, g_status), g_status);
  CHECK(px_run_metadata_num_nodes(md) == 0 && px_run_metadata_wall_ns(md) == 0);
  px_run_options ro;
  memset(&ro, 0, sizeof ro);
  ro.struct_size = sizeof ro;
  ro.metadata = md;
  ro.trace_path = tmp_path("run_trace.json");
  px_tensor* x = x_tensor(1);
  px_tensor* y = NULL;
  const char* feed[1] = {"x"};
  const char* fetch[1] = {"y"};
  const px_tensor* xs[1] = {x};
  CHECK_OK(px_session_run_with_options(s, &ro, feed, xs, 1, fetch, 1, NULL, 0, &y, g_status), g_status);
  CHECK(y_matches(y, 1));
  CHECK(px_run_metadata_built_executor(md) == 1);
  CHECK(px_run_metadata_wall_ns(md) > 0);
  size_t n = px_run_metadata_num_nodes(md);
  CHECK(n >= 2);
  int saw_relu = 0;
  for (size_t i = 0; i < n; ++i) {
    const char* node = NULL;
    const char* op = NULL;
    const char* device = NULL;
    int64_t start = -1, duration = -1;
    CHECK_OK(px_run_metadata_node(md, i, &node, &op, &device, &start, &duration, g_status), g_status);
    CHECK(start >= 0 && duration >= 0);
    if (getenv("PX_TEST_VERBOSE") != NULL) printf("node %s op %s device %s\n", node, op, device);
    if (node != NULL && strcmp(node, "relu") == 0) {
      saw_relu = 1;
      CHECK(strcmp(op, "Relu") == 0 && strcmp(device, "CPU:0") == 0);
    }
  }
  CHECK(saw_relu);
  CHECK_CODE(px_run_metadata_node(md, n, NULL, NULL, NULL, NULL, NULL, g_status), PX_STATUS_OUT_OF_RANGE,
             "out of range", g_status);
  px_memory_stats stats;
  memset(&stats, 0, sizeof stats);
  stats.struct_size = sizeof stats;
  CHECK_OK(px_run_metadata_memory(md, &stats, g_status), g_status);
  CHECK(stats.intra_op_threads >= 1);
  CHECK(stats.copy_items == 0);
  CHECK(stats.copies_per_run == 0);
  px_placement* p = NULL;
  CHECK_OK(px_run_metadata_placement(md, &p, g_status), g_status);
  CHECK(px_placement_num_nodes(p) >= 2);
  px_placement_destroy(p);
  CHECK(file_contains(tmp_path("run_trace.json"), "\"relu\""));

  /* The second run reuses the prepared signature. */
  px_tensor_destroy(y);
  y = NULL;
  CHECK_OK(px_session_run_with_options(s, &ro, feed, xs, 1, fetch, 1, NULL, 0, &y, g_status), g_status);
  CHECK(px_run_metadata_built_executor(md) == 0);
  CHECK(px_run_metadata_num_nodes(md) == n);
  px_tensor_destroy(y);

  /* An old-sized options struct (timeout and cancel only) still works. */
  px_run_options old;
  memset(&old, 0, sizeof old);
  old.struct_size = offsetof(px_run_options, metadata);
  y = NULL;
  CHECK_OK(px_session_run_with_options(s, &old, feed, xs, 1, fetch, 1, NULL, 0, &y, g_status), g_status);
  CHECK(y_matches(y, 1));
  px_tensor_destroy(y);
  px_run_metadata_destroy(md);
  px_tensor_destroy(x);
  px_session_destroy(s);
  px_graph_destroy(g);
}

struct callable_arg {
  px_callable* c;
  float base;
  int ok;
};

static void* callable_thread(void* p) {
  struct callable_arg* arg = (struct callable_arg*)p;
  px_status* st = px_status_create();
  arg->ok = 1;
  for (int i = 0; i < 100 && arg->ok; ++i) {
    const int64_t dims[1] = {4};
    const float v[4] = {arg->base, -arg->base, 2 * arg->base, -3};
    px_tensor* x = NULL;
    arg->ok &= px_tensor_create_from_data(PX_DTYPE_FLOAT, dims, 1, v, sizeof v, &x, st) == PX_STATUS_OK;
    const px_tensor* xs[1] = {x};
    px_tensor* y = NULL;
    arg->ok &= px_callable_run(arg->c, NULL, xs, &y, st) == PX_STATUS_OK;
    arg->ok &= y_matches(y, arg->base);
    px_tensor_destroy(y);
    px_tensor_destroy(x);
  }
  px_status_destroy(st);
  return NULL;
}

static void test_callables_and_async(void) {
  px_graph* g = small_graph(NULL);
  px_session* s = NULL;
  CHECK_OK(px_session_create(g_runtime, g, "CPU:0", &s, g_status), g_status);
  px_graph_destroy(g);
  const char* feed[1] = {"x"};
  const char* fetch[1] = {"y"};
  const char* bad_fetch[1] = {"nope:0"};
  px_callable* c = NULL;
  px_callable* bad = (px_callable*)0x1;
  CHECK_CODE(px_session_make_callable(s, feed, 1, bad_fetch, 1, NULL, 0, &bad, g_status), PX_STATUS_NOT_FOUND,
             "nope", g_status);
  CHECK_CODE(px_session_make_callable(s, feed, 1, NULL, 0, NULL, 0, &bad, g_status), PX_STATUS_INVALID_ARGUMENT,
             "at least one fetch", g_status);
  CHECK(bad == (px_callable*)0x1);
  CHECK_OK(px_session_make_callable(s, feed, 1, fetch, 1, NULL, 0, &c, g_status), g_status);
  /* The callable keeps the session alive. */
  px_session_destroy(s);
  CHECK(px_callable_num_feeds(c) == 1 && px_callable_num_fetches(c) == 1);

  pthread_t threads[4];
  struct callable_arg args[4];
  for (int i = 0; i < 4; ++i) {
    args[i].c = c;
    args[i].base = (float)(i + 1);
    CHECK(pthread_create(&threads[i], NULL, callable_thread, &args[i]) == 0);
  }
  for (int i = 0; i < 4; ++i) {
    pthread_join(threads[i], NULL);
    CHECK(args[i].ok);
  }

  /* Asynchronous runs: results once; a failed run reports its error. */
  px_tensor* x = x_tensor(3);
  const px_tensor* xs[1] = {x};
  px_run_event* ev = NULL;
  CHECK_OK(px_callable_run_async(c, NULL, xs, &ev, g_status), g_status);
  CHECK_OK(px_run_event_wait(ev, 30, g_status), g_status);
  CHECK(px_run_event_is_done(ev));
  px_tensor* y = NULL;
  CHECK_OK(px_run_event_take_results(ev, &y, g_status), g_status);
  CHECK(y_matches(y, 3));
  px_tensor* again = NULL;
  CHECK_CODE(px_run_event_take_results(ev, &again, g_status), PX_STATUS_FAILED_PRECONDITION, "taken already",
             g_status);
  px_run_event_destroy(ev);
  px_tensor_destroy(y);

  const int64_t idims[1] = {4};
  const int32_t iv[4] = {1, 2, 3, 4};
  px_tensor* wrong = NULL;
  CHECK_OK(px_tensor_create_from_data(PX_DTYPE_INT32, idims, 1, iv, sizeof iv, &wrong, g_status), g_status);
  const px_tensor* ws[1] = {wrong};
  ev = NULL;
  CHECK_OK(px_callable_run_async(c, NULL, ws, &ev, g_status), g_status);
  px_code code = px_run_event_wait(ev, -1, g_status);
  CHECK(code != PX_STATUS_OK && code != PX_STATUS_DEADLINE_EXCEEDED);
  CHECK_CODE(px_run_event_take_results(ev, &again, g_status), PX_STATUS_FAILED_PRECONDITION, "failed", g_status);
  px_run_event_destroy(ev);

  /* Destroying an event whose results were never taken frees them. */
  ev = NULL;
  CHECK_OK(px_callable_run_async(c, NULL, xs, &ev, g_status), g_status);
  px_run_event_destroy(ev);
  px_run_event_destroy(NULL);
  CHECK_CODE(px_callable_run(c, NULL, NULL, &y, g_status), PX_STATUS_INVALID_ARGUMENT, "feed_values", g_status);
  px_tensor_destroy(wrong);
  px_tensor_destroy(x);
  px_callable_destroy(c);
}

static void test_checkpoints(const char* data_dir) {
  const int64_t dims[2] = {2, 2};
  const float fv[4] = {1, 2, 3, 4};
  px_tensor* f = NULL;
  px_tensor* strs = NULL;
  CHECK_OK(px_tensor_create_from_data(PX_DTYPE_FLOAT, dims, 2, fv, sizeof fv, &f, g_status), g_status);
  const char* sv[2] = {"a", "bc"};
  const size_t sl[2] = {1, 2};
  const int64_t sdims[1] = {2};
  CHECK_OK(px_tensor_create_strings(sdims, 1, sv, sl, 2, &strs, g_status), g_status);
  const char* keys[2] = {"w", "names"};
  const px_tensor* values[2] = {f, strs};
  const char* prefix = tmp_path("ckpt/model");
  CHECK_OK(px_checkpoint_write(prefix, keys, values, 2, g_status), g_status);
  px_buffer* list = NULL;
  size_t count = 0;
  CHECK_OK(px_checkpoint_keys(prefix, &list, &count, g_status), g_status);
  CHECK(count == 2);
  if (list != NULL) CHECK(strcmp((const char*)px_buffer_data(list), "names") == 0); /* sorted */
  px_buffer_destroy(list);
  px_tensor* back = NULL;
  CHECK_OK(px_checkpoint_read(prefix, "w", &back, g_status), g_status);
  if (back != NULL) CHECK(memcmp(px_tensor_data(back), fv, sizeof fv) == 0);
  px_tensor_destroy(back);
  back = NULL;
  CHECK_CODE(px_checkpoint_read(prefix, "missing", &back, g_status), PX_STATUS_NOT_FOUND, "missing", g_status);
  CHECK_CODE(px_checkpoint_read(tmp_path("no/such"), "w", &back, g_status), PX_STATUS_NOT_FOUND, "no/such",
             g_status);
  px_tensor_destroy(f);
  px_tensor_destroy(strs);

  /* A SavedModel's variables through its saver: the counter. */
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/tf_graphs/counter_tf1/00000123", data_dir);
  px_saved_model* m = NULL;
  CHECK_OK(px_saved_model_load(g_runtime, dir, NULL, 0, "CPU:0", &m, g_status), g_status);
  if (m == NULL) return;
  const char* out_key = NULL;
  px_signature_tensor_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  CHECK_OK(px_saved_model_signature_output(m, "incr_counter", 0, &info, g_status), g_status);
  out_key = info.key;
  px_tensor* out = NULL;
  CHECK_OK(px_saved_model_run(m, "incr_counter", NULL, NULL, 0, &out_key, 1, &out, g_status), g_status);
  px_tensor_destroy(out);
  const char* saved = tmp_path("counter/ckpt");
  CHECK_OK(px_saved_model_save(m, saved, g_status), g_status);
  out = NULL;
  CHECK_OK(px_saved_model_run(m, "incr_counter", NULL, NULL, 0, &out_key, 1, &out, g_status), g_status);
  if (out != NULL) CHECK(((const float*)px_tensor_data(out))[0] == 2);
  px_tensor_destroy(out);
  CHECK_OK(px_saved_model_restore(m, saved, g_status), g_status);
  CHECK_OK(px_saved_model_signature_output(m, "get_counter", 0, &info, g_status), g_status);
  out_key = info.key;
  out = NULL;
  CHECK_OK(px_saved_model_run(m, "get_counter", NULL, NULL, 0, &out_key, 1, &out, g_status), g_status);
  if (out != NULL) CHECK(((const float*)px_tensor_data(out))[0] == 1);
  px_tensor_destroy(out);
  CHECK_CODE(px_saved_model_restore(m, tmp_path("no/such/ckpt"), g_status), PX_STATUS_NOT_FOUND, "no/such",
             g_status);
  px_saved_model_destroy(m);
}

static int g_log_count = 0;
static char g_last_log[512];
static void log_callback(void* user, px_log_level level, const char* message) {
  (void)level;
  ++*(int*)user;
  snprintf(g_last_log, sizeof g_last_log, "%s", message);
}

static void test_logging_and_unload(const char* plugin) {
  CHECK(px_log_get_level() >= PX_LOG_LEVEL_DEBUG);
  CHECK_CODE(px_log_set_level((px_log_level)9, g_status), PX_STATUS_INVALID_ARGUMENT, "PX_LOG_LEVEL_ERROR",
             g_status);
  px_log_set_callback(log_callback, &g_log_count);
  CHECK_OK(px_log_set_level(PX_LOG_LEVEL_INFO, g_status), g_status);
  CHECK(px_log_get_level() == PX_LOG_LEVEL_INFO);

  /* A runtime of its own: loading the plugin logs at info. */
  px_runtime* rt = NULL;
  px_runtime_options ro = {sizeof ro, 0, 0};
  CHECK_OK(px_runtime_create(&ro, &rt, g_status), g_status);
  CHECK_OK(px_runtime_load_plugin(rt, plugin, g_status), g_status);
  CHECK(g_log_count > 0);
  CHECK(strstr(g_last_log, "loaded plugin 'cpu'") != NULL);

  /* In use: refused. */
  px_graph* g = small_graph(NULL);
  px_session* s = NULL;
  CHECK_OK(px_session_create(rt, g, "CPU:0", &s, g_status), g_status);
  CHECK_CODE(px_runtime_unload_plugin(rt, "cpu", g_status), PX_STATUS_FAILED_PRECONDITION, "in use", g_status);
  px_session_destroy(s);
  px_graph_destroy(g);
  CHECK_CODE(px_runtime_unload_plugin(rt, "nope", g_status), PX_STATUS_NOT_FOUND, "nope", g_status);
  px_plugin_info pi;
  memset(&pi, 0, sizeof pi);
  pi.struct_size = sizeof pi;
  CHECK_OK(px_runtime_plugin_info(rt, 0, &pi, g_status), g_status);
  const char* name = pi.name;
  CHECK_OK(px_runtime_unload_plugin(rt, "cpu", g_status), g_status);
  CHECK(px_runtime_num_plugins(rt) == 0 && px_runtime_num_devices(rt) == 0);
  CHECK(strcmp(name, "cpu") == 0); /* borrowed strings stay valid */
  /* Loading it again works. */
  CHECK_OK(px_runtime_load_plugin(rt, plugin, g_status), g_status);
  CHECK(px_runtime_num_devices(rt) == 1);
  px_runtime_destroy(rt);

  int before = g_log_count;
  CHECK_OK(px_log_set_level(PX_LOG_LEVEL_ERROR, g_status), g_status);
  rt = NULL;
  CHECK_OK(px_runtime_create(&ro, &rt, g_status), g_status);
  CHECK_OK(px_runtime_load_plugin(rt, plugin, g_status), g_status);
  CHECK(g_log_count == before);
  px_runtime_destroy(rt);
  px_log_set_callback(NULL, NULL);
  CHECK_OK(px_log_set_level(PX_LOG_LEVEL_WARNING, g_status), g_status);
}

/* Every new function given NULL where a handle or out-pointer belongs:
 * INVALID_ARGUMENT naming the argument, and the process carries on. */
static void test_null_arguments(void) {
  px_status* st = g_status;
  void* out = NULL;
  CHECK_CODE(px_session_create_with_options(NULL, NULL, NULL, NULL, st), PX_STATUS_INVALID_ARGUMENT, "runtime", st);
  CHECK_CODE(px_session_write_trace(NULL, "x", st), PX_STATUS_INVALID_ARGUMENT, "session", st);
  CHECK_CODE(px_run_metadata_create(NULL, st), PX_STATUS_INVALID_ARGUMENT, "out_metadata", st);
  CHECK_CODE(px_run_metadata_node(NULL, 0, NULL, NULL, NULL, NULL, NULL, st), PX_STATUS_INVALID_ARGUMENT,
             "metadata", st);
  CHECK_CODE(px_run_metadata_memory(NULL, NULL, st), PX_STATUS_INVALID_ARGUMENT, "metadata", st);
  CHECK_CODE(px_run_metadata_placement(NULL, (px_placement**)&out, st), PX_STATUS_INVALID_ARGUMENT, "metadata", st);
  CHECK(px_run_metadata_num_nodes(NULL) == 0 && px_run_metadata_wall_ns(NULL) == 0);
  CHECK(px_run_metadata_built_executor(NULL) == 0);
  CHECK_CODE(px_session_make_callable(NULL, NULL, 0, NULL, 0, NULL, 0, (px_callable**)&out, st),
             PX_STATUS_INVALID_ARGUMENT, "session", st);
  CHECK_CODE(px_callable_run(NULL, NULL, NULL, NULL, st), PX_STATUS_INVALID_ARGUMENT, "callable", st);
  CHECK_CODE(px_callable_run_async(NULL, NULL, NULL, (px_run_event**)&out, st), PX_STATUS_INVALID_ARGUMENT,
             "callable", st);
  CHECK(px_callable_num_feeds(NULL) == 0 && px_callable_num_fetches(NULL) == 0);
  CHECK(px_run_event_is_done(NULL) == 0);
  CHECK_CODE(px_run_event_wait(NULL, 1, st), PX_STATUS_INVALID_ARGUMENT, "event", st);
  CHECK_CODE(px_run_event_take_results(NULL, NULL, st), PX_STATUS_INVALID_ARGUMENT, "event", st);
  CHECK_CODE(px_checkpoint_write(NULL, NULL, NULL, 0, st), PX_STATUS_INVALID_ARGUMENT, "prefix", st);
  CHECK_CODE(px_checkpoint_write("p", NULL, NULL, 1, st), PX_STATUS_INVALID_ARGUMENT, "keys", st);
  CHECK_CODE(px_checkpoint_read("p", NULL, (px_tensor**)&out, st), PX_STATUS_INVALID_ARGUMENT, "key", st);
  CHECK_CODE(px_checkpoint_keys("p", NULL, NULL, st), PX_STATUS_INVALID_ARGUMENT, "out_keys", st);
  CHECK_CODE(px_saved_model_save(NULL, "p", st), PX_STATUS_INVALID_ARGUMENT, "model", st);
  CHECK_CODE(px_saved_model_restore(NULL, "p", st), PX_STATUS_INVALID_ARGUMENT, "model", st);
  CHECK_CODE(px_runtime_unload_plugin(NULL, "cpu", st), PX_STATUS_INVALID_ARGUMENT, "runtime", st);
  CHECK_CODE(px_runtime_unload_plugin(g_runtime, NULL, st), PX_STATUS_INVALID_ARGUMENT, "name", st);
  CHECK_CODE(px_eager_context_create(NULL, NULL, (px_eager_context**)&out, st), PX_STATUS_INVALID_ARGUMENT,
             "runtime", st);
  CHECK_CODE(px_eager_copy_to_device(NULL, NULL, NULL, NULL, st), PX_STATUS_INVALID_ARGUMENT, "context", st);
  CHECK_CODE(px_eager_synchronize(NULL, NULL, st), PX_STATUS_INVALID_ARGUMENT, "context", st);
  CHECK_CODE(px_tensor_copy_to_host(NULL, (px_tensor**)&out, st), PX_STATUS_INVALID_ARGUMENT, "tensor", st);
  CHECK(strcmp(px_tensor_device_name(NULL), "") == 0 && px_tensor_is_host_readable(NULL) == 0);
  CHECK(px_eager_cache_size(NULL) == 0);
  px_eager_clear_cache(NULL);
  px_eager_context_destroy(NULL);
  CHECK_CODE(px_graph_create(NULL, st), PX_STATUS_INVALID_ARGUMENT, "out_graph", st);
  CHECK_CODE(px_graph_finish(NULL, st), PX_STATUS_INVALID_ARGUMENT, "graph", st);
  CHECK_CODE(px_graph_to_graphdef(NULL, NULL, st), PX_STATUS_INVALID_ARGUMENT, "graph", st);
  CHECK_CODE(px_attrs_create(NULL, st), PX_STATUS_INVALID_ARGUMENT, "out_attrs", st);
  CHECK_CODE(px_attrs_set_float(NULL, "f", 1, st), PX_STATUS_INVALID_ARGUMENT, "attrs", st);
  CHECK_CODE(px_operation_output_shape(NULL, 0, NULL, NULL, st), PX_STATUS_INVALID_ARGUMENT, "operation", st);
  CHECK_CODE(px_operation_attr_float(NULL, "f", NULL, st), PX_STATUS_INVALID_ARGUMENT, "out_value", st);
  float fv = 0;
  CHECK_CODE(px_operation_attr_float(NULL, "f", &fv, st), PX_STATUS_INVALID_ARGUMENT, "operation", st);
  CHECK_CODE(px_operation_attr_value_proto(NULL, "f", NULL, st), PX_STATUS_INVALID_ARGUMENT, "out_buffer", st);
  CHECK(px_buffer_data(NULL) == NULL && px_buffer_size(NULL) == 0);
  px_buffer_destroy(NULL);
  px_callable_destroy(NULL);
  px_run_metadata_destroy(NULL);
  px_attrs_destroy(NULL);
  CHECK(out == NULL);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s <cpu plugin path>\n", argv[0]);
    return 2;
  }
  const char* data_dir = getenv("PLEXUS_TEST_DATA");
  const char* tmp = getenv("TMPDIR");
  snprintf(g_tmp, sizeof g_tmp, "%s/c_api_run_test.XXXXXX", tmp != NULL && *tmp ? tmp : "/tmp");
  if (mkdtemp(g_tmp) == NULL) {
    perror("mkdtemp");
    return 2;
  }
  g_status = px_status_create();
  px_runtime_options options = {sizeof options, 0, 0};
  CHECK_OK(px_runtime_create(&options, &g_runtime, g_status), g_status);
  CHECK_OK(px_runtime_load_plugin(g_runtime, argv[1], g_status), g_status);
  test_null_arguments();
  test_session_options();
  test_strict_placement();
  test_run_metadata();
  test_callables_and_async();
  if (data_dir != NULL) test_checkpoints(data_dir);
  px_runtime_destroy(g_runtime);
  test_logging_and_unload(argv[1]);
  px_status_destroy(g_status);
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp);
  return c_check_report("c_api_run_test");
}

/* Test of the C API, written in plain C11 against c_api.h alone.
 *
 * Usage: c_api_test <path of the cpu plugin>
 * Reads the graphs under $PLEXUS_TEST_DATA/tf_graphs. Prints "N passed, M
 * failed" and returns non-zero when anything failed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_check.h"

C_CHECK_DEFINE_COUNTERS;

static int contains(const char* haystack, const char* needle) {
  return haystack != NULL && strstr(haystack, needle) != NULL;
}

static char g_data_dir[4096];

/* $PLEXUS_TEST_DATA/tf_graphs/<relative>, in a static buffer. */
static const char* graph_path(const char* relative) {
  static char path[4096 + 256];
  snprintf(path, sizeof(path), "%s/%s", g_data_dir, relative);
  return path;
}

/* ---- Status, dtypes and tensors ------------------------------------------ */

static void test_status_and_dtypes(void) {
  px_status* status = px_status_create();
  CHECK(status != NULL);
  CHECK(px_status_code(status) == PX_STATUS_OK);
  CHECK(strcmp(px_status_message(status), "") == 0);
  CHECK(px_status_code(NULL) == PX_STATUS_OK);
  px_status_destroy(status);
  px_status_destroy(NULL);

  CHECK(px_dtype_size(PX_DTYPE_FLOAT) == 4);
  CHECK(px_dtype_size(PX_DTYPE_INT64) == 8);
  CHECK(px_dtype_size(PX_DTYPE_STRING) == 0);
  CHECK(strcmp(px_dtype_name(PX_DTYPE_FLOAT), "float") == 0);
  CHECK(strcmp(px_dtype_name(PX_DTYPE_INT32), "int32") == 0);
  CHECK(px_dtype_name((px_dtype)999) != NULL);
}

static void test_tensors(void) {
  px_status* status = px_status_create();
  const int64_t dims[2] = {2, 3};
  const float values[6] = {1, 2, 3, 4, 5, 6};
  px_tensor* t = NULL;

  CHECK_OK(px_tensor_create_from_data(PX_DTYPE_FLOAT, dims, 2, values, sizeof(values), &t,
                                      status),
           status);
  if (t != NULL) {
    CHECK(px_tensor_dtype(t) == PX_DTYPE_FLOAT);
    CHECK(px_tensor_ndim(t) == 2);
    CHECK(px_tensor_dim(t, 0) == 2 && px_tensor_dim(t, 1) == 3);
    CHECK(px_tensor_dim(t, 2) == -1 && px_tensor_dim(t, -1) == -1);
    CHECK(px_tensor_num_elements(t) == 6);
    CHECK(px_tensor_byte_size(t) == sizeof(values));
    CHECK(memcmp(px_tensor_data(t), values, sizeof(values)) == 0);
    CHECK(px_tensor_data(t) != (void*)values); /* a copy */
  }

  /* .npy round trip */
  if (t != NULL) {
    const char* npy = "c_api_test_roundtrip.npy";
    px_tensor* back = NULL;
    CHECK_OK(px_tensor_write_npy(t, npy, status), status);
    CHECK_OK(px_tensor_read_npy(npy, &back, status), status);
    if (back != NULL) {
      CHECK(px_tensor_dtype(back) == PX_DTYPE_FLOAT && px_tensor_ndim(back) == 2);
      CHECK(px_tensor_dim(back, 0) == 2 && px_tensor_dim(back, 1) == 3);
      CHECK(memcmp(px_tensor_data(back), values, sizeof(values)) == 0);
    }
    px_tensor_destroy(back);
    remove(npy);
  }
  px_tensor_destroy(t);

  /* A zero-filled scalar; dims may be NULL when ndim is 0. */
  t = NULL;
  CHECK_OK(px_tensor_create(PX_DTYPE_INT64, NULL, 0, &t, status), status);
  if (t != NULL) {
    CHECK(px_tensor_ndim(t) == 0 && px_tensor_num_elements(t) == 1);
    CHECK(*(int64_t*)px_tensor_data(t) == 0);
  }
  px_tensor_destroy(t);
  px_tensor_destroy(NULL);

  /* The wrong byte size: the message says both numbers. */
  t = NULL;
  CHECK(px_tensor_create_from_data(PX_DTYPE_FLOAT, dims, 2, values, 20, &t, status) ==
        PX_STATUS_INVALID_ARGUMENT);
  CHECK(t == NULL);
  CHECK(contains(px_status_message(status), "20") && contains(px_status_message(status), "24"));

  /* String tensors are refused with a clear message. */
  CHECK(px_tensor_create(PX_DTYPE_STRING, dims, 2, &t, status) == PX_STATUS_INVALID_ARGUMENT);
  CHECK(t == NULL && contains(px_status_message(status), "string"));

  /* NULL arguments are named. */
  CHECK(px_tensor_create(PX_DTYPE_FLOAT, NULL, 2, &t, status) == PX_STATUS_INVALID_ARGUMENT);
  CHECK(contains(px_status_message(status), "dims"));
  CHECK(px_tensor_create(PX_DTYPE_FLOAT, dims, 2, NULL, status) == PX_STATUS_INVALID_ARGUMENT);
  CHECK(contains(px_status_message(status), "out_tensor"));
  /* A NULL status is allowed: the code alone comes back. */
  CHECK(px_tensor_create(PX_DTYPE_FLOAT, dims, 2, NULL, NULL) == PX_STATUS_INVALID_ARGUMENT);
  /* A success resets the status. */
  CHECK_OK(px_tensor_create(PX_DTYPE_FLOAT, dims, 2, &t, status), status);
  CHECK(px_status_code(status) == PX_STATUS_OK && strcmp(px_status_message(status), "") == 0);
  px_tensor_destroy(t);

  CHECK(px_tensor_read_npy("/nonexistent/file.npy", &t, status) != PX_STATUS_OK);
  CHECK(contains(px_status_message(status), "/nonexistent/file.npy"));
  px_status_destroy(status);
}

/* ---- DLPack ----------------------------------------------------------------- */

static int g_deleter_calls = 0;
static void (*g_original_deleter)(DLManagedTensor*) = NULL;

static void counting_deleter(DLManagedTensor* self) {
  ++g_deleter_calls;
  if (g_original_deleter != NULL) g_original_deleter(self);
}

static void test_dlpack_round_trip(void) {
  px_status* status = px_status_create();
  const int64_t dims[2] = {3, 2};
  const int32_t values[6] = {10, 20, 30, 40, 50, 60};
  px_tensor* t = NULL;
  DLManagedTensor* managed = NULL;
  px_tensor* back = NULL;
  void* data;

  CHECK_OK(px_tensor_create_from_data(PX_DTYPE_INT32, dims, 2, values, sizeof(values), &t,
                                      status),
           status);
  if (t == NULL) goto done;
  data = px_tensor_data(t);
  CHECK_OK(px_tensor_to_dlpack(t, &managed, status), status);
  if (managed == NULL) goto done;
  CHECK(managed->dl_tensor.data == data);
  CHECK(managed->dl_tensor.device.device_type == kDLCPU);
  CHECK(managed->dl_tensor.ndim == 2);
  CHECK(managed->dl_tensor.shape[0] == 3 && managed->dl_tensor.shape[1] == 2);
  CHECK(managed->dl_tensor.dtype.code == kDLInt && managed->dl_tensor.dtype.bits == 32 &&
        managed->dl_tensor.dtype.lanes == 1);
  CHECK(managed->deleter != NULL);

  /* The export outlives its px_tensor. */
  px_tensor_destroy(t);
  t = NULL;
  CHECK(memcmp(managed->dl_tensor.data, values, sizeof(values)) == 0);

  g_deleter_calls = 0;
  g_original_deleter = managed->deleter;
  managed->deleter = counting_deleter;
  CHECK_OK(px_tensor_from_dlpack(managed, &back, status), status);
  if (back == NULL) {
    managed->deleter(managed);
    goto done;
  }
  CHECK(px_tensor_data(back) == data);
  CHECK(px_tensor_dtype(back) == PX_DTYPE_INT32);
  CHECK(px_tensor_ndim(back) == 2 && px_tensor_dim(back, 0) == 3 && px_tensor_dim(back, 1) == 2);
  CHECK(memcmp(px_tensor_data(back), values, sizeof(values)) == 0);
  CHECK(g_deleter_calls == 0);
  px_tensor_destroy(back);
  CHECK(g_deleter_calls == 1);

done:
  px_tensor_destroy(t);
  px_status_destroy(status);
}

/* A DLManagedTensor made by the caller, over a static array. */
static int g_foreign_deleter_calls = 0;
static void foreign_deleter(DLManagedTensor* self) {
  (void)self;
  ++g_foreign_deleter_calls;
}

static void test_dlpack_import_checks(void) {
  px_status* status = px_status_create();
  static float storage[8] = {0, 0, 1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {2, 3};
  int64_t strides[2] = {3, 1};
  DLManagedTensor managed;
  px_tensor* t = NULL;

  memset(&managed, 0, sizeof(managed));
  managed.dl_tensor.data = storage;
  managed.dl_tensor.byte_offset = 2 * sizeof(float);
  managed.dl_tensor.device.device_type = kDLCPU;
  managed.dl_tensor.ndim = 2;
  managed.dl_tensor.dtype.code = kDLFloat;
  managed.dl_tensor.dtype.bits = 32;
  managed.dl_tensor.dtype.lanes = 1;
  managed.dl_tensor.shape = shape;
  managed.dl_tensor.strides = strides;
  managed.deleter = foreign_deleter;

  /* Row-major strides and byte_offset are honoured. */
  g_foreign_deleter_calls = 0;
  CHECK_OK(px_tensor_from_dlpack(&managed, &t, status), status);
  if (t != NULL) {
    const float* got = (const float*)px_tensor_data(t);
    CHECK(got == storage + 2);
    CHECK(got[0] == 1 && got[5] == 6);
    CHECK(px_tensor_byte_size(t) == 6 * sizeof(float));
    px_tensor_destroy(t);
    t = NULL;
  }
  CHECK(g_foreign_deleter_calls == 1);

  /* Refusals leave ownership with the caller: the deleter is not called. */
  g_foreign_deleter_calls = 0;
  strides[0] = 1;
  strides[1] = 2; /* column-major */
  CHECK(px_tensor_from_dlpack(&managed, &t, status) == PX_STATUS_INVALID_ARGUMENT);
  CHECK(t == NULL && contains(px_status_message(status), "row-major"));
  strides[0] = 3;
  strides[1] = 1;

  managed.dl_tensor.device.device_type = kDLCUDA;
  CHECK(px_tensor_from_dlpack(&managed, &t, status) == PX_STATUS_INVALID_ARGUMENT);
  CHECK(t == NULL && contains(px_status_message(status), "kDLCPU"));
  managed.dl_tensor.device.device_type = kDLCPU;

  managed.dl_tensor.dtype.lanes = 4;
  CHECK(px_tensor_from_dlpack(&managed, &t, status) == PX_STATUS_INVALID_ARGUMENT);
  CHECK(t == NULL && contains(px_status_message(status), "lanes"));
  managed.dl_tensor.dtype.lanes = 1;

  CHECK(px_tensor_from_dlpack(NULL, &t, status) == PX_STATUS_INVALID_ARGUMENT);
  CHECK(contains(px_status_message(status), "managed"));
  CHECK(g_foreign_deleter_calls == 0);
  px_status_destroy(status);
}

/* ---- Runtime, graphs, sessions ------------------------------------------------ */

static px_runtime* make_runtime(const char* plugin_path) {
  px_status* status = px_status_create();
  px_runtime_options options;
  px_runtime* runtime = NULL;
  size_t i;

  memset(&options, 0, sizeof(options));
  options.struct_size = sizeof(options);
  options.discover_plugins = 0;
  CHECK_OK(px_runtime_create(&options, &runtime, status), status);
  if (runtime == NULL) goto done;
  CHECK(px_runtime_num_plugins(runtime) == 0);
  CHECK(px_runtime_num_devices(runtime) == 0);

  CHECK_OK(px_runtime_load_plugin(runtime, plugin_path, status), status);
  CHECK(px_runtime_num_plugins(runtime) == 1);
  CHECK(px_runtime_num_devices(runtime) >= 1);

  for (i = 0; i < px_runtime_num_plugins(runtime); ++i) {
    px_plugin_info info;
    memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    CHECK_OK(px_runtime_plugin_info(runtime, i, &info, status), status);
    CHECK(info.name != NULL && strcmp(info.name, "cpu") == 0);
    CHECK(info.path != NULL && strcmp(info.path, plugin_path) == 0);
    CHECK(info.version != NULL && info.device_type != NULL);
    CHECK(info.num_kernels > 0);
    printf("plugin %s %s (ABI %u.%u, %zu kernels, device type %s)\n", info.name, info.version,
           info.abi_major, info.abi_minor, info.num_kernels, info.device_type);
  }
  for (i = 0; i < px_runtime_num_devices(runtime); ++i) {
    px_device_info info;
    memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    CHECK_OK(px_runtime_device_info(runtime, i, &info, status), status);
    CHECK(info.name != NULL && strcmp(info.name, "CPU:0") == 0);
    CHECK(info.type != NULL && strcmp(info.type, "CPU") == 0);
    CHECK(info.plugin_name != NULL && strcmp(info.plugin_name, "cpu") == 0);
    CHECK(info.description != NULL && info.vendor != NULL);
    printf("device %s: %s (%s), %llu bytes\n", info.name, info.description, info.vendor,
           (unsigned long long)info.total_memory_bytes);
  }
  {
    /* Out-of-range indices and a struct_size that was not set. */
    px_plugin_info info;
    memset(&info, 0, sizeof(info));
    CHECK(px_runtime_plugin_info(runtime, 0, &info, status) == PX_STATUS_INVALID_ARGUMENT);
    CHECK(contains(px_status_message(status), "struct_size"));
    info.struct_size = sizeof(info);
    CHECK(px_runtime_plugin_info(runtime, 99, &info, status) == PX_STATUS_OUT_OF_RANGE);
  }
  {
    int loaded = 0;
    const char* message = NULL;
    CHECK(px_runtime_num_load_reports(runtime) == 1);
    CHECK_OK(px_runtime_load_report(runtime, 0, &loaded, &message, status), status);
    CHECK(loaded == 1 && message != NULL && message[0] != '\0');
  }
done:
  px_status_destroy(status);
  return runtime;
}

static void test_plugin_load_failure(px_runtime* runtime) {
  px_status* status = px_status_create();
  const char* missing = "/nonexistent/libplexus_plugin_missing.so";
  size_t reports = px_runtime_num_load_reports(runtime);
  int loaded = 1;
  const char* message = NULL;

  CHECK(px_runtime_load_plugin(runtime, missing, status) != PX_STATUS_OK);
  CHECK(contains(px_status_message(status), missing));
  CHECK(px_runtime_num_plugins(runtime) == 1);
  CHECK(px_runtime_num_load_reports(runtime) == reports + 1);
  CHECK_OK(px_runtime_load_report(runtime, reports, &loaded, &message, status), status);
  CHECK(loaded == 0 && contains(message, missing));

  CHECK(px_runtime_load_plugin(runtime, NULL, status) == PX_STATUS_INVALID_ARGUMENT);
  CHECK(contains(px_status_message(status), "path"));
  CHECK(px_runtime_load_plugin(NULL, missing, status) == PX_STATUS_INVALID_ARGUMENT);
  CHECK(contains(px_status_message(status), "runtime"));
  px_status_destroy(status);
}

static void test_addition(px_runtime* runtime) {
  px_status* status = px_status_create();
  px_graph* graph = NULL;
  px_session* session = NULL;
  px_tensor* x = NULL;
  px_tensor* y = NULL;
  px_tensor* z = NULL;
  const int32_t two = 2, three = 3;
  const float two_f = 2.0f;

  CHECK_OK(px_graph_import_file(graph_path("addition_tf2/model.pb"), &graph, status), status);
  if (graph == NULL) goto done;
  CHECK(px_graph_num_nodes(graph) == 3);
  CHECK_OK(px_session_create(runtime, graph, NULL, &session, status), status);
  /* The session keeps what it needs: the graph may go now. */
  px_graph_destroy(graph);
  graph = NULL;
  if (session == NULL) goto done;
  CHECK(strcmp(px_session_device_name(session), "CPU:0") == 0);

  CHECK_OK(px_tensor_create_from_data(PX_DTYPE_INT32, NULL, 0, &two, sizeof(two), &x, status),
           status);
  CHECK_OK(px_tensor_create_from_data(PX_DTYPE_INT32, NULL, 0, &three, sizeof(three), &y, status),
           status);
  if (x == NULL || y == NULL) goto done;
  {
    const char* feed_names[2] = {"x", "y:0"};
    const px_tensor* feed_values[2] = {x, y};
    const char* fetch_names[1] = {"z:0"};
    CHECK_OK(px_session_run(session, feed_names, feed_values, 2, fetch_names, 1, NULL, 0, &z,
                            status),
             status);
    if (z != NULL) {
      CHECK(px_tensor_dtype(z) == PX_DTYPE_INT32);
      CHECK(px_tensor_ndim(z) == 0);
      CHECK(*(const int32_t*)px_tensor_data(z) == 5);
      px_tensor_destroy(z);
      z = NULL;
    }
  }

  /* Where each node ran: z = x + y, one kernel on CPU:0 of the cpu plugin. */
  {
    px_placement* placement = NULL;
    const char *node = NULL, *op = NULL, *how = NULL, *device = NULL, *plugin = NULL, *reason = NULL;
    CHECK_OK(px_session_placement(session, &placement, status), status);
    CHECK(px_placement_num_nodes(placement) == 1);
    CHECK_OK(px_placement_node(placement, 0, &node, &op, &how, &device, &plugin, &reason, status),
             status);
    CHECK(node != NULL && strcmp(node, "z") == 0);
    CHECK(op != NULL && strcmp(op, "AddV2") == 0);
    CHECK(how != NULL && strcmp(how, "kernel") == 0);
    CHECK(device != NULL && strcmp(device, "CPU:0") == 0);
    CHECK(plugin != NULL && strcmp(plugin, "cpu") == 0);
    CHECK(reason != NULL && strcmp(reason, "") == 0);
    CHECK(px_placement_num_copies(placement) == 0);
    CHECK(px_placement_node(placement, 1, NULL, NULL, NULL, NULL, NULL, NULL, status) ==
          PX_STATUS_OUT_OF_RANGE);
    CHECK(contains(px_status_message(status), "out of range"));
    CHECK(contains(px_placement_text(placement), "node 'z' (op AddV2): CPU:0, kernel of plugin 'cpu'"));
    CHECK(contains(px_placement_text(placement), "summary: 1 node (CPU:0: 1), 0 copies across devices"));
    px_placement_destroy(placement);
    CHECK(px_session_placement(NULL, &placement, status) == PX_STATUS_INVALID_ARGUMENT);
    CHECK(px_placement_num_nodes(NULL) == 0 && strcmp(px_placement_text(NULL), "") == 0);
    px_placement_destroy(NULL);
  }

  /* Wrong dtype: the message names the tensor; out_fetches is not written. */
  {
    px_tensor* x_float = NULL;
    px_tensor* sentinel = (px_tensor*)&g_passed; /* never dereferenced */
    const char* feed_names[2] = {"x", "y"};
    const px_tensor* feed_values[2] = {NULL, y};
    const char* fetch_names[1] = {"z"};
    px_tensor* out = sentinel;
    CHECK_OK(px_tensor_create_from_data(PX_DTYPE_FLOAT, NULL, 0, &two_f, sizeof(two_f), &x_float,
                                        status),
             status);
    feed_values[0] = x_float;
    CHECK(px_session_run(session, feed_names, feed_values, 2, fetch_names, 1, NULL, 0, &out,
                         status) == PX_STATUS_INVALID_ARGUMENT);
    CHECK(contains(px_status_message(status), "'x"));
    CHECK(contains(px_status_message(status), "float"));
    CHECK(out == sentinel);
    px_tensor_destroy(x_float);
  }

  /* Unknown fetch: the message names it. */
  {
    const char* feed_names[2] = {"x", "y"};
    const px_tensor* feed_values[2] = {x, y};
    const char* fetch_names[2] = {"z", "no_such_node:0"};
    px_tensor* out[2] = {NULL, NULL};
    CHECK(px_session_run(session, feed_names, feed_values, 2, fetch_names, 2, NULL, 0, out,
                         status) != PX_STATUS_OK);
    CHECK(contains(px_status_message(status), "no_such_node"));
    CHECK(out[0] == NULL && out[1] == NULL);
  }

  /* NULL entries are refused, naming the array. */
  {
    const char* feed_names[2] = {"x", NULL};
    const px_tensor* feed_values[2] = {x, y};
    const char* fetch_names[1] = {"z"};
    px_tensor* out = NULL;
    CHECK(px_session_run(session, feed_names, feed_values, 2, fetch_names, 1, NULL, 0, &out,
                         status) == PX_STATUS_INVALID_ARGUMENT);
    CHECK(contains(px_status_message(status), "feed_names[1]"));
    CHECK(px_session_run(session, feed_names, feed_values, 2, fetch_names, 1, NULL, 0, NULL,
                         status) == PX_STATUS_INVALID_ARGUMENT);
    CHECK(contains(px_status_message(status), "out_fetches"));
  }

done:
  px_tensor_destroy(x);
  px_tensor_destroy(y);
  px_session_destroy(session);
  px_graph_destroy(graph);
  px_status_destroy(status);
}

static void test_regression(px_runtime* runtime) {
  px_status* status = px_status_create();
  px_graph* graph = NULL;
  px_session* session = NULL;
  px_tensor* x = NULL;
  px_tensor* pred = NULL;
  const float input[3] = {1, 2, 3};
  const double expected[3] = {1.2634872, 1.4774489, 1.6914107};
  const int64_t dims[1] = {3};
  int i;

  CHECK_OK(px_graph_import_file(graph_path("regression_frozen/frozen.pb"), &graph, status),
           status);
  if (graph == NULL) goto done;
  CHECK_OK(px_session_create(runtime, graph, "CPU:0", &session, status), status);
  if (session == NULL) goto done;
  CHECK_OK(px_tensor_create_from_data(PX_DTYPE_FLOAT, dims, 1, input, sizeof(input), &x, status),
           status);
  if (x == NULL) goto done;
  {
    const char* feed_names[1] = {"X"};
    const px_tensor* feed_values[1] = {x};
    const char* fetch_names[1] = {"pred"};
    CHECK_OK(px_session_run(session, feed_names, feed_values, 1, fetch_names, 1, NULL, 0, &pred,
                            status),
             status);
  }
  if (pred == NULL) goto done;
  CHECK(px_tensor_dtype(pred) == PX_DTYPE_FLOAT);
  CHECK(px_tensor_ndim(pred) == 1 && px_tensor_dim(pred, 0) == 3);
  if (px_tensor_num_elements(pred) == 3) {
    const float* got = (const float*)px_tensor_data(pred);
    for (i = 0; i < 3; ++i) {
      if (fabs(got[i] - expected[i]) > 1e-6) {
        fprintf(stderr, "pred[%d] = %.9g, expected %.9g\n", i, got[i], expected[i]);
      }
      CHECK(fabs(got[i] - expected[i]) <= 1e-6);
    }
  }

done:
  px_tensor_destroy(x);
  px_tensor_destroy(pred);
  px_session_destroy(session);
  px_graph_destroy(graph);
  px_status_destroy(status);
}

/* px_graph_gradients: y = x * x + x, so dy/dx = 2x + 1; z has no path. */
static void test_gradients(px_runtime* runtime) {
  static const char kGraph[] =
      "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_DOUBLE } } }\n"
      "node { name: 'z' op: 'Placeholder' attr { key: 'dtype' value { type: DT_DOUBLE } } }\n"
      "node { name: 'sq' op: 'Mul' input: 'x' input: 'x' attr { key: 'T' value { type: DT_DOUBLE } } }\n"
      "node { name: 'y' op: 'AddV2' input: 'sq' input: 'x' attr { key: 'T' value { type: DT_DOUBLE } } }\n";
  px_status* status = px_status_create();
  px_graph* graph = NULL;
  px_graph* grads = NULL;
  const char* ys[1] = {"y"};
  const char* xs[2] = {"x:0", "z"};
  const char* bad[1] = {"nope:0"};
  CHECK_OK(px_graph_import(kGraph, sizeof(kGraph) - 1, PX_GRAPH_FORMAT_TEXT, &graph, status), status);
  if (graph != NULL) {
    CHECK_OK(px_graph_gradients(graph, ys, 1, xs, 2, NULL, &grads, status), status);
    {
      px_graph* none = NULL;
      CHECK(px_graph_gradients(graph, ys, 1, bad, 1, NULL, &none, status) == PX_STATUS_NOT_FOUND);
      CHECK(none == NULL);
      CHECK(contains(px_status_message(status), "nope:0"));
    }
  }
  if (grads != NULL) {
    const char* dx = px_graph_gradient_name(grads, 0);
    px_session* session = NULL;
    CHECK(dx != NULL);
    CHECK(px_graph_gradient_name(grads, 1) == NULL);
    CHECK(px_graph_gradient_name(grads, 2) == NULL);
    CHECK_OK(px_session_create(runtime, grads, NULL, &session, status), status);
    if (session != NULL && dx != NULL) {
      const double values[2] = {3.0, -1.0};
      const int64_t dims[1] = {2};
      px_tensor* x = NULL;
      px_tensor* out = NULL;
      const char* feed_names[1] = {"x"};
      CHECK_OK(px_tensor_create_from_data(PX_DTYPE_DOUBLE, dims, 1, values, sizeof(values), &x, status),
               status);
      {
        const px_tensor* feed_values[1] = {x};
        CHECK_OK(px_session_run(session, feed_names, feed_values, 1, &dx, 1, NULL, 0, &out, status),
                 status);
      }
      if (out != NULL) {
        const double* d = (const double*)px_tensor_data(out);
        CHECK(d[0] == 7.0 && d[1] == -1.0);
        px_tensor_destroy(out);
      }
      px_tensor_destroy(x);
    }
    px_session_destroy(session);
    px_graph_destroy(grads);
  }
  px_graph_destroy(graph);
  px_status_destroy(status);
}

static void test_graph_errors(px_runtime* runtime) {
  px_status* status = px_status_create();
  px_graph* graph = NULL;
  px_session* session = NULL;
  static const unsigned char garbage[] = {0xff, 0xfe, 0x13, 0x37, 'n', 'o', 't', ' ', 'a',
                                          ' ', 'g', 'r', 'a', 'p', 'h', 0x00, 0x42, 0x99};

  CHECK(px_graph_import(garbage, sizeof(garbage), PX_GRAPH_FORMAT_AUTO, &graph, status) !=
        PX_STATUS_OK);
  CHECK(graph == NULL && px_status_message(status)[0] != '\0');
  CHECK(px_graph_import(garbage, sizeof(garbage), PX_GRAPH_FORMAT_BINARY, &graph, status) !=
        PX_STATUS_OK);
  CHECK(graph == NULL && px_status_message(status)[0] != '\0');
  CHECK(px_graph_import(garbage, sizeof(garbage), PX_GRAPH_FORMAT_TEXT, &graph, status) !=
        PX_STATUS_OK);
  CHECK(graph == NULL && px_status_message(status)[0] != '\0');
  CHECK(px_graph_import(NULL, 10, PX_GRAPH_FORMAT_AUTO, &graph, status) ==
        PX_STATUS_INVALID_ARGUMENT);
  CHECK(contains(px_status_message(status), "data"));

  CHECK(px_graph_import_file(graph_path("no_such_dir/model.pb"), &graph, status) !=
        PX_STATUS_OK);
  CHECK(graph == NULL && contains(px_status_message(status), "no_such_dir"));

  /* A text GraphDef from memory. */
  {
    const char* text =
        "node { name: 'a' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } } }\n"
        "node { name: 'b' op: 'Identity' input: 'a' attr { key: 'T' value { type: DT_INT32 } } }\n";
    CHECK_OK(px_graph_import(text, strlen(text), PX_GRAPH_FORMAT_TEXT, &graph, status), status);
    CHECK(px_graph_num_nodes(graph) == 2);
    px_graph_destroy(graph);
    graph = NULL;
  }

  /* A device that is not there. */
  CHECK_OK(px_graph_import_file(graph_path("addition_tf2/model.pb"), &graph, status), status);
  if (graph != NULL) {
    CHECK(px_session_create(runtime, graph, "NOSUCH:3", &session, status) != PX_STATUS_OK);
    CHECK(session == NULL && contains(px_status_message(status), "NOSUCH:3"));
  }
  px_graph_destroy(graph);
  px_status_destroy(status);
}

/* The process-wide intra-op budget: set, read back, the addition still runs
 * with it, 0 restores the automatic value, a negative count is refused. */
static void test_threads(px_runtime* runtime) {
  px_status* status = px_status_create();
  const int32_t automatic = px_intra_op_threads_get();
  CHECK(automatic >= 1);
  CHECK_OK(px_intra_op_threads_set(1, status), status);
  CHECK(px_intra_op_threads_get() == 1);
  test_addition(runtime);
  CHECK_OK(px_intra_op_threads_set(3, status), status);
  CHECK(px_intra_op_threads_get() == 3);
  CHECK(px_intra_op_threads_set(-2, status) == PX_STATUS_INVALID_ARGUMENT);
  CHECK(contains(px_status_message(status), "-2"));
  CHECK(px_intra_op_threads_get() == 3);
  CHECK_OK(px_intra_op_threads_set(0, status), status);
  CHECK(px_intra_op_threads_get() == automatic);
  px_status_destroy(status);
}

int main(int argc, char** argv) {
  const char* data = getenv("PLEXUS_TEST_DATA");
  px_runtime* runtime;

  if (argc < 2) {
    fprintf(stderr, "usage: %s <cpu plugin file>\n", argv[0]);
    return 2;
  }
  if (data == NULL || data[0] == '\0') {
    fprintf(stderr, "PLEXUS_TEST_DATA is not set\n");
    return 2;
  }
  snprintf(g_data_dir, sizeof(g_data_dir), "%s/tf_graphs", data);

  test_status_and_dtypes();
  test_tensors();
  test_dlpack_round_trip();
  test_dlpack_import_checks();

  runtime = make_runtime(argv[1]);
  if (runtime != NULL) {
    test_plugin_load_failure(runtime);
    test_addition(runtime);
    test_regression(runtime);
    test_graph_errors(runtime);
    test_gradients(runtime);
    test_threads(runtime);
    px_runtime_destroy(runtime);
  }
  px_runtime_destroy(NULL);

  printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 && g_passed > 0 ? 0 : 1;
}

/* Runs three real TensorFlow graphs through the Plexus C API and checks
 * their outputs against known values.
 *
 * Usage: plexus_run_tf_graphs [DATA_DIR [DEVICE]]
 *   DATA_DIR  folder holding addition_tf2/, regression_frozen/ and
 *             mlp_fc_layers/ (default: $PLEXUS_TEST_DATA/tf_graphs)
 *   DEVICE    a device name such as "CPU:0" (default: the best device)
 *
 * Plugins are discovered from PLEXUS_PLUGIN_PATH and beside the library.
 * Exits 0 when every output matches, 1 on a mismatch or an error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plexus/c_api.h"

typedef struct {
  const char* data_dir;
  const char* device; /* NULL: the best device */
  px_runtime* runtime;
  px_status* status;
} context;

/* Prints the error of a failed call and returns 1 (so: return fail(...)). */
static int fail(const context* ctx, const char* what) {
  fprintf(stderr, "  ERROR: %s: %s\n", what, px_status_message(ctx->status));
  return 1;
}

static void print_shape(const px_tensor* t) {
  int i;
  printf("[");
  for (i = 0; i < px_tensor_ndim(t); ++i) {
    printf(i ? ",%lld" : "%lld", (long long)px_tensor_dim(t, i));
  }
  printf("]");
}

/* "name: float [1,10] = {a, b, ...}", at most 10 values. */
static void print_tensor(const char* name, px_tensor* t) {
  int64_t i, n = px_tensor_num_elements(t);
  printf("    %s: %s ", name, px_dtype_name(px_tensor_dtype(t)));
  print_shape(t);
  printf(" = {");
  for (i = 0; i < n && i < 10; ++i) {
    if (i > 0) printf(", ");
    switch (px_tensor_dtype(t)) {
      case PX_DTYPE_FLOAT: printf("%.8g", ((const float*)px_tensor_data(t))[i]); break;
      case PX_DTYPE_DOUBLE: printf("%.10g", ((const double*)px_tensor_data(t))[i]); break;
      case PX_DTYPE_INT32: printf("%d", (int)((const int32_t*)px_tensor_data(t))[i]); break;
      case PX_DTYPE_INT64: printf("%lld", (long long)((const int64_t*)px_tensor_data(t))[i]); break;
      default: printf("?"); break;
    }
  }
  printf("%s}\n", n > 10 ? ", ..." : "");
}

/* Prints and returns whether max_error <= tolerance. */
static int report(const char* what, double max_error, double tolerance, const char* kind) {
  int ok = max_error <= tolerance;
  printf("    %s: %s (max %s error %.3g, tolerance %.3g)\n", what, ok ? "match" : "MISMATCH",
         kind, max_error, tolerance);
  return ok;
}

/* Largest |got - want| (or |got - want| / |want| when `relative`); infinity
 * when the sizes differ. */
static double max_error(const float* got, int64_t n_got, const double* want, int64_t n_want,
                        int relative) {
  double worst = 0;
  int64_t i;
  if (n_got != n_want) return INFINITY;
  for (i = 0; i < n_got; ++i) {
    double error = fabs((double)got[i] - want[i]);
    if (relative) error /= fabs(want[i]) > 1e-30 ? fabs(want[i]) : 1.0;
    if (!(error <= worst)) worst = error; /* NaN counts as the worst */
  }
  return worst;
}

/* Imports DATA_DIR/relative and opens a session on ctx->device. */
static int open_session(context* ctx, const char* relative, px_session** out_session) {
  char path[4096];
  px_graph* graph = NULL;
  px_code code;
  snprintf(path, sizeof(path), "%s/%s", ctx->data_dir, relative);
  if (px_graph_import_file(path, &graph, ctx->status) != PX_STATUS_OK) {
    return fail(ctx, "importing the graph");
  }
  code = px_session_create(ctx->runtime, graph, ctx->device, out_session, ctx->status);
  printf("  %s: %zu nodes", path, px_graph_num_nodes(graph));
  px_graph_destroy(graph); /* the session keeps what it needs */
  if (code != PX_STATUS_OK) {
    printf("\n");
    return fail(ctx, "creating the session");
  }
  printf(", running on %s\n", px_session_device_name(*out_session));
  return 0;
}

/* Runs one feed -> one fetch. */
static int run1(context* ctx, px_session* session, const char* feed, const px_tensor* value,
                const char* fetch, px_tensor** out) {
  if (px_session_run(session, &feed, &value, 1, &fetch, 1, NULL, 0, out, ctx->status) !=
      PX_STATUS_OK) {
    return fail(ctx, "running the graph");
  }
  return 0;
}

static int run_addition(context* ctx) {
  px_session* session = NULL;
  px_tensor* x = NULL;
  px_tensor* y = NULL;
  px_tensor* z = NULL;
  const int32_t two = 2, three = 3;
  int errors = 0;

  printf("addition_tf2: z = x + y with x = 2, y = 3 (int32 scalars)\n");
  if (open_session(ctx, "addition_tf2/model.pb", &session) != 0) return 1;
  if (px_tensor_create_from_data(PX_DTYPE_INT32, NULL, 0, &two, sizeof(two), &x, ctx->status) ||
      px_tensor_create_from_data(PX_DTYPE_INT32, NULL, 0, &three, sizeof(three), &y,
                                 ctx->status)) {
    errors = fail(ctx, "creating the inputs");
  } else {
    const char* feed_names[2] = {"x", "y"};
    const px_tensor* feed_values[2] = {x, y};
    const char* fetch = "z";
    if (px_session_run(session, feed_names, feed_values, 2, &fetch, 1, NULL, 0, &z,
                       ctx->status) != PX_STATUS_OK) {
      errors = fail(ctx, "running the graph");
    } else {
      int ok = px_tensor_dtype(z) == PX_DTYPE_INT32 && px_tensor_num_elements(z) == 1;
      print_tensor("z", z);
      if (ok) ok = *(const int32_t*)px_tensor_data(z) == 5;
      printf("    z == 5 (exact): %s\n", ok ? "match" : "MISMATCH");
      errors = !ok;
    }
  }
  px_tensor_destroy(x);
  px_tensor_destroy(y);
  px_tensor_destroy(z);
  px_session_destroy(session);
  return errors;
}

static int run_regression(context* ctx) {
  px_session* session = NULL;
  px_tensor* x = NULL;
  px_tensor* pred = NULL;
  const float input[3] = {1, 2, 3};
  const double expected[3] = {1.2634872, 1.4774489, 1.6914107};
  const int64_t dims[1] = {3};
  int errors = 0;

  printf("regression_frozen: pred = 0.21396178 * X + 1.04952538 with X = [1,2,3]\n");
  if (open_session(ctx, "regression_frozen/frozen.pb", &session) != 0) return 1;
  if (px_tensor_create_from_data(PX_DTYPE_FLOAT, dims, 1, input, sizeof(input), &x,
                                 ctx->status) != PX_STATUS_OK) {
    errors = fail(ctx, "creating the input");
  } else if (run1(ctx, session, "X", x, "pred", &pred) != 0) {
    errors = 1;
  } else if (px_tensor_dtype(pred) != PX_DTYPE_FLOAT) {
    printf("    pred has dtype %s, expected float: MISMATCH\n",
           px_dtype_name(px_tensor_dtype(pred)));
    errors = 1;
  } else {
    print_tensor("pred", pred);
    errors = !report("pred vs [1.2634872, 1.4774489, 1.6914107]",
                     max_error((const float*)px_tensor_data(pred), px_tensor_num_elements(pred),
                               expected, 3, 0),
                     1e-6, "absolute");
  }
  px_tensor_destroy(x);
  px_tensor_destroy(pred);
  px_session_destroy(session);
  return errors;
}

/* Feeds X:0 from input_npy, compares output:0 with output_npy. */
static int run_mlp_case(context* ctx, px_session* session, const char* input_npy,
                        const char* output_npy, double tolerance, int relative) {
  char path[4096];
  px_tensor* input = NULL;
  px_tensor* want = NULL;
  px_tensor* got = NULL;
  double* want_values = NULL;
  int errors = 0;

  printf("  %s -> output:0 vs %s\n", input_npy, output_npy);
  snprintf(path, sizeof(path), "%s/mlp_fc_layers/%s", ctx->data_dir, input_npy);
  if (px_tensor_read_npy(path, &input, ctx->status) != PX_STATUS_OK) {
    errors = fail(ctx, "reading the input");
    goto done;
  }
  snprintf(path, sizeof(path), "%s/mlp_fc_layers/%s", ctx->data_dir, output_npy);
  if (px_tensor_read_npy(path, &want, ctx->status) != PX_STATUS_OK) {
    errors = fail(ctx, "reading the reference output");
    goto done;
  }
  printf("    X:0: %s ", px_dtype_name(px_tensor_dtype(input)));
  print_shape(input);
  printf("\n");
  if (run1(ctx, session, "X:0", input, "output:0", &got) != 0) {
    errors = 1;
    goto done;
  }
  print_tensor("output:0", got);
  if (px_tensor_dtype(got) != PX_DTYPE_FLOAT || px_tensor_dtype(want) != PX_DTYPE_FLOAT ||
      px_tensor_num_elements(got) != px_tensor_num_elements(want)) {
    printf("    output:0 has the wrong dtype or size: MISMATCH\n");
    errors = 1;
    goto done;
  }
  {
    int64_t i, n = px_tensor_num_elements(want);
    const float* w = (const float*)px_tensor_data(want);
    want_values = (double*)malloc((size_t)n * sizeof(double));
    if (want_values == NULL) {
      errors = 1;
      goto done;
    }
    for (i = 0; i < n; ++i) want_values[i] = w[i];
    errors = !report("output:0 vs reference",
                     max_error((const float*)px_tensor_data(got), n, want_values, n, relative),
                     tolerance, relative ? "relative" : "absolute");
  }
done:
  free(want_values);
  px_tensor_destroy(input);
  px_tensor_destroy(want);
  px_tensor_destroy(got);
  return errors;
}

static int run_mlp(context* ctx) {
  px_session* session = NULL;
  int errors = 0;

  printf("mlp_fc_layers: 784 -> 256 -> 256 -> 10 MLP (MatMul, BiasAdd, Relu)\n");
  if (open_session(ctx, "mlp_fc_layers/frozen.pb", &session) != 0) return 1;
  /* Outputs of magnitude ~1e4: float32 rounding alone is ~4e-3 absolute. */
  errors += run_mlp_case(ctx, session, "ref_input_ramp.npy", "ref_output_ramp.npy", 1e-2, 0);
  errors += run_mlp_case(ctx, session, "ref_input_ramp_div784.npy", "ref_output_ramp_div784.npy",
                         1e-4, 1);
  px_session_destroy(session);
  return errors;
}

static void print_runtime(const context* ctx) {
  size_t i, n;
  n = px_runtime_num_plugins(ctx->runtime);
  printf("%zu plugin(s):\n", n);
  for (i = 0; i < n; ++i) {
    px_plugin_info info;
    memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    if (px_runtime_plugin_info(ctx->runtime, i, &info, ctx->status) != PX_STATUS_OK) continue;
    printf("  %s %s: ABI %u.%u, %zu kernels, device type %s (%s)\n", info.name, info.version,
           info.abi_major, info.abi_minor, info.num_kernels, info.device_type, info.path);
  }
  n = px_runtime_num_load_reports(ctx->runtime);
  for (i = 0; i < n; ++i) {
    int loaded = 0;
    const char* message = NULL;
    if (px_runtime_load_report(ctx->runtime, i, &loaded, &message, ctx->status) == PX_STATUS_OK &&
        !loaded) {
      printf("  refused: %s\n", message);
    }
  }
  n = px_runtime_num_devices(ctx->runtime);
  printf("%zu device(s):\n", n);
  for (i = 0; i < n; ++i) {
    px_device_info info;
    memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    if (px_runtime_device_info(ctx->runtime, i, &info, ctx->status) != PX_STATUS_OK) continue;
    printf("  %s: %s (%s, plugin %s), %.1f GiB memory", info.name, info.description,
           info.vendor, info.plugin_name, info.total_memory_bytes / (1024.0 * 1024 * 1024));
    if (info.free_memory_bytes > 0) {
      printf(", %.1f GiB free", info.free_memory_bytes / (1024.0 * 1024 * 1024));
    }
    printf("\n");
  }
}

int main(int argc, char** argv) {
  char default_dir[4096];
  context ctx;
  int errors = 0;
  px_runtime_options options;

  memset(&ctx, 0, sizeof(ctx));
  if (argc > 1) {
    ctx.data_dir = argv[1];
  } else {
    const char* data = getenv("PLEXUS_TEST_DATA");
    if (data == NULL || data[0] == '\0') {
      fprintf(stderr, "usage: %s [DATA_DIR [DEVICE]]\n"
                      "  (DATA_DIR defaults to $PLEXUS_TEST_DATA/tf_graphs, which is not set)\n",
              argv[0]);
      return 2;
    }
    snprintf(default_dir, sizeof(default_dir), "%s/tf_graphs", data);
    ctx.data_dir = default_dir;
  }
  ctx.device = argc > 2 ? argv[2] : NULL;

  ctx.status = px_status_create();
  if (ctx.status == NULL) return 1;
  memset(&options, 0, sizeof(options));
  options.struct_size = sizeof(options);
  options.discover_plugins = 1;
  if (px_runtime_create(&options, &ctx.runtime, ctx.status) != PX_STATUS_OK) {
    fail(&ctx, "creating the runtime");
    px_status_destroy(ctx.status);
    return 1;
  }
  print_runtime(&ctx);
  if (px_runtime_num_devices(ctx.runtime) == 0) {
    fprintf(stderr, "no device: is a plugin in PLEXUS_PLUGIN_PATH or beside the library?\n");
    errors = 1;
  } else {
    printf("data: %s; device: %s\n\n", ctx.data_dir, ctx.device ? ctx.device : "(best)");
    errors += run_addition(&ctx);
    errors += run_regression(&ctx);
    errors += run_mlp(&ctx);
    printf("\n%s\n", errors == 0 ? "all outputs match" : "FAILED: mismatches or errors above");
  }
  px_runtime_destroy(ctx.runtime);
  px_status_destroy(ctx.status);
  return errors == 0 ? 0 : 1;
}

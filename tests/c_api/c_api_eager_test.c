/* Eager execution through the C API (c_api_eager.h), in plain C11: ops with
 * inferred and given attributes, several outputs, variables kept by the
 * context, the per-op cache, devices and copies, errors that run nothing,
 * and one context shared by four threads.
 *
 * Usage: c_api_eager_test <path of the cpu plugin> */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "c_check.h"

C_CHECK_DEFINE_COUNTERS;

static px_status* g_status;
static px_runtime* g_runtime;

static px_tensor* floats(const float* values, const int64_t* dims, int ndim) {
  size_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= (size_t)dims[i];
  px_tensor* t = NULL;
  CHECK_OK(px_tensor_create_from_data(PX_DTYPE_FLOAT, dims, ndim, values, n * sizeof(float), &t, g_status),
           g_status);
  return t;
}

/* Runs a one-output op; the result or NULL. */
static px_tensor* run1(px_eager_context* ctx, const char* op, const px_tensor* const* inputs, size_t n,
                       const px_attrs* attrs) {
  px_tensor* out[1] = {NULL};
  size_t num = 0;
  CHECK_OK(px_eager_execute(ctx, op, inputs, n, attrs, NULL, out, 1, &num, g_status), g_status);
  CHECK(num == 1 || out[0] == NULL);
  return out[0];
}

static void test_ops(void) {
  px_eager_context* ctx = NULL;
  CHECK_OK(px_eager_context_create(g_runtime, NULL, &ctx, g_status), g_status);
  if (ctx == NULL) return;
  const int64_t dims[2] = {2, 2};
  const float av[4] = {1, 2, 3, 4};
  const float bv[4] = {0.5f, -1, 2, 0};
  px_tensor* a = floats(av, dims, 2);
  px_tensor* b = floats(bv, dims, 2);

  /* T inferred. */
  const px_tensor* ab[2] = {a, b};
  px_tensor* sum = run1(ctx, "AddV2", ab, 2, NULL);
  if (sum != NULL) {
    const float* s = (const float*)px_tensor_data(sum);
    for (int i = 0; i < 4; ++i) CHECK(s[i] == av[i] + bv[i]);
    CHECK(px_tensor_is_host_readable(sum));
    CHECK(strcmp(px_tensor_device_name(sum), "CPU:0") == 0 || strcmp(px_tensor_device_name(sum), "") == 0);
  }

  /* A given attribute: a^T b. */
  px_attrs* attrs = NULL;
  CHECK_OK(px_attrs_create(&attrs, g_status), g_status);
  CHECK_OK(px_attrs_set_bool(attrs, "transpose_a", 1, g_status), g_status);
  px_tensor* mm = run1(ctx, "MatMul", ab, 2, attrs);
  if (mm != NULL) {
    const float* m = (const float*)px_tensor_data(mm);
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2; ++j) {
        float want = 0;
        for (int k = 0; k < 2; ++k) want += av[k * 2 + i] * bv[k * 2 + j];
        CHECK(fabsf(m[i * 2 + j] - want) < 1e-6f);
      }
    }
  }

  /* An eager result feeds the next op; Cast takes DstT. */
  px_attrs_clear(attrs);
  CHECK_OK(px_attrs_set_type(attrs, "DstT", PX_DTYPE_INT32, g_status), g_status);
  const px_tensor* sum_in[1] = {sum};
  px_tensor* cast = run1(ctx, "Cast", sum_in, 1, attrs);
  if (cast != NULL) {
    CHECK(px_tensor_dtype(cast) == PX_DTYPE_INT32);
    CHECK(((const int32_t*)px_tensor_data(cast))[2] == 5);
  }

  /* Several outputs: Unpack along axis 0 gives two rows. */
  px_attrs_clear(attrs);
  CHECK_OK(px_attrs_set_int(attrs, "num", 2, g_status), g_status);
  size_t count = 0;
  const px_dtype float_type[1] = {PX_DTYPE_FLOAT};
  CHECK_OK(px_eager_num_outputs(ctx, "Unpack", float_type, 1, attrs, NULL, &count, g_status), g_status);
  CHECK(count == 2);
  px_tensor* rows[2] = {NULL, NULL};
  size_t num = 99;
  const px_tensor* a_in[1] = {a};
  CHECK_CODE(px_eager_execute(ctx, "Unpack", a_in, 1, attrs, NULL, rows, 1, &num, g_status), PX_STATUS_OUT_OF_RANGE,
             "has 2 output(s)", g_status);
  CHECK(num == 99 && rows[0] == NULL);
  CHECK_OK(px_eager_execute(ctx, "Unpack", a_in, 1, attrs, NULL, rows, 2, &num, g_status), g_status);
  CHECK(num == 2);
  if (rows[1] != NULL) {
    CHECK(px_tensor_ndim(rows[1]) == 1 && ((const float*)px_tensor_data(rows[1]))[0] == 3);
  }

  /* The cache: one prepared op per signature. */
  const size_t cached = px_eager_cache_size(ctx);
  CHECK(cached >= 4);
  px_tensor* again = run1(ctx, "AddV2", ab, 2, NULL);
  CHECK(px_eager_cache_size(ctx) == cached);
  px_eager_clear_cache(ctx);
  CHECK(px_eager_cache_size(ctx) == 0);

  /* Errors name the op; nothing is written. */
  px_tensor* out[1] = {NULL};
  CHECK_CODE(px_eager_execute(ctx, "NoSuchOp", ab, 2, NULL, NULL, out, 1, &num, g_status), PX_STATUS_NOT_FOUND,
             "NoSuchOp", g_status);
  const px_tensor* mixed[2] = {a, cast};
  CHECK_CODE(px_eager_execute(ctx, "AddV2", mixed, 2, NULL, NULL, out, 1, &num, g_status),
             PX_STATUS_INVALID_ARGUMENT, "AddV2", g_status);
  const px_tensor* with_null[2] = {a, NULL};
  CHECK_CODE(px_eager_execute(ctx, "AddV2", with_null, 2, NULL, NULL, out, 1, &num, g_status),
             PX_STATUS_INVALID_ARGUMENT, "inputs[1] is NULL", g_status);
  CHECK_CODE(px_eager_execute(ctx, "AddV2", ab, 2, NULL, "TPU:7", out, 1, &num, g_status), PX_STATUS_NOT_FOUND,
             "TPU:7", g_status);
  CHECK_CODE(px_eager_execute(ctx, NULL, ab, 2, NULL, NULL, out, 1, &num, g_status), PX_STATUS_INVALID_ARGUMENT,
             "op_type", g_status);
  CHECK_CODE(px_eager_execute(NULL, "AddV2", ab, 2, NULL, NULL, out, 1, &num, g_status),
             PX_STATUS_INVALID_ARGUMENT, "context", g_status);
  const px_dtype bad_type[1] = {(px_dtype)4242};
  CHECK_CODE(px_eager_num_outputs(ctx, "Relu", bad_type, 1, NULL, NULL, &count, g_status),
             PX_STATUS_INVALID_ARGUMENT, "not a data type", g_status);
  CHECK(out[0] == NULL);

  /* Copies: to a named device and to the host. */
  px_tensor* copy = NULL;
  CHECK_OK(px_eager_copy_to_device(ctx, a, "CPU:0", &copy, g_status), g_status);
  px_tensor* host = NULL;
  CHECK_OK(px_tensor_copy_to_host(copy, &host, g_status), g_status);
  if (host != NULL) CHECK(memcmp(px_tensor_data(host), av, sizeof av) == 0);
  CHECK_OK(px_eager_synchronize(ctx, NULL, g_status), g_status);
  CHECK_OK(px_eager_synchronize(ctx, "CPU:0", g_status), g_status);
  CHECK_CODE(px_eager_synchronize(ctx, "GPU:9", g_status), PX_STATUS_NOT_FOUND, "GPU:9", g_status);

  px_tensor_destroy(host);
  px_tensor_destroy(copy);
  px_tensor_destroy(again);
  px_tensor_destroy(rows[0]);
  px_tensor_destroy(rows[1]);
  px_tensor_destroy(cast);
  px_tensor_destroy(mm);
  px_tensor_destroy(sum);
  px_attrs_destroy(attrs);
  px_tensor_destroy(a);
  px_tensor_destroy(b);
  /* Results may outlive their context. */
  px_tensor* late = NULL;
  {
    const px_tensor* in[1] = {NULL};
    px_tensor* t = floats(av, dims, 2);
    in[0] = t;
    late = run1(ctx, "Neg", in, 1, NULL);
    px_tensor_destroy(t);
  }
  px_eager_context_destroy(ctx);
  if (late != NULL) {
    px_tensor* h = NULL;
    CHECK_OK(px_tensor_copy_to_host(late, &h, g_status), g_status);
    if (h != NULL) CHECK(((const float*)px_tensor_data(h))[3] == -4);
    px_tensor_destroy(h);
  }
  px_tensor_destroy(late);
}

/* A resource variable the context keeps between calls. */
static void test_variables(void) {
  px_eager_options options = {sizeof options, "CPU:0"};
  px_eager_context* ctx = NULL;
  CHECK_OK(px_eager_context_create(g_runtime, &options, &ctx, g_status), g_status);
  if (ctx == NULL) return;
  px_attrs* attrs = NULL;
  CHECK_OK(px_attrs_create(&attrs, g_status), g_status);
  const int64_t dims[1] = {3};
  CHECK_OK(px_attrs_set_type(attrs, "dtype", PX_DTYPE_FLOAT, g_status), g_status);
  CHECK_OK(px_attrs_set_shape(attrs, "shape", dims, 1, g_status), g_status);
  CHECK_OK(px_attrs_set_string(attrs, "shared_name", "v", 1, g_status), g_status);
  px_tensor* handle = run1(ctx, "VarHandleOp", NULL, 0, attrs);
  const float init[3] = {1, 2, 3};
  px_tensor* value = floats(init, dims, 1);
  px_tensor* none[1] = {NULL};
  size_t num = 0;
  const px_tensor* assign_in[2] = {handle, value};
  CHECK_OK(px_eager_execute(ctx, "AssignVariableOp", assign_in, 2, NULL, NULL, none, 0, &num, g_status), g_status);
  CHECK(num == 0);
  CHECK_OK(px_eager_execute(ctx, "AssignAddVariableOp", assign_in, 2, NULL, NULL, none, 0, &num, g_status),
           g_status);
  px_attrs_clear(attrs);
  CHECK_OK(px_attrs_set_type(attrs, "dtype", PX_DTYPE_FLOAT, g_status), g_status);
  const px_tensor* read_in[1] = {handle};
  px_tensor* read = run1(ctx, "ReadVariableOp", read_in, 1, attrs);
  if (read != NULL) {
    const float* r = (const float*)px_tensor_data(read);
    for (int i = 0; i < 3; ++i) CHECK(r[i] == 2 * init[i]);
  }
  px_tensor_destroy(read);
  px_tensor_destroy(value);
  px_tensor_destroy(handle);
  px_attrs_destroy(attrs);
  px_eager_context_destroy(ctx);

  options.device = "NoSuchDevice:0";
  CHECK_CODE(px_eager_context_create(g_runtime, &options, &ctx, g_status), PX_STATUS_NOT_FOUND, "NoSuchDevice",
             g_status);
  options.struct_size = 0;
  CHECK_CODE(px_eager_context_create(g_runtime, &options, &ctx, g_status), PX_STATUS_INVALID_ARGUMENT,
             "struct_size", g_status);
}

/* Four threads on one context, each adding its own numbers. */
struct thread_arg {
  px_eager_context* ctx;
  float base;
  int ok;
};

static void* eager_thread(void* p) {
  struct thread_arg* arg = (struct thread_arg*)p;
  px_status* status = px_status_create();
  const int64_t dims[1] = {4};
  arg->ok = 1;
  for (int i = 0; i < 200 && arg->ok; ++i) {
    const float v[4] = {arg->base, (float)i, -arg->base, 1};
    px_tensor* t = NULL;
    arg->ok &= px_tensor_create_from_data(PX_DTYPE_FLOAT, dims, 1, v, sizeof v, &t, status) == PX_STATUS_OK;
    const px_tensor* in[2] = {t, t};
    px_tensor* out[1] = {NULL};
    size_t num = 0;
    arg->ok &= px_eager_execute(arg->ctx, i % 2 ? "AddV2" : "Mul", in, 2, NULL, NULL, out, 1, &num, status) ==
               PX_STATUS_OK;
    if (out[0] != NULL) {
      const float* o = (const float*)px_tensor_data(out[0]);
      for (int k = 0; k < 4; ++k) arg->ok &= o[k] == (i % 2 ? v[k] + v[k] : v[k] * v[k]);
    }
    px_tensor_destroy(out[0]);
    px_tensor_destroy(t);
  }
  px_status_destroy(status);
  return NULL;
}

static void test_threads(void) {
  px_eager_context* ctx = NULL;
  CHECK_OK(px_eager_context_create(g_runtime, NULL, &ctx, g_status), g_status);
  pthread_t threads[4];
  struct thread_arg args[4];
  for (int i = 0; i < 4; ++i) {
    args[i].ctx = ctx;
    args[i].base = (float)(i + 1);
    args[i].ok = 0;
    CHECK(pthread_create(&threads[i], NULL, eager_thread, &args[i]) == 0);
  }
  for (int i = 0; i < 4; ++i) {
    pthread_join(threads[i], NULL);
    CHECK(args[i].ok);
  }
  px_eager_context_destroy(ctx);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s <cpu plugin path>\n", argv[0]);
    return 2;
  }
  g_status = px_status_create();
  px_runtime_options options = {sizeof options, 0, 0};
  CHECK_OK(px_runtime_create(&options, &g_runtime, g_status), g_status);
  CHECK_OK(px_runtime_load_plugin(g_runtime, argv[1], g_status), g_status);
  test_ops();
  test_variables();
  test_threads();
  px_runtime_destroy(g_runtime);
  px_status_destroy(g_status);
  return c_check_report("c_api_eager_test");
}

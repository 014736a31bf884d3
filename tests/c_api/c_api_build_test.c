/* Building graphs through the C API (c_api_build.h), in plain C11: operations
 * with attributes of every kind, list inputs, control inputs and devices;
 * reading them back; errors that leave the graph unchanged; GraphDef export
 * and re-import; gradients on a built graph; extending an imported graph;
 * sessions on several threads.
 *
 * Usage: c_api_build_test <path of the cpu plugin>; reads
 * $PLEXUS_TEST_DATA/tf_graphs. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "c_check.h"

C_CHECK_DEFINE_COUNTERS;

static px_status* g_status;
static px_runtime* g_runtime;

/* A Placeholder of `dtype` and shape dims[ndim] (ndim -1: unknown rank). */
static px_operation* placeholder(px_graph* g, const char* name, px_dtype dtype, const int64_t* dims, int ndim) {
  px_attrs* a = NULL;
  px_operation* op = NULL;
  CHECK_OK(px_attrs_create(&a, g_status), g_status);
  CHECK_OK(px_attrs_set_type(a, "dtype", dtype, g_status), g_status);
  CHECK_OK(px_attrs_set_shape(a, "shape", dims, ndim, g_status), g_status);
  px_operation_spec spec = {sizeof spec, "Placeholder", name, NULL, 0, NULL, 0, a, NULL};
  CHECK_OK(px_graph_add_operation(g, &spec, &op, g_status), g_status);
  px_attrs_destroy(a);
  return op;
}

/* A float Const of shape dims[ndim] holding `values`. */
static px_operation* constant(px_graph* g, const char* name, const float* values, const int64_t* dims, int ndim) {
  px_tensor* t = NULL;
  px_attrs* a = NULL;
  px_operation* op = NULL;
  size_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= (size_t)dims[i];
  CHECK_OK(px_tensor_create_from_data(PX_DTYPE_FLOAT, dims, ndim, values, n * sizeof(float), &t, g_status),
           g_status);
  CHECK_OK(px_attrs_create(&a, g_status), g_status);
  CHECK_OK(px_attrs_set_tensor(a, "value", t, g_status), g_status);
  CHECK_OK(px_attrs_set_type(a, "dtype", PX_DTYPE_FLOAT, g_status), g_status);
  px_operation_spec spec = {sizeof spec, "Const", name, NULL, 0, NULL, 0, a, NULL};
  CHECK_OK(px_graph_add_operation(g, &spec, &op, g_status), g_status);
  px_attrs_destroy(a);
  px_tensor_destroy(t);
  return op;
}

/* An operation of op_type on `inputs`, with `attrs` (may be NULL). */
static px_operation* add(px_graph* g, const char* op_type, const char* name, const px_output* inputs, size_t n,
                         const px_attrs* attrs) {
  px_operation* op = NULL;
  px_operation_spec spec = {sizeof spec, op_type, name, inputs, n, NULL, 0, attrs, NULL};
  CHECK_OK(px_graph_add_operation(g, &spec, &op, g_status), g_status);
  return op;
}

/* Runs `graph` feeding x (2x2 floats) and fetching `fetch`; 4 floats into out. */
static int run_2x2(const px_graph* graph, const char* feed, const float* x, const char* fetch, float* out) {
  px_session* session = NULL;
  px_tensor* xt = NULL;
  px_tensor* result = NULL;
  const int64_t dims[2] = {2, 2};
  int ok = 0;
  CHECK_OK(px_session_create(g_runtime, graph, "CPU:0", &session, g_status), g_status);
  CHECK_OK(px_tensor_create_from_data(PX_DTYPE_FLOAT, dims, 2, x, 4 * sizeof(float), &xt, g_status), g_status);
  if (session != NULL && xt != NULL) {
    const px_tensor* feeds[1] = {xt};
    const char* feed_names[1] = {feed};
    const char* fetch_names[1] = {fetch};
    CHECK_OK(px_session_run(session, feed_names, feeds, 1, fetch_names, 1, NULL, 0, &result, g_status), g_status);
    if (result != NULL && px_tensor_num_elements(result) == 4) {
      memcpy(out, px_tensor_data(result), 4 * sizeof(float));
      ok = 1;
    }
  }
  px_tensor_destroy(result);
  px_tensor_destroy(xt);
  px_session_destroy(session);
  return ok;
}

/* relu(x @ w) + b, built op by op, read back and run. */
static void test_build_and_run(void) {
  px_graph* g = NULL;
  CHECK_OK(px_graph_create(&g, g_status), g_status);
  const int64_t dims[2] = {2, 2};
  const float w_values[4] = {1, -1, 2, 0.5f};
  const float b_values[2] = {0.25f, -0.5f};
  const int64_t b_dims[1] = {2};
  px_operation* x = placeholder(g, "x", PX_DTYPE_FLOAT, dims, 2);
  px_operation* w = constant(g, "w", w_values, dims, 2);
  px_operation* b = constant(g, "b", b_values, b_dims, 1);
  px_attrs* attrs = NULL;
  CHECK_OK(px_attrs_create(&attrs, g_status), g_status);
  CHECK_OK(px_attrs_set_bool(attrs, "transpose_b", 0, g_status), g_status);
  px_output mm_in[2] = {{x, 0}, {w, 0}};
  px_operation* mm = add(g, "MatMul", "dense/MatMul", mm_in, 2, attrs);
  px_output relu_in[1] = {{mm, 0}};
  px_operation* relu = add(g, "Relu", NULL, relu_in, 1, NULL);
  px_output add_in[2] = {{relu, 0}, {b, 0}};
  px_operation* sum = add(g, "AddV2", "out", add_in, 2, NULL);
  px_attrs_destroy(attrs);
  if (sum == NULL) {
    px_graph_destroy(g);
    return;
  }

  /* Read back. */
  CHECK(px_graph_num_operations(g) == 6);
  CHECK(px_graph_num_nodes(g) == 6);
  CHECK(strcmp(px_operation_name(relu), "Relu") == 0);
  CHECK(strcmp(px_operation_op_type(mm), "MatMul") == 0);
  CHECK(px_graph_operation_by_name(g, "dense/MatMul") == mm);
  CHECK(px_graph_operation_by_name(g, "nope") == NULL);
  CHECK(px_graph_operation(g, 0) == x);
  CHECK(px_graph_operation(g, 6) == NULL);
  CHECK(px_operation_num_inputs(mm) == 2);
  px_output in1 = px_operation_input(mm, 1);
  CHECK(in1.operation == w && in1.index == 0);
  CHECK(px_operation_input(mm, 2).operation == NULL);
  CHECK(px_operation_input_dtype(mm, 0) == PX_DTYPE_FLOAT);
  CHECK(px_operation_num_outputs(mm) == 1);
  CHECK(px_operation_output_dtype(mm, 0) == PX_DTYPE_FLOAT);
  CHECK(px_operation_output_dtype(mm, 1) == PX_DTYPE_INVALID);
  CHECK(px_operation_output_num_consumers(mm, 0) == 1);
  int ndim = 0;
  const int64_t* out_dims = NULL;
  CHECK_OK(px_operation_output_shape(sum, 0, &ndim, &out_dims, g_status), g_status);
  CHECK(ndim == 2 && out_dims != NULL && out_dims[0] == 2 && out_dims[1] == 2);
  CHECK_CODE(px_operation_output_shape(sum, 1, &ndim, &out_dims, g_status), PX_STATUS_OUT_OF_RANGE,
             "out of range", g_status);
  px_dtype t = PX_DTYPE_INVALID;
  CHECK_OK(px_operation_attr_type(mm, "T", &t, g_status), g_status);  /* inferred */
  CHECK(t == PX_DTYPE_FLOAT);
  int flag = 7;
  CHECK_OK(px_operation_attr_bool(mm, "transpose_a", &flag, g_status), g_status);  /* a default */
  CHECK(flag == 0);
  CHECK_CODE(px_operation_attr_int(mm, "T", NULL, g_status), PX_STATUS_INVALID_ARGUMENT, "out_value", g_status);
  int64_t iv = 0;
  CHECK_CODE(px_operation_attr_int(mm, "T", &iv, g_status), PX_STATUS_INVALID_ARGUMENT, "holds a type", g_status);
  CHECK_CODE(px_operation_attr_int(mm, "missing", &iv, g_status), PX_STATUS_NOT_FOUND,
             "node 'dense/MatMul' (op MatMul) has no attribute 'missing'", g_status);
  CHECK(px_operation_num_attrs(mm) >= 3);
  CHECK(px_operation_attr_name(mm, 0) != NULL);
  CHECK(px_operation_attr_name(mm, 1000) == NULL);
  px_buffer* proto = NULL;
  CHECK_OK(px_operation_attr_value_proto(w, "value", &proto, g_status), g_status);
  CHECK(proto != NULL && px_buffer_size(proto) > 0);
  px_buffer_destroy(proto);

  /* Run: relu(x @ w) + b. */
  const float xv[4] = {1, 2, -3, 1};
  float out[4] = {0};
  if (run_2x2(g, "x", xv, "out", out)) {
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2; ++j) {
        float acc = 0;
        for (int k = 0; k < 2; ++k) acc += xv[i * 2 + k] * w_values[k * 2 + j];
        float want = (acc > 0 ? acc : 0) + b_values[j];
        CHECK(fabsf(out[i * 2 + j] - want) < 1e-6f);
      }
    }
  }

  /* Export, re-import, run again: the same numbers. */
  px_buffer* bytes = NULL;
  CHECK_OK(px_graph_to_graphdef(g, &bytes, g_status), g_status);
  px_graph* again = NULL;
  if (bytes != NULL) {
    CHECK_OK(px_graph_import(px_buffer_data(bytes), px_buffer_size(bytes), PX_GRAPH_FORMAT_BINARY, &again, g_status),
             g_status);
  }
  if (again != NULL) {
    CHECK(px_graph_num_nodes(again) == 6);
    float out2[4] = {0};
    if (run_2x2(again, "x", xv, "out", out2)) CHECK(memcmp(out, out2, sizeof out) == 0);
    px_operation* mm2 = px_graph_operation_by_name(again, "dense/MatMul");
    CHECK(mm2 != NULL && mm2 != mm);
  }
  px_graph_destroy(again);
  px_buffer_destroy(bytes);
  px_graph_destroy(g);
}

/* Errors name the op and the operation and leave the graph unchanged. */
static void test_errors(void) {
  px_graph* g = NULL;
  px_graph* other = NULL;
  CHECK_OK(px_graph_create(&g, g_status), g_status);
  CHECK_OK(px_graph_create(&other, g_status), g_status);
  const int64_t dims[1] = {3};
  px_operation* x = placeholder(g, "x", PX_DTYPE_FLOAT, dims, 1);
  px_operation* n = placeholder(g, "n", PX_DTYPE_INT32, dims, 1);
  px_operation* y = placeholder(other, "y", PX_DTYPE_FLOAT, dims, 1);
  const size_t before = px_graph_num_operations(g);
  px_operation* out = (px_operation*)0x1;

  px_operation_spec spec = {sizeof spec, "NoSuchOp", "bad", NULL, 0, NULL, 0, NULL, NULL};
  CHECK_CODE(px_graph_add_operation(g, &spec, &out, g_status), PX_STATUS_NOT_FOUND, "NoSuchOp", g_status);
  CHECK(out == (px_operation*)0x1); /* out-parameters are written only on success */

  px_output mixed[2] = {{x, 0}, {n, 0}};
  px_operation_spec addv2 = {sizeof addv2, "AddV2", "sum", mixed, 2, NULL, 0, NULL, NULL};
  CHECK_CODE(px_graph_add_operation(g, &addv2, NULL, g_status), PX_STATUS_INVALID_ARGUMENT, "AddV2", g_status);

  px_output same[2] = {{x, 0}, {x, 0}};
  px_operation_spec dup = {sizeof dup, "AddV2", "x", same, 2, NULL, 0, NULL, NULL};
  CHECK_CODE(px_graph_add_operation(g, &dup, NULL, g_status), PX_STATUS_ALREADY_EXISTS,
             "already has an operation named 'x'", g_status);
  dup.name = "bad name!";
  CHECK_CODE(px_graph_add_operation(g, &dup, NULL, g_status), PX_STATUS_INVALID_ARGUMENT,
             "not a valid operation name", g_status);

  px_output foreign[2] = {{x, 0}, {y, 0}};
  px_operation_spec cross = {sizeof cross, "AddV2", "cross", foreign, 2, NULL, 0, NULL, NULL};
  CHECK_CODE(px_graph_add_operation(g, &cross, NULL, g_status), PX_STATUS_INVALID_ARGUMENT,
             "input 1 is an operation of another graph", g_status);

  px_output past[1] = {{x, 1}};
  px_operation_spec relu = {sizeof relu, "Relu", "r", past, 1, NULL, 0, NULL, NULL};
  CHECK_CODE(px_graph_add_operation(g, &relu, NULL, g_status), PX_STATUS_OUT_OF_RANGE, "reads output 1", g_status);

  px_operation_spec few = {sizeof few, "AddV2", "few", same, 1, NULL, 0, NULL, NULL};
  CHECK_CODE(px_graph_add_operation(g, &few, NULL, g_status), PX_STATUS_INVALID_ARGUMENT, "input", g_status);

  px_operation_spec small = {1, "Relu", "r", same, 1, NULL, 0, NULL, NULL};
  CHECK_CODE(px_graph_add_operation(g, &small, NULL, g_status), PX_STATUS_INVALID_ARGUMENT, "struct_size",
             g_status);
  px_operation_spec no_type = {sizeof no_type, NULL, "r", same, 1, NULL, 0, NULL, NULL};
  CHECK_CODE(px_graph_add_operation(g, &no_type, NULL, g_status), PX_STATUS_INVALID_ARGUMENT, "op_type", g_status);
  px_operation_spec null_inputs = {sizeof null_inputs, "Relu", "r", NULL, 1, NULL, 0, NULL, NULL};
  CHECK_CODE(px_graph_add_operation(g, &null_inputs, NULL, g_status), PX_STATUS_INVALID_ARGUMENT, "spec->inputs",
             g_status);
  CHECK_CODE(px_graph_add_operation(NULL, &relu, NULL, g_status), PX_STATUS_INVALID_ARGUMENT, "graph", g_status);
  CHECK_CODE(px_graph_add_operation(g, NULL, NULL, g_status), PX_STATUS_INVALID_ARGUMENT, "spec", g_status);

  /* A missing required attribute. */
  px_operation_spec cast = {sizeof cast, "Cast", "c", same, 1, NULL, 0, NULL, NULL};
  CHECK_CODE(px_graph_add_operation(g, &cast, NULL, g_status), PX_STATUS_INVALID_ARGUMENT, "DstT", g_status);

  CHECK(px_graph_num_operations(g) == before);
  CHECK_OK(px_graph_finish(g, g_status), g_status);

  /* Attribute setters check their arguments. */
  px_attrs* a = NULL;
  CHECK_OK(px_attrs_create(&a, g_status), g_status);
  CHECK_CODE(px_attrs_set_type(a, "T", (px_dtype)12345, g_status), PX_STATUS_INVALID_ARGUMENT, "not a data type",
             g_status);
  CHECK_CODE(px_attrs_set_int(a, "", 1, g_status), PX_STATUS_INVALID_ARGUMENT, "name is empty", g_status);
  CHECK_CODE(px_attrs_set_int(a, NULL, 1, g_status), PX_STATUS_INVALID_ARGUMENT, "name", g_status);
  const int64_t bad_dims[1] = {-5};
  CHECK_CODE(px_attrs_set_shape(a, "s", bad_dims, 1, g_status), PX_STATUS_INVALID_ARGUMENT, "dimension 0 is -5",
             g_status);
  CHECK_CODE(px_attrs_set_shape(a, "s", NULL, -2, g_status), PX_STATUS_INVALID_ARGUMENT, "ndim is -2", g_status);
  CHECK_CODE(px_attrs_set_attr_value_proto(a, "p", "\xff\xff\xff", 3, g_status), PX_STATUS_DATA_LOSS,
             "not an AttrValue", g_status);
  CHECK_CODE(px_attrs_set_tensor(a, "v", NULL, g_status), PX_STATUS_INVALID_ARGUMENT, "value", g_status);
  CHECK(px_attrs_size(a) == 0);
  px_attrs_destroy(a);
  px_attrs_destroy(NULL);

  /* Reads of NULL are harmless. */
  CHECK(strcmp(px_operation_name(NULL), "") == 0);
  CHECK(px_operation_num_inputs(NULL) == 0);
  CHECK(px_graph_num_operations(NULL) == 0);
  CHECK(px_graph_operation(NULL, 0) == NULL);
  px_graph_destroy(other);
  px_graph_destroy(g);
}

/* Attributes of every kind, list inputs, control inputs and devices. */
static void test_attr_kinds_and_lists(void) {
  px_graph* g = NULL;
  CHECK_OK(px_graph_create(&g, g_status), g_status);
  const int64_t dims[2] = {2, 2};
  px_operation* x = placeholder(g, "x", PX_DTYPE_FLOAT, dims, 2);
  px_operation* y = placeholder(g, "y", PX_DTYPE_FLOAT, dims, 2);

  /* AddN: N inferred from three inputs. */
  px_output three[3] = {{x, 0}, {y, 0}, {x, 0}};
  px_operation* addn = add(g, "AddN", "addn", three, 3, NULL);
  int64_t count = 0;
  CHECK_OK(px_operation_attr_int(addn, "N", &count, g_status), g_status);
  CHECK(count == 3);

  /* ConcatV2: a list and an axis, with a control input and a device. */
  int32_t axis_value = 1;
  const int64_t scalar_dims[1] = {0};
  px_tensor* axis_t = NULL;
  CHECK_OK(px_tensor_create_from_data(PX_DTYPE_INT32, scalar_dims, 0, &axis_value, sizeof axis_value, &axis_t,
                                      g_status),
           g_status);
  px_attrs* a = NULL;
  CHECK_OK(px_attrs_create(&a, g_status), g_status);
  CHECK_OK(px_attrs_set_tensor(a, "value", axis_t, g_status), g_status);
  CHECK_OK(px_attrs_set_type(a, "dtype", PX_DTYPE_INT32, g_status), g_status);
  px_operation* axis = NULL;
  px_operation_spec axis_spec = {sizeof axis_spec, "Const", "axis", NULL, 0, NULL, 0, a, NULL};
  CHECK_OK(px_graph_add_operation(g, &axis_spec, &axis, g_status), g_status);
  px_tensor_destroy(axis_t);
  px_attrs_clear(a);
  CHECK(px_attrs_size(a) == 0);
  px_output concat_in[3] = {{x, 0}, {addn, 0}, {axis, 0}};
  px_operation* controls[1] = {y};
  px_operation* concat = NULL;
  px_operation_spec concat_spec = {sizeof concat_spec, "ConcatV2", "concat", concat_in, 3, controls, 1, NULL,
                                   "CPU:0"};
  CHECK_OK(px_graph_add_operation(g, &concat_spec, &concat, g_status), g_status);
  int ndim = 0;
  const int64_t* out_dims = NULL;
  CHECK_OK(px_operation_output_shape(concat, 0, &ndim, &out_dims, g_status), g_status);
  CHECK(ndim == 2 && out_dims[0] == 2 && out_dims[1] == 4);  /* the Const axis is known */
  CHECK(px_operation_num_control_inputs(concat) == 1);
  CHECK(px_operation_control_input(concat, 0) == y);
  CHECK(px_operation_control_input(concat, 1) == NULL);
  CHECK(strcmp(px_operation_device(concat), "CPU:0") == 0);

  /* Every setter, read back through the attribute's serialized value. */
  const int64_t ints[3] = {1, 2, 3};
  const float floats[2] = {0.5f, 1.5f};
  const int bools[2] = {1, 0};
  const px_dtype types[2] = {PX_DTYPE_FLOAT, PX_DTYPE_INT64};
  const char* strings[2] = {"ab", "c\0d"};
  const size_t lengths[2] = {2, 3};
  const int64_t s0[2] = {2, -1};
  const int64_t* shapes[2] = {s0, NULL};
  const int ndims[2] = {2, -1};
  CHECK_OK(px_attrs_set_int(a, "i", -7, g_status), g_status);
  CHECK_OK(px_attrs_set_float(a, "f", 2.5f, g_status), g_status);
  CHECK_OK(px_attrs_set_string(a, "s", "a\0b", 3, g_status), g_status);
  CHECK_OK(px_attrs_set_func(a, "fn", "body", g_status), g_status);
  CHECK_OK(px_attrs_set_int_list(a, "il", ints, 3, g_status), g_status);
  CHECK_OK(px_attrs_set_float_list(a, "fl", floats, 2, g_status), g_status);
  CHECK_OK(px_attrs_set_bool_list(a, "bl", bools, 2, g_status), g_status);
  CHECK_OK(px_attrs_set_type_list(a, "tl", types, 2, g_status), g_status);
  CHECK_OK(px_attrs_set_string_list(a, "sl", strings, lengths, 2, g_status), g_status);
  CHECK_OK(px_attrs_set_shape_list(a, "shl", shapes, ndims, 2, g_status), g_status);
  CHECK_OK(px_attrs_set_int(a, "i", 9, g_status), g_status);  /* replaces */
  CHECK(px_attrs_size(a) == 10);
  /* An AttrValue {i: 5} as bytes: field 3, varint. */
  const unsigned char five[2] = {0x18, 0x05};
  CHECK_OK(px_attrs_set_attr_value_proto(a, "p", five, 2, g_status), g_status);
  CHECK(px_attrs_size(a) == 11);
  px_attrs_destroy(a);

  /* A string attribute read back (StringJoin's separator). */
  px_attrs* sep = NULL;
  CHECK_OK(px_attrs_create(&sep, g_status), g_status);
  CHECK_OK(px_attrs_set_string(sep, "separator", "--", 2, g_status), g_status);
  px_operation* s = placeholder(g, "s", PX_DTYPE_STRING, dims, 2);
  px_output join_in[2] = {{s, 0}, {s, 0}};
  px_operation* join = add(g, "StringJoin", "join", join_in, 2, sep);
  const char* data = NULL;
  size_t length = 0;
  CHECK_OK(px_operation_attr_string(join, "separator", &data, &length, g_status), g_status);
  CHECK(length == 2 && memcmp(data, "--", 2) == 0);
  px_attrs_destroy(sep);

  CHECK_OK(px_graph_finish(g, g_status), g_status);
  px_graph_destroy(g);
}

/* d(sum(x * x))/dx = 2x on a built graph. */
static void test_gradients_on_built_graph(void) {
  px_graph* g = NULL;
  CHECK_OK(px_graph_create(&g, g_status), g_status);
  const int64_t dims[2] = {2, 2};
  px_operation* x = placeholder(g, "x", PX_DTYPE_FLOAT, dims, 2);
  px_output sq_in[2] = {{x, 0}, {x, 0}};
  add(g, "Mul", "sq", sq_in, 2, NULL);
  const char* ys[1] = {"sq"};
  const char* xs[1] = {"x"};
  px_graph* with_grads = NULL;
  CHECK_OK(px_graph_gradients(g, ys, 1, xs, 1, NULL, &with_grads, g_status), g_status);
  const char* name = px_graph_gradient_name(with_grads, 0);
  CHECK(name != NULL);
  const float xv[4] = {1, -2, 3, 0.5f};
  float out[4] = {0};
  if (name != NULL && run_2x2(with_grads, "x", xv, name, out)) {
    for (int i = 0; i < 4; ++i) CHECK(fabsf(out[i] - 2 * xv[i]) < 1e-6f);
  }
  /* The graph with gradients can be extended too. */
  px_operation* grad = px_graph_operation_by_name(with_grads, "x");
  CHECK(grad != NULL);
  px_graph_destroy(with_grads);
  px_graph_destroy(g);
}

/* An imported graph (a frozen TensorFlow regression) extended with an
 * operation reading its prediction, then run. */
static void test_extend_imported_graph(const char* data_dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/tf_graphs/regression_frozen/frozen.pb", data_dir);
  px_graph* g = NULL;
  CHECK_OK(px_graph_import_file(path, &g, g_status), g_status);
  if (g == NULL) return;
  const size_t n = px_graph_num_operations(g);
  px_operation* pred = px_graph_operation_by_name(g, "pred");
  CHECK(pred != NULL);
  if (pred == NULL) {
    px_graph_destroy(g);
    return;
  }
  px_output in[2] = {{pred, 0}, {pred, 0}};
  px_operation* doubled = add(g, "AddV2", "doubled", in, 2, NULL);
  CHECK(doubled != NULL);
  CHECK(px_graph_num_operations(g) == n + 1);
  /* Handles taken before the extension still resolve. */
  CHECK(px_graph_operation_by_name(g, "pred") == pred);
  CHECK(px_operation_num_inputs(pred) >= 1);
  CHECK(px_operation_output_num_consumers(pred, 0) == 2);

  const float input[3] = {1, 2, 3};
  const double expected[3] = {1.2634872, 1.4774489, 1.6914107};
  const int64_t dims[1] = {3};
  px_session* session = NULL;
  px_tensor* x = NULL;
  px_tensor* out = NULL;
  CHECK_OK(px_session_create(g_runtime, g, "CPU:0", &session, g_status), g_status);
  CHECK_OK(px_tensor_create_from_data(PX_DTYPE_FLOAT, dims, 1, input, sizeof input, &x, g_status), g_status);
  if (session != NULL && x != NULL) {
    const char* feed_names[1] = {"X"};
    const px_tensor* feeds[1] = {x};
    const char* fetch_names[1] = {"doubled"};
    CHECK_OK(px_session_run(session, feed_names, feeds, 1, fetch_names, 1, NULL, 0, &out, g_status), g_status);
  }
  if (out != NULL && px_tensor_num_elements(out) == 3) {
    const float* got = (const float*)px_tensor_data(out);
    for (int i = 0; i < 3; ++i) CHECK(fabs(got[i] - 2 * expected[i]) <= 2e-6);
  }
  px_tensor_destroy(out);
  px_tensor_destroy(x);
  px_session_destroy(session);
  px_graph_destroy(g);
}

/* A TensorFlow 1 loop (a cycle) cannot be extended node by node; the graph
 * stays as imported and still runs. */
static void test_extend_cyclic_graph(const char* data_dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/tf_graphs/pbtxt_graphs/while_loop_v1.pbtxt", data_dir);
  px_graph* g = NULL;
  CHECK_OK(px_graph_import_file(path, &g, g_status), g_status);
  if (g == NULL) return;
  const size_t n = px_graph_num_operations(g);
  px_operation* first = px_graph_operation(g, 0);
  px_output in[1] = {{first, 0}};
  px_operation_spec spec = {sizeof spec, "Identity", "extra", in, 1, NULL, 0, NULL, NULL};
  CHECK_CODE(px_graph_add_operation(g, &spec, NULL, g_status), PX_STATUS_UNIMPLEMENTED, "cycle", g_status);
  CHECK(px_graph_num_operations(g) == n);
  CHECK_OK(px_graph_finish(g, g_status), g_status);
  px_buffer* bytes = NULL;
  CHECK_OK(px_graph_to_graphdef(g, &bytes, g_status), g_status);
  px_buffer_destroy(bytes);
  px_graph_destroy(g);
}

/* Sessions on one finished graph from four threads, with readers. */
struct thread_arg {
  const px_graph* graph;
  int ok;
};

static void* run_thread(void* p) {
  struct thread_arg* arg = (struct thread_arg*)p;
  px_status* status = px_status_create();
  px_session* session = NULL;
  arg->ok = px_session_create(g_runtime, arg->graph, "CPU:0", &session, status) == PX_STATUS_OK;
  const int64_t dims[2] = {2, 2};
  const float xv[4] = {1, 2, 3, 4};
  px_tensor* xt = NULL;
  arg->ok &= px_tensor_create_from_data(PX_DTYPE_FLOAT, dims, 2, xv, sizeof xv, &xt, status) == PX_STATUS_OK;
  for (int i = 0; i < 50 && arg->ok; ++i) {
    const px_tensor* feeds[1] = {xt};
    const char* feed_names[1] = {"x"};
    const char* fetch_names[1] = {"y"};
    px_tensor* out = NULL;
    arg->ok &= px_session_run(session, feed_names, feeds, 1, fetch_names, 1, NULL, 0, &out, status) == PX_STATUS_OK;
    if (out != NULL) {
      const float* o = (const float*)px_tensor_data(out);
      for (int k = 0; k < 4; ++k) arg->ok &= o[k] == 2 * xv[k];
    }
    px_tensor_destroy(out);
    arg->ok &= px_operation_num_inputs(px_graph_operation_by_name(arg->graph, "y")) == 2;
  }
  px_tensor_destroy(xt);
  px_session_destroy(session);
  px_status_destroy(status);
  return NULL;
}

static void test_threads(void) {
  px_graph* g = NULL;
  CHECK_OK(px_graph_create(&g, g_status), g_status);
  const int64_t dims[2] = {2, 2};
  px_operation* x = placeholder(g, "x", PX_DTYPE_FLOAT, dims, 2);
  px_output in[2] = {{x, 0}, {x, 0}};
  add(g, "AddV2", "y", in, 2, NULL);
  CHECK_OK(px_graph_finish(g, g_status), g_status);
  pthread_t threads[4];
  struct thread_arg args[4];
  for (int i = 0; i < 4; ++i) {
    args[i].graph = g;
    args[i].ok = 0;
    CHECK(pthread_create(&threads[i], NULL, run_thread, &args[i]) == 0);
  }
  for (int i = 0; i < 4; ++i) {
    pthread_join(threads[i], NULL);
    CHECK(args[i].ok);
  }
  px_graph_destroy(g);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s <cpu plugin path>\n", argv[0]);
    return 2;
  }
  const char* data_dir = getenv("PLEXUS_TEST_DATA");
  g_status = px_status_create();
  px_runtime_options options = {sizeof options, 0, 0};
  CHECK_OK(px_runtime_create(&options, &g_runtime, g_status), g_status);
  CHECK_OK(px_runtime_load_plugin(g_runtime, argv[1], g_status), g_status);
  test_build_and_run();
  test_errors();
  test_attr_kinds_and_lists();
  test_gradients_on_built_graph();
  if (data_dir != NULL) {
    test_extend_imported_graph(data_dir);
    test_extend_cyclic_graph(data_dir);
  }
  test_threads();
  px_runtime_destroy(g_runtime);
  px_status_destroy(g_status);
  return c_check_report("c_api_build_test");
}

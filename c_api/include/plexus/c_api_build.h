/* Plexus C API: building graphs operation by operation (as TensorFlow's
 * TF_NewOperation family does), reading graphs back, and exporting them as
 * GraphDef bytes. Part of the C API: include <plexus/c_api.h>, which
 * includes this file; the conventions of c_api.h apply.
 *
 *   px_graph* g; px_graph_create(&g, st);
 *   px_attrs* a; px_attrs_create(&a, st);
 *   px_attrs_set_type(a, "dtype", PX_DTYPE_FLOAT, st);
 *   px_operation_spec spec = {sizeof spec, "Placeholder", "x"};
 *   spec.attrs = a;
 *   px_operation* x; px_graph_add_operation(g, &spec, &x, st);
 *
 * Each operation is checked as it is added: the op exists, its attributes
 * are complete (type attributes such as T and list lengths such as N are
 * inferred from the inputs when left out, as in eager execution), its
 * inputs have the dtypes it declares, and its output shapes are inferred at
 * once. An error names the op and the operation and leaves the graph
 * unchanged. Sessions, gradients and exports finish the graph first
 * (px_graph_finish), checking it as a GraphDef file is checked.
 *
 * Threads: a graph being built must not be changed by two threads at once,
 * nor read while it changes. Once nothing adds to it, it may be read and
 * run from any number of threads.
 */
#ifndef PLEXUS_C_API_BUILD_H_
#define PLEXUS_C_API_BUILD_H_

#include "plexus/c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Byte buffers ------------------------------------------------------ */

/* Bytes the library hands out (a serialized GraphDef, an attribute value). */
typedef struct px_buffer px_buffer;
PX_C_EXPORT const void* px_buffer_data(const px_buffer* buffer);
PX_C_EXPORT size_t px_buffer_size(const px_buffer* buffer);
PX_C_EXPORT void px_buffer_destroy(px_buffer* buffer);

/* ---- Attributes -------------------------------------------------------- */

/* A set of named attribute values, for px_graph_add_operation and
 * px_eager_execute. Setting a name again replaces its value. Names and
 * strings are copied. Errors: NULL arguments, an empty name, a bad dtype or
 * shape. */
typedef struct px_attrs px_attrs;
PX_C_EXPORT px_code px_attrs_create(px_attrs** out_attrs, px_status* status);
PX_C_EXPORT void px_attrs_destroy(px_attrs* attrs);
PX_C_EXPORT void px_attrs_clear(px_attrs* attrs);
PX_C_EXPORT size_t px_attrs_size(const px_attrs* attrs);

PX_C_EXPORT px_code px_attrs_set_int(px_attrs* attrs, const char* name, int64_t value,
                                     px_status* status);
PX_C_EXPORT px_code px_attrs_set_float(px_attrs* attrs, const char* name, float value,
                                       px_status* status);
PX_C_EXPORT px_code px_attrs_set_bool(px_attrs* attrs, const char* name, int value,
                                      px_status* status);
PX_C_EXPORT px_code px_attrs_set_type(px_attrs* attrs, const char* name, px_dtype value,
                                      px_status* status);
/* `length` bytes at `value` (any bytes; NULL when length is 0). */
PX_C_EXPORT px_code px_attrs_set_string(px_attrs* attrs, const char* name, const void* value,
                                        size_t length, px_status* status);
/* A shape: ndim -1 for an unknown rank (dims ignored), a dimension -1 for
 * an unknown size. */
PX_C_EXPORT px_code px_attrs_set_shape(px_attrs* attrs, const char* name, const int64_t* dims,
                                       int ndim, px_status* status);
/* A tensor value (Const's "value"): copied, to the host if it is not there. */
PX_C_EXPORT px_code px_attrs_set_tensor(px_attrs* attrs, const char* name,
                                        const px_tensor* value, px_status* status);
/* A function attribute (While's "body", say): the name of a function of
 * the graph's library. */
PX_C_EXPORT px_code px_attrs_set_func(px_attrs* attrs, const char* name,
                                      const char* function_name, px_status* status);

PX_C_EXPORT px_code px_attrs_set_int_list(px_attrs* attrs, const char* name,
                                          const int64_t* values, size_t count,
                                          px_status* status);
PX_C_EXPORT px_code px_attrs_set_float_list(px_attrs* attrs, const char* name,
                                            const float* values, size_t count,
                                            px_status* status);
PX_C_EXPORT px_code px_attrs_set_bool_list(px_attrs* attrs, const char* name,
                                           const int* values, size_t count, px_status* status);
PX_C_EXPORT px_code px_attrs_set_type_list(px_attrs* attrs, const char* name,
                                           const px_dtype* values, size_t count,
                                           px_status* status);
/* values[i] is lengths[i] bytes. */
PX_C_EXPORT px_code px_attrs_set_string_list(px_attrs* attrs, const char* name,
                                             const char* const* values, const size_t* lengths,
                                             size_t count, px_status* status);
/* Shape i has ndims[i] dims at dims[i] (-1: unknown rank). */
PX_C_EXPORT px_code px_attrs_set_shape_list(px_attrs* attrs, const char* name,
                                            const int64_t* const* dims, const int* ndims,
                                            size_t count, px_status* status);
/* Any attribute as a serialized TensorFlow AttrValue protocol buffer: the
 * way to set kinds the setters above do not cover. DATA_LOSS when the
 * bytes do not parse. */
PX_C_EXPORT px_code px_attrs_set_attr_value_proto(px_attrs* attrs, const char* name,
                                                  const void* proto, size_t size,
                                                  px_status* status);

/* ---- Building graphs --------------------------------------------------- */

/* An operation (a node) of a graph: borrowed from the graph, valid until
 * the graph is destroyed. */
typedef struct px_operation px_operation;

/* Output `index` of an operation. */
typedef struct px_output {
  px_operation* operation;
  int index;
} px_output;

/* An empty graph to build. Imported graphs can be extended too, unless they
 * hold TensorFlow 1 loops (cycles): adding to one is UNIMPLEMENTED. */
PX_C_EXPORT px_code px_graph_create(px_graph** out_graph, px_status* status);

typedef struct px_operation_spec {
  size_t struct_size;                   /* sizeof(px_operation_spec) */
  const char* op_type;                  /* "MatMul"; required */
  /* The operation's name; NULL or "": the op type, made unique ("MatMul_1").
   * A name the graph already has is ALREADY_EXISTS. */
  const char* name;
  /* Data inputs in the op's order. An input list (AddN's "N * T") takes its
   * inputs in a row: with one list, it takes what the other inputs leave;
   * with more, set their lengths as attributes ("N"). */
  const px_output* inputs;
  size_t num_inputs;
  px_operation* const* control_inputs;  /* run before, no data */
  size_t num_control_inputs;
  const px_attrs* attrs;                /* NULL: none */
  const char* device;                   /* requested device ("CPU:0"); NULL: none */
} px_operation_spec;

/* Adds an operation. *out_operation (may be NULL) receives it. Errors name
 * the op type and the operation, and leave the graph unchanged. */
PX_C_EXPORT px_code px_graph_add_operation(px_graph* graph, const px_operation_spec* spec,
                                           px_operation** out_operation, px_status* status);

/* Checks the whole graph as an imported GraphDef is checked (names,
 * inputs, attributes, shapes). Sessions, px_graph_gradients and
 * px_graph_to_graphdef do it themselves; calling it reports errors early. */
PX_C_EXPORT px_code px_graph_finish(px_graph* graph, px_status* status);

/* The graph as a serialized TensorFlow GraphDef, which TensorFlow's
 * tf.compat.v1.GraphDef.ParseFromString and tf.graph_util.import_graph_def
 * read. The caller destroys *out_buffer. */
PX_C_EXPORT px_code px_graph_to_graphdef(px_graph* graph, px_buffer** out_buffer,
                                         px_status* status);

/* ---- Reading graphs ---------------------------------------------------- */

/* Operations in the order they were added (imported graphs: file order).
 * px_graph_num_operations equals px_graph_num_nodes. */
PX_C_EXPORT size_t px_graph_num_operations(const px_graph* graph);
/* NULL for an index out of range or a NULL graph. */
PX_C_EXPORT px_operation* px_graph_operation(const px_graph* graph, size_t index);
/* NULL when the graph has no operation of that name. */
PX_C_EXPORT px_operation* px_graph_operation_by_name(const px_graph* graph, const char* name);

/* Borrowed from the graph; "" for NULL. */
PX_C_EXPORT const char* px_operation_name(const px_operation* operation);
PX_C_EXPORT const char* px_operation_op_type(const px_operation* operation);
PX_C_EXPORT const char* px_operation_device(const px_operation* operation);

PX_C_EXPORT int px_operation_num_inputs(const px_operation* operation);
/* Data input i: the output it reads ({NULL, -1} when i is out of range). */
PX_C_EXPORT px_output px_operation_input(const px_operation* operation, int i);
/* PX_DTYPE_INVALID when i is out of range. */
PX_C_EXPORT px_dtype px_operation_input_dtype(const px_operation* operation, int i);
PX_C_EXPORT int px_operation_num_control_inputs(const px_operation* operation);
PX_C_EXPORT px_operation* px_operation_control_input(const px_operation* operation, int i);

PX_C_EXPORT int px_operation_num_outputs(const px_operation* operation);
PX_C_EXPORT px_dtype px_operation_output_dtype(const px_operation* operation, int i);
/* The inferred shape of output i: *out_ndim is -1 for an unknown rank, and
 * *out_dims (borrowed from the graph, NULL for a scalar) holds -1 for an
 * unknown dimension. OUT_OF_RANGE for a bad index. */
PX_C_EXPORT px_code px_operation_output_shape(const px_operation* operation, int i,
                                              int* out_ndim, const int64_t** out_dims,
                                              px_status* status);
/* How many operations read output i (data edges), 0 when out of range. */
PX_C_EXPORT int px_operation_output_num_consumers(const px_operation* operation, int i);

/* Attributes (defaults included), in name order. */
PX_C_EXPORT int px_operation_num_attrs(const px_operation* operation);
/* Borrowed; NULL when i is out of range. */
PX_C_EXPORT const char* px_operation_attr_name(const px_operation* operation, int i);
/* Typed reads; NOT_FOUND for a missing attribute, INVALID_ARGUMENT naming
 * the kind it holds for the wrong kind. */
PX_C_EXPORT px_code px_operation_attr_int(const px_operation* operation, const char* name,
                                          int64_t* out_value, px_status* status);
PX_C_EXPORT px_code px_operation_attr_float(const px_operation* operation, const char* name,
                                            float* out_value, px_status* status);
PX_C_EXPORT px_code px_operation_attr_bool(const px_operation* operation, const char* name,
                                           int* out_value, px_status* status);
PX_C_EXPORT px_code px_operation_attr_type(const px_operation* operation, const char* name,
                                           px_dtype* out_value, px_status* status);
/* *out_data (borrowed from the graph) holds *out_length bytes. */
PX_C_EXPORT px_code px_operation_attr_string(const px_operation* operation, const char* name,
                                             const char** out_data, size_t* out_length,
                                             px_status* status);
/* Any attribute as a serialized TensorFlow AttrValue. */
PX_C_EXPORT px_code px_operation_attr_value_proto(const px_operation* operation,
                                                  const char* name, px_buffer** out_buffer,
                                                  px_status* status);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLEXUS_C_API_BUILD_H_ */

/* Plexus C API: embed the runtime from C, or from any language with a C FFI
 * (Rust, Go, C#, Java, Python ctypes).
 *
 * Conventions
 * -----------
 * - Every symbol is px_<object>_<verb>. Objects are opaque handles made by a
 *   px_*_create (or import/read) function and freed by the matching
 *   px_*_destroy. Destroying NULL is a no-op.
 * - Fallible functions return a px_code and also fill `status` (the last
 *   parameter) when it is not NULL; PX_STATUS_OK (0) means success. Results
 *   come back through out_* parameters, which are written only on success.
 * - No C++ type, exception or allocator crosses this boundary. Strings
 *   returned as `const char*` are borrowed: valid until the object they came
 *   from is destroyed or changed, as each function says.
 * - Thread safety: a px_runtime and a px_session may be used from several
 *   threads at once; a px_status and a px_tensor must not be written by two
 *   threads at once.
 * - Data types use TensorFlow's DataType numbers (PX_DTYPE_FLOAT = 1, ...).
 * - Tensors handed back by sessions and SavedModels live in host memory;
 *   eager results stay on the device the op ran on (c_api_eager.h). DLPack
 *   imports and exports share the data (both sides see writes). String tensors
 *   (PX_DTYPE_STRING) hold byte strings: make them with
 *   px_tensor_create_strings and read them with px_tensor_string; they have
 *   NULL px_tensor_data and a byte size of 0.
 *
 * This header includes the rest of the C API: plexus/c_api_build.h
 * (building and reading graphs, attributes), plexus/c_api_eager.h (eager
 * execution, tensors on devices) and plexus/c_api_run.h (session options,
 * run metadata, callables, asynchronous runs, checkpoints, logging, plugin
 * unload).
 */
#ifndef PLEXUS_C_API_H_
#define PLEXUS_C_API_H_

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#if defined(_WIN32)
#if defined(PX_C_BUILDING_LIBRARY)
#define PX_C_EXPORT __declspec(dllexport)
#else
#define PX_C_EXPORT __declspec(dllimport)
#endif
#else
#define PX_C_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Status ------------------------------------------------------------ */

/* Canonical codes (Abseil's numbers). */
typedef enum px_code {
  PX_STATUS_OK = 0,
  PX_STATUS_CANCELLED = 1,
  PX_STATUS_UNKNOWN = 2,
  PX_STATUS_INVALID_ARGUMENT = 3,
  PX_STATUS_DEADLINE_EXCEEDED = 4,
  PX_STATUS_NOT_FOUND = 5,
  PX_STATUS_ALREADY_EXISTS = 6,
  PX_STATUS_PERMISSION_DENIED = 7,
  PX_STATUS_RESOURCE_EXHAUSTED = 8,
  PX_STATUS_FAILED_PRECONDITION = 9,
  PX_STATUS_ABORTED = 10,
  PX_STATUS_OUT_OF_RANGE = 11,
  PX_STATUS_UNIMPLEMENTED = 12,
  PX_STATUS_INTERNAL = 13,
  PX_STATUS_UNAVAILABLE = 14,
  PX_STATUS_DATA_LOSS = 15,
  PX_STATUS_UNAUTHENTICATED = 16
} px_code;

typedef struct px_status px_status;

PX_C_EXPORT px_status* px_status_create(void);
PX_C_EXPORT void px_status_destroy(px_status* status);
PX_C_EXPORT px_code px_status_code(const px_status* status);
/* Borrowed; valid until the status is reused or destroyed. "" when OK. */
PX_C_EXPORT const char* px_status_message(const px_status* status);

/* ---- Data types -------------------------------------------------------- */

typedef enum px_dtype {
  PX_DTYPE_INVALID = 0,
  PX_DTYPE_FLOAT = 1,
  PX_DTYPE_DOUBLE = 2,
  PX_DTYPE_INT32 = 3,
  PX_DTYPE_UINT8 = 4,
  PX_DTYPE_INT16 = 5,
  PX_DTYPE_INT8 = 6,
  PX_DTYPE_STRING = 7,
  PX_DTYPE_COMPLEX64 = 8,
  PX_DTYPE_INT64 = 9,
  PX_DTYPE_BOOL = 10,
  PX_DTYPE_BFLOAT16 = 14,
  PX_DTYPE_UINT16 = 17,
  PX_DTYPE_COMPLEX128 = 18,
  PX_DTYPE_HALF = 19,
  PX_DTYPE_UINT32 = 22,
  PX_DTYPE_UINT64 = 23,
  /* Not data types: they make the enum hold every 32-bit value, so that a
   * wrong number from a caller is reported as an error rather than being
   * undefined behaviour in C++. */
  PX_DTYPE_RANGE_MIN_ = -0x7FFFFFFF - 1,
  PX_DTYPE_RANGE_MAX_ = 0x7FFFFFFF
} px_dtype;

/* Bytes per element; 0 for types without a fixed size. */
PX_C_EXPORT size_t px_dtype_size(px_dtype dtype);
/* Static string: "float", "int32", ... */
PX_C_EXPORT const char* px_dtype_name(px_dtype dtype);

/* ---- Tensors (host memory) --------------------------------------------- */

typedef struct px_tensor px_tensor;

/* A zero-filled tensor. `dims` may be NULL when ndim is 0 (a scalar). */
PX_C_EXPORT px_code px_tensor_create(px_dtype dtype, const int64_t* dims, int ndim,
                                     px_tensor** out_tensor, px_status* status);
/* A tensor holding a copy of `data`, which must be exactly `byte_size` bytes
 * of row-major elements. */
PX_C_EXPORT px_code px_tensor_create_from_data(px_dtype dtype, const int64_t* dims, int ndim,
                                               const void* data, size_t byte_size,
                                               px_tensor** out_tensor, px_status* status);
PX_C_EXPORT void px_tensor_destroy(px_tensor* tensor);
PX_C_EXPORT px_dtype px_tensor_dtype(const px_tensor* tensor);
PX_C_EXPORT int px_tensor_ndim(const px_tensor* tensor);
/* Dimension i, or -1 when i is out of range. */
PX_C_EXPORT int64_t px_tensor_dim(const px_tensor* tensor, int i);
PX_C_EXPORT int64_t px_tensor_num_elements(const px_tensor* tensor);
PX_C_EXPORT size_t px_tensor_byte_size(const px_tensor* tensor);
/* The row-major element buffer, borrowed from the tensor (writable). When
 * the tensor shares a variable's value (a fetched variable read), the first
 * call gives the tensor a copy of its own, so writes never reach the
 * variable; NULL when that copy cannot be allocated. */
PX_C_EXPORT void* px_tensor_data(px_tensor* tensor);

/* A PX_DTYPE_STRING tensor of shape `dims`. Element i (row-major) is a copy
 * of the `lengths[i]` bytes at `strings[i]` (any bytes, NUL included);
 * `num_strings` must equal the element count. strings[i] may be NULL when
 * lengths[i] is 0. */
PX_C_EXPORT px_code px_tensor_create_strings(const int64_t* dims, int ndim,
                                             const char* const* strings, const size_t* lengths,
                                             size_t num_strings, px_tensor** out_tensor,
                                             px_status* status);
/* Element `index` (row-major) of a PX_DTYPE_STRING tensor: *out_data points
 * to *out_length bytes, borrowed from the tensor (valid until it is
 * destroyed) and followed by a NUL that is not counted. */
PX_C_EXPORT px_code px_tensor_string(const px_tensor* tensor, int64_t index,
                                     const char** out_data, size_t* out_length,
                                     px_status* status);

/* .npy files (numeric and bool dtypes, C order; strings as NumPy's dtype S,
 * and U on reading, as UTF-8). */
PX_C_EXPORT px_code px_tensor_read_npy(const char* path, px_tensor** out_tensor,
                                       px_status* status);
PX_C_EXPORT px_code px_tensor_write_npy(const px_tensor* tensor, const char* path,
                                        px_status* status);

/* DLPack exchange without copies. Export: *out_managed shares the tensor's
 * buffer; the consumer calls its deleter when done (the px_tensor may be
 * destroyed first). Import: on success the px_tensor takes ownership of
 * `managed` and calls its deleter when destroyed; on failure ownership stays
 * with the caller. Import accepts host (kDLCPU) row-major tensors only. */
PX_C_EXPORT px_code px_tensor_to_dlpack(const px_tensor* tensor, DLManagedTensor** out_managed,
                                        px_status* status);
PX_C_EXPORT px_code px_tensor_from_dlpack(DLManagedTensor* managed, px_tensor** out_tensor,
                                          px_status* status);

/* ---- Runtime: plugins and devices -------------------------------------- */

typedef struct px_runtime px_runtime;

typedef struct px_runtime_options {
  size_t struct_size; /* sizeof(px_runtime_options) */
  /* Load every plugin in PLEXUS_PLUGIN_PATH and beside the library. */
  int discover_plugins;
  /* Plugins complete each launch before returning (debugging). */
  int synchronous_debug;
} px_runtime_options;

/* `options` may be NULL: discover plugins, asynchronous launches. A plugin
 * that fails to load does not fail this call: see px_runtime_load_report. */
PX_C_EXPORT px_code px_runtime_create(const px_runtime_options* options,
                                      px_runtime** out_runtime, px_status* status);
/* Destroy every session of the runtime first. */
PX_C_EXPORT void px_runtime_destroy(px_runtime* runtime);
/* Loads a plugin file. A refusal is returned with its reason. */
PX_C_EXPORT px_code px_runtime_load_plugin(px_runtime* runtime, const char* path,
                                           px_status* status);

typedef struct px_plugin_info {
  size_t struct_size;     /* set by the caller */
  const char* name;       /* borrowed from the runtime */
  const char* version;
  const char* path;
  const char* device_type;
  uint32_t abi_major;
  uint32_t abi_minor;
  size_t num_kernels;
} px_plugin_info;

typedef struct px_device_info {
  size_t struct_size;     /* set by the caller */
  const char* name;       /* "CPU:0"; borrowed from the runtime */
  const char* type;       /* "CPU" */
  const char* description;/* hardware name, e.g. the CPU model */
  const char* vendor;
  const char* plugin_name;
  uint64_t total_memory_bytes;
  uint64_t free_memory_bytes;
} px_device_info;

PX_C_EXPORT size_t px_runtime_num_plugins(const px_runtime* runtime);
PX_C_EXPORT px_code px_runtime_plugin_info(const px_runtime* runtime, size_t index,
                                           px_plugin_info* out_info, px_status* status);
PX_C_EXPORT size_t px_runtime_num_devices(const px_runtime* runtime);
PX_C_EXPORT px_code px_runtime_device_info(const px_runtime* runtime, size_t index,
                                           px_device_info* out_info, px_status* status);
/* Every plugin file the runtime tried, loaded or refused, in order.
 * *out_message is borrowed from the runtime. */
PX_C_EXPORT size_t px_runtime_num_load_reports(const px_runtime* runtime);
PX_C_EXPORT px_code px_runtime_load_report(const px_runtime* runtime, size_t index,
                                           int* out_loaded, const char** out_message,
                                           px_status* status);

/* ---- Graphs ------------------------------------------------------------ */

typedef struct px_graph px_graph;

typedef enum px_graph_format {
  PX_GRAPH_FORMAT_AUTO = 0,   /* binary, else text */
  PX_GRAPH_FORMAT_BINARY = 1,
  PX_GRAPH_FORMAT_TEXT = 2,
  /* Not formats: the enum holds every 32-bit value (see px_dtype). */
  PX_GRAPH_FORMAT_RANGE_MIN_ = -0x7FFFFFFF - 1,
  PX_GRAPH_FORMAT_RANGE_MAX_ = 0x7FFFFFFF
} px_graph_format;

/* Imports a TensorFlow GraphDef from memory (the bytes are copied). */
PX_C_EXPORT px_code px_graph_import(const void* data, size_t size, px_graph_format format,
                                    px_graph** out_graph, px_status* status);
/* ".pbtxt" and ".txt" files are text; others binary (with a text fallback). */
PX_C_EXPORT px_code px_graph_import_file(const char* path, px_graph** out_graph,
                                         px_status* status);
PX_C_EXPORT void px_graph_destroy(px_graph* graph);
PX_C_EXPORT size_t px_graph_num_nodes(const px_graph* graph);

/* Symbolic gradients: a new graph holding `graph` plus the nodes computing
 * d(sum_i ys[i] * grad_ys[i]) / d(xs[j]) (TensorFlow's tf.gradients). Names
 * are tensor names ("node:0", or "node" for output 0); grad_ys NULL means
 * ones. The gradient of xs[j] is the new graph's tensor
 * px_graph_gradient_name(*out_graph, j), NULL when ys do not depend on
 * xs[j]. Errors name the op without a gradient function, or the unknown
 * tensor. Graphs with TensorFlow 1 loops are refused. */
PX_C_EXPORT px_code px_graph_gradients(const px_graph* graph, const char* const* ys, size_t num_ys,
                                       const char* const* xs, size_t num_xs,
                                       const char* const* grad_ys, px_graph** out_graph,
                                       px_status* status);
/* Borrowed from the graph; NULL for j out of range or no gradient. */
PX_C_EXPORT const char* px_graph_gradient_name(const px_graph* graph, size_t j);

/* ---- Sessions ---------------------------------------------------------- */

typedef struct px_session px_session;

/* `device` is a name such as "CPU:0", or NULL for the best device present.
 * The session keeps what it needs of the graph: the graph may be destroyed
 * right after. */
PX_C_EXPORT px_code px_session_create(px_runtime* runtime, const px_graph* graph,
                                      const char* device, px_session** out_session,
                                      px_status* status);
PX_C_EXPORT void px_session_destroy(px_session* session);
/* Borrowed: the device the session runs on. */
PX_C_EXPORT const char* px_session_device_name(const px_session* session);

/* Runs the graph. Feeds are (tensor name, tensor) pairs; names are "node" or
 * "node:k" and may name any tensor, not only placeholders. On success
 * out_fetches[i] receives a new tensor the caller destroys. */
PX_C_EXPORT px_code px_session_run(px_session* session,
                                   const char* const* feed_names,
                                   const px_tensor* const* feed_values, size_t num_feeds,
                                   const char* const* fetch_names, size_t num_fetches,
                                   const char* const* target_names, size_t num_targets,
                                   px_tensor** out_fetches, px_status* status);

/* ---- Run options: timeouts and cancellation ---------------------------- */

/* A cancel token: px_cancel_token_cancel (from any thread, or a signal
 * handler: it only sets an atomic flag) stops every run using it between
 * nodes with PX_STATUS_CANCELLED; work already queued on a device finishes
 * first. A token stays cancelled until px_cancel_token_reset. Destroy it
 * after the runs using it have returned. */
typedef struct px_cancel_token px_cancel_token;
PX_C_EXPORT px_code px_cancel_token_create(px_cancel_token** out_token, px_status* status);
PX_C_EXPORT void px_cancel_token_cancel(px_cancel_token* token);
PX_C_EXPORT void px_cancel_token_reset(px_cancel_token* token);
PX_C_EXPORT int px_cancel_token_is_cancelled(const px_cancel_token* token);
PX_C_EXPORT void px_cancel_token_destroy(px_cancel_token* token);

/* Filled by a run that asks for it (c_api_run.h). */
typedef struct px_run_metadata px_run_metadata;

typedef struct px_run_options {
  size_t struct_size;       /* sizeof(px_run_options) */
  /* 0: no limit. Otherwise a run that takes longer stops between nodes
   * (loops and functions included) with PX_STATUS_DEADLINE_EXCEEDED and a
   * message naming the timeout; the session stays usable. */
  double timeout_seconds;
  px_cancel_token* cancel;  /* NULL, or a token that cancels the run */
  /* NULL, or metadata the run fills: each node's device and time, the
   * placement, the memory plan (px_run_metadata_*). */
  px_run_metadata* metadata;
  /* NULL, or a file the run's timeline is written to as Chrome trace JSON. */
  const char* trace_path;
} px_run_options;

/* px_session_run with options (NULL options: none). */
PX_C_EXPORT px_code px_session_run_with_options(px_session* session, const px_run_options* options,
                                                const char* const* feed_names,
                                                const px_tensor* const* feed_values, size_t num_feeds,
                                                const char* const* fetch_names, size_t num_fetches,
                                                const char* const* target_names, size_t num_targets,
                                                px_tensor** out_fetches, px_status* status);

/* ---- Threads ----------------------------------------------------------- */

/* The process-wide intra-op thread budget: how many threads each kernel
 * (a convolution or matrix product on the cpu plugin, say) may use, in every
 * session and SavedModel from its next run on. 0 restores the automatic
 * value: PLEXUS_INTRA_OP_THREADS when set, else the CPUs this process may
 * use (its CPU affinity, capped by its cgroup CPU quota). Runs use fewer
 * while other processes keep some of those CPUs busy, unless
 * PLEXUS_ADAPTIVE_THREADS=0. INVALID_ARGUMENT for a negative count. */
PX_C_EXPORT px_code px_intra_op_threads_set(int32_t threads, px_status* status);
/* The budget in effect (the count set, or the automatic value); at least 1. */
PX_C_EXPORT int32_t px_intra_op_threads_get(void);

/* ---- SavedModels ------------------------------------------------------- */

typedef struct px_saved_model px_saved_model;

/* Loads the TensorFlow SavedModel in directory `dir` (the folder holding
 * saved_model.pb or saved_model.pbtxt): picks the MetaGraphDef whose tag set
 * is exactly `tags` (NULL or num_tags 0: {"serve"}), imports its graph,
 * opens a session on `device` (NULL: the best device present), restores the
 * variables from dir/variables/variables and runs the init op. Destroy the
 * model before its runtime. */
PX_C_EXPORT px_code px_saved_model_load(px_runtime* runtime, const char* dir,
                                        const char* const* tags, size_t num_tags,
                                        const char* device, px_saved_model** out_model,
                                        px_status* status);
PX_C_EXPORT void px_saved_model_destroy(px_saved_model* model);
/* Borrowed: the device the model's session runs on. "" for NULL. */
PX_C_EXPORT const char* px_saved_model_device_name(const px_saved_model* model);

/* Signatures are in the order of their keys (byte-wise), the init-op
 * signature "__saved_model_init_op" left out. 0 for NULL. */
PX_C_EXPORT size_t px_saved_model_num_signatures(const px_saved_model* model);
/* *out_key: the key of signature `index`, borrowed from the model. */
PX_C_EXPORT px_code px_saved_model_signature_key(const px_saved_model* model, size_t index,
                                                 const char** out_key, px_status* status);
/* The number of inputs and outputs of signature `key` (either out pointer
 * may be NULL). NOT_FOUND, listing the keys, for an unknown key. */
PX_C_EXPORT px_code px_saved_model_signature_arity(const px_saved_model* model, const char* key,
                                                   size_t* out_num_inputs,
                                                   size_t* out_num_outputs, px_status* status);

/* One input or output of a signature. Strings and dims are borrowed from the
 * model. */
typedef struct px_signature_tensor_info {
  size_t struct_size;      /* set by the caller */
  const char* key;         /* the signature's name for it: "x" */
  const char* tensor_name; /* the graph tensor: "x:0" */
  px_dtype dtype;          /* base type (a ref type reads as its value type) */
  int is_ref;              /* 1 when declared with a ref type (DT_FLOAT_REF) */
  int ndim;                /* -1 when the rank is unknown */
  const int64_t* dims;     /* ndim entries, -1 for an unknown dimension */
} px_signature_tensor_info;

/* Input or output `index` of signature `key`, in the order of their keys.
 * Set info.struct_size first. A bad index is OUT_OF_RANGE. */
PX_C_EXPORT px_code px_saved_model_signature_input(const px_saved_model* model, const char* key,
                                                   size_t index,
                                                   px_signature_tensor_info* out_info,
                                                   px_status* status);
PX_C_EXPORT px_code px_saved_model_signature_output(const px_saved_model* model,
                                                    const char* key, size_t index,
                                                    px_signature_tensor_info* out_info,
                                                    px_status* status);

/* Runs signature `key`. Inputs are (signature input key, tensor) pairs and
 * must cover every input that has no default. out_outputs[i] receives a new
 * tensor for output key output_keys[i]; num_outputs may be 0 to run the
 * signature for its effects only. Variables keep their values across runs. */
PX_C_EXPORT px_code px_saved_model_run(px_saved_model* model, const char* key,
                                       const char* const* input_keys,
                                       const px_tensor* const* input_values, size_t num_inputs,
                                       const char* const* output_keys, size_t num_outputs,
                                       px_tensor** out_outputs, px_status* status);

/* px_saved_model_run with options (see px_run_options; NULL: none). */
PX_C_EXPORT px_code px_saved_model_run_with_options(px_saved_model* model, const px_run_options* options,
                                                    const char* key, const char* const* input_keys,
                                                    const px_tensor* const* input_values, size_t num_inputs,
                                                    const char* const* output_keys, size_t num_outputs,
                                                    px_tensor** out_outputs, px_status* status);

/* ---- Placement ---------------------------------------------------------- */

/* Where each node of a session's (or SavedModel's) last run went: a snapshot
 * the caller destroys with px_placement_destroy. Empty (no nodes) before the
 * first run. Strings are borrowed from the snapshot. */
typedef struct px_placement px_placement;

PX_C_EXPORT px_code px_session_placement(const px_session* session, px_placement** out_placement,
                                         px_status* status);
PX_C_EXPORT px_code px_saved_model_placement(const px_saved_model* model,
                                             px_placement** out_placement, px_status* status);
PX_C_EXPORT void px_placement_destroy(px_placement* placement);
/* Nodes in execution order; 0 for NULL. */
PX_C_EXPORT size_t px_placement_num_nodes(const px_placement* placement);
/* Node `index`: its name, op, how it runs ("kernel", "host op" or "core"),
 * its device and the plugin of its kernel ("" unless a kernel), and why it
 * is not on the run's device ("" when it simply runs there). Any out pointer
 * may be NULL. OUT_OF_RANGE for a bad index. */
PX_C_EXPORT px_code px_placement_node(const px_placement* placement, size_t index,
                                      const char** out_node, const char** out_op,
                                      const char** out_how, const char** out_device,
                                      const char** out_plugin, const char** out_reason,
                                      px_status* status);
/* Copies between devices the run makes; 0 for NULL. */
PX_C_EXPORT size_t px_placement_num_copies(const px_placement* placement);
/* Copy `index`: the tensor ("node:k"), where from and to (a device name or
 * "host memory") and the node that reads it there. */
PX_C_EXPORT px_code px_placement_copy(const px_placement* placement, size_t index,
                                      const char** out_tensor, const char** out_from,
                                      const char** out_to, const char** out_reader,
                                      px_status* status);
/* The report as text: one line per node, one per copy, then a summary
 * (nodes per device, copies). "" for NULL. */
PX_C_EXPORT const char* px_placement_text(const px_placement* placement);

#ifdef __cplusplus
} /* extern "C" */
#endif

#include "plexus/c_api_build.h"
#include "plexus/c_api_eager.h"
#include "plexus/c_api_run.h"

#endif /* PLEXUS_C_API_H_ */

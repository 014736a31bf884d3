/* Plexus C API: session options, run metadata, prepared callables,
 * asynchronous runs, checkpoints, logging and plugin unload. Part of the C
 * API: include <plexus/c_api.h>, which includes this file; the conventions
 * of c_api.h apply.
 */
#ifndef PLEXUS_C_API_RUN_H_
#define PLEXUS_C_API_RUN_H_

#include "plexus/c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Session options --------------------------------------------------- */

/* Placement policies. */
#define PX_PLACEMENT_SOFT 0   /* a node without a kernel on its device runs on another (default) */
#define PX_PLACEMENT_STRICT 1 /* that is an error naming the node, before anything runs */

/* Every int field is -1 for "the default" unless it says otherwise; zero
 * the struct and set struct_size, then what you need. */
typedef struct px_session_options {
  size_t struct_size;          /* sizeof(px_session_options) */
  const char* device;          /* "CPU:0"; NULL: the best device present */
  int optimizer;               /* 1 on (default), 0 off */
  /* Optimizer passes to leave out, comma-separated ("cse,fuse"); NULL or ""
   * for none. An unknown name is INVALID_ARGUMENT listing the passes. */
  const char* disabled_passes;
  int inter_op_parallelism;    /* 1 (default): independent branches at once */
  int32_t intra_op_threads;    /* threads per kernel; 0: the process budget */
  int device_graphs;           /* 1: record and replay device graphs; default 0 */
  int memory_plan;             /* 1 (default): plan intermediate tensors in arenas */
  /* 1 (default): fetches come back in host memory. 0: a fetch computed on a
   * device the host cannot read stays there (px_tensor_device_name says
   * which; DLPack shares it without a copy). */
  int fetch_to_host;
  int trace;                   /* 1: record every run for px_session_write_trace */
  int placement;               /* PX_PLACEMENT_SOFT (default) or PX_PLACEMENT_STRICT */
  int32_t max_shape_specializations; /* executors per fed-shape signature; default 4 */
} px_session_options;

/* px_session_create with options (NULL: defaults). Errors name the field. */
PX_C_EXPORT px_code px_session_create_with_options(px_runtime* runtime, const px_graph* graph,
                                                   const px_session_options* options,
                                                   px_session** out_session, px_status* status);
/* With options.trace: every run so far as Chrome trace JSON (Perfetto,
 * chrome://tracing). FAILED_PRECONDITION without options.trace. */
PX_C_EXPORT px_code px_session_write_trace(const px_session* session, const char* path,
                                           px_status* status);

/* ---- Run metadata ------------------------------------------------------- */

/* Filled by a run whose px_run_options.metadata points to it: each node,
 * where it ran and for how long; the placement; the memory plan. Reused runs
 * overwrite it. */
typedef struct px_run_metadata px_run_metadata;
PX_C_EXPORT px_code px_run_metadata_create(px_run_metadata** out_metadata, px_status* status);
PX_C_EXPORT void px_run_metadata_destroy(px_run_metadata* metadata);
/* The run's wall time in nanoseconds; 0 before a run. */
PX_C_EXPORT int64_t px_run_metadata_wall_ns(const px_run_metadata* metadata);
/* 1 when the run prepared its signature (optimizer, placement, plan). */
PX_C_EXPORT int px_run_metadata_built_executor(const px_run_metadata* metadata);
PX_C_EXPORT size_t px_run_metadata_num_nodes(const px_run_metadata* metadata);
/* Node `index`, in the order nodes finished; strings borrowed from the
 * metadata; any out pointer may be NULL. */
PX_C_EXPORT px_code px_run_metadata_node(const px_run_metadata* metadata, size_t index,
                                         const char** out_node, const char** out_op,
                                         const char** out_device, int64_t* out_start_ns,
                                         int64_t* out_duration_ns, px_status* status);

typedef struct px_memory_stats {
  size_t struct_size;            /* set by the caller */
  int64_t planned_tensors;       /* intermediate tensors the memory plan placed */
  int64_t planned_tensor_bytes;  /* their sizes added up */
  int64_t arena_bytes;           /* what the plan's arenas take instead */
  int64_t copy_items;            /* copies between devices in the plan */
  int32_t intra_op_threads;      /* the run's per-kernel thread budget */
  int parallel;                  /* 1: independent branches ran at once */
  /* Of copy_items, those that run at every run: a constant's copy runs
   * once, when the signature is prepared (a frozen graph on a GPU has none
   * when all its weights reach the device that way). */
  int64_t copies_per_run;
} px_memory_stats;
PX_C_EXPORT px_code px_run_metadata_memory(const px_run_metadata* metadata,
                                           px_memory_stats* out_stats, px_status* status);
/* A snapshot of where the run's nodes went (see px_placement_*). */
PX_C_EXPORT px_code px_run_metadata_placement(const px_run_metadata* metadata,
                                              px_placement** out_placement, px_status* status);

/* ---- Callables: one feed/fetch signature, prepared once ------------------ */

typedef struct px_callable px_callable;

/* Checks the names now (errors name the tensor); the first run prepares
 * the signature, later runs reuse it. The callable keeps its session alive
 * until it is destroyed. */
PX_C_EXPORT px_code px_session_make_callable(px_session* session,
                                             const char* const* feed_names, size_t num_feeds,
                                             const char* const* fetch_names, size_t num_fetches,
                                             const char* const* target_names, size_t num_targets,
                                             px_callable** out_callable, px_status* status);
PX_C_EXPORT void px_callable_destroy(px_callable* callable);
PX_C_EXPORT size_t px_callable_num_feeds(const px_callable* callable);
PX_C_EXPORT size_t px_callable_num_fetches(const px_callable* callable);
/* feed_values[i] for feed i; out_fetches receives num_fetches tensors.
 * `options` may be NULL. Safe from several threads. */
PX_C_EXPORT px_code px_callable_run(px_callable* callable, const px_run_options* options,
                                    const px_tensor* const* feed_values, px_tensor** out_fetches,
                                    px_status* status);

/* ---- Asynchronous runs ---------------------------------------------------- */

/* A run in flight. Its feeds are held until it ends; `options` are copied
 * (the cancel token and metadata it points to must live until the run
 * ends). */
typedef struct px_run_event px_run_event;
PX_C_EXPORT px_code px_callable_run_async(px_callable* callable, const px_run_options* options,
                                          const px_tensor* const* feed_values,
                                          px_run_event** out_event, px_status* status);
/* 1 once the run has ended. */
PX_C_EXPORT int px_run_event_is_done(const px_run_event* event);
/* Waits up to timeout_seconds (negative: no limit) for the run to end.
 * DEADLINE_EXCEEDED when it is still running (the run goes on: cancel it
 * with its token); otherwise the run's own status. */
PX_C_EXPORT px_code px_run_event_wait(px_run_event* event, double timeout_seconds,
                                      px_status* status);
/* After a successful run: moves its fetches into out_fetches (once;
 * FAILED_PRECONDITION before the run ends or when taken already). */
PX_C_EXPORT px_code px_run_event_take_results(px_run_event* event, px_tensor** out_fetches,
                                              px_status* status);
/* Waits for the run to end, then frees the event and any results not taken. */
PX_C_EXPORT void px_run_event_destroy(px_run_event* event);

/* ---- Checkpoints ------------------------------------------------------------ */

/* Writes a TensorFlow V2 checkpoint (PREFIX.index, PREFIX.data-00000-of-
 * 00001) of host tensors by key, atomically (temporary files renamed into
 * place). TensorFlow's tf.train.load_checkpoint reads it. */
PX_C_EXPORT px_code px_checkpoint_write(const char* prefix, const char* const* keys,
                                        const px_tensor* const* values, size_t count,
                                        px_status* status);
/* Reads tensor `key` of the checkpoint at `prefix`. NOT_FOUND names a few
 * keys there are; DATA_LOSS for bytes that fail their checksums. */
PX_C_EXPORT px_code px_checkpoint_read(const char* prefix, const char* key,
                                       px_tensor** out_tensor, px_status* status);
/* The keys of the checkpoint, sorted: *out_keys is a NUL-separated list in a
 * buffer the caller destroys, *out_count the number of keys. */
PX_C_EXPORT px_code px_checkpoint_keys(const char* prefix, px_buffer** out_keys,
                                       size_t* out_count, px_status* status);
/* A SavedModel's variables saved to / restored from the checkpoint at
 * `prefix`, through the model's own saver (TensorFlow 1 layout; what
 * tf.compat.v1.train.Saver writes and reads). FAILED_PRECONDITION for a
 * model without a saver. */
PX_C_EXPORT px_code px_saved_model_save(px_saved_model* model, const char* prefix,
                                        px_status* status);
PX_C_EXPORT px_code px_saved_model_restore(px_saved_model* model, const char* prefix,
                                           px_status* status);

/* ---- Logging ---------------------------------------------------------------- */

typedef enum px_log_level {
  PX_LOG_LEVEL_DEBUG = 0,
  PX_LOG_LEVEL_INFO = 1,
  PX_LOG_LEVEL_WARNING = 2,  /* the default (PLEXUS_LOG_LEVEL) */
  PX_LOG_LEVEL_ERROR = 3,
  PX_LOG_LEVEL_RANGE_MIN_ = -0x7FFFFFFF - 1,
  PX_LOG_LEVEL_RANGE_MAX_ = 0x7FFFFFFF
} px_log_level;

/* Messages below `level` are dropped, process-wide. INVALID_ARGUMENT for an
 * unknown level. */
PX_C_EXPORT px_code px_log_set_level(px_log_level level, px_status* status);
PX_C_EXPORT px_log_level px_log_get_level(void);
/* Messages at or above the level go to `callback` instead of stderr (NULL
 * restores stderr), one call at a time, with a NUL-terminated message that
 * is valid during the call. Protobuf's reports about malformed files come
 * through here too. A callback that calls back into Plexus is served, but
 * what that call logs goes to stderr. */
typedef void (*px_log_callback)(void* user, px_log_level level, const char* message);
PX_C_EXPORT void px_log_set_callback(px_log_callback callback, void* user);

/* ---- Plugin unload --------------------------------------------------------- */

/* Unloads plugin `name` from the runtime. FAILED_PRECONDITION while any of
 * its devices is in use (a live tensor, session, eager context or model) or
 * another runtime of the process shares it; NOT_FOUND for a name not
 * loaded. Strings borrowed from px_plugin_info and px_device_info of the
 * plugin stay valid until the runtime is destroyed, but later listings
 * leave the plugin and its devices out. */
PX_C_EXPORT px_code px_runtime_unload_plugin(px_runtime* runtime, const char* name,
                                             px_status* status);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLEXUS_C_API_RUN_H_ */

/* Plexus device plugin ABI, version 0.7.
 *
 * This header is the whole contract between the Plexus core (the "host") and a
 * device plugin (a shared object loaded at run time). It includes only C
 * standard headers and dlpack.h, so a vendor can copy plugin_api/include alone
 * and build a plugin outside the Plexus tree.
 *
 * Conventions
 * -----------
 * - Names: PX_ prefixes every type and symbol. Structs whose name ends in
 *   "Host..." or that start with "PX_Host" are filled by the host, as is
 *   PX_KVStore; the plugin fills PX_PluginProbeInfo, PX_PluginTable,
 *   PX_DeviceInfo, PX_MemoryStats, PX_KernelDef and PX_CollectivesExt.
 * - Every struct begins with `size_t struct_size`, set by whoever allocates
 *   the struct to sizeof() as that side compiled it. A reader must never touch
 *   a field that lies beyond struct_size. Fields are only ever appended; see
 *   plugin_api/CHANGELOG.md. Use PX_STRUCT_HAS(ptr, type, field) to test
 *   presence.
 * - Out-structs (PX_PluginProbeInfo, PX_PluginTable, PX_DeviceInfo,
 *   PX_MemoryStats) are allocated and zero-filled by the host, which sets
 *   struct_size to its own sizeof. The plugin writes at most
 *   min(struct_size, its own sizeof) bytes and leaves struct_size as the host
 *   set it, except PX_PluginTable, whose struct_size the plugin lowers to its
 *   own sizeof when that is smaller (an older plugin), so the host knows which
 *   slots were filled.
 * - Status: every fallible function returns PX_Status*. NULL means OK. A
 *   non-NULL status is created through PX_HostServices.status_create (never by
 *   the plugin itself) and ownership passes to the caller; the host frees the
 *   statuses plugins return. Codes are Abseil's canonical codes (PX_Code).
 *   Nothing may abort, throw or longjmp across this boundary.
 * - Function slots: each slot is marked [required] or [optional]. A NULL
 *   optional slot means "unimplemented"; the host reports UNIMPLEMENTED to the
 *   user instead of calling it. A NULL required slot makes the host refuse the
 *   plugin at load time with a message that names the slot.
 * - Pointers: "borrowed" means valid only for the duration of the call;
 *   "static" means valid until the plugin is unloaded; "owned by X" says who
 *   frees it.
 * - Data types: PX_DataType uses TensorFlow's DataType numbers (DT_FLOAT = 1,
 *   ...). Tensor data crosses the boundary as DLPack DLTensor descriptors.
 * - Unstated numbers: alignment 0 means 64; deallocate(NULL) and
 *   host_deallocate(NULL) are no-ops; memcpy source and destination never
 *   overlap.
 *
 * Lifecycle
 * ---------
 * 1. dlopen, then PX_PluginProbe (frozen forever, touches no hardware): the
 *    plugin's name and the ABI range it speaks. Loaders use it to reject or
 *    rank a plugin cheaply.
 * 2. PX_PluginInitialize: the host passes the ABI range it speaks and its
 *    services; the plugin picks a version both speak (or refuses with a status
 *    saying why), and fills PX_PluginTable. Initialization must not open or
 *    reset any device.
 * 3. register_kernels: the plugin announces its kernels through the
 *    registrar it is handed.
 * 4. device_count / device_get_info / device_open ... normal use.
 * 5. Unload: the host destroys every kernel, stream, event and allocation it
 *    made, closes each opened device, calls plugin_shutdown, then dlclose.
 *
 * Threading contract
 * ------------------
 * - PX_PluginProbe and PX_PluginInitialize are called once, from one thread,
 *   and never concurrently with anything else of the same plugin.
 * - Device enumeration, open and close are serialized by the host.
 * - Kernel compute functions must be reentrant: the host may run different
 *   kernels, and the same kernel instance on different inputs, concurrently
 *   from several threads. Kernel create and destroy may run on any thread but
 *   never concurrently with compute on the same instance.
 * - All calls that take a PX_Stream are serialized per stream by the host;
 *   calls on different streams may be concurrent.
 * - allocate / deallocate / memcpy_* must be thread-safe.
 * - Host services (PX_HostServices) are thread-safe and may be called from any
 *   thread, including from within compute.
 * - Host callbacks enqueued with stream_add_callback run on a thread the plugin
 *   chooses; they must not call back into the same stream.
 */
#ifndef PLEXUS_PLUGIN_API_H_
#define PLEXUS_PLUGIN_API_H_

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ABI version this header describes. A host or plugin built from it speaks
 * every minor from 0 to PX_ABI_VERSION_MINOR of PX_ABI_VERSION_MAJOR. */
#define PX_ABI_VERSION_MAJOR 0
#define PX_ABI_VERSION_MINOR 8

/* Symbols a plugin exports (C linkage, default visibility). */
#define PX_PLUGIN_PROBE_SYMBOL "PX_PluginProbe"
#define PX_PLUGIN_INITIALIZE_SYMBOL "PX_PluginInitialize"

#if defined(_WIN32)
#define PX_PLUGIN_EXPORT __declspec(dllexport)
#else
#define PX_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* True when a struct of the given (reader-side) type, as filled by the other
 * side, is large enough to contain `field`. */
#define PX_STRUCT_HAS(ptr, type, field) \
  ((ptr)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

/* ------------------------------------------------------------------------ */
/* Status                                                                   */
/* ------------------------------------------------------------------------ */

/* Canonical status codes (the same numbers as absl::StatusCode). */
typedef enum PX_Code {
  PX_CODE_OK = 0,
  PX_CODE_CANCELLED = 1,
  PX_CODE_UNKNOWN = 2,
  PX_CODE_INVALID_ARGUMENT = 3,
  PX_CODE_DEADLINE_EXCEEDED = 4,
  PX_CODE_NOT_FOUND = 5,
  PX_CODE_ALREADY_EXISTS = 6,
  PX_CODE_PERMISSION_DENIED = 7,
  PX_CODE_RESOURCE_EXHAUSTED = 8,
  PX_CODE_FAILED_PRECONDITION = 9,
  PX_CODE_ABORTED = 10,
  PX_CODE_OUT_OF_RANGE = 11,
  PX_CODE_UNIMPLEMENTED = 12,
  PX_CODE_INTERNAL = 13,
  PX_CODE_UNAVAILABLE = 14,
  PX_CODE_DATA_LOSS = 15,
  PX_CODE_UNAUTHENTICATED = 16
} PX_Code;

/* Opaque; created only by PX_HostServices.status_create. */
typedef struct PX_Status PX_Status;

/* ------------------------------------------------------------------------ */
/* Data types (TensorFlow DataType numbers)                                 */
/* ------------------------------------------------------------------------ */

typedef int32_t PX_DataType;
#define PX_DT_INVALID 0
#define PX_DT_FLOAT 1
#define PX_DT_DOUBLE 2
#define PX_DT_INT32 3
#define PX_DT_UINT8 4
#define PX_DT_INT16 5
#define PX_DT_INT8 6
#define PX_DT_STRING 7
#define PX_DT_COMPLEX64 8
#define PX_DT_INT64 9
#define PX_DT_BOOL 10
#define PX_DT_BFLOAT16 14
#define PX_DT_UINT16 17
#define PX_DT_COMPLEX128 18
#define PX_DT_HALF 19
#define PX_DT_UINT32 22
#define PX_DT_UINT64 23

/* DLPack 0.6 lacks a boolean type code; later DLPack versions define
 * kDLBool = 6. Plexus uses that number for PX_DT_BOOL tensors (8 bits). */
#define PX_DL_BOOL 6

/* [0.2] String tensors (PX_DT_STRING). A descriptor of a string tensor has
 * dtype {code PX_DL_STRING, bits 8 * sizeof(PX_StringRef), lanes 1}; its data
 * is an array of PX_StringRef, one per element, in host memory, borrowed for
 * the call. The host passes string tensors only to plugins that negotiated
 * minor 2 or newer (to any of their kernels whose op has a string input),
 * and only as inputs: a kernel cannot produce a string tensor in ABI 0.x
 * (output_allocate refuses string outputs). Read bits as given; do not
 * assume 128 (PX_StringRef's size depends on the platform). */
#define PX_DL_STRING 130
typedef struct PX_StringRef {
  const char* data; /* not NUL-terminated; may contain any bytes */
  uint64_t size;
} PX_StringRef;

/* ------------------------------------------------------------------------ */
/* Logging                                                                  */
/* ------------------------------------------------------------------------ */

typedef enum PX_LogLevel {
  PX_LOG_DEBUG = 0,
  PX_LOG_INFO = 1,
  PX_LOG_WARNING = 2,
  PX_LOG_ERROR = 3
} PX_LogLevel;

/* ------------------------------------------------------------------------ */
/* Opaque handles                                                           */
/* ------------------------------------------------------------------------ */

/* Plugin-owned handles (the plugin defines what they point to). */
typedef struct PX_Device PX_Device;
typedef struct PX_Stream PX_Stream;
typedef struct PX_Event PX_Event;
typedef struct PX_Graph PX_Graph; /* recorded stream work (ABI 0.5) */

/* Host-owned handles (the plugin only passes them back to host services). */
typedef struct PX_NodeView PX_NodeView;          /* a graph node, for create */
typedef struct PX_KernelContext PX_KernelContext; /* one kernel launch */
typedef struct PX_KernelRegistrar PX_KernelRegistrar;

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

/* Restricts a type attribute of the op (for example "T") to a set of dtypes. */
typedef struct PX_TypeConstraint {
  size_t struct_size;
  const char* attr_name;          /* borrowed */
  const PX_DataType* allowed;     /* borrowed array of num_allowed */
  size_t num_allowed;
} PX_TypeConstraint;

/* Creates a kernel instance for one node. `node` is borrowed for the call;
 * read attributes through the PX_HostServices node_* accessors. On success
 * store the instance in *out_kernel. A kernel def without create is
 * stateless: its compute then receives the def's user_data as `kernel` (so a
 * plugin can reach its state, and its host services, from there). */
typedef PX_Status* (*PX_KernelCreateFn)(void* kernel_user_data,
                                        const PX_NodeView* node,
                                        void** out_kernel);

/* Runs the kernel. `inputs` and `outputs` are flat arrays of descriptors,
 * borrowed for the call. Each output either is allocated already (the host
 * inferred its shape; a zero-element output may have data == NULL), or has
 * ndim == -1: then the kernel must allocate it with
 * PX_HostServices.output_allocate, which fills outputs[i]. The dtype of an
 * unallocated output is already set. Outputs never alias inputs. Inputs and
 * outputs live in device memory except those the kernel def marks as host
 * memory. The kernel may enqueue work on `stream` and return before it ends;
 * errors found later are reported through the stream (its sticky error). An
 * error returned from compute itself fails this launch only and is not
 * recorded on the stream. */
typedef PX_Status* (*PX_KernelComputeFn)(void* kernel, PX_KernelContext* ctx,
                                         const DLTensor* inputs,
                                         size_t num_inputs, DLTensor* outputs,
                                         size_t num_outputs,
                                         PX_Stream* stream);

typedef void (*PX_KernelDestroyFn)(void* kernel);

typedef struct PX_KernelDef {
  size_t struct_size;
  const char* op_name;                          /* borrowed; e.g. "MatMul" */
  const PX_TypeConstraint* type_constraints;    /* borrowed array */
  size_t num_type_constraints;
  const int32_t* host_memory_inputs;            /* borrowed input indices */
  size_t num_host_memory_inputs;
  const int32_t* host_memory_outputs;           /* borrowed output indices */
  size_t num_host_memory_outputs;
  void* user_data;                              /* passed to create */
  PX_KernelCreateFn create;                     /* [optional] */
  PX_KernelComputeFn compute;                   /* [required] */
  PX_KernelDestroyFn destroy;                   /* [optional] */
  /* Higher is preferred when several kernels match. Default 0. */
  int32_t priority;
} PX_KernelDef;

/* ------------------------------------------------------------------------ */
/* Host services: filled by the host, valid until the plugin is unloaded    */
/* ------------------------------------------------------------------------ */

typedef struct PX_HostServices {
  size_t struct_size;
  void* host_context; /* opaque; pass back where a function asks for it */

  /* Status. status_create copies `message`. The plugin returns the status to
   * the host, which frees it; status_destroy is for a status the plugin
   * decides not to return. */
  PX_Status* (*status_create)(PX_Code code, const char* message);
  void (*status_destroy)(PX_Status* status);
  PX_Code (*status_code)(const PX_Status* status);
  const char* (*status_message)(const PX_Status* status); /* borrowed */

  /* Logging, attributed to the plugin by the host. */
  void (*log)(void* host_context, PX_LogLevel level, const char* message);

  /* Kernel registration; valid only inside register_kernels. The host copies
   * everything it needs out of `def`. */
  PX_Status* (*kernel_register)(PX_KernelRegistrar* registrar,
                                const PX_KernelDef* def);

  /* Node accessors for kernel create (the node is borrowed for the call).
   * Each returns NOT_FOUND when the attribute is absent and INVALID_ARGUMENT
   * when it has another type. Strings returned are borrowed. */
  const char* (*node_name)(const PX_NodeView* node);
  const char* (*node_op)(const PX_NodeView* node);
  size_t (*node_num_inputs)(const PX_NodeView* node);
  size_t (*node_num_outputs)(const PX_NodeView* node);
  PX_DataType (*node_input_type)(const PX_NodeView* node, size_t index);
  PX_DataType (*node_output_type)(const PX_NodeView* node, size_t index);
  PX_Status* (*node_attr_int)(const PX_NodeView* node, const char* name,
                              int64_t* out_value);
  PX_Status* (*node_attr_float)(const PX_NodeView* node, const char* name,
                                float* out_value);
  PX_Status* (*node_attr_bool)(const PX_NodeView* node, const char* name,
                               int* out_value);
  PX_Status* (*node_attr_type)(const PX_NodeView* node, const char* name,
                               PX_DataType* out_value);
  PX_Status* (*node_attr_string)(const PX_NodeView* node, const char* name,
                                 const char** out_data, size_t* out_size);
  /* Copies up to `capacity` values; *out_count receives the list's length. */
  PX_Status* (*node_attr_int_list)(const PX_NodeView* node, const char* name,
                                   int64_t* out_values, size_t capacity,
                                   size_t* out_count);
  /* A tensor-valued attribute (e.g. Const's "value") as a host-memory
   * descriptor, borrowed for the call: copy what you need. */
  PX_Status* (*node_attr_tensor)(const PX_NodeView* node, const char* name,
                                 const DLTensor** out_tensor);

  /* Launch helpers, valid only inside compute with its `ctx`. */
  /* Allocates output `index` with the given shape on the kernel's device (or
   * host memory for a host-memory output) and fills outputs[index]. */
  PX_Status* (*output_allocate)(PX_KernelContext* ctx, size_t index,
                                int32_t ndim, const int64_t* shape);
  const char* (*kernel_node_name)(PX_KernelContext* ctx); /* borrowed */

  /* [0.3] (test with PX_STRUCT_HAS): a list(string) attribute such as
   * _FusedMatMul's "fused_ops". Fills up to `capacity` (data, size) pairs,
   * borrowed for the create call and not NUL-terminated, and sets
   * *out_count to the list's length; out_data and out_sizes may be NULL
   * with capacity 0 to ask only for the length. */
  PX_Status* (*node_attr_string_list)(const PX_NodeView* node, const char* name,
                                      const char** out_data, size_t* out_sizes,
                                      size_t capacity, size_t* out_count);

  /* [0.6] (test with PX_STRUCT_HAS; may be NULL): how many threads a kernel
   * computing on the calling thread may use now, at least 1. The host sets
   * it per kernel: the run's thread budget (the user's setting, reduced to
   * the CPUs other processes leave free when adaptation is on) divided
   * among the kernels of the run computing at the same time; eager kernels
   * get the eager budget. A plugin whose kernels run a thread team (OpenMP,
   * a pool) sizes the team to it before each compute; it is cheap (a
   * thread-local read) and valid on any thread, inside or outside compute.
   * A host without the slot gives no budget: keep the plugin's default. */
  int32_t (*intra_op_threads)(void);
} PX_HostServices;

/* ------------------------------------------------------------------------ */
/* Devices and memory                                                       */
/* ------------------------------------------------------------------------ */

typedef struct PX_DeviceInfo {
  size_t struct_size;
  char name[128];       /* e.g. "NVIDIA H100 80GB HBM3" */
  char vendor[64];      /* e.g. "NVIDIA" */
  uint64_t total_memory_bytes;
  uint64_t free_memory_bytes;  /* 0 when unknown */
  /* 1 when device memory is directly addressable by the host CPU (a CPU
   * device): the host then skips copies to and from it. */
  int32_t host_accessible;
  /* [0.4] (test with PX_STRUCT_HAS): the data layout the device's
   * convolution and pooling kernels run fastest in, one of PX_LAYOUT_*.
   * The host's layout pass rewrites 4-D image ops (Conv2D, depthwise
   * convolution, pooling, BiasAdd, inference batch norm) to it, with
   * transposes at the edges. PX_LAYOUT_ANY (0, what a zero-filled struct
   * says) means no preference. A host reading a struct whose struct_size
   * does not reach this field, or an unknown value, treats it as
   * PX_LAYOUT_ANY. (On 64-bit targets the field fills what was tail
   * padding, so sizeof(PX_DeviceInfo) is unchanged.) */
  int32_t preferred_layout;
} PX_DeviceInfo;

/* Values of PX_DeviceInfo.preferred_layout. */
#define PX_LAYOUT_ANY 0  /* no preference */
#define PX_LAYOUT_NHWC 1 /* channels last */
#define PX_LAYOUT_NCHW 2 /* channels first */

typedef struct PX_MemoryStats {
  size_t struct_size;
  uint64_t bytes_in_use;
  uint64_t peak_bytes_in_use;
  uint64_t num_allocations;
  uint64_t bytes_limit; /* 0 when unknown */
} PX_MemoryStats;

typedef void (*PX_HostCallbackFn)(void* arg, const PX_Status* status);

/* ------------------------------------------------------------------------ */
/* Collectives (ABI 0.7, optional extension)                                */
/* ------------------------------------------------------------------------ */

/* A communicator: one rank of a group of processes (or devices) that run
 * collectives together. Plugin-owned. */
typedef struct PX_Comm PX_Comm;

/* Reduction operations (the reduce_op argument). MEAN is the sum divided by
 * the number of ranks (integer types: the quotient truncated). */
#define PX_REDUCE_SUM 0
#define PX_REDUCE_PROD 1
#define PX_REDUCE_MIN 2
#define PX_REDUCE_MAX 3
#define PX_REDUCE_MEAN 4

/* A key-value store shared by the ranks, provided by the host (filled by
 * the host). The struct is borrowed by comm_create for the duration of the
 * call; the store it points to (ctx and the functions) stays valid until
 * comm_destroy or comm_abort of that communicator returns, so a plugin may
 * copy the struct and use the store later too (the reference plugin moves
 * its data through it). It is how a plugin's bootstrap data (NCCL's unique
 * id, say) travels between processes: never through core symbols.
 * Thread-safe.
 * - put stores a copy of `size` bytes under `key` (a NUL-terminated string),
 *   replacing any earlier value.
 * - get waits until `key` exists, up to timeout_ms milliseconds (0: look
 *   once; negative: no limit), and returns DEADLINE_EXCEEDED, naming the
 *   key, when it does not appear in time. On success *out_value (owned by the
 *   caller, released with free_value; NULL when size is 0) and *out_size
 *   receive a copy of the value.
 * - free_value(ctx, NULL) is a no-op.
 * Statuses it returns are host-made; the plugin returns them to the host or
 * destroys them with PX_HostServices.status_destroy. */
typedef struct PX_KVStore {
  size_t struct_size;
  void* ctx; /* passed back to every function below */
  PX_Status* (*put)(void* ctx, const char* key, const void* value, size_t size);
  PX_Status* (*get)(void* ctx, const char* key, int64_t timeout_ms, void** out_value,
                    size_t* out_size);
  void (*free_value)(void* ctx, void* value);
} PX_KVStore;

/* Collectives extension: a static table the plugin points to from
 * PX_PluginTable.collectives (the host reads it only from plugins of minor 7
 * or more). struct_size is the plugin's sizeof; the host ignores (with a
 * warning) an extension whose struct_size does not reach `barrier` or that
 * lacks comm_create, comm_destroy or comm_abort. The collective slots
 * (all_reduce ... barrier) are each [optional]: NULL means UNIMPLEMENTED.
 *
 * Contract
 * - Ordering: a collective is queued on `stream` like other work and returns
 *   before it completes. Completion and failure arrive through the stream:
 *   its sticky error, stream_synchronize and the events recorded after it.
 *   An error found before anything was queued (bad arguments, an
 *   unsupported dtype) is returned and fails that call only; a failure to
 *   queue is also recorded as the stream's sticky error. Every rank of a
 *   communicator must issue the same collectives, with matching shapes and
 *   dtypes, in the same order. The host serializes the collectives and
 *   comm_destroy of one communicator (as calls on one stream are);
 *   comm_abort and comm_get_async_error may run concurrently with them.
 * - Tensors: `in` and `out` are dense (strides NULL or row-major compact)
 *   and in device memory of the communicator's device; they have the same
 *   dtype. all_reduce: the same number of elements. all_gather: out's dim 0
 *   is nranks times in's, the other dims equal (a scalar `in` gathers into
 *   a vector of nranks). reduce_scatter: the reverse (in's dim 0 is nranks
 *   times out's). broadcast: the same number of elements; `in` is read on
 *   `root` only and may be NULL on the other ranks. all_to_all: the same
 *   shape, dim 0 a multiple of nranks: block j of in (dim 0 split in nranks
 *   equal blocks) goes to rank j, block j of out comes from rank j. barrier:
 *   completes (on the stream) once every rank has reached it. A dtype the
 *   plugin cannot reduce or move is UNIMPLEMENTED, and the message names the
 *   dtype; an unknown reduce_op or root is INVALID_ARGUMENT.
 * - comm_create(device, store, name, nranks, rank, timeout_ms, out_comm):
 *   rank `rank` (0 <= rank < nranks) of a new communicator on `device`.
 *   `name` is unique per communicator across the group's lifetime; the
 *   plugin prefixes every store key it uses with "<name>/". Every rank calls
 *   it with the same name and nranks. The plugin must honour timeout_ms
 *   (negative: no limit) for the whole creation, exchange and
 *   initialization included (non-blocking initialization where the library
 *   has it): past it, it releases what it made and returns
 *   DEADLINE_EXCEEDED, naming the ranks that did not arrive when it can tell.
 *   A peer found dead is UNAVAILABLE. A library the plugin needs but cannot
 *   load is UNAVAILABLE, saying how to install it.
 * - comm_destroy: graceful. Waits for the work queued on the communicator to
 *   complete (bounded by the creation's timeout), then frees it; the handle
 *   is invalid afterwards even when it returns an error. Also the way to
 *   free an aborted communicator.
 * - comm_abort: callable from any thread, at any time (also while another
 *   thread is in a collective on the communicator); never waits for peers.
 *   Queued work is abandoned (its stream may then report an error).
 *   Afterwards every collective, and comm_get_async_error, returns ABORTED;
 *   comm_abort again is a no-op, and comm_destroy frees the communicator.
 *   Never call it concurrently with or after comm_destroy.
 * - comm_get_async_error: a non-blocking poll; NULL while the communicator
 *   is healthy or still initializing, else the error (a dead peer:
 *   UNAVAILABLE). A host that waits on a stream with collectives on it polls
 *   this and calls comm_abort on an error, so that a lost peer cannot hang
 *   it. */
typedef struct PX_CollectivesExt {
  size_t struct_size;
  PX_Status* (*comm_create)(PX_Device* device, const PX_KVStore* store, const char* name,
                            int32_t nranks, int32_t rank, int64_t timeout_ms,
                            PX_Comm** out_comm);
  PX_Status* (*comm_destroy)(PX_Comm* comm); /* graceful, after queued work completes */
  PX_Status* (*comm_abort)(PX_Comm* comm);   /* from any thread, never waits for peers */
  /* non-blocking poll: NULL while healthy or still initializing */
  PX_Status* (*comm_get_async_error)(PX_Comm* comm);
  PX_Status* (*all_reduce)(PX_Comm* comm, PX_Stream* stream, const DLTensor* in, DLTensor* out,
                           int32_t reduce_op);
  /* out's dim 0 = nranks * in's */
  PX_Status* (*all_gather)(PX_Comm* comm, PX_Stream* stream, const DLTensor* in, DLTensor* out);
  /* in's dim 0 = nranks * out's */
  PX_Status* (*reduce_scatter)(PX_Comm* comm, PX_Stream* stream, const DLTensor* in,
                               DLTensor* out, int32_t reduce_op);
  PX_Status* (*broadcast)(PX_Comm* comm, PX_Stream* stream, const DLTensor* in, DLTensor* out,
                          int32_t root);
  PX_Status* (*all_to_all)(PX_Comm* comm, PX_Stream* stream, const DLTensor* in, DLTensor* out);
  PX_Status* (*barrier)(PX_Comm* comm, PX_Stream* stream);
} PX_CollectivesExt;

/* ------------------------------------------------------------------------ */
/* Plugin table: filled by the plugin in PX_PluginInitialize                */
/* ------------------------------------------------------------------------ */

typedef struct PX_PluginTable {
  size_t struct_size;

  /* The minor version of PX_ABI_VERSION_MAJOR the plugin chose to speak. */
  uint32_t abi_minor;

  /* Static strings. */
  const char* plugin_name;     /* e.g. "cpu" */
  const char* plugin_version;  /* free-form, e.g. "0.1.0" */
  const char* platform_name;   /* e.g. "Host", "CUDA" */
  const char* device_type;     /* upper-case kind used in device names: "CPU" */
  int32_t dlpack_device_type;  /* DLDeviceType of its device memory */

  void* plugin_state; /* passed to every call below as `plugin` */

  /* [optional] Called once before unload, after every device is closed. */
  void (*plugin_shutdown)(void* plugin);

  /* [required] Kernel registration through host->kernel_register. */
  PX_Status* (*register_kernels)(void* plugin, PX_KernelRegistrar* registrar);

  /* [required] Devices. device_count may report 0 (hardware or driver
   * missing) and must not fail for that reason. */
  PX_Status* (*device_count)(void* plugin, int32_t* out_count);
  PX_Status* (*device_get_info)(void* plugin, int32_t ordinal,
                                PX_DeviceInfo* out_info);
  PX_Status* (*device_open)(void* plugin, int32_t ordinal,
                            PX_Device** out_device);
  void (*device_close)(void* plugin, PX_Device* device);

  /* [required] Device memory. allocate returns RESOURCE_EXHAUSTED when the
   * device is out of memory. alignment is a power of two. */
  PX_Status* (*allocate)(PX_Device* device, size_t bytes, size_t alignment,
                         void** out_ptr);
  void (*deallocate)(PX_Device* device, void* ptr);

  /* [optional] Page-locked host memory for fast transfers. */
  PX_Status* (*host_allocate)(PX_Device* device, size_t bytes, void** out_ptr);
  void (*host_deallocate)(PX_Device* device, void* ptr);

  /* [optional] */
  PX_Status* (*memory_stats)(PX_Device* device, PX_MemoryStats* out_stats);
  /* (num_allocations counts every allocation since the device was opened.) */

  /* [required] Synchronous copies: complete when they return. */
  PX_Status* (*memcpy_h2d)(PX_Device* device, void* dst, const void* src,
                           size_t bytes);
  PX_Status* (*memcpy_d2h)(PX_Device* device, void* dst, const void* src,
                           size_t bytes);
  PX_Status* (*memcpy_d2d)(PX_Device* device, void* dst, const void* src,
                           size_t bytes);

  /* [required] Streams: ordered queues of work on one device. A stream keeps
   * the first error of the work on it ("sticky"): stream_synchronize waits for
   * all work and returns that error, as does stream_get_status without
   * waiting. */
  PX_Status* (*stream_create)(PX_Device* device, PX_Stream** out_stream);
  void (*stream_destroy)(PX_Device* device, PX_Stream* stream);
  PX_Status* (*stream_synchronize)(PX_Device* device, PX_Stream* stream);
  PX_Status* (*stream_get_status)(PX_Device* device, PX_Stream* stream);

  /* [optional] Asynchronous copies ordered on a stream. */
  PX_Status* (*memcpy_h2d_async)(PX_Device* device, PX_Stream* stream,
                                 void* dst, const void* src, size_t bytes);
  PX_Status* (*memcpy_d2h_async)(PX_Device* device, PX_Stream* stream,
                                 void* dst, const void* src, size_t bytes);
  PX_Status* (*memcpy_d2d_async)(PX_Device* device, PX_Stream* stream,
                                 void* dst, const void* src, size_t bytes);

  /* [required] Events mark a point in a stream and complete with a status:
   * event_synchronize waits and returns the status of the work before it. */
  PX_Status* (*event_create)(PX_Device* device, PX_Event** out_event);
  void (*event_destroy)(PX_Device* device, PX_Event* event);
  PX_Status* (*event_record)(PX_Device* device, PX_Stream* stream,
                             PX_Event* event);
  PX_Status* (*event_synchronize)(PX_Device* device, PX_Event* event);
  PX_Status* (*stream_wait_event)(PX_Device* device, PX_Stream* stream,
                                  PX_Event* event);

  /* [optional] Runs fn(arg, status) once all earlier work on the stream has
   * finished; status is the stream's error so far (NULL when OK, borrowed).
   * fn may run inline, before stream_add_callback returns. */
  PX_Status* (*stream_add_callback)(PX_Device* device, PX_Stream* stream,
                                    PX_HostCallbackFn fn, void* arg);

  /* [optional, ABI 0.5] Stream capture: the work queued on `stream` between
   * stream_capture_begin and stream_capture_end (kernel launches and async
   * copies, made exactly as in a normal run) is recorded instead of run, and
   * stream_capture_end returns it as a graph that graph_launch replays on a
   * stream as one unit. The host begins and ends a capture on one thread and
   * queues nothing else on that stream meanwhile. Work that cannot be
   * recorded (a kernel that waits for the device, say) makes the kernel or
   * stream_capture_end fail; the stream is then no longer capturing. The
   * memory the recorded work reads and writes must stay allocated, at the
   * same addresses, while the graph lives. A plugin fills all four slots or
   * none; the host uses them only when the table's abi_minor is 5 or more. */
  PX_Status* (*stream_capture_begin)(PX_Device* device, PX_Stream* stream);
  PX_Status* (*stream_capture_end)(PX_Device* device, PX_Stream* stream,
                                   PX_Graph** out_graph);
  PX_Status* (*graph_launch)(PX_Device* device, PX_Stream* stream,
                             PX_Graph* graph);
  void (*graph_destroy)(PX_Device* device, PX_Graph* graph);

  /* [optional, ABI 0.7] Collectives across processes (see PX_CollectivesExt
   * above): NULL when the plugin offers none. The host reads this field only
   * when the table's abi_minor is 7 or more and its struct_size reaches the
   * field (PX_STRUCT_HAS), so older plugins, whose tables end before it, are
   * never read past their end. */
  const PX_CollectivesExt* collectives;

  /* [optional, ABI 0.8] Interop with other libraries' streams on the same
   * device: the stream handshake of DLPack's __dlpack__(stream=...), so
   * tensors cross to and from PyTorch or CuPy without the host waiting. A
   * native stream is the platform's own stream handle as an integer (a
   * cudaStream_t or hipStream_t), with DLPack's reserved values of the
   * platform: on CUDA 1 is the legacy default stream and 2 the per-thread
   * default stream (0 is ambiguous), on ROCm 0 is the default stream.
   * - stream_native_handle: the native handle of `stream` (never 0, 1 or 2).
   * - native_stream_wait: `native_stream` (another library's, or one of
   *   this plugin's) waits on the device, without blocking the host, for all
   *   work queued on `stream` so far. An unknown or invalid handle may be
   *   undefined behaviour on the platform (as it is for the library that
   *   made it); a value the plugin can tell is wrong (0 on CUDA, a reserved
   *   value the platform lacks) is INVALID_ARGUMENT.
   * A plugin fills both or neither; the host reads them only when the
   * table's abi_minor is 8 or more and its struct_size reaches them. */
  PX_Status* (*stream_native_handle)(PX_Device* device, PX_Stream* stream,
                                     uint64_t* out_handle);
  PX_Status* (*native_stream_wait)(PX_Device* device, uint64_t native_stream,
                                   PX_Stream* stream);
} PX_PluginTable;

/* ------------------------------------------------------------------------ */
/* The two exported symbols                                                 */
/* ------------------------------------------------------------------------ */

/* Filled by the plugin's probe (the host zero-fills it and sets
 * struct_size). Frozen: fields are never added or changed. */
typedef struct PX_PluginProbeInfo {
  size_t struct_size;        /* set by the host */
  const char* plugin_name;   /* static */
  uint32_t abi_major;        /* the one major the plugin speaks */
  uint32_t abi_min_minor;    /* oldest minor it can speak */
  uint32_t abi_max_minor;    /* newest minor it can speak */
  int32_t score;             /* higher ranks first when plugins overlap */
} PX_PluginProbeInfo;

/* Arguments the host passes to PX_PluginInitialize. */
typedef struct PX_HostInitArgs {
  size_t struct_size;
  uint32_t abi_major;        /* the one major the host speaks */
  uint32_t abi_min_minor;    /* range of minors the host speaks */
  uint32_t abi_max_minor;
  const PX_HostServices* services; /* static (valid until unload) */
  /* Synchronous debug mode: when non-zero the plugin should complete every
   * launch before returning from compute and report its error there. */
  int32_t synchronous_debug;
  const char* plugin_path;   /* borrowed: the file the plugin was loaded from */
} PX_HostInitArgs;

/* Never touches hardware. Must be safe to call before anything else. */
typedef void (*PX_PluginProbeFn)(PX_PluginProbeInfo* out_info);

/* Negotiates the version and fills `out_table` (whose struct_size the host
 * sets). Returns a status (created with args->services) to refuse, saying
 * why; the host then unloads the plugin. If args->services is unusable the
 * plugin cannot make a status: it returns NULL leaving the table's slots
 * NULL, and the host refuses it for the missing required slots. */
typedef PX_Status* (*PX_PluginInitializeFn)(const PX_HostInitArgs* args,
                                            PX_PluginTable* out_table);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLEXUS_PLUGIN_API_H_ */

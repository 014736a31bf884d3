/* A small but working plugin for the ABI tests, built several times with one
 * BROKEN_* macro each to make it fail in one precise way:
 *
 *   (none)               works: one host-memory device "TESTDEV:0" and an
 *                        int32 AddV2 kernel
 *   BROKEN_WRONG_MAJOR   probe and init claim ABI major 99
 *   BROKEN_MISSING_SLOT  leaves the required slot memcpy_d2h NULL
 *   BROKEN_INIT_FAILS    PX_PluginInitialize refuses with INTERNAL
 *   BROKEN_KERNEL_ERROR  its AddV2 kernel returns an error
 *   BROKEN_OUT_OF_MEMORY every allocation fails with RESOURCE_EXHAUSTED
 *   BROKEN_NO_PROBE      exports no probe symbol (not a plugin)
 *   BROKEN_ENUMERATION   device_count fails with UNAVAILABLE
 *   BROKEN_CRASH         allocate crashes (SIGSEGV) on a 65537-byte request
 *   BROKEN_SIGNATURE     also registers a Reshape kernel that leaves out the
 *                        op's Tshape attribute and its host-memory shape
 *                        (input 1), against the SDK's op-signature table
 *   BROKEN_PAST_END      its AddV2 kernel also writes one element past the end
 *                        of its output (the validation layer's guard bytes)
 *   BROKEN_UNWRITTEN     its AddV2 kernel returns OK without writing its
 *                        output (the validation layer's poison fill)
 *   BROKEN_UNALIGNED     allocate returns pointers one byte off the
 *                        alignment asked for
 *   BROKEN_NULL_STREAM   stream_create returns OK with a NULL stream
 *   BROKEN_HALF_INTEROP  fills stream_native_handle but not
 *                        native_stream_wait (ABI 0.8: both or neither)
 *   BROKEN_RESERVED_HANDLE  fills both interop slots, and
 *                        stream_native_handle returns OK with handle 1
 *                        (DLPack's legacy default stream on CUDA)
 *   SEPARATE_MEMORY      not broken: the device says its memory is not
 *                        host-accessible, so the host must copy to and from
 *                        it (through memcpy_h2d/d2h) as for a GPU
 *
 * Every flavour's device_open sleeps PX_TEST_OPEN_DELAY_MS milliseconds when
 * that variable is set, so that a test can call another slot while an open
 * is under way (the validation layer's threading check).
 *
 * Unbroken, it passes plexus-plugin-check; each flavour fails it where it is
 * broken (tests/CMakeLists.txt).
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plexus/plugin_api.h"
#include "plexus/sdk/plugin_sdk.h"

#ifndef TEST_PLUGIN_NAME
#define TEST_PLUGIN_NAME "test"
#endif

#ifdef BROKEN_WRONG_MAJOR
#define ABI_MAJOR 99
#else
#define ABI_MAJOR PX_ABI_VERSION_MAJOR
#endif

static const PX_HostServices* g_host = NULL;
static int g_device_token;

static PX_Status* register_kernels(void* plugin, PX_KernelRegistrar* registrar);

static PX_Status* device_count(void* p, int32_t* out) {
  (void)p;
#ifdef BROKEN_ENUMERATION
  (void)out;
  return px_sdk_error(g_host, PX_CODE_UNAVAILABLE, "injected enumeration failure: driver not loaded");
#else
  *out = 1;
  return NULL;
#endif
}
static PX_Status* device_get_info(void* p, int32_t ordinal, PX_DeviceInfo* info) {
  (void)p;
  if (ordinal != 0) return px_sdk_error(g_host, PX_CODE_INVALID_ARGUMENT, "bad ordinal %d", ordinal);
  strcpy(info->name, "Test device");
  strcpy(info->vendor, "Plexus tests");
  info->total_memory_bytes = 1 << 20;
#ifdef SEPARATE_MEMORY
  info->host_accessible = 0;
#else
  info->host_accessible = 1;
#endif
  return NULL;
}
static PX_Status* device_open(void* p, int32_t ordinal, PX_Device** out) {
  (void)p;
  {
    const char* delay = getenv("PX_TEST_OPEN_DELAY_MS");
    if (delay != NULL) {
      const long ms = atol(delay);
      struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
      nanosleep(&ts, NULL);
    }
  }
  if (ordinal != 0) return px_sdk_error(g_host, PX_CODE_INVALID_ARGUMENT, "bad ordinal %d", ordinal);
  *out = (PX_Device*)&g_device_token;
  return NULL;
}
static void device_close(void* p, PX_Device* d) { (void)p; (void)d; }
static PX_Status* allocate(PX_Device* d, size_t bytes, size_t alignment, void** out) {
  (void)d;
#ifdef BROKEN_OUT_OF_MEMORY
  (void)alignment; (void)out;
  return px_sdk_error(g_host, PX_CODE_RESOURCE_EXHAUSTED, "out of memory allocating %zu bytes", bytes);
#else
#ifdef BROKEN_CRASH
  if (bytes == 65537) *(volatile int*)0 = 1;
#endif
#ifdef BROKEN_REGISTRATION
  {
    /* PX_TEST_BAD_KERNEL_DEF=null_alloc: OK with no memory (a plugin bug). */
    const char* how = getenv("PX_TEST_BAD_KERNEL_DEF");
    if (how != NULL && strcmp(how, "null_alloc") == 0) {
      *out = NULL;
      return NULL;
    }
  }
#endif
  if (alignment == 0) alignment = 64;
  if (bytes > ((size_t)1 << 40)) {
    return px_sdk_error(g_host, PX_CODE_RESOURCE_EXHAUSTED, "out of memory allocating %zu bytes", bytes);
  }
  size_t rounded = (bytes + alignment - 1) / alignment * alignment;
#ifdef BROKEN_UNALIGNED
  rounded += alignment;
#endif
  *out = aligned_alloc(alignment, rounded ? rounded : alignment);
#ifdef BROKEN_UNALIGNED
  if (*out) *out = (char*)*out + 1;
#endif
  return *out ? NULL : px_sdk_error(g_host, PX_CODE_RESOURCE_EXHAUSTED, "out of memory");
#endif
}
#ifdef BROKEN_UNALIGNED
static void deallocate(PX_Device* d, void* ptr) { (void)d; if (ptr) free((char*)ptr - 1); }
#else
static void deallocate(PX_Device* d, void* ptr) { (void)d; free(ptr); }
#endif
static PX_Status* copy(PX_Device* d, void* dst, const void* src, size_t n) {
  (void)d;
  if (n == 0) return NULL;
  if (dst == NULL || src == NULL) return px_sdk_error(g_host, PX_CODE_INVALID_ARGUMENT, "NULL pointer");
  memcpy(dst, src, n);
  return NULL;
}
static PX_Status* stream_create(PX_Device* d, PX_Stream** out) {
  (void)d;
#ifdef BROKEN_NULL_STREAM
  *out = NULL;
  return NULL;
#endif
  *out = (PX_Stream*)&g_device_token;
  return NULL;
}
static void stream_destroy(PX_Device* d, PX_Stream* s) { (void)d; (void)s; }
static PX_Status* stream_sync(PX_Device* d, PX_Stream* s) { (void)d; (void)s; return NULL; }
static PX_Status* event_create(PX_Device* d, PX_Event** out) {
  (void)d;
  *out = (PX_Event*)&g_device_token;
  return NULL;
}
static void event_destroy(PX_Device* d, PX_Event* e) { (void)d; (void)e; }
static PX_Status* event_record(PX_Device* d, PX_Stream* s, PX_Event* e) { (void)d; (void)s; (void)e; return NULL; }
static PX_Status* event_sync(PX_Device* d, PX_Event* e) { (void)d; (void)e; return NULL; }
static PX_Status* wait_event(PX_Device* d, PX_Stream* s, PX_Event* e) { (void)d; (void)s; (void)e; return NULL; }

static PX_Status* add_int32(void* kernel, PX_KernelContext* ctx, const DLTensor* in, size_t num_in,
                            DLTensor* out, size_t num_out, PX_Stream* stream) {
  (void)kernel; (void)stream;
#ifdef BROKEN_KERNEL_ERROR
  (void)in; (void)num_in; (void)out; (void)num_out; (void)ctx;
  return px_sdk_error(g_host, PX_CODE_INTERNAL, "injected kernel failure");
#else
  if (num_in != 2 || num_out != 1) return px_sdk_error(g_host, PX_CODE_INVALID_ARGUMENT, "arity");
  /* Broadcasting as NumPy does: shapes aligned on the right. */
  int32_t ndim = in[0].ndim > in[1].ndim ? in[0].ndim : in[1].ndim;
  int64_t shape[8], sa[8], sb[8];
  if (ndim > 8) return px_sdk_error(g_host, PX_CODE_UNIMPLEMENTED, "rank above 8");
  int64_t stride_a = 1, stride_b = 1;
  for (int32_t k = ndim - 1; k >= 0; --k) {
    int32_t ka = k - (ndim - in[0].ndim), kb = k - (ndim - in[1].ndim);
    int64_t da = ka >= 0 ? in[0].shape[ka] : 1, db = kb >= 0 ? in[1].shape[kb] : 1;
    if (da != db && da != 1 && db != 1) {
      return px_sdk_error(g_host, PX_CODE_INVALID_ARGUMENT, "shapes do not broadcast");
    }
    shape[k] = da == 1 ? db : da;
    sa[k] = da == 1 ? 0 : stride_a;
    sb[k] = db == 1 ? 0 : stride_b;
    stride_a *= da;
    stride_b *= db;
  }
  if (out[0].ndim == -1) {
    PX_Status* s = g_host->output_allocate(ctx, 0, ndim, shape);
    if (s) return s;
  }
  const int32_t* a = (const int32_t*)px_sdk_data(&in[0]);
  const int32_t* b = (const int32_t*)px_sdk_data(&in[1]);
  int32_t* c = (int32_t*)px_sdk_data(&out[0]);
  int64_t n = px_sdk_num_elements(&out[0]);
#ifdef BROKEN_UNWRITTEN
  n = 0;
#endif
#ifdef BROKEN_PAST_END
  c[n] = 0; /* one element past the end */
#endif
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, ia = 0, ib = 0;
    for (int32_t k = ndim - 1; k >= 0; --k) {
      int64_t idx = rest % shape[k];
      rest /= shape[k];
      ia += idx * sa[k];
      ib += idx * sb[k];
    }
    c[i] = (int32_t)((uint32_t)a[ia] + (uint32_t)b[ib]);
  }
  return NULL;
#endif
}

static PX_Status* register_kernels(void* plugin, PX_KernelRegistrar* registrar) {
  (void)plugin;
  static const PX_DataType kInt32[] = {PX_DT_INT32};
  PX_TypeConstraint constraint = {sizeof(PX_TypeConstraint), "T", kInt32, 1};
  PX_KernelDef def;
  memset(&def, 0, sizeof(def));
  def.struct_size = sizeof(def);
  def.op_name = "AddV2";
  def.type_constraints = &constraint;
  def.num_type_constraints = 1;
  def.compute = add_int32;
#ifdef BROKEN_REGISTRATION
  /* One malformed kernel def, chosen by PX_TEST_BAD_KERNEL_DEF. */
  {
    static const PX_DataType kNotAType[] = {(PX_DataType)12345};
    static const int32_t kPastInputs[] = {7};
    const char* how = getenv("PX_TEST_BAD_KERNEL_DEF");
    how = how ? how : "";
    if (strcmp(how, "missing_attr") == 0) constraint.attr_name = "Q";
    if (strcmp(how, "bad_dtype") == 0) constraint.allowed = kNotAType;
    if (strcmp(how, "constraint_size") == 0) constraint.struct_size = 0;
    if (strcmp(how, "huge_size") == 0) def.struct_size = (size_t)1 << 40;
    if (strcmp(how, "host_index") == 0) {
      def.host_memory_inputs = kPastInputs;
      def.num_host_memory_inputs = 1;
    }
  }
#endif
#ifdef BROKEN_SIGNATURE
  {
    PX_Status* status = g_host->kernel_register(registrar, &def);
    if (status != NULL) return status;
    def.op_name = "Reshape"; /* T only, and no host-memory inputs */
  }
#endif
  return g_host->kernel_register(registrar, &def);
}

#ifndef BROKEN_NO_PROBE
PX_PLUGIN_EXPORT void PX_PluginProbe(PX_PluginProbeInfo* info) {
  if (info == NULL || info->struct_size < sizeof(PX_PluginProbeInfo)) return;
  info->plugin_name = TEST_PLUGIN_NAME;
  info->abi_major = ABI_MAJOR;
  info->abi_min_minor = 0;
  info->abi_max_minor = PX_ABI_VERSION_MINOR;
  info->score = 10; /* preferred over cpu, so sessions use it by default */
}
#endif

#if defined(BROKEN_HALF_INTEROP) || defined(BROKEN_RESERVED_HANDLE)
static PX_Status* native_handle(PX_Device* d, PX_Stream* s, uint64_t* out) {
  (void)d;
  (void)s;
#ifdef BROKEN_RESERVED_HANDLE
  *out = 1;
#else
  *out = 4096;
#endif
  return NULL;
}
#endif
#ifdef BROKEN_RESERVED_HANDLE
static PX_Status* native_wait(PX_Device* d, uint64_t native, PX_Stream* s) {
  (void)d;
  (void)native;
  (void)s;
  return NULL;
}
#endif
PX_PLUGIN_EXPORT PX_Status* PX_PluginInitialize(const PX_HostInitArgs* args, PX_PluginTable* t) {
  g_host = args->services;
#ifdef BROKEN_INIT_FAILS
  (void)t;
  return px_sdk_error(g_host, PX_CODE_INTERNAL, "injected initialization failure");
#else
  uint32_t minor = 0;
  PX_Status* s = px_sdk_negotiate(args, 0, PX_ABI_VERSION_MINOR, &minor);
  if (s) return s;
  t->abi_minor = minor;
  t->plugin_name = TEST_PLUGIN_NAME;
  t->plugin_version = "test";
  t->platform_name = "Test";
  t->device_type = "TESTDEV";
  t->dlpack_device_type = kDLCPU;
  t->register_kernels = register_kernels;
  t->device_count = device_count;
  t->device_get_info = device_get_info;
  t->device_open = device_open;
  t->device_close = device_close;
  t->allocate = allocate;
  t->deallocate = deallocate;
  t->memcpy_h2d = copy;
#ifndef BROKEN_MISSING_SLOT
  t->memcpy_d2h = copy;
#endif
  t->memcpy_d2d = copy;
  t->stream_create = stream_create;
  t->stream_destroy = stream_destroy;
  t->stream_synchronize = stream_sync;
  t->stream_get_status = stream_sync;
  t->event_create = event_create;
  t->event_destroy = event_destroy;
  t->event_record = event_record;
  t->event_synchronize = event_sync;
  t->stream_wait_event = wait_event;
#if defined(BROKEN_HALF_INTEROP) || defined(BROKEN_RESERVED_HANDLE)
  if (minor >= 8 && PX_STRUCT_HAS(t, PX_PluginTable, native_stream_wait)) {
    t->stream_native_handle = native_handle;
#ifdef BROKEN_RESERVED_HANDLE
    t->native_stream_wait = native_wait;
#endif
  }
#endif
  /* A newer host's table is longer: say how much of it was filled. */
  if (t->struct_size > sizeof(PX_PluginTable)) t->struct_size = sizeof(PX_PluginTable);
  return NULL;
#endif
}

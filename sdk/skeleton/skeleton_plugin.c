/* The Plexus skeleton plugin: the file a vendor copies to start a plugin.
 *
 * It exports the two entry symbols, negotiates the ABI version and fills
 * every slot of the plugin table. It reports zero devices, and every other
 * slot reports UNIMPLEMENTED. The host loads it cleanly and lists no devices.
 * Fill the slots one by one (start with device_count, device_get_info,
 * device_open/close and memory), then register kernels.
 *
 * Build it out of tree with plugin_api/include and sdk/include on the include
 * path, as a shared module linked with -Wl,--no-undefined.
 */
#include <stddef.h>
#include <string.h>

#include "plexus/plugin_api.h"
#include "plexus/sdk/plugin_sdk.h"

#define SKELETON_NAME "skeleton"

/* Host services, kept from initialization until unload. */
static const PX_HostServices* g_host = NULL;

static PX_Status* unimplemented(const char* slot) {
  return px_sdk_error(g_host, PX_CODE_UNIMPLEMENTED,
                      "the " SKELETON_NAME " plugin does not implement %s yet", slot);
}

static void skeleton_shutdown(void* plugin) { (void)plugin; }

static PX_Status* skeleton_register_kernels(void* plugin, PX_KernelRegistrar* registrar) {
  (void)plugin;
  (void)registrar;
  /* Register kernels here with g_host->kernel_register(registrar, &def). */
  return NULL;
}

static PX_Status* skeleton_device_count(void* plugin, int32_t* out_count) {
  (void)plugin;
  /* No hardware yet: zero devices is a valid answer (the host and
   * plexus-plugin-check report it plainly). Count your devices here. */
  *out_count = 0;
  return NULL;
}
static PX_Status* skeleton_device_get_info(void* plugin, int32_t ordinal, PX_DeviceInfo* out) {
  (void)plugin; (void)ordinal; (void)out;
  return unimplemented("device_get_info");
}
static PX_Status* skeleton_device_open(void* plugin, int32_t ordinal, PX_Device** out) {
  (void)plugin; (void)ordinal; (void)out;
  return unimplemented("device_open");
}
static void skeleton_device_close(void* plugin, PX_Device* device) { (void)plugin; (void)device; }

static PX_Status* skeleton_allocate(PX_Device* d, size_t bytes, size_t alignment, void** out) {
  (void)d; (void)bytes; (void)alignment; (void)out;
  return unimplemented("allocate");
}
static void skeleton_deallocate(PX_Device* d, void* ptr) { (void)d; (void)ptr; }

static PX_Status* skeleton_memcpy_h2d(PX_Device* d, void* dst, const void* src, size_t n) {
  (void)d; (void)dst; (void)src; (void)n;
  return unimplemented("memcpy_h2d");
}
static PX_Status* skeleton_memcpy_d2h(PX_Device* d, void* dst, const void* src, size_t n) {
  (void)d; (void)dst; (void)src; (void)n;
  return unimplemented("memcpy_d2h");
}
static PX_Status* skeleton_memcpy_d2d(PX_Device* d, void* dst, const void* src, size_t n) {
  (void)d; (void)dst; (void)src; (void)n;
  return unimplemented("memcpy_d2d");
}

static PX_Status* skeleton_stream_create(PX_Device* d, PX_Stream** out) {
  (void)d; (void)out;
  return unimplemented("stream_create");
}
static void skeleton_stream_destroy(PX_Device* d, PX_Stream* s) { (void)d; (void)s; }
static PX_Status* skeleton_stream_synchronize(PX_Device* d, PX_Stream* s) {
  (void)d; (void)s;
  return unimplemented("stream_synchronize");
}
static PX_Status* skeleton_stream_get_status(PX_Device* d, PX_Stream* s) {
  (void)d; (void)s;
  return unimplemented("stream_get_status");
}

static PX_Status* skeleton_event_create(PX_Device* d, PX_Event** out) {
  (void)d; (void)out;
  return unimplemented("event_create");
}
static void skeleton_event_destroy(PX_Device* d, PX_Event* e) { (void)d; (void)e; }
static PX_Status* skeleton_event_record(PX_Device* d, PX_Stream* s, PX_Event* e) {
  (void)d; (void)s; (void)e;
  return unimplemented("event_record");
}
static PX_Status* skeleton_event_synchronize(PX_Device* d, PX_Event* e) {
  (void)d; (void)e;
  return unimplemented("event_synchronize");
}
static PX_Status* skeleton_stream_wait_event(PX_Device* d, PX_Stream* s, PX_Event* e) {
  (void)d; (void)s; (void)e;
  return unimplemented("stream_wait_event");
}

PX_PLUGIN_EXPORT void PX_PluginProbe(PX_PluginProbeInfo* info) {
  /* The probe struct is frozen; still, never write past what the host has. */
  if (info == NULL || info->struct_size < sizeof(PX_PluginProbeInfo)) return;
  info->plugin_name = SKELETON_NAME;
  info->abi_major = PX_ABI_VERSION_MAJOR;
  info->abi_min_minor = 0;
  info->abi_max_minor = PX_ABI_VERSION_MINOR;
  info->score = -100; /* never preferred over a real plugin */
}

PX_PLUGIN_EXPORT PX_Status* PX_PluginInitialize(const PX_HostInitArgs* args,
                                                PX_PluginTable* table) {
  if (args == NULL || table == NULL || args->services == NULL) return NULL;
  g_host = args->services;
  uint32_t minor = 0;
  PX_Status* status = px_sdk_negotiate(args, 0, PX_ABI_VERSION_MINOR, &minor);
  if (status != NULL) return status;
  /* Fill a table of this plugin's size, then copy as much as the host's
   * table holds: an older host simply has fewer (newer) slots. */
  size_t host_size = table->struct_size;
  PX_PluginTable full;
  memset(&full, 0, sizeof(full));
  full.struct_size = host_size < sizeof(full) ? host_size : sizeof(full);
  PX_PluginTable* t = &full;
  t->abi_minor = minor;
  t->plugin_name = SKELETON_NAME;
  t->plugin_version = "0.1.0";
  t->platform_name = "Skeleton";
  t->device_type = "SKELETON";
  t->dlpack_device_type = kDLExtDev;
  t->plugin_state = NULL;
  t->plugin_shutdown = skeleton_shutdown;
  t->register_kernels = skeleton_register_kernels;
  t->device_count = skeleton_device_count;
  t->device_get_info = skeleton_device_get_info;
  t->device_open = skeleton_device_open;
  t->device_close = skeleton_device_close;
  t->allocate = skeleton_allocate;
  t->deallocate = skeleton_deallocate;
  t->memcpy_h2d = skeleton_memcpy_h2d;
  t->memcpy_d2h = skeleton_memcpy_d2h;
  t->memcpy_d2d = skeleton_memcpy_d2d;
  t->stream_create = skeleton_stream_create;
  t->stream_destroy = skeleton_stream_destroy;
  t->stream_synchronize = skeleton_stream_synchronize;
  t->stream_get_status = skeleton_stream_get_status;
  t->event_create = skeleton_event_create;
  t->event_destroy = skeleton_event_destroy;
  t->event_record = skeleton_event_record;
  t->event_synchronize = skeleton_event_synchronize;
  t->stream_wait_event = skeleton_stream_wait_event;
  /* Optional slots stay NULL: host memory, stats, async copies, callbacks. */
  memcpy(table, &full, full.struct_size);
  return NULL;
}

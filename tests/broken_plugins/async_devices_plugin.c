/* A plugin with two devices whose streams really run later: each stream has
 * a worker thread that works through a queue (copies, event records, waits,
 * host callbacks), pausing before each large copy so that a host that does
 * not wait where it should sees unfinished work. It has no kernels. Built
 * several times with one BROKEN_* macro each, which breaks device 1 only
 * (device 0 always works, so the tool's checks of --device 0 pass and only
 * its checks of every device can find the fault):
 *
 *   (none)                 works
 *   BROKEN_DEVICE_OPEN     device_open(1) fails with UNAVAILABLE
 *   BROKEN_EVENT_EARLY     event_synchronize returns at once, before the
 *                          work recorded before the event has run
 *   BROKEN_WAIT_IGNORED    stream_wait_event does nothing
 *   BROKEN_COPY_SHORT      memcpy_d2h_async leaves out the last byte of a
 *                          copy of an odd number of bytes
 *   BROKEN_CALLBACK_TWICE  stream_add_callback's function runs twice
 *   BROKEN_CALLBACK_EARLY  stream_add_callback runs the function at once,
 *                          before the work queued before it
 *
 * tests/conformance/async_devices.cmake checks each with plexus-plugin-check.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plexus/plugin_api.h"
#include "plexus/sdk/plugin_sdk.h"

#ifndef TEST_PLUGIN_NAME
#define TEST_PLUGIN_NAME "async_devices"
#endif

static const PX_HostServices* g_host = NULL;

typedef struct Device {
  int32_t ordinal;
} Device;
static Device g_devices[2] = {{0}, {1}};

/* An event: recorded counts the records, done the records completed. */
typedef struct Event {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  uint64_t recorded, done;
} Event;

enum OpKind { kCopy, kSignal, kWait, kCallback };
typedef struct Op {
  enum OpKind kind;
  void* dst;
  const void* src;
  size_t bytes;
  Event* event;
  uint64_t generation;
  PX_HostCallbackFn fn;
  void* arg;
  int times; /* callbacks: how often to call fn; copies: 1 for a slow one */
  struct Op* next;
} Op;

typedef struct Stream {
  Device* device;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  Op *head, *tail;
  int busy, stop;
  pthread_t thread;
} Stream;

static inline int Broken(const Device* d) { return d->ordinal == 1; }

/* Before a large copy: 20 ms for h2d, 1 ms for the others, so that a read
 * on another stream that does not wait for a write overtakes it. */
static void Pause(size_t bytes, int slow) {
  if (bytes < ((size_t)1 << 20)) return;
  struct timespec ts = {0, (slow ? 20 : 1) * 1000 * 1000};
  nanosleep(&ts, NULL);
}

static void Run(Op* op) {
  switch (op->kind) {
    case kCopy:
      Pause(op->bytes, op->times);
      if (op->bytes > 0) memcpy(op->dst, op->src, op->bytes);
      break;
    case kSignal:
      pthread_mutex_lock(&op->event->mu);
      if (op->generation > op->event->done) op->event->done = op->generation;
      pthread_cond_broadcast(&op->event->cv);
      pthread_mutex_unlock(&op->event->mu);
      break;
    case kWait:
      pthread_mutex_lock(&op->event->mu);
      while (op->event->done < op->generation) pthread_cond_wait(&op->event->cv, &op->event->mu);
      pthread_mutex_unlock(&op->event->mu);
      break;
    case kCallback:
      for (int i = 0; i < op->times; ++i) op->fn(op->arg, NULL);
      break;
  }
}

static void* Worker(void* p) {
  Stream* s = (Stream*)p;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    while (s->head == NULL && !s->stop) pthread_cond_wait(&s->cv, &s->mu);
    if (s->head == NULL) break;
    Op* op = s->head;
    s->head = op->next;
    if (s->head == NULL) s->tail = NULL;
    s->busy = 1;
    pthread_mutex_unlock(&s->mu);
    Run(op);
    free(op);
    pthread_mutex_lock(&s->mu);
    s->busy = 0;
    pthread_cond_broadcast(&s->cv);
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

static PX_Status* Enqueue(Stream* s, Op op) {
  Op* copy = (Op*)malloc(sizeof(Op));
  if (copy == NULL) return px_sdk_error(g_host, PX_CODE_RESOURCE_EXHAUSTED, "out of memory");
  *copy = op;
  copy->next = NULL;
  pthread_mutex_lock(&s->mu);
  if (s->tail) s->tail->next = copy; else s->head = copy;
  s->tail = copy;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

static PX_Status* device_count(void* p, int32_t* out) { (void)p; *out = 2; return NULL; }
static PX_Status* device_get_info(void* p, int32_t ordinal, PX_DeviceInfo* info) {
  (void)p;
  if (ordinal < 0 || ordinal > 1) return px_sdk_error(g_host, PX_CODE_INVALID_ARGUMENT, "bad ordinal %d", ordinal);
  strcpy(info->name, ordinal == 0 ? "Async test device 0" : "Async test device 1");
  strcpy(info->vendor, "Plexus tests");
  info->total_memory_bytes = (uint64_t)1 << 30;
  info->host_accessible = 1;
  return NULL;
}
static PX_Status* device_open(void* p, int32_t ordinal, PX_Device** out) {
  (void)p;
  if (ordinal < 0 || ordinal > 1) return px_sdk_error(g_host, PX_CODE_INVALID_ARGUMENT, "bad ordinal %d", ordinal);
#ifdef BROKEN_DEVICE_OPEN
  if (ordinal == 1) return px_sdk_error(g_host, PX_CODE_UNAVAILABLE, "injected failure: device 1 is offline");
#endif
  *out = (PX_Device*)&g_devices[ordinal];
  return NULL;
}
static void device_close(void* p, PX_Device* d) { (void)p; (void)d; }

static PX_Status* allocate(PX_Device* d, size_t bytes, size_t alignment, void** out) {
  (void)d;
  if (alignment == 0) alignment = 64;
  if (bytes > ((size_t)1 << 40)) {
    return px_sdk_error(g_host, PX_CODE_RESOURCE_EXHAUSTED, "out of memory allocating %zu bytes", bytes);
  }
  size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  *out = aligned_alloc(alignment, rounded ? rounded : alignment);
  return *out ? NULL : px_sdk_error(g_host, PX_CODE_RESOURCE_EXHAUSTED, "out of memory");
}
static void deallocate(PX_Device* d, void* ptr) { (void)d; free(ptr); }
static PX_Status* copy(PX_Device* d, void* dst, const void* src, size_t n) {
  (void)d;
  if (n == 0) return NULL;
  if (dst == NULL || src == NULL) return px_sdk_error(g_host, PX_CODE_INVALID_ARGUMENT, "NULL pointer");
  memcpy(dst, src, n);
  return NULL;
}

static PX_Status* stream_create(PX_Device* d, PX_Stream** out) {
  Stream* s = (Stream*)calloc(1, sizeof(Stream));
  if (s == NULL) return px_sdk_error(g_host, PX_CODE_RESOURCE_EXHAUSTED, "out of memory");
  s->device = (Device*)d;
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  if (pthread_create(&s->thread, NULL, Worker, s) != 0) {
    free(s);
    return px_sdk_error(g_host, PX_CODE_RESOURCE_EXHAUSTED, "cannot start a stream thread");
  }
  *out = (PX_Stream*)s;
  return NULL;
}
static PX_Status* stream_sync(PX_Device* d, PX_Stream* p) {
  (void)d;
  Stream* s = (Stream*)p;
  pthread_mutex_lock(&s->mu);
  while (s->head != NULL || s->busy) pthread_cond_wait(&s->cv, &s->mu);
  pthread_mutex_unlock(&s->mu);
  return NULL;
}
static PX_Status* stream_status(PX_Device* d, PX_Stream* p) { (void)d; (void)p; return NULL; }
static void stream_destroy(PX_Device* d, PX_Stream* p) {
  Stream* s = (Stream*)p;
  stream_sync(d, p);
  pthread_mutex_lock(&s->mu);
  s->stop = 1;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  pthread_join(s->thread, NULL);
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->cv);
  free(s);
}

static PX_Status* Copy(PX_Stream* s, void* dst, const void* src, size_t n, int slow) {
  if (n == 0) return NULL;
  if (dst == NULL || src == NULL) return px_sdk_error(g_host, PX_CODE_INVALID_ARGUMENT, "NULL pointer");
  Op op = {kCopy, dst, src, n, NULL, 0, NULL, NULL, slow, NULL};
  return Enqueue((Stream*)s, op);
}
static PX_Status* copy_h2d_async(PX_Device* d, PX_Stream* s, void* dst, const void* src, size_t n) {
  (void)d;
  return Copy(s, dst, src, n, 1);
}
static PX_Status* copy_d2d_async(PX_Device* d, PX_Stream* s, void* dst, const void* src, size_t n) {
  (void)d;
  return Copy(s, dst, src, n, 0);
}
static PX_Status* copy_d2h_async(PX_Device* d, PX_Stream* s, void* dst, const void* src, size_t n) {
#ifdef BROKEN_COPY_SHORT
  if (Broken((Device*)d) && n % 2 == 1) n -= 1;
#endif
  (void)d;
  return Copy(s, dst, src, n, 0);
}

static PX_Status* event_create(PX_Device* d, PX_Event** out) {
  (void)d;
  Event* e = (Event*)calloc(1, sizeof(Event));
  if (e == NULL) return px_sdk_error(g_host, PX_CODE_RESOURCE_EXHAUSTED, "out of memory");
  pthread_mutex_init(&e->mu, NULL);
  pthread_cond_init(&e->cv, NULL);
  *out = (PX_Event*)e;
  return NULL;
}
static void event_destroy(PX_Device* d, PX_Event* p) {
  (void)d;
  Event* e = (Event*)p;
  pthread_mutex_destroy(&e->mu);
  pthread_cond_destroy(&e->cv);
  free(e);
}
static PX_Status* event_record(PX_Device* d, PX_Stream* s, PX_Event* p) {
  (void)d;
  Event* e = (Event*)p;
  pthread_mutex_lock(&e->mu);
  uint64_t generation = ++e->recorded;
  pthread_mutex_unlock(&e->mu);
  Op op = {kSignal, NULL, NULL, 0, e, generation, NULL, NULL, 0, NULL};
  return Enqueue((Stream*)s, op);
}
static PX_Status* event_sync(PX_Device* d, PX_Event* p) {
#ifdef BROKEN_EVENT_EARLY
  if (Broken((Device*)d)) return NULL;
#else
  (void)d;
#endif
  Event* e = (Event*)p;
  pthread_mutex_lock(&e->mu);
  while (e->done < e->recorded) pthread_cond_wait(&e->cv, &e->mu);
  pthread_mutex_unlock(&e->mu);
  return NULL;
}
static PX_Status* wait_event(PX_Device* d, PX_Stream* s, PX_Event* p) {
#ifdef BROKEN_WAIT_IGNORED
  if (Broken((Device*)d)) return NULL;
#else
  (void)d;
#endif
  Event* e = (Event*)p;
  pthread_mutex_lock(&e->mu);
  uint64_t generation = e->recorded;
  pthread_mutex_unlock(&e->mu);
  Op op = {kWait, NULL, NULL, 0, e, generation, NULL, NULL, 0, NULL};
  return Enqueue((Stream*)s, op);
}
static PX_Status* add_callback(PX_Device* d, PX_Stream* s, PX_HostCallbackFn fn, void* arg) {
  int times = 1;
#ifdef BROKEN_CALLBACK_EARLY
  if (Broken((Device*)d)) {
    fn(arg, NULL);
    return NULL;
  }
#endif
#ifdef BROKEN_CALLBACK_TWICE
  if (Broken((Device*)d)) times = 2;
#endif
  (void)d;
  Op op = {kCallback, NULL, NULL, 0, NULL, 0, fn, arg, times, NULL};
  return Enqueue((Stream*)s, op);
}

static PX_Status* register_kernels(void* plugin, PX_KernelRegistrar* registrar) {
  (void)plugin;
  (void)registrar;
  return NULL; /* streams only */
}

PX_PLUGIN_EXPORT void PX_PluginProbe(PX_PluginProbeInfo* info) {
  if (info == NULL || info->struct_size < sizeof(PX_PluginProbeInfo)) return;
  info->plugin_name = TEST_PLUGIN_NAME;
  info->abi_major = PX_ABI_VERSION_MAJOR;
  info->abi_min_minor = 0;
  info->abi_max_minor = PX_ABI_VERSION_MINOR;
  info->score = 0;
}

PX_PLUGIN_EXPORT PX_Status* PX_PluginInitialize(const PX_HostInitArgs* args, PX_PluginTable* t) {
  g_host = args->services;
  uint32_t minor = 0;
  PX_Status* s = px_sdk_negotiate(args, 0, PX_ABI_VERSION_MINOR, &minor);
  if (s) return s;
  /* Only the fields inside the host's table: an older host's is shorter. */
#define SET(field, value) \
  if (PX_STRUCT_HAS(t, PX_PluginTable, field)) t->field = value
  SET(abi_minor, minor);
  SET(plugin_name, TEST_PLUGIN_NAME);
  SET(plugin_version, "test");
  SET(platform_name, "Test");
  SET(device_type, "ASYNCDEV");
  SET(dlpack_device_type, kDLCPU);
  SET(register_kernels, register_kernels);
  SET(device_count, device_count);
  SET(device_get_info, device_get_info);
  SET(device_open, device_open);
  SET(device_close, device_close);
  SET(allocate, allocate);
  SET(deallocate, deallocate);
  SET(memcpy_h2d, copy);
  SET(memcpy_d2h, copy);
  SET(memcpy_d2d, copy);
  SET(stream_create, stream_create);
  SET(stream_destroy, stream_destroy);
  SET(stream_synchronize, stream_sync);
  SET(stream_get_status, stream_status);
  SET(memcpy_h2d_async, copy_h2d_async);
  SET(memcpy_d2h_async, copy_d2h_async);
  SET(memcpy_d2d_async, copy_d2d_async);
  SET(event_create, event_create);
  SET(event_destroy, event_destroy);
  SET(event_record, event_record);
  SET(event_synchronize, event_sync);
  SET(stream_wait_event, wait_event);
  SET(stream_add_callback, add_callback);
#undef SET
  /* A newer host's table is longer: say how much of it was filled. */
  if (t->struct_size > sizeof(PX_PluginTable)) t->struct_size = sizeof(PX_PluginTable);
  return NULL;
}

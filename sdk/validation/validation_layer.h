/* The Plexus validation layer: a shared library that wraps any device plugin
 * and checks every call of the plugin ABI in both directions (what the host
 * passes to the plugin and what the plugin hands back), and injects faults
 * on request. See docs/plugin_guide.md, "Validation layer and fault
 * injection".
 *
 * A host uses it in place of a plugin's PX_PluginInitialize: it opens the
 * layer (libplexus_validation_layer.so), looks up PX_VALIDATION_WRAP_SYMBOL
 * and calls it with the host's init arguments and the plugin's own
 * PX_PluginInitialize. The layer initializes the plugin with a host-services
 * table of its own, checks the table the plugin fills, and fills `out_table`
 * with its wrappers, which the host then uses as the plugin's table. The
 * layer's handles (devices, streams, events) are its own; the plugin's never
 * reach the host. The layer is never unloaded once opened.
 *
 * This is not part of the plugin ABI (plexus/plugin_api.h): plugins never
 * see it. */
#ifndef PLEXUS_SDK_VALIDATION_LAYER_H_
#define PLEXUS_SDK_VALIDATION_LAYER_H_

#include <stddef.h>
#include <stdint.h>

#include "plexus/plugin_api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PX_VALIDATION_WRAP_SYMBOL "PX_ValidationWrap"
#define PX_VALIDATION_LAYER_FILE "libplexus_validation_layer.so"

/* What a breach does: fail the call with an error status naming the plugin,
 * the call and the argument (and log it), or only log it. */
#define PX_VALIDATION_MODE_ERROR 1
#define PX_VALIDATION_MODE_WARN 2

typedef struct PX_ValidationArgs {
  size_t struct_size;
  const char* plugin_name;                  /* from the probe; borrowed */
  PX_PluginInitializeFn plugin_initialize;  /* the plugin's own entry point */
  int32_t mode;                             /* PX_VALIDATION_MODE_* */
} PX_ValidationArgs;

/* Initializes the plugin through the layer. Returns what the plugin's
 * initialize returned, or a status naming the breach when the table it
 * filled is malformed (the plugin is then shut down by the layer). */
typedef PX_Status* (*PX_ValidationWrapFn)(const PX_ValidationArgs* validation,
                                          const PX_HostInitArgs* args,
                                          PX_PluginTable* out_table);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLEXUS_SDK_VALIDATION_LAYER_H_ */

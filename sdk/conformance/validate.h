// plexus-plugin-check --validate: the harness initializes the plugin under
// test (and the reference plugin) through the validation layer
// (sdk/validation/), so that every ABI call the checks make is also checked
// by the layer, and a breach fails the check that made it.
#ifndef PLEXUS_SDK_CONFORMANCE_VALIDATE_H_
#define PLEXUS_SDK_CONFORMANCE_VALIDATE_H_

#include <string>

#include "plexus/plugin_api.h"

namespace plexus::conformance {

// PX_PluginInitialize of `plugin_name`, through the validation layer when
// PLEXUS_VALIDATE asks for it (1: breaches are errors, warn: logged), else
// `initialize` itself. The layer is $PLEXUS_VALIDATION_LAYER or the one in
// ../lib/plexus-plugins beside the tool. When the layer cannot be loaded the
// plugin is refused with a status saying so.
PX_Status* InitializePlugin(PX_PluginInitializeFn initialize, const char* plugin_name,
                            const PX_HostInitArgs* args, PX_PluginTable* table);

// The layer's path, for the report.
std::string ValidationLayerPath();

// The folder of this program: the tool finds the layer and the plugins
// installed beside it from there.
std::string ExeDir();

}  // namespace plexus::conformance

#endif  // PLEXUS_SDK_CONFORMANCE_VALIDATE_H_

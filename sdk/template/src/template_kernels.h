// The template plugin's kernels (template_kernels.cc).
#ifndef PLEXUS_TEMPLATE_TEMPLATE_KERNELS_H_
#define PLEXUS_TEMPLATE_TEMPLATE_KERNELS_H_

#include "plexus/plugin_api.h"
#include "plexus/sdk/kernel.h"

namespace template_plugin {

// Registers every kernel of the plugin; called from register_kernels.
PX_Status* RegisterTemplateKernels(plexus::sdk::RegistrationInfo* info,
                                   PX_KernelRegistrar* registrar);

}  // namespace template_plugin

#endif  // PLEXUS_TEMPLATE_TEMPLATE_KERNELS_H_

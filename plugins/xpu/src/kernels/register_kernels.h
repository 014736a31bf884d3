// The XPU plugin's kernels, registered from the plugin's RegisterKernels
// (xpu_plugin.cc). Defined by src/kernels/register_kernels.cc.
#ifndef PLEXUS_PLUGINS_XPU_KERNELS_REGISTER_KERNELS_H_
#define PLEXUS_PLUGINS_XPU_KERNELS_REGISTER_KERNELS_H_

#include "plexus/plugin_api.h"
#include "plexus/sdk/kernel.h"

namespace plexus::xpu {

PX_Status* RegisterXpuKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

}  // namespace plexus::xpu

#endif  // PLEXUS_PLUGINS_XPU_KERNELS_REGISTER_KERNELS_H_

// The CUDA kernel of _PlexusFusedElementwise (plexus/sdk/fused_elementwise.h):
// the program becomes CUDA C++ (fused_codegen.h) when the kernel is created,
// is compiled with NVRTC for the device's architecture on first use (cached
// process-wide by source and architecture, fused_compiler.h), loaded with the
// CUDA runtime's library API, and launched on the call's stream.
#ifndef PLEXUS_PLUGINS_CUDA_FUSED_FUSED_ELEMENTWISE_H_
#define PLEXUS_PLUGINS_CUDA_FUSED_FUSED_ELEMENTWISE_H_

#include "plexus/plugin_api.h"
#include "plexus/sdk/kernel.h"

namespace plexus::cuda {

// Registers _PlexusFusedElementwise for T in {float, double} (the cpu
// plugin's constraints). Called from the plugin's kernel registration.
PX_Status* RegisterFusedElementwise(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

}  // namespace plexus::cuda

#endif  // PLEXUS_PLUGINS_CUDA_FUSED_FUSED_ELEMENTWISE_H_

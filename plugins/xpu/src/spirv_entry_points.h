// The kernel names of a SPIR-V module, read from its words (no Level Zero
// needed): the device layer finds which embedded module holds a kernel this
// way, so that only that module is built (zeModuleCreate) on first use.
#ifndef PLEXUS_PLUGINS_XPU_SPIRV_ENTRY_POINTS_H_
#define PLEXUS_PLUGINS_XPU_SPIRV_ENTRY_POINTS_H_

#include <cstddef>
#include <string>
#include <vector>

namespace plexus::xpu {

// The names of the OpenCL kernels (OpEntryPoint with the Kernel execution
// model) of a SPIR-V module, in order; empty for data that is not SPIR-V.
// Either byte order is accepted.
std::vector<std::string> SpirvKernelNames(const unsigned char* data, size_t size);

}  // namespace plexus::xpu

#endif  // PLEXUS_PLUGINS_XPU_SPIRV_ENTRY_POINTS_H_

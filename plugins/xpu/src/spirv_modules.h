// The SPIR-V modules embedded in the plugin, one per OpenCL C source
// (plugins/xpu/kernels/*.cl, compiled at build time); defined by the
// generated source of plugins/xpu/kernels/CMakeLists.txt. The device layer builds them lazily per device (zeModuleCreate).
#ifndef PLEXUS_PLUGINS_XPU_SPIRV_MODULES_H_
#define PLEXUS_PLUGINS_XPU_SPIRV_MODULES_H_

#include <cstddef>

namespace plexus::xpu {

struct SpirvModule {
  const char* name;
  const unsigned char* data;
  size_t size;
};
extern const SpirvModule kSpirvModules[];  // one per .cl file, name = file stem
extern const size_t kSpirvModuleCount;

}  // namespace plexus::xpu

#endif  // PLEXUS_PLUGINS_XPU_SPIRV_MODULES_H_

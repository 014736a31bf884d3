// The element-type suffix of the XPU kernels' names (kernels/common.h):
// f32, f16, bf16, i32, i64, b8.
#ifndef PLEXUS_PLUGINS_XPU_KERNELS_DTYPE_SUFFIX_H_
#define PLEXUS_PLUGINS_XPU_KERNELS_DTYPE_SUFFIX_H_

#include <string>

#include "plexus/sdk/kernel.h"

namespace plexus::xpu {

// nullptr for a dtype the kernels do not have.
inline const char* KernelSuffix(PX_DataType t) {
  switch (t) {
    case PX_DT_FLOAT: return "f32";
    case PX_DT_HALF: return "f16";
    case PX_DT_BFLOAT16: return "bf16";
    case PX_DT_INT32: return "i32";
    case PX_DT_INT64: return "i64";
    case PX_DT_BOOL: return "b8";
    default: return nullptr;
  }
}

// The suffix, or UNIMPLEMENTED naming the op and dtype.
inline std::string RequireSuffix(PX_DataType t, const char* op) {
  const char* s = KernelSuffix(t);
  if (s == nullptr) {
    throw sdk::KernelError(PX_CODE_UNIMPLEMENTED, sdk::Format("%s on XPU does not support dtype %s",
                                                              op, sdk::DtypeName(t)));
  }
  return s;
}

inline bool IsFloatDtype(PX_DataType t) {
  return t == PX_DT_FLOAT || t == PX_DT_HALF || t == PX_DT_BFLOAT16;
}

}  // namespace plexus::xpu

#endif  // PLEXUS_PLUGINS_XPU_KERNELS_DTYPE_SUFFIX_H_

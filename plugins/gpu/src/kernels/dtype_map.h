// PX_DataType to the device code's dtype enums (elementwise_launch.h), for
// the host side of the kernel families. Other dtypes are UNIMPLEMENTED,
// naming the op.
#ifndef PLEXUS_PLUGINS_GPU_KERNELS_DTYPE_MAP_H_
#define PLEXUS_PLUGINS_GPU_KERNELS_DTYPE_MAP_H_

#include "gpu_runtime.h"
#include "kernels/array_launch.h"
#include "kernels/elementwise_launch.h"
#include "plexus/plugin_api.h"
#include "plexus/sdk/kernel.h"

namespace plexus::cuda {

[[noreturn]] inline void UnsupportedDtype(PX_DataType t, const char* op) {
  throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                         sdk::Format("%s on " PX_GPU_RUNTIME_NAME " does not support dtype %s", op,
                                     sdk::DtypeName(t)));
}

// The four floating types.
inline ew::Dtype ToDtype(PX_DataType t, const char* op) {
  switch (t) {
    case PX_DT_FLOAT: return ew::Dtype::kFloat;
    case PX_DT_DOUBLE: return ew::Dtype::kDouble;
    case PX_DT_HALF: return ew::Dtype::kHalf;
    case PX_DT_BFLOAT16: return ew::Dtype::kBFloat16;
    default: UnsupportedDtype(t, op);
  }
}

// The elementwise family's ten dtypes.
inline ew::Type ToEwType(PX_DataType t, const char* op) {
  switch (t) {
    case PX_DT_FLOAT: return ew::Type::kFloat;
    case PX_DT_DOUBLE: return ew::Type::kDouble;
    case PX_DT_HALF: return ew::Type::kHalf;
    case PX_DT_BFLOAT16: return ew::Type::kBFloat16;
    case PX_DT_INT8: return ew::Type::kInt8;
    case PX_DT_INT16: return ew::Type::kInt16;
    case PX_DT_INT32: return ew::Type::kInt32;
    case PX_DT_INT64: return ew::Type::kInt64;
    case PX_DT_UINT8: return ew::Type::kUInt8;
    case PX_DT_BOOL: return ew::Type::kBool;
    default: UnsupportedDtype(t, op);
  }
}

// Cast's thirteen dtypes.
inline arr::CastType ToCastType(PX_DataType t, const char* op) {
  switch (t) {
    case PX_DT_FLOAT: return arr::CastType::kFloat;
    case PX_DT_DOUBLE: return arr::CastType::kDouble;
    case PX_DT_HALF: return arr::CastType::kHalf;
    case PX_DT_BFLOAT16: return arr::CastType::kBFloat16;
    case PX_DT_INT8: return arr::CastType::kInt8;
    case PX_DT_INT16: return arr::CastType::kInt16;
    case PX_DT_INT32: return arr::CastType::kInt32;
    case PX_DT_INT64: return arr::CastType::kInt64;
    case PX_DT_UINT8: return arr::CastType::kUInt8;
    case PX_DT_UINT16: return arr::CastType::kUInt16;
    case PX_DT_UINT32: return arr::CastType::kUInt32;
    case PX_DT_UINT64: return arr::CastType::kUInt64;
    case PX_DT_BOOL: return arr::CastType::kBool;
    default: UnsupportedDtype(t, op);
  }
}

}  // namespace plexus::cuda

#endif  // PLEXUS_PLUGINS_GPU_KERNELS_DTYPE_MAP_H_

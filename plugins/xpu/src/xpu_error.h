// Level Zero results as Plexus statuses.
//
//   PX_ZE_CHECK(ze.zeMemFree(context, p));            // in a method returning PX_Status*
//
// A failed call becomes "zeMemAllocDevice(...) failed at xpu_device.cc:42:
// ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY (0x70000003)" with the code
// ZeResultCode gives: RESOURCE_EXHAUSTED for out of device or host memory,
// UNAVAILABLE where the driver or the device is missing, lost or unusable,
// INVALID_ARGUMENT for refused arguments, UNIMPLEMENTED for unsupported
// features, INTERNAL otherwise. PX_ZE_CHECK needs `host()` (the
// PX_HostServices*) in scope, as every sdk::Plugin and sdk::Device has.
#ifndef PLEXUS_PLUGINS_XPU_XPU_ERROR_H_
#define PLEXUS_PLUGINS_XPU_XPU_ERROR_H_

#include <level_zero/ze_api.h>

#include <string>

#include "plexus/plugin_api.h"
#include "plexus/sdk/error.h"

namespace plexus::xpu {

// "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"; "ZE_RESULT_<unknown>" for a value
// this header does not know.
const char* ZeResultName(ze_result_t result);

// "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY (0x70000003)".
std::string ZeResultDescription(ze_result_t result);

// The Plexus code of a result (OK for ZE_RESULT_SUCCESS).
PX_Code ZeResultCode(ze_result_t result);

// "EXPR failed at FILE:LINE: NAME (0xHEX)"; FILE without folders.
std::string ZeErrorMessage(ze_result_t result, const char* expr, const char* file, int line);

// A status owned by the caller (NULL for ZE_RESULT_SUCCESS).
PX_Status* ZeStatus(const PX_HostServices* host, ze_result_t result, const char* expr,
                    const char* file, int line);

}  // namespace plexus::xpu

#define PX_ZE_CHECK(expr)                                                                  \
  do {                                                                                     \
    const ze_result_t px_ze_result_ = (expr);                                              \
    if (px_ze_result_ != ZE_RESULT_SUCCESS) {                                              \
      return ::plexus::xpu::ZeStatus(host(), px_ze_result_, #expr, __FILE__, __LINE__);    \
    }                                                                                      \
  } while (0)

#endif  // PLEXUS_PLUGINS_XPU_XPU_ERROR_H_

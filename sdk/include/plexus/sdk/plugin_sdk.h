/* Plexus plugin SDK: small, header-only C helpers for plugin authors.
 *
 * Everything here is built only on plugin_api.h; a plugin that includes this
 * header still links nothing of the Plexus core. All functions are static
 * inline so the header can be copied into any vendor tree.
 */
#ifndef PLEXUS_SDK_PLUGIN_SDK_H_
#define PLEXUS_SDK_PLUGIN_SDK_H_

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "plexus/plugin_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Creates a status with a printf-style message through the host services. */
static inline PX_Status* px_sdk_error(const PX_HostServices* host,
                                      PX_Code code, const char* format, ...) {
  char message[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  return host->status_create(code, message);
}

/* The usual version negotiation: the plugin speaks minors
 * [plugin_min, plugin_max] of PX_ABI_VERSION_MAJOR. Picks the newest minor both
 * sides speak and stores it in *out_minor, or returns a refusal that says why.
 * Returns NULL (OK) on success. */
static inline PX_Status* px_sdk_negotiate(const PX_HostInitArgs* args,
                                          uint32_t plugin_min,
                                          uint32_t plugin_max,
                                          uint32_t* out_minor) {
  const PX_HostServices* host = args->services;
  if (args->abi_major != PX_ABI_VERSION_MAJOR) {
    return px_sdk_error(host, PX_CODE_FAILED_PRECONDITION,
                        "plugin speaks ABI major %u, host speaks major %u",
                        (unsigned)PX_ABI_VERSION_MAJOR,
                        (unsigned)args->abi_major);
  }
  uint32_t low = args->abi_min_minor > plugin_min ? args->abi_min_minor
                                                  : plugin_min;
  uint32_t high = args->abi_max_minor < plugin_max ? args->abi_max_minor
                                                   : plugin_max;
  if (low > high) {
    return px_sdk_error(host, PX_CODE_FAILED_PRECONDITION,
                        "no common ABI minor: plugin speaks %u.%u-%u.%u, "
                        "host speaks %u.%u-%u.%u",
                        (unsigned)PX_ABI_VERSION_MAJOR, (unsigned)plugin_min,
                        (unsigned)PX_ABI_VERSION_MAJOR, (unsigned)plugin_max,
                        (unsigned)args->abi_major,
                        (unsigned)args->abi_min_minor,
                        (unsigned)args->abi_major,
                        (unsigned)args->abi_max_minor);
  }
  *out_minor = high;
  return NULL;
}

/* Number of elements of a descriptor (1 for a scalar). */
static inline int64_t px_sdk_num_elements(const DLTensor* t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

/* True when the descriptor is dense and row-major (strides NULL or equal to
 * the row-major strides). */
static inline int px_sdk_is_contiguous(const DLTensor* t) {
  if (t->strides == NULL) return 1;
  int64_t expected = 1;
  for (int i = t->ndim - 1; i >= 0; --i) {
    if (t->shape[i] != 1 && t->strides[i] != expected) return 0;
    expected *= t->shape[i];
  }
  return 1;
}

/* PX_DataType of a DLPack dtype, or PX_DT_INVALID. */
static inline PX_DataType px_sdk_dtype_from_dl(DLDataType t) {
  if (t.lanes != 1) return PX_DT_INVALID;
  switch (t.code) {
    case kDLFloat:
      return t.bits == 32 ? PX_DT_FLOAT
           : t.bits == 64 ? PX_DT_DOUBLE
           : t.bits == 16 ? PX_DT_HALF : PX_DT_INVALID;
    case kDLInt:
      return t.bits == 32 ? PX_DT_INT32
           : t.bits == 64 ? PX_DT_INT64
           : t.bits == 16 ? PX_DT_INT16
           : t.bits == 8 ? PX_DT_INT8 : PX_DT_INVALID;
    case kDLUInt:
      return t.bits == 8 ? PX_DT_UINT8
           : t.bits == 16 ? PX_DT_UINT16
           : t.bits == 32 ? PX_DT_UINT32
           : t.bits == 64 ? PX_DT_UINT64 : PX_DT_INVALID;
    case kDLBfloat:
      return t.bits == 16 ? PX_DT_BFLOAT16 : PX_DT_INVALID;
    case kDLComplex:
      return t.bits == 64 ? PX_DT_COMPLEX64
           : t.bits == 128 ? PX_DT_COMPLEX128 : PX_DT_INVALID;
    case PX_DL_BOOL:
      return t.bits == 8 ? PX_DT_BOOL : PX_DT_INVALID;
    default:
      return PX_DT_INVALID;
  }
}

/* Size in bytes of the whole buffer a contiguous descriptor covers. */
static inline size_t px_sdk_nbytes(const DLTensor* t) {
  return (size_t)px_sdk_num_elements(t) * ((t->dtype.bits * t->dtype.lanes + 7) / 8);
}

/* Data pointer of a descriptor with its byte offset applied. */
static inline void* px_sdk_data(const DLTensor* t) {
  return (char*)t->data + t->byte_offset;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLEXUS_SDK_PLUGIN_SDK_H_ */

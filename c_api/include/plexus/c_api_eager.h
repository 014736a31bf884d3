/* Plexus C API: eager execution (as TensorFlow's TFE_* functions do) and
 * tensors on devices. Part of the C API: include <plexus/c_api.h>, which
 * includes this file; the conventions of c_api.h apply.
 *
 * An eager context runs ops one at a time with the same kernels, placement
 * rules and per-op caches as Python's eager mode: an op is prepared once
 * per (op, attributes, input dtypes, device) and later calls reuse it.
 *
 *   px_eager_context* ctx; px_eager_context_create(rt, NULL, &ctx, st);
 *   px_tensor* out[1]; size_t n;
 *   px_eager_execute(ctx, "AddV2", inputs, 2, NULL, NULL, out, 1, &n, st);
 *
 * Results stay on the device the op ran on (px_tensor_device_name). Host
 * code reads a device tensor after px_tensor_copy_to_host; px_tensor_data
 * is NULL for a tensor the host cannot read.
 */
#ifndef PLEXUS_C_API_EAGER_H_
#define PLEXUS_C_API_EAGER_H_

#include "plexus/c_api.h"
#include "plexus/c_api_build.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Tensors on devices ------------------------------------------------ */

/* The device whose memory holds the tensor ("CUDA:0"), or "" for host
 * memory. Borrowed from the tensor. */
PX_C_EXPORT const char* px_tensor_device_name(const px_tensor* tensor);
/* 1 when the host can read the tensor's memory (px_tensor_data works). */
PX_C_EXPORT int px_tensor_is_host_readable(const px_tensor* tensor);
/* A host copy of `tensor` (waits for the work writing it). */
PX_C_EXPORT px_code px_tensor_copy_to_host(const px_tensor* tensor, px_tensor** out_tensor,
                                           px_status* status);

/* ---- Eager contexts ---------------------------------------------------- */

typedef struct px_eager_context px_eager_context;

typedef struct px_eager_options {
  size_t struct_size;  /* sizeof(px_eager_options) */
  /* The device ops run on unless a call names one: "CUDA:0". NULL: each op
   * runs where its first input is when that is a device's memory, else on
   * the host device. */
  const char* device;
} px_eager_options;

/* `options` may be NULL. The context's variables and resources live until it
 * is destroyed; destroy it before its runtime. */
PX_C_EXPORT px_code px_eager_context_create(px_runtime* runtime, const px_eager_options* options,
                                            px_eager_context** out_context, px_status* status);
PX_C_EXPORT void px_eager_context_destroy(px_eager_context* context);

/* Runs op `op_type` on `inputs` (any devices; copied where the kernel wants
 * them) with `attrs` (NULL: none; type attributes and list lengths are
 * inferred from the inputs when left out). `device` NULL: the context's.
 * When that device has no kernel for the op it runs on another, as the
 * session's placer does.
 *
 * On success out_outputs[0..*out_num_outputs) receive new tensors the
 * caller destroys. `max_outputs` is the room in out_outputs: when the op has
 * more outputs nothing runs and the call is OUT_OF_RANGE naming the count.
 * Errors name the op and the device. Safe from several threads. */
PX_C_EXPORT px_code px_eager_execute(px_eager_context* context, const char* op_type,
                                     const px_tensor* const* inputs, size_t num_inputs,
                                     const px_attrs* attrs, const char* device,
                                     px_tensor** out_outputs, size_t max_outputs,
                                     size_t* out_num_outputs, px_status* status);

/* The number of outputs op_type has for these input dtypes and attributes,
 * without running it (to size out_outputs). */
PX_C_EXPORT px_code px_eager_num_outputs(px_eager_context* context, const char* op_type,
                                         const px_dtype* input_dtypes, size_t num_inputs,
                                         const px_attrs* attrs, const char* device,
                                         size_t* out_num_outputs, px_status* status);

/* A copy of `tensor` in the memory of `device` ("CUDA:0"; "" or NULL: host
 * memory). Copies go through the context's stream of that device. */
PX_C_EXPORT px_code px_eager_copy_to_device(px_eager_context* context, const px_tensor* tensor,
                                            const char* device, px_tensor** out_tensor,
                                            px_status* status);

/* Waits for the eager work queued on `device` (NULL: every device the
 * context used) and returns its first error. */
PX_C_EXPORT px_code px_eager_synchronize(px_eager_context* context, const char* device,
                                         px_status* status);

/* Prepared ops the context keeps; px_eager_clear_cache drops them. */
PX_C_EXPORT size_t px_eager_cache_size(const px_eager_context* context);
PX_C_EXPORT void px_eager_clear_cache(px_eager_context* context);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLEXUS_C_API_EAGER_H_ */

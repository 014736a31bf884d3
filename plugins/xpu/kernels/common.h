/* Shared definitions of the XPU plugin's OpenCL C kernels (OpenCL C 1.2
 * subset: no work-group collectives, no generic address space, and 16-bit
 * floats only through vload_half / vstore_half_rte, computed in float).
 *
 * Element types are named by a suffix:
 *   f32 float, f16 half (IEEE binary16), bf16 bfloat16 (stored as ushort),
 *   i32 int, i64 long, b8 bool (uchar, 0 or 1).
 * PX_T_<s> is the storage type, PX_C_<s> the type computed in, and
 * PX_LD_<s>(p, i) / PX_ST_<s>(p, i, v) read and write element i as PX_C_<s>. */
#ifndef PX_XPU_KERNELS_COMMON_H_
#define PX_XPU_KERNELS_COMMON_H_

#include "abi.h"

#define PX_CAT_(a, b) a##b
#define PX_CAT(a, b) PX_CAT_(a, b)
#define PX_CAT3(a, b, c) PX_CAT(PX_CAT(a, b), c)

float px_bf16_to_float(ushort bits) { return as_float((uint)bits << 16); }

/* Round to nearest even; NaN stays a quiet NaN. */
ushort px_float_to_bf16(float value) {
  uint u = as_uint(value);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (ushort)(u >> 16);
}

#define PX_T_f32 float
#define PX_T_f16 half
#define PX_T_bf16 ushort
#define PX_T_i32 int
#define PX_T_i64 long
#define PX_T_b8 uchar

#define PX_C_f32 float
#define PX_C_f16 float
#define PX_C_bf16 float
#define PX_C_i32 int
#define PX_C_i64 long
#define PX_C_b8 uchar

#define PX_LD_f32(p, i) ((p)[i])
#define PX_LD_f16(p, i) vload_half((size_t)(i), (p))
#define PX_LD_bf16(p, i) px_bf16_to_float((p)[i])
#define PX_LD_i32(p, i) ((p)[i])
#define PX_LD_i64(p, i) ((p)[i])
#define PX_LD_b8(p, i) ((p)[i])

#define PX_ST_f32(p, i, v) ((p)[i] = (v))
#define PX_ST_f16(p, i, v) vstore_half_rte((v), (size_t)(i), (p))
#define PX_ST_bf16(p, i, v) ((p)[i] = px_float_to_bf16(v))
#define PX_ST_i32(p, i, v) ((p)[i] = (v))
#define PX_ST_i64(p, i, v) ((p)[i] = (v))
#define PX_ST_b8(p, i, v) ((p)[i] = (v))

/* The input offsets of output element i under a broadcast plan. */
#define PX_PLAN_OFFSETS(plan, i, nin, off)                              \
  do {                                                                  \
    long rest_ = (i);                                                   \
    for (int k_ = 0; k_ < (nin); ++k_) (off)[k_] = 0;                   \
    for (int d_ = (int)(plan).rank - 1; d_ > 0; --d_) {                 \
      /* The remainder as rest - q * dim: llvm-spirv 14 cannot translate the  \
         `freeze` that clang adds when it pairs a division with a `%`. */      \
      long q_ = rest_ / (plan).dims[d_];                                \
      long c_ = rest_ - q_ * (plan).dims[d_];                           \
      rest_ = q_;                                                       \
      for (int k_ = 0; k_ < (nin); ++k_) (off)[k_] += c_ * (plan).strides[k_][d_]; \
    }                                                                   \
    if ((plan).rank > 0)                                                \
      for (int k_ = 0; k_ < (nin); ++k_) (off)[k_] += rest_ * (plan).strides[k_][0]; \
  } while (0)

#endif /* PX_XPU_KERNELS_COMMON_H_ */

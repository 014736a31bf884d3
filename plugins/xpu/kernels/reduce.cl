/* Reduction kernels of the XPU plugin: Sum, Mean, Max, Min, Prod (floating
 * types), All and Any (bool), ArgMax and ArgMin, Softmax / LogSoftmax over
 * the last dimension, and BiasAdd. Values accumulate in float.
 *
 * Two shapes of each reduction, over the same plan (px_xpu_reduce_plan):
 *  - *_group: one work-group of exactly PX_XPU_REDUCE_WG work-items per
 *    output (global size outputs * PX_XPU_REDUCE_WG); the work-items stride
 *    over the reduced elements and combine their partial results with a tree
 *    in local memory (no work-group collectives: OpenCL C 1.2);
 *  - *_serial: one work-item per output looping over its elements (for many
 *    short reductions).
 * Empty reductions give the identity: 0 (Sum), NaN (Mean), -inf (Max),
 * +inf (Min), 1 (Prod), true (All), false (Any). */
#include "common.h"

#define WG PX_XPU_REDUCE_WG

/* The input offset of output o's first element, and of its r-th reduced
 * element relative to it. (Remainders as a - q * b: see common.h.) */
long px_kept_offset(px_xpu_reduce_plan p, long o) {
  long off = 0;
  for (int d = (int)p.kept_rank - 1; d >= 0; --d) {
    long q = o / p.kept_dims[d];
    off += (o - q * p.kept_dims[d]) * p.kept_strides[d];
    o = q;
  }
  return off;
}
long px_red_offset(px_xpu_reduce_plan p, long r) {
  if (p.red_rank == 1) return r * p.red_strides[0];
  long off = 0;
  for (int d = (int)p.red_rank - 1; d >= 0; --d) {
    long q = r / p.red_dims[d];
    off += (r - q * p.red_dims[d]) * p.red_strides[d];
    r = q;
  }
  return off;
}

float px_red_init(int op) {
  switch (op) {
    case PX_RED_MAX: return -INFINITY;
    case PX_RED_MIN: return INFINITY;
    case PX_RED_PROD: return 1.0f;
    default: return 0.0f;
  }
}
/* Max and Min propagate NaN. */
float px_red_combine(int op, float a, float b) {
  switch (op) {
    case PX_RED_MAX: return isnan(b) || b > a ? b : a;
    case PX_RED_MIN: return isnan(b) || b < a ? b : a;
    case PX_RED_PROD: return a * b;
    default: return a + b;
  }
}
float px_red_finish(int op, float acc, long count) {
  return op == PX_RED_MEAN ? acc / (float)count : acc;
}

#define PX_REDUCE(S)                                                                      \
  __kernel void reduce_##S##_group(__global const PX_T_##S* x, __global PX_T_##S* y,     \
                                   px_xpu_reduce_plan plan, int op) {                     \
    __local float partial[WG];                                                            \
    long o = get_group_id(0);                                                             \
    if (o >= plan.outputs) return; /* the whole group */                                  \
    int lid = (int)get_local_id(0);                                                       \
    long base = px_kept_offset(plan, o);                                                  \
    float acc = px_red_init(op);                                                          \
    for (long r = lid; r < plan.count; r += WG)                                           \
      acc = px_red_combine(op, acc, PX_LD_##S(x, base + px_red_offset(plan, r)));         \
    partial[lid] = acc;                                                                   \
    barrier(CLK_LOCAL_MEM_FENCE);                                                         \
    for (int half_size = WG / 2; half_size > 0; half_size >>= 1) {                        \
      if (lid < half_size)                                                                \
        partial[lid] = px_red_combine(op, partial[lid], partial[lid + half_size]);        \
      barrier(CLK_LOCAL_MEM_FENCE);                                                       \
    }                                                                                     \
    if (lid == 0) PX_ST_##S(y, o, px_red_finish(op, partial[0], plan.count));             \
  }                                                                                       \
  __kernel void reduce_##S##_serial(__global const PX_T_##S* x, __global PX_T_##S* y,    \
                                    px_xpu_reduce_plan plan, int op) {                    \
    long o = get_global_id(0);                                                            \
    if (o >= plan.outputs) return;                                                        \
    long base = px_kept_offset(plan, o);                                                  \
    float acc = px_red_init(op);                                                          \
    for (long r = 0; r < plan.count; ++r)                                                 \
      acc = px_red_combine(op, acc, PX_LD_##S(x, base + px_red_offset(plan, r)));         \
    PX_ST_##S(y, o, px_red_finish(op, acc, plan.count));                                  \
  }
PX_REDUCE(f32)
PX_REDUCE(f16)
PX_REDUCE(bf16)

/* All / Any over bool. */
__kernel void reduce_b8_group(__global const uchar* x, __global uchar* y, px_xpu_reduce_plan plan,
                              int op) {
  __local int partial[WG];
  long o = get_group_id(0);
  if (o >= plan.outputs) return;
  int lid = (int)get_local_id(0);
  long base = px_kept_offset(plan, o);
  int all = op == PX_RED_ALL;
  int acc = all;
  for (long r = lid; r < plan.count; r += WG) {
    int v = x[base + px_red_offset(plan, r)] != 0;
    acc = all ? (acc && v) : (acc || v);
  }
  partial[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int half_size = WG / 2; half_size > 0; half_size >>= 1) {
    if (lid < half_size) {
      partial[lid] = all ? (partial[lid] && partial[lid + half_size])
                         : (partial[lid] || partial[lid + half_size]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) y[o] = partial[0] ? 1 : 0;
}
__kernel void reduce_b8_serial(__global const uchar* x, __global uchar* y, px_xpu_reduce_plan plan,
                               int op) {
  long o = get_global_id(0);
  if (o >= plan.outputs) return;
  long base = px_kept_offset(plan, o);
  int all = op == PX_RED_ALL;
  int acc = all;
  for (long r = 0; r < plan.count; ++r) {
    int v = x[base + px_red_offset(plan, r)] != 0;
    acc = all ? (acc && v) : (acc || v);
  }
  y[o] = acc ? 1 : 0;
}

/* ArgMax / ArgMin: the first index of the extreme value (count > 0). A NaN
 * never wins against a number met earlier. Values compare in their compute
 * type (int32 exactly, not through float). argreduce_<t>_<index type>. */
#define PX_ARG_BETTER(op, v, i, best, best_i) \
  (((op) == PX_RED_ARGMAX ? (v) > (best) : (v) < (best)) || ((v) == (best) && (i) < (best_i)))
#define PX_ARGREDUCE(S, I, IT)                                                             \
  __kernel void argreduce_##S##_##I##_group(__global const PX_T_##S* x, __global IT* y,   \
                                            px_xpu_reduce_plan plan, int op) {             \
    __local PX_C_##S best_value[WG];                                                       \
    __local long best_index[WG];                                                           \
    long o = get_group_id(0);                                                              \
    if (o >= plan.outputs) return;                                                         \
    int lid = (int)get_local_id(0);                                                        \
    long base = px_kept_offset(plan, o);                                                   \
    PX_C_##S best = 0;                                                                     \
    long best_i = -1; /* none yet */                                                       \
    for (long r = lid; r < plan.count; r += WG) {                                          \
      PX_C_##S v = PX_LD_##S(x, base + px_red_offset(plan, r));                            \
      if (best_i < 0 || PX_ARG_BETTER(op, v, r, best, best_i)) {                           \
        best = v;                                                                          \
        best_i = r;                                                                        \
      }                                                                                    \
    }                                                                                      \
    best_value[lid] = best;                                                                \
    best_index[lid] = best_i;                                                              \
    barrier(CLK_LOCAL_MEM_FENCE);                                                          \
    for (int half_size = WG / 2; half_size > 0; half_size >>= 1) {                         \
      if (lid < half_size) {                                                               \
        long j = best_index[lid + half_size];                                              \
        if (j >= 0 && (best_index[lid] < 0 ||                                              \
                       PX_ARG_BETTER(op, best_value[lid + half_size], j, best_value[lid],  \
                                     best_index[lid]))) {                                  \
          best_value[lid] = best_value[lid + half_size];                                   \
          best_index[lid] = j;                                                             \
        }                                                                                  \
      }                                                                                    \
      barrier(CLK_LOCAL_MEM_FENCE);                                                        \
    }                                                                                      \
    if (lid == 0) y[o] = (IT)(best_index[0] < 0 ? 0 : best_index[0]);                      \
  }                                                                                        \
  __kernel void argreduce_##S##_##I##_serial(__global const PX_T_##S* x, __global IT* y,  \
                                             px_xpu_reduce_plan plan, int op) {            \
    long o = get_global_id(0);                                                             \
    if (o >= plan.outputs) return;                                                         \
    long base = px_kept_offset(plan, o);                                                   \
    PX_C_##S best = PX_LD_##S(x, base); /* count > 0 */                                    \
    IT best_i = 0; /* IT: no conversion after the loop (see below) */                     \
    for (long r = 1; r < plan.count; ++r) {                                                \
      PX_C_##S v = PX_LD_##S(x, base + px_red_offset(plan, r));                            \
      if (PX_ARG_BETTER(op, v, r, best, best_i)) {                                         \
        best = v;                                                                          \
        best_i = (IT)r;                                                                    \
      }                                                                                    \
    }                                                                                      \
    y[o] = best_i;                                                                         \
  }
PX_ARGREDUCE(f32, i64, long)
PX_ARGREDUCE(f32, i32, int)
PX_ARGREDUCE(f16, i64, long)
PX_ARGREDUCE(f16, i32, int)
PX_ARGREDUCE(bf16, i64, long)
PX_ARGREDUCE(bf16, i32, int)
PX_ARGREDUCE(i32, i64, long)
PX_ARGREDUCE(i32, i32, int)

/* Softmax / LogSoftmax over rows of `cols` elements: one work-group of
 * PX_XPU_REDUCE_WG work-items per row (global rows * PX_XPU_REDUCE_WG). */
#define PX_SOFTMAX(S)                                                                     \
  __kernel void softmax_##S(__global const PX_T_##S* x, __global PX_T_##S* y, long rows,  \
                            long cols, int log_softmax) {                                 \
    __local float partial[WG];                                                            \
    long row = get_group_id(0);                                                           \
    /* No early return before the barriers: a group past the rows does nothing. */       \
    long n = row < rows ? cols : 0;                                                       \
    long base = row < rows ? row * cols : 0;                                              \
    int lid = (int)get_local_id(0);                                                       \
    float m = -INFINITY;                                                                  \
    for (long c = lid; c < n; c += WG) m = fmax(m, PX_LD_##S(x, base + c));               \
    partial[lid] = m;                                                                     \
    barrier(CLK_LOCAL_MEM_FENCE);                                                         \
    for (int h = WG / 2; h > 0; h >>= 1) {                                                \
      if (lid < h) partial[lid] = fmax(partial[lid], partial[lid + h]);                   \
      barrier(CLK_LOCAL_MEM_FENCE);                                                       \
    }                                                                                     \
    m = partial[0];                                                                       \
    barrier(CLK_LOCAL_MEM_FENCE);                                                         \
    float s = 0.0f;                                                                       \
    for (long c = lid; c < n; c += WG) s += exp(PX_LD_##S(x, base + c) - m);              \
    partial[lid] = s;                                                                     \
    barrier(CLK_LOCAL_MEM_FENCE);                                                         \
    for (int h = WG / 2; h > 0; h >>= 1) {                                                \
      if (lid < h) partial[lid] += partial[lid + h];                                      \
      barrier(CLK_LOCAL_MEM_FENCE);                                                       \
    }                                                                                     \
    s = partial[0];                                                                       \
    float log_s = log(s);                                                                 \
    for (long c = lid; c < n; c += WG) {                                                  \
      float v = PX_LD_##S(x, base + c) - m;                                               \
      PX_ST_##S(y, base + c, log_softmax ? v - log_s : exp(v) / s);                       \
    }                                                                                     \
  }
PX_SOFTMAX(f32)
PX_SOFTMAX(f16)
PX_SOFTMAX(bf16)

/* BiasAdd: y[i] = x[i] + bias[channel of i], channel = (i / inner) mod
 * channels (NHWC: inner 1; NCHW: inner = H * W). */
#define PX_BIAS_ADD(S)                                                                    \
  __kernel void bias_add_##S(__global const PX_T_##S* x, __global const PX_T_##S* bias,   \
                             __global PX_T_##S* y, long n, long channels, long inner) {   \
    long i = get_global_id(0);                                                            \
    if (i >= n) return;                                                                   \
    long q = inner == 1 ? i : i / inner;                                                  \
    long c = q - (q / channels) * channels;                                               \
    PX_ST_##S(y, i, PX_LD_##S(x, i) + PX_LD_##S(bias, c));                                \
  }
PX_BIAS_ADD(f32)
PX_BIAS_ADD(f16)
PX_BIAS_ADD(bf16)

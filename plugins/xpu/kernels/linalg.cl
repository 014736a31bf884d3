// The XPU plugin's matrix products: MatMul, BatchMatMul/V2/V3 and
// _FusedMatMul (bias and activation epilogue), as one tiled GEMM kernel per
// dtype (float, half, bfloat16).
//
//   C[b][i][j] = act(sum_p opA[b][i][p] * opB[b][p][j] + bias[j])
//
// The operands are addressed by strides (in elements), so transposes and
// batch broadcasting cost nothing: element (i, p) of op(A) in batch b lies at
// a + b * a_batch + i * a_rs + p * a_cs (a_batch 0 repeats one matrix); the
// same for B; C is dense, [m, n] per batch, c_batch elements apart.
//
// Launch: global {ceil(n / 16) * 16, ceil(m / 16) * 16, batch}, local
// {16, 16, 1}. Each work-item computes one element of C, accumulating in
// float; the work-group stages 16 x 16 tiles of A and B in local memory.
// Work-items past the edge of C (m, n not multiples of 16) still take part
// in the barriers: they load zeros and store nothing.
//
// half is stored as `half` but only read and written with vload_half /
// vstore_half_rte; bfloat16 is stored as ushort (the upper half of a float).

#define PX_TILE 16

// Activations of the epilogue; the codes are sdk::FusedActivation's.
#define PX_ACT_NONE 0
#define PX_ACT_RELU 1
#define PX_ACT_RELU6 2
#define PX_ACT_ELU 3
#define PX_ACT_LEAKY_RELU 4
#define PX_ACT_TANH 5
#define PX_ACT_SIGMOID 6

// NaN passes through (the comparisons are false for NaN).
inline float px_mm_activate(float x, int act, float alpha) {
  switch (act) {
    case PX_ACT_RELU: return x < 0.0f ? 0.0f : x;
    case PX_ACT_RELU6: return x < 0.0f ? 0.0f : (x > 6.0f ? 6.0f : x);
    case PX_ACT_ELU: return x < 0.0f ? expm1(x) : x;
    case PX_ACT_LEAKY_RELU: return x < 0.0f ? alpha * x : x;
    case PX_ACT_TANH: return tanh(x);
    case PX_ACT_SIGMOID: return 1.0f / (1.0f + exp(-x));
    default: return x;
  }
}

// bfloat16 <-> float: round to nearest even, NaN kept quiet (as sdk::bfloat16).
inline float px_mm_bf16_to_float(ushort v) { return as_float(((uint)v) << 16); }
inline ushort px_mm_float_to_bf16(float f) {
  uint u = as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (ushort)(u >> 16);
}

#define PX_LOAD_f32(p, i) ((p)[i])
#define PX_STORE_f32(p, i, v) ((p)[i] = (v))
#define PX_LOAD_f16(p, i) vload_half((size_t)(i), (p))
#define PX_STORE_f16(p, i, v) vstore_half_rte((v), (size_t)(i), (p))
#define PX_LOAD_bf16(p, i) px_mm_bf16_to_float((p)[i])
#define PX_STORE_bf16(p, i, v) ((p)[i] = px_mm_float_to_bf16(v))

// has_bias: 0 or 1 (bias is [n]; when 0 it may be any valid pointer).
#define PX_DEFINE_GEMM(SUFFIX, T)                                                               \
  __kernel __attribute__((reqd_work_group_size(PX_TILE, PX_TILE, 1))) void px_gemm_##SUFFIX(    \
      __global const T* a, __global const T* b, __global T* c, __global const T* bias,          \
      long m, long n, long k, long a_batch, long a_rs, long a_cs, long b_batch, long b_rs,      \
      long b_cs, long c_batch, int has_bias, int act, float alpha) {                            \
    __local float a_tile[PX_TILE][PX_TILE + 1];                                                 \
    __local float b_tile[PX_TILE][PX_TILE + 1];                                                 \
    const int lx = (int)get_local_id(0), ly = (int)get_local_id(1);                             \
    const long col = (long)get_group_id(0) * PX_TILE + lx;                                      \
    const long row = (long)get_group_id(1) * PX_TILE + ly;                                      \
    const long batch = (long)get_global_id(2);                                                  \
    const long a_base = batch * a_batch, b_base = batch * b_batch;                              \
    float acc = 0.0f;                                                                           \
    for (long t = 0; t < k; t += PX_TILE) {                                                     \
      const long ap = t + lx, bp = t + ly;                                                      \
      a_tile[ly][lx] =                                                                          \
          (row < m && ap < k) ? PX_LOAD_##SUFFIX(a, a_base + row * a_rs + ap * a_cs) : 0.0f;    \
      b_tile[ly][lx] =                                                                          \
          (bp < k && col < n) ? PX_LOAD_##SUFFIX(b, b_base + bp * b_rs + col * b_cs) : 0.0f;    \
      barrier(CLK_LOCAL_MEM_FENCE);                                                             \
      for (int q = 0; q < PX_TILE; ++q) acc += a_tile[ly][q] * b_tile[q][lx];                   \
      barrier(CLK_LOCAL_MEM_FENCE);                                                             \
    }                                                                                           \
    if (row >= m || col >= n) return;                                                           \
    if (has_bias) acc += PX_LOAD_##SUFFIX(bias, col);                                           \
    acc = px_mm_activate(acc, act, alpha);                                                      \
    PX_STORE_##SUFFIX(c, batch * c_batch + row * n + col, acc);                                 \
  }

PX_DEFINE_GEMM(f32, float)
PX_DEFINE_GEMM(f16, half)
PX_DEFINE_GEMM(bf16, ushort)

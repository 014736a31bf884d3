/* Elementwise kernels of the XPU plugin: unary math and activations, binary
 * arithmetic with NumPy broadcasting, comparisons, logical ops, Select and
 * Cast. One kernel per element type; the operation is a uniform argument
 * (codes in abi.h). Every kernel handles element get_global_id(0) and
 * returns past the element count. */
#include "common.h"

/* ---- unary, floating types (computed in float) -------------------------- */
float px_unary_float(int op, float x, float alpha) {
  switch (op) {
    case PX_UN_NEG: return -x;
    case PX_UN_ABS: return fabs(x);
    case PX_UN_SIGN: return isnan(x) ? x : (float)((x > 0.0f) - (x < 0.0f));
    case PX_UN_EXP: return exp(x);
    case PX_UN_LOG: return log(x);
    case PX_UN_LOG1P: return log1p(x);
    case PX_UN_SQRT: return sqrt(x);
    case PX_UN_RSQRT: return 1.0f / sqrt(x);
    case PX_UN_SQUARE: return x * x;
    case PX_UN_RECIPROCAL: return 1.0f / x;
    case PX_UN_TANH: return tanh(x);
    case PX_UN_SIGMOID: return 1.0f / (1.0f + exp(-x));
    case PX_UN_ERF: return erf(x);
    case PX_UN_FLOOR: return floor(x);
    case PX_UN_CEIL: return ceil(x);
    case PX_UN_ROUND: return rint(x); /* ties to even, as TensorFlow */
    /* Written so that NaN passes through (comparisons with NaN are false). */
    case PX_UN_RELU: return x < 0.0f ? 0.0f : x;
    case PX_UN_RELU6: return x < 0.0f ? 0.0f : (x > 6.0f ? 6.0f : x);
    case PX_UN_ELU: return x < 0.0f ? expm1(x) : x;
    case PX_UN_SELU:
      return x < 0.0f ? 1.0507009873554804934f * 1.6732632423543772848f * expm1(x)
                      : 1.0507009873554804934f * x;
    case PX_UN_LEAKY_RELU: return x < 0.0f ? alpha * x : x;
    case PX_UN_SOFTPLUS: return fmax(x, 0.0f) + log1p(exp(-fabs(x)));
    case PX_UN_GELU_TANH:
      return 0.5f * x * (1.0f + tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    case PX_UN_GELU_ERF: return 0.5f * x * (1.0f + erf(x * 0.7071067811865476f));
    default: return x;
  }
}

#define PX_UNARY_FLOAT(S)                                                                 \
  __kernel void ew_unary_##S(__global const PX_T_##S* x, __global PX_T_##S* y, long n,   \
                             int op, float alpha) {                                       \
    long i = get_global_id(0);                                                            \
    if (i >= n) return;                                                                   \
    PX_ST_##S(y, i, px_unary_float(op, PX_LD_##S(x, i), alpha));                          \
  }
PX_UNARY_FLOAT(f32)
PX_UNARY_FLOAT(f16)
PX_UNARY_FLOAT(bf16)

/* ---- unary, integers (two's complement wrap-around, as the cpu plugin) -- */
#define PX_UNARY_INT(S, T, U)                                                           \
  __kernel void ew_unary_##S(__global const T* x, __global T* y, long n, int op,       \
                             float alpha) {                                             \
    long i = get_global_id(0);                                                          \
    if (i >= n) return;                                                                 \
    T v = x[i];                                                                         \
    T r = v;                                                                            \
    switch (op) {                                                                       \
      case PX_UN_NEG: r = (T)((U)0 - (U)v); break;                                      \
      case PX_UN_ABS: r = v < 0 ? (T)((U)0 - (U)v) : v; break;                          \
      case PX_UN_SIGN: r = (T)((v > 0) - (v < 0)); break;                               \
      case PX_UN_SQUARE: r = (T)((U)v * (U)v); break;                                   \
      case PX_UN_RELU: r = v < 0 ? (T)0 : v; break;                                     \
      case PX_UN_RELU6: r = v < 0 ? (T)0 : (v > 6 ? (T)6 : v); break;                   \
      default: break; /* ROUND: integers are already round */                           \
    }                                                                                   \
    y[i] = r;                                                                           \
  }
PX_UNARY_INT(i32, int, uint)
PX_UNARY_INT(i64, long, ulong)

__kernel void ew_logical_not(__global const uchar* x, __global uchar* y, long n) {
  long i = get_global_id(0);
  if (i >= n) return;
  y[i] = x[i] ? 0 : 1;
}

/* ---- binary arithmetic with broadcasting --------------------------------- */
float px_binary_float(int op, float a, float b) {
  switch (op) {
    case PX_BIN_ADD: return a + b;
    case PX_BIN_SUB: return a - b;
    case PX_BIN_MUL: return a * b;
    case PX_BIN_DIV: return a / b;
    /* NaN in either operand gives NaN. */
    case PX_BIN_MAX: return isnan(a) || isnan(b) ? a + b : (a > b ? a : b);
    case PX_BIN_MIN: return isnan(a) || isnan(b) ? a + b : (a < b ? a : b);
    case PX_BIN_POW: return pow(a, b);
    case PX_BIN_SQUARED_DIFFERENCE: return (a - b) * (a - b);
    case PX_BIN_FLOOR_DIV: return floor(a / b);
    case PX_BIN_FLOOR_MOD: {
      float r = fmod(a, b);
      if (r != 0.0f && ((r < 0.0f) != (b < 0.0f))) r += b;
      return r;
    }
    default: return 0.0f;
  }
}

#define PX_BINARY_FLOAT(S)                                                               \
  __kernel void ew_binary_##S(__global const PX_T_##S* a, __global const PX_T_##S* b,  \
                              __global PX_T_##S* y, px_xpu_broadcast_plan plan, int op) { \
    long i = get_global_id(0);                                                           \
    if (i >= plan.num_elements) return;                                                  \
    long off[2];                                                                         \
    PX_PLAN_OFFSETS(plan, i, 2, off);                                                    \
    PX_ST_##S(y, i, px_binary_float(op, PX_LD_##S(a, off[0]), PX_LD_##S(b, off[1])));    \
  }
PX_BINARY_FLOAT(f32)
PX_BINARY_FLOAT(f16)
PX_BINARY_FLOAT(bf16)

/* Integers: wrap-around add, subtract, multiply; division truncates, floor
 * division and modulo round towards negative infinity. A zero divisor gives
 * 0 (the host refuses zero divisors before launching). */
#define PX_BINARY_INT(S, T, U)                                                           \
  __kernel void ew_binary_##S(__global const T* a, __global const T* b, __global T* y,  \
                              px_xpu_broadcast_plan plan, int op) {                      \
    long i = get_global_id(0);                                                           \
    if (i >= plan.num_elements) return;                                                  \
    long off[2];                                                                         \
    PX_PLAN_OFFSETS(plan, i, 2, off);                                                    \
    T x = a[off[0]], z = b[off[1]], r = 0;                                               \
    switch (op) {                                                                        \
      case PX_BIN_ADD: r = (T)((U)x + (U)z); break;                                      \
      case PX_BIN_SUB: r = (T)((U)x - (U)z); break;                                      \
      case PX_BIN_MUL: r = (T)((U)x * (U)z); break;                                      \
      case PX_BIN_MAX: r = x > z ? x : z; break;                                         \
      case PX_BIN_MIN: r = x < z ? x : z; break;                                         \
      case PX_BIN_SQUARED_DIFFERENCE: {                                                  \
        U d = (U)x - (U)z;                                                               \
        r = (T)(d * d);                                                                  \
        break;                                                                           \
      }                                                                                  \
      case PX_BIN_DIV:                                                                   \
      case PX_BIN_FLOOR_DIV:                                                             \
      case PX_BIN_FLOOR_MOD: {                                                           \
        if (z == 0) break;                                                               \
        /* x / -1 wraps (the minimum value stays itself). */                             \
        T q = z == -1 ? (T)((U)0 - (U)x) : x / z;                                        \
        T m = (T)((U)x - (U)q * (U)z); /* not x % z: see common.h */                      \
        if (op == PX_BIN_DIV) {                                                          \
          r = q;                                                                         \
        } else if (op == PX_BIN_FLOOR_DIV) {                                             \
          r = (m != 0 && ((x < 0) != (z < 0))) ? q - 1 : q;                              \
        } else {                                                                         \
          r = (m != 0 && ((m < 0) != (z < 0))) ? m + z : m;                              \
        }                                                                                \
        break;                                                                           \
      }                                                                                  \
      default: break;                                                                    \
    }                                                                                    \
    y[i] = r;                                                                            \
  }
PX_BINARY_INT(i32, int, uint)
PX_BINARY_INT(i64, long, ulong)

/* ---- comparisons (bool output) and logical ops ----------------------------- */
#define PX_COMPARE(S)                                                                    \
  __kernel void ew_compare_##S(__global const PX_T_##S* a, __global const PX_T_##S* b, \
                               __global uchar* y, px_xpu_broadcast_plan plan, int op) {  \
    long i = get_global_id(0);                                                           \
    if (i >= plan.num_elements) return;                                                  \
    long off[2];                                                                         \
    PX_PLAN_OFFSETS(plan, i, 2, off);                                                    \
    PX_C_##S x = PX_LD_##S(a, off[0]);                                                   \
    PX_C_##S z = PX_LD_##S(b, off[1]);                                                   \
    int r = 0;                                                                           \
    switch (op) {                                                                        \
      case PX_CMP_LESS: r = x < z; break;                                                \
      case PX_CMP_LESS_EQUAL: r = x <= z; break;                                         \
      case PX_CMP_GREATER: r = x > z; break;                                             \
      case PX_CMP_GREATER_EQUAL: r = x >= z; break;                                      \
      case PX_CMP_EQUAL: r = x == z; break;                                              \
      case PX_CMP_NOT_EQUAL: r = x != z; break;                                          \
      default: break;                                                                    \
    }                                                                                    \
    y[i] = r ? 1 : 0;                                                                    \
  }
PX_COMPARE(f32)
PX_COMPARE(f16)
PX_COMPARE(bf16)
PX_COMPARE(i32)
PX_COMPARE(i64)
PX_COMPARE(b8)

__kernel void ew_logical(__global const uchar* a, __global const uchar* b, __global uchar* y,
                         px_xpu_broadcast_plan plan, int op) {
  long i = get_global_id(0);
  if (i >= plan.num_elements) return;
  long off[2];
  PX_PLAN_OFFSETS(plan, i, 2, off);
  int x = a[off[0]] != 0, z = b[off[1]] != 0;
  y[i] = (op == PX_LOGICAL_AND ? (x && z) : (x || z)) ? 1 : 0;
}

/* ---- Select / SelectV2, by element size (bytes) ------------------------- */
#define PX_SELECT(BYTES, T)                                                              \
  __kernel void ew_select_##BYTES(__global const uchar* c, __global const T* t,         \
                                  __global const T* e, __global T* y,                    \
                                  px_xpu_broadcast_plan plan) {                          \
    long i = get_global_id(0);                                                           \
    if (i >= plan.num_elements) return;                                                  \
    long off[3];                                                                         \
    PX_PLAN_OFFSETS(plan, i, 3, off);                                                    \
    y[i] = c[off[0]] ? t[off[1]] : e[off[2]];                                            \
  }
PX_SELECT(1, uchar)
PX_SELECT(2, ushort)
PX_SELECT(4, uint)
PX_SELECT(8, ulong)

/* ---- Cast: cast_<from>_<to> ------------------------------------------------ */
/* Conversion of a computed value to the destination's compute type: floats
 * and integers convert as in C (float to integer truncates), anything to
 * bool is (value != 0). */
#define PX_CVT_f32(v) ((float)(v))
#define PX_CVT_f16(v) ((float)(v))
#define PX_CVT_bf16(v) ((float)(v))
#define PX_CVT_i32(v) ((int)(v))
#define PX_CVT_i64(v) ((long)(v))
#define PX_CVT_b8(v) ((uchar)((v) != 0))

#define PX_CAST(F, G)                                                                    \
  __kernel void cast_##F##_##G(__global const PX_T_##F* x, __global PX_T_##G* y, long n) { \
    long i = get_global_id(0);                                                           \
    if (i >= n) return;                                                                  \
    PX_ST_##G(y, i, PX_CVT_##G(PX_LD_##F(x, i)));                                        \
  }
#define PX_CAST_FROM(F) \
  PX_CAST(F, f32) PX_CAST(F, f16) PX_CAST(F, bf16) PX_CAST(F, i32) PX_CAST(F, i64) PX_CAST(F, b8)
PX_CAST_FROM(f32)
PX_CAST_FROM(f16)
PX_CAST_FROM(bf16)
PX_CAST_FROM(i32)
PX_CAST_FROM(i64)
PX_CAST_FROM(b8)

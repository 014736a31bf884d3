// The XPU plugin's convolution family: Conv2D, DepthwiseConv2dNative and
// their fused forms (one direct-convolution kernel), MaxPool and AvgPool,
// and FusedBatchNorm inference. float, half and bfloat16; every kernel does
// one output element per work-item, accumulates in float, and returns early
// past `total` (the host rounds the global size up to whole work-groups).
//
// half is stored as `half` but only read and written with vload_half /
// vstore_half_rte; bfloat16 is stored as ushort (the upper half of a float).
//
// The geometry structs (px_xpu_conv_geom, px_xpu_pool_geom) are abi.h's,
// shared with the kernel class (plugins/xpu/src/kernels/conv.cc).

#include "abi.h"

// Activations of the fused epilogue; the codes are sdk::FusedActivation's.
#define PX_ACT_NONE 0
#define PX_ACT_RELU 1
#define PX_ACT_RELU6 2
#define PX_ACT_ELU 3
#define PX_ACT_LEAKY_RELU 4
#define PX_ACT_TANH 5
#define PX_ACT_SIGMOID 6

inline float px_conv_activate(float x, int act, float alpha) {
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

inline float px_conv_bf16_to_float(ushort v) { return as_float(((uint)v) << 16); }
inline ushort px_conv_float_to_bf16(float f) {
  uint u = as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (ushort)(u >> 16);
}

#define PX_LOAD_f32(p, i) ((p)[i])
#define PX_STORE_f32(p, i, v) ((p)[i] = (v))
#define PX_LOAD_f16(p, i) vload_half((size_t)(i), (p))
#define PX_STORE_f16(p, i, v) vstore_half_rte((v), (size_t)(i), (p))
#define PX_LOAD_bf16(p, i) px_conv_bf16_to_float((p)[i])
#define PX_STORE_bf16(p, i, v) ((p)[i] = px_conv_float_to_bf16(v))

// ---------------------------------------------------------------------------
// Convolution
// ---------------------------------------------------------------------------

// The geometry of one convolution: px_xpu_conv_geom (abi.h).

// Epilogue modes.
#define PX_EPI_NONE 0
#define PX_EPI_BIAS 1        // + p0[o]
#define PX_EPI_BATCH_NORM 2  // (y - p2[o]) * p0[o] / sqrt(p3[o] + eps) + p1[o]

// The filter is HWIO: [kh, kw, cpg, oc] (a depthwise filter [kh, kw, c, m]
// is that with cpg = 1, oc = c * m and c groups). Output channel o reads
// input channels g * cpg .. g * cpg + cpg - 1, g = o / ocpg.
#define PX_DEFINE_CONV(SUFFIX, T)                                                               \
  __kernel void px_conv2d_##SUFFIX(__global const T* x, __global const T* f, __global T* y,     \
                                   px_xpu_conv_geom g, long total, int epi, int act,            \
                                   float alpha, float eps, __global const T* p0,                \
                                   __global const T* p1, __global const T* p2,                  \
                                   __global const T* p3) {                                      \
    const long k = (long)get_global_id(0);                                                      \
    if (k >= total) return;                                                                     \
    long o, i, j, b, r = k;                                                                     \
    if (g.nchw) {                                                                               \
      { const long q_ = r / g.ow; j = r - q_ * g.ow; r = q_; }                                  \
      { const long q_ = r / g.oh; i = r - q_ * g.oh; r = q_; }                                  \
      b = r / g.oc; o = r - b * g.oc;                                                           \
    } else {                                                                                    \
      { const long q_ = r / g.oc; o = r - q_ * g.oc; r = q_; }                                  \
      { const long q_ = r / g.ow; j = r - q_ * g.ow; r = q_; }                                  \
      b = r / g.oh; i = r - b * g.oh;                                                           \
    }                                                                                           \
    const long c0 = (o / g.ocpg) * g.cpg;                                                       \
    /* Element (b, ih, iw, c0 + ci) is at base + ih * hs + iw * ws + ci * cs. */                \
    const long hs = g.nchw ? g.w : g.w * g.c;                                                   \
    const long ws = g.nchw ? 1 : g.c;                                                           \
    const long cs = g.nchw ? g.h * g.w : 1;                                                     \
    const long base = b * g.c * g.h * g.w + c0 * cs;                                            \
    const long ih0 = i * g.sh - g.top, iw0 = j * g.sw - g.left;                                 \
    float acc = 0.0f;                                                                           \
    for (long ky = 0; ky < g.kh; ++ky) {                                                        \
      const long ih = ih0 + ky * g.dh;                                                          \
      if (ih < 0 || ih >= g.h) continue;                                                        \
      for (long kx = 0; kx < g.kw; ++kx) {                                                      \
        const long iw = iw0 + kx * g.dw;                                                        \
        if (iw < 0 || iw >= g.w) continue;                                                      \
        const long xi = base + ih * hs + iw * ws;                                               \
        const long fi = (ky * g.kw + kx) * g.cpg * g.oc + o;                                    \
        for (long ci = 0; ci < g.cpg; ++ci) {                                                   \
          acc += PX_LOAD_##SUFFIX(x, xi + ci * cs) * PX_LOAD_##SUFFIX(f, fi + ci * g.oc);       \
        }                                                                                       \
      }                                                                                         \
    }                                                                                           \
    if (epi == PX_EPI_BIAS) {                                                                   \
      acc += PX_LOAD_##SUFFIX(p0, o);                                                           \
    } else if (epi == PX_EPI_BATCH_NORM) {                                                      \
      acc = (acc - PX_LOAD_##SUFFIX(p2, o)) * PX_LOAD_##SUFFIX(p0, o) /                         \
                sqrt(PX_LOAD_##SUFFIX(p3, o) + eps) +                                           \
            PX_LOAD_##SUFFIX(p1, o);                                                            \
    }                                                                                           \
    PX_STORE_##SUFFIX(y, k, px_conv_activate(acc, act, alpha));                                 \
  }

PX_DEFINE_CONV(f32, float)
PX_DEFINE_CONV(f16, half)
PX_DEFINE_CONV(bf16, ushort)

// ---------------------------------------------------------------------------
// Pooling
// ---------------------------------------------------------------------------

// The geometry of one pooling: px_xpu_pool_geom (abi.h).

// MaxPool: the largest value of the window's elements inside the input
// (-inf for a window wholly in the padding; NaN never wins, as on the cpu
// plugin). AvgPool: their mean (the padding is not counted).
#define PX_DEFINE_POOL(SUFFIX, T)                                                               \
  __kernel void px_pool_##SUFFIX(__global const T* x, __global T* y, px_xpu_pool_geom g,        \
                                 long total, int is_max) {                                      \
    const long k = (long)get_global_id(0);                                                      \
    if (k >= total) return;                                                                     \
    long ch, i, j, b, r = k;                                                                    \
    if (g.nchw) {                                                                               \
      { const long q_ = r / g.ow; j = r - q_ * g.ow; r = q_; }                                  \
      { const long q_ = r / g.oh; i = r - q_ * g.oh; r = q_; }                                  \
      b = r / g.c; ch = r - b * g.c;                                                            \
    } else {                                                                                    \
      { const long q_ = r / g.c; ch = r - q_ * g.c; r = q_; }                                   \
      { const long q_ = r / g.ow; j = r - q_ * g.ow; r = q_; }                                  \
      b = r / g.oh; i = r - b * g.oh;                                                           \
    }                                                                                           \
    const long hs = g.nchw ? g.w : g.w * g.c;                                                   \
    const long ws = g.nchw ? 1 : g.c;                                                           \
    const long base = g.nchw ? (b * g.c + ch) * g.h * g.w : b * g.h * g.w * g.c + ch;           \
    const long h0 = i * g.sh - g.top, w0 = j * g.sw - g.left;                                   \
    const long hb = h0 < 0 ? 0 : h0, he = h0 + g.kh < g.h ? h0 + g.kh : g.h;                    \
    const long wb = w0 < 0 ? 0 : w0, we = w0 + g.kw < g.w ? w0 + g.kw : g.w;                    \
    float acc = is_max ? -INFINITY : 0.0f;                                                      \
    for (long ih = hb; ih < he; ++ih) {                                                         \
      for (long iw = wb; iw < we; ++iw) {                                                       \
        const float v = PX_LOAD_##SUFFIX(x, base + ih * hs + iw * ws);                          \
        if (is_max) {                                                                           \
          acc = v > acc ? v : acc;                                                              \
        } else {                                                                                \
          acc += v;                                                                             \
        }                                                                                       \
      }                                                                                         \
    }                                                                                           \
    if (!is_max) {                                                                              \
      const long count = (he > hb ? he - hb : 0) * (we > wb ? we - wb : 0);                     \
      acc = acc * (1.0f / (float)count);                                                        \
    }                                                                                           \
    PX_STORE_##SUFFIX(y, k, acc);                                                               \
  }

PX_DEFINE_POOL(f32, float)
PX_DEFINE_POOL(f16, half)
PX_DEFINE_POOL(bf16, ushort)

// ---------------------------------------------------------------------------
// FusedBatchNorm (inference)
// ---------------------------------------------------------------------------

// y = (x - mean[ch]) * scale[ch] / sqrt(variance[ch] + epsilon) + offset[ch],
// the per-channel arguments in float; element k's channel is
// (k / inner) % channels (inner: 1 for NHWC, h * w for NCHW).
#define PX_DEFINE_BATCH_NORM(SUFFIX, T)                                                         \
  __kernel void px_batch_norm_##SUFFIX(                                                         \
      __global const T* x, __global const float* scale, __global const float* offset,           \
      __global const float* mean, __global const float* variance, __global T* y, long total,    \
      long channels, long inner, float epsilon) {                                               \
    const long k = (long)get_global_id(0);                                                      \
    if (k >= total) return;                                                                     \
    const long ch = (k / inner) % channels;                                                     \
    const float v = PX_LOAD_##SUFFIX(x, k);                                                     \
    const float out = (v - mean[ch]) * (scale[ch] / sqrt(variance[ch] + epsilon)) + offset[ch]; \
    PX_STORE_##SUFFIX(y, k, out);                                                               \
  }

PX_DEFINE_BATCH_NORM(f32, float)
PX_DEFINE_BATCH_NORM(f16, half)
PX_DEFINE_BATCH_NORM(bf16, ushort)

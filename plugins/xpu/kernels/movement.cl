// The XPU plugin's data-movement and creation kernels. Elements move as
// opaque words of 1, 2, 4 or 8 bytes (uchar, ushort, uint, ulong: the suffix
// u8/u16/u32/u64), so every dtype moves through the same few kernels:
//
// - px_strided_copy_*: out element at coordinate c (of dims) moves from
//   src[src_base + sum c[d] * src[d]] to dst[dst_base + sum c[d] * dst[d]]
//   (strides in elements, any sign, 0 repeats). Transpose, Slice,
//   StridedSlice, Tile, BroadcastTo, Concat, Split, Pack, Unpack and the
//   copy part of Pad are all this kernel.
// - px_fill_* (value in device memory), px_fill_bits_* (value as bits).
// - px_gather_*, px_gather_nd_* and the index checks.
// - px_one_hot_*, px_range_*, px_mirror_pad_*, px_space_batch_*.
//
// Every kernel does one element per work-item and returns early past its
// element count (the host rounds the global size up to whole work-groups).
// Indices are 64-bit throughout.
//
// Divisions write the remainder as r - q * d: llvm-spirv 14 cannot translate
// the `freeze` that LLVM's div/rem pairing inserts for a `%` next to a `/`.

#pragma OPENCL FP_CONTRACT OFF

// The plan structs (px_xpu_copy_plan, px_xpu_gather_nd_plan,
// px_xpu_mirror_plan, px_xpu_space_batch_plan) and PX_XPU_MAX_DIMS, shared
// with the kernel classes.
#include "abi.h"

// Splits r by d: returns r / d and stores the remainder.
#define PX_DIVMOD(r, d, rem)                                                                    \
  do {                                                                                          \
    const long q_ = (r) / (d);                                                                  \
    (rem) = (r) - q_ * (d);                                                                     \
    (r) = q_;                                                                                   \
  } while (0)

// ---------------------------------------------------------------------------
// Strided copy
// ---------------------------------------------------------------------------

#define PX_DEFINE_STRIDED_COPY(SUFFIX, W)                                                       \
  __kernel void px_strided_copy_##SUFFIX(__global const W* src, __global W* dst, long n,        \
                                         int rank, px_xpu_copy_plan p, long src_base,           \
                                         long dst_base) {                                       \
    const long k = (long)get_global_id(0);                                                      \
    if (k >= n) return;                                                                         \
    long r = k, s = src_base, t = dst_base;                                                     \
    for (int d = rank - 1; d >= 0; --d) {                                                       \
      long c;                                                                                   \
      PX_DIVMOD(r, p.dims[d], c);                                                               \
      s += c * p.src[d];                                                                        \
      t += c * p.dst[d];                                                                        \
    }                                                                                           \
    dst[t] = src[s];                                                                            \
  }

PX_DEFINE_STRIDED_COPY(u8, uchar)
PX_DEFINE_STRIDED_COPY(u16, ushort)
PX_DEFINE_STRIDED_COPY(u32, uint)
PX_DEFINE_STRIDED_COPY(u64, ulong)

// ---------------------------------------------------------------------------
// Fill
// ---------------------------------------------------------------------------

#define PX_DEFINE_FILL(SUFFIX, W)                                                               \
  __kernel void px_fill_##SUFFIX(__global W* dst, long n, __global const W* value) {            \
    const long k = (long)get_global_id(0);                                                      \
    if (k >= n) return;                                                                         \
    dst[k] = value[0];                                                                          \
  }                                                                                             \
  __kernel void px_fill_bits_##SUFFIX(__global W* dst, long n, W bits) {                        \
    const long k = (long)get_global_id(0);                                                      \
    if (k >= n) return;                                                                         \
    dst[k] = bits;                                                                              \
  }

PX_DEFINE_FILL(u8, uchar)
PX_DEFINE_FILL(u16, ushort)
PX_DEFINE_FILL(u32, uint)
PX_DEFINE_FILL(u64, ulong)

// ---------------------------------------------------------------------------
// Index checks (Gather, GatherNd): the smallest position of an index out of
// range, by atomic_min into *bad (which the host sets to INT_MAX first).
// Positions past INT_MAX - 1 are reported as INT_MAX - 1 (the host then
// searches for the bad index itself).
// ---------------------------------------------------------------------------

#define PX_DEFINE_INDEX_CHECK(ISUFFIX, I)                                                       \
  __kernel void px_index_check_##ISUFFIX(__global const I* idx, long count, long limit,         \
                                         __global int* bad) {                                   \
    const long k = (long)get_global_id(0);                                                      \
    if (k >= count) return;                                                                     \
    const long v = (long)idx[k];                                                                \
    if (v < 0 || v >= limit) atomic_min(bad, (int)(k < 0x7ffffffe ? k : 0x7ffffffe));           \
  }

PX_DEFINE_INDEX_CHECK(i32, int)
PX_DEFINE_INDEX_CHECK(i64, long)

// count tuples of depth indices each.
#define PX_DEFINE_ND_CHECK(ISUFFIX, I)                                                          \
  __kernel void px_index_check_nd_##ISUFFIX(__global const I* idx, long count, int depth,       \
                                            px_xpu_gather_nd_plan p, __global int* bad) {       \
    const long k = (long)get_global_id(0);                                                      \
    if (k >= count) return;                                                                     \
    for (int d = 0; d < depth; ++d) {                                                           \
      const long v = (long)idx[k * depth + d];                                                  \
      if (v < 0 || v >= p.dims[d]) atomic_min(bad, (int)(k < 0x7ffffffe ? k : 0x7ffffffe));     \
    }                                                                                           \
  }

PX_DEFINE_ND_CHECK(i32, int)
PX_DEFINE_ND_CHECK(i64, long)

// ---------------------------------------------------------------------------
// Gather (GatherV2 with batch_dims): params [batch, outer, limit, inner],
// indices [batch, n]; out [batch, outer, n, inner]. An index out of range
// (refused by the host's check before this runs) writes zeros, never reads
// out of bounds.
// ---------------------------------------------------------------------------

#define PX_DEFINE_GATHER(SUFFIX, W, ISUFFIX, I)                                                 \
  __kernel void px_gather_##SUFFIX##_##ISUFFIX(__global const W* src, __global const I* idx,    \
                                               __global W* dst, long outer, long limit,         \
                                               long inner, long n, long total) {                \
    const long k = (long)get_global_id(0);                                                      \
    if (k >= total) return;                                                                     \
    long r = k, e, j, o;                                                                        \
    PX_DIVMOD(r, inner, e);                                                                     \
    PX_DIVMOD(r, n, j);                                                                         \
    PX_DIVMOD(r, outer, o);                                                                     \
    const long b = r;                                                                           \
    const long v = (long)idx[b * n + j];                                                        \
    if (v < 0 || v >= limit) {                                                                  \
      dst[k] = (W)0;                                                                            \
      return;                                                                                   \
    }                                                                                           \
    dst[k] = src[((b * outer + o) * limit + v) * inner + e];                                    \
  }

#define PX_DEFINE_GATHER_ND(SUFFIX, W, ISUFFIX, I)                                              \
  __kernel void px_gather_nd_##SUFFIX##_##ISUFFIX(__global const W* src,                        \
                                                  __global const I* idx, __global W* dst,       \
                                                  int depth, px_xpu_gather_nd_plan p,           \
                                                  long slice, long total) {                     \
    const long k = (long)get_global_id(0);                                                      \
    if (k >= total) return;                                                                     \
    const long j = k / slice, e = k - j * slice;                                                \
    long s = e;                                                                                 \
    for (int d = 0; d < depth; ++d) {                                                           \
      const long v = (long)idx[j * depth + d];                                                  \
      if (v < 0 || v >= p.dims[d]) {                                                            \
        dst[k] = (W)0;                                                                          \
        return;                                                                                 \
      }                                                                                         \
      s += v * p.strides[d];                                                                    \
    }                                                                                           \
    dst[k] = src[s];                                                                            \
  }

#define PX_DEFINE_GATHERS(SUFFIX, W)                                                            \
  PX_DEFINE_GATHER(SUFFIX, W, i32, int)                                                         \
  PX_DEFINE_GATHER(SUFFIX, W, i64, long)                                                        \
  PX_DEFINE_GATHER_ND(SUFFIX, W, i32, int)                                                      \
  PX_DEFINE_GATHER_ND(SUFFIX, W, i64, long)

PX_DEFINE_GATHERS(u8, uchar)
PX_DEFINE_GATHERS(u16, ushort)
PX_DEFINE_GATHERS(u32, uint)
PX_DEFINE_GATHERS(u64, ulong)

// ---------------------------------------------------------------------------
// OneHot: out [prefix, depth, suffix]; element (p, d, s) is on_value where
// indices[p * suffix + s] == d, else off_value. Index types: uint8, int8,
// int32, int64.
// ---------------------------------------------------------------------------

#define PX_DEFINE_ONE_HOT(SUFFIX, W, ISUFFIX, I)                                                \
  __kernel void px_one_hot_##SUFFIX##_##ISUFFIX(__global const I* idx,                          \
                                                __global const W* on_value,                     \
                                                __global const W* off_value, __global W* dst,   \
                                                long depth, long suffix, long n) {              \
    const long k = (long)get_global_id(0);                                                      \
    if (k >= n) return;                                                                         \
    long r = k, s, d;                                                                           \
    PX_DIVMOD(r, suffix, s);                                                                    \
    PX_DIVMOD(r, depth, d);                                                                     \
    const long v = (long)idx[r * suffix + s];                                                   \
    dst[k] = v == d ? on_value[0] : off_value[0];                                               \
  }

#define PX_DEFINE_ONE_HOTS(SUFFIX, W)                                                           \
  PX_DEFINE_ONE_HOT(SUFFIX, W, u8, uchar)                                                       \
  PX_DEFINE_ONE_HOT(SUFFIX, W, i8, char)                                                        \
  PX_DEFINE_ONE_HOT(SUFFIX, W, i32, int)                                                        \
  PX_DEFINE_ONE_HOT(SUFFIX, W, i64, long)

PX_DEFINE_ONE_HOTS(u8, uchar)
PX_DEFINE_ONE_HOTS(u16, ushort)
PX_DEFINE_ONE_HOTS(u32, uint)
PX_DEFINE_ONE_HOTS(u64, ulong)

// ---------------------------------------------------------------------------
// Range: out[i] = start + i * delta, in float for the floating types (the
// cpu plugin's formula, no contraction into fma) and in 64-bit integers for
// the integer types (then truncated to the element type).
// ---------------------------------------------------------------------------

inline ushort px_mov_float_to_bf16(float f) {
  uint u = as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (ushort)(u >> 16);
}

__kernel void px_range_f32(__global float* dst, long n, float start, float delta) {
  const long k = (long)get_global_id(0);
  if (k >= n) return;
  dst[k] = start + (float)k * delta;
}

__kernel void px_range_f16(__global half* dst, long n, float start, float delta) {
  const long k = (long)get_global_id(0);
  if (k >= n) return;
  vstore_half_rte(start + (float)k * delta, (size_t)k, dst);
}

__kernel void px_range_bf16(__global ushort* dst, long n, float start, float delta) {
  const long k = (long)get_global_id(0);
  if (k >= n) return;
  dst[k] = px_mov_float_to_bf16(start + (float)k * delta);
}

#define PX_DEFINE_INT_RANGE(SUFFIX, T)                                                          \
  __kernel void px_range_##SUFFIX(__global T* dst, long n, long start, long delta) {            \
    const long k = (long)get_global_id(0);                                                      \
    if (k >= n) return;                                                                         \
    dst[k] = (T)(start + k * delta);                                                            \
  }

PX_DEFINE_INT_RANGE(i8, char)
PX_DEFINE_INT_RANGE(i16, short)
PX_DEFINE_INT_RANGE(i32, int)
PX_DEFINE_INT_RANGE(i64, long)
PX_DEFINE_INT_RANGE(u16, ushort)
PX_DEFINE_INT_RANGE(u32, uint)

// ---------------------------------------------------------------------------
// MirrorPad: out coordinate c[d] maps to the input coordinate
// c[d] - before[d], reflected at the edges (REFLECT excludes the edge
// element, SYMMETRIC repeats it).
// ---------------------------------------------------------------------------

#define PX_DEFINE_MIRROR_PAD(SUFFIX, W)                                                         \
  __kernel void px_mirror_pad_##SUFFIX(__global const W* src, __global W* dst, long n,          \
                                       int rank, px_xpu_mirror_plan p, int symmetric) {         \
    const long k = (long)get_global_id(0);                                                      \
    if (k >= n) return;                                                                         \
    long r = k, s = 0;                                                                          \
    for (int d = rank - 1; d >= 0; --d) {                                                       \
      long c;                                                                                   \
      PX_DIVMOD(r, p.out_dims[d], c);                                                           \
      long i = c - p.before[d];                                                                 \
      const long m = p.in_dims[d];                                                              \
      if (i < 0) i = symmetric ? -i - 1 : -i;                                                   \
      if (i >= m) i = symmetric ? 2 * m - 1 - i : 2 * m - 2 - i;                                \
      s += i * p.in_strides[d];                                                                 \
    }                                                                                           \
    dst[k] = src[s];                                                                            \
  }

PX_DEFINE_MIRROR_PAD(u8, uchar)
PX_DEFINE_MIRROR_PAD(u16, ushort)
PX_DEFINE_MIRROR_PAD(u32, uint)
PX_DEFINE_MIRROR_PAD(u64, ulong)

// ---------------------------------------------------------------------------
// SpaceToBatchND / BatchToSpaceND. The batch side is
// [block_0 .. block_{m-1}, batch, grid_0 .. grid_{m-1}, rest] (row-major),
// the space side [batch, space_0 .. space_{m-1}, rest], with
// space position = grid * block + block offset - pad. to_batch: out is the
// batch side (a position in the padding writes zero), space the input's
// spatial dimensions; else out is the space side, space its (cropped)
// spatial dimensions and pad the crops before.
// ---------------------------------------------------------------------------

#define PX_DEFINE_SPACE_BATCH(SUFFIX, W)                                                        \
  __kernel void px_space_batch_##SUFFIX(__global const W* src, __global W* dst, long n,         \
                                        int m, px_xpu_space_batch_plan p, long batch,           \
                                        long rest, int to_batch) {                              \
    const long k = (long)get_global_id(0);                                                      \
    if (k >= n) return;                                                                         \
    long r = k, e;                                                                              \
    PX_DIVMOD(r, rest, e);                                                                      \
    long g[PX_XPU_MAX_DIMS], o[PX_XPU_MAX_DIMS];                                                \
    if (to_batch) {                                                                             \
      /* out is the batch side: [block..., batch, grid..., rest]. */                            \
      _Pragma("unroll") for (int d = PX_XPU_MAX_DIMS - 1; d >= 0; --d) if (d < m) PX_DIVMOD(r, p.grid[d], g[d]); \
      long b;                                                                                   \
      PX_DIVMOD(r, batch, b);                                                                   \
      _Pragma("unroll") for (int d = PX_XPU_MAX_DIMS - 1; d >= 0; --d) if (d < m) PX_DIVMOD(r, p.block[d], o[d]); \
      long si = b;                                                                              \
      _Pragma("unroll") for (int d = 0; d < PX_XPU_MAX_DIMS; ++d) {                             \
        if (d >= m) continue;                                                                   \
        const long pos = g[d] * p.block[d] + o[d] - p.pad[d];                                   \
        if (pos < 0 || pos >= p.space[d]) {                                                     \
          dst[k] = (W)0;                                                                        \
          return;                                                                               \
        }                                                                                       \
        si = si * p.space[d] + pos;                                                             \
      }                                                                                         \
      dst[k] = src[si * rest + e];                                                              \
    } else {                                                                                    \
      /* out is the space side: [batch, space..., rest], cropped by pad. */                     \
      _Pragma("unroll") for (int d = PX_XPU_MAX_DIMS - 1; d >= 0; --d) {                        \
        if (d >= m) continue;                                                                   \
        long sp;                                                                                \
        PX_DIVMOD(r, p.space[d], sp);                                                           \
        const long pos = sp + p.pad[d];                                                         \
        g[d] = pos / p.block[d];                                                                \
        o[d] = pos - g[d] * p.block[d];                                                         \
      }                                                                                         \
      long bi = 0;                                                                              \
      _Pragma("unroll") for (int d = 0; d < PX_XPU_MAX_DIMS; ++d) if (d < m) bi = bi * p.block[d] + o[d]; \
      bi = bi * batch + r;                                                                      \
      _Pragma("unroll") for (int d = 0; d < PX_XPU_MAX_DIMS; ++d) if (d < m) bi = bi * p.grid[d] + g[d]; \
      dst[k] = src[bi * rest + e];                                                              \
    }                                                                                           \
  }

PX_DEFINE_SPACE_BATCH(u8, uchar)
PX_DEFINE_SPACE_BATCH(u16, ushort)
PX_DEFINE_SPACE_BATCH(u32, uint)
PX_DEFINE_SPACE_BATCH(u64, ulong)

// Device code shared by Plexus's own GEMM (gemm.cu) and its implicit-GEMM
// convolution (conv_direct.cu): the 64 x 64 block tile's main loop over
// 16-deep slices of k in shared memory, and the epilogue. Included by .cu
// files only.
//
// A block of 256 threads computes a 64 x 64 tile of C. Thread t owns the 4 x
// 4 outputs at rows ty + 16 i and columns tx + 16 j (tx = t % 16, ty = t /
// 16, i, j < 4), so that a warp reads distinct consecutive words of the B
// slice and at most a few distinct words of the A slice per step (no bank
// conflicts), and writes runs of 16 consecutive columns. Each slice: every
// thread loads 4 elements of A and 4 of B from global memory (zeros outside
// the matrices, so edge tiles need no other care), converted to the
// accumulation type, into shared memory; the next slice's loads are issued
// before the current slice is multiplied (register prefetch). Accumulation
// in float (double for double). Nothing here depends on the warp size.
#ifndef PLEXUS_PLUGINS_GPU_KERNELS_GEMM_DEVICE_H_
#define PLEXUS_PLUGINS_GPU_KERNELS_GEMM_DEVICE_H_

#include <cstdint>

#include "gpu_portability.h"
#include "kernels/gemm_launch.h"

namespace plexus::cuda::gemm {

constexpr int kTileM = 64;
constexpr int kTileN = 64;
constexpr int kTileK = 16;
constexpr int kThreads = 256;
// Shared rows padded by 4 words: the transposing stores of a slice then hit
// at most two threads per bank.
constexpr int kSmemPad = 4;
// Grid limits of the y and z dimensions; x takes up to 2^31 - 1.
constexpr int64_t kMaxGridYZ = 65535;
constexpr int64_t kMaxGridX = int64_t{1} << 30;

static_assert(kThreads == 256 && kTileM == 64 && kTileN == 64 && kTileK == 16,
              "the load mappings below assume these sizes");

template <typename Acc>
struct Tiles {
  Acc a[kTileK][kTileM + kSmemPad];  // a[l][i] = A(m0 + i, k0 + l)
  Acc b[kTileK][kTileN + kSmemPad];  // b[l][j] = B(k0 + l, n0 + j)
};

// Which 4 elements of a 16 x 64 slice a thread loads: (l + q * dl, x + q *
// dx) for q < 4, l along k and x along m (A) or n (B). Consecutive threads
// take consecutive k when the matrix is contiguous along k, else consecutive
// m (or n), so that global loads coalesce either way.
struct Mapping {
  int l, x, dl, dx;
};

__device__ __forceinline__ Mapping MappingFor(bool contiguous_along_k, int t) {
  if (contiguous_along_k) return Mapping{t % kTileK, t / kTileK, 0, kThreads / kTileK};
  return Mapping{t / kTileM, t % kTileM, kThreads / kTileM, 0};
}

template <typename Acc, typename T>
__device__ __forceinline__ Acc LoadAs(const T* p) {
  return static_cast<Acc>(px_gpu::ToFloat(*p));
}

// acc[i][j] += sum over l < k of A(row i, l) * B(l, column j). load_a(k0, v)
// and load_b(k0, v) fill the thread's 4 elements (per `ma`, `mb`) of the
// slice at k0, with zeros outside the matrices. Every thread of the block
// must call it (it synchronizes the block).
template <typename Acc, typename LoadA, typename LoadB>
__device__ __forceinline__ void MainLoop(Tiles<Acc>& s, int64_t k, const Mapping& ma,
                                         const Mapping& mb, const LoadA& load_a,
                                         const LoadB& load_b, Acc (&acc)[4][4]) {
  const int tx = static_cast<int>(threadIdx.x) % 16, ty = static_cast<int>(threadIdx.x) / 16;
  Acc va[4], vb[4];
  load_a(int64_t{0}, va);
  load_b(int64_t{0}, vb);
  for (int64_t k0 = 0; k0 < k; k0 += kTileK) {
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      s.a[ma.l + q * ma.dl][ma.x + q * ma.dx] = va[q];
      s.b[mb.l + q * mb.dl][mb.x + q * mb.dx] = vb[q];
    }
    __syncthreads();
    if (k0 + kTileK < k) {
      load_a(k0 + kTileK, va);
      load_b(k0 + kTileK, vb);
    }
#pragma unroll
    for (int l = 0; l < kTileK; ++l) {
      Acc ra[4], rb[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        ra[q] = s.a[l][ty + 16 * q];
        rb[q] = s.b[l][tx + 16 * q];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += ra[i] * rb[j];
      }
    }
    __syncthreads();
  }
}

__device__ __forceinline__ float Expm1(float x) { return expm1f(x); }
__device__ __forceinline__ double Expm1(double x) { return expm1(x); }

// NaN passes through the piecewise activations (comparisons are false), as
// in sdk/fused.h.
template <typename C>
__device__ __forceinline__ C Activate(Activation act, C v, C alpha) {
  switch (act) {
    case Activation::kNone: return v;
    case Activation::kRelu: return v < C(0) ? C(0) : v;
    case Activation::kRelu6: return v < C(0) ? C(0) : (v > C(6) ? C(6) : v);
    case Activation::kElu: return v < C(0) ? Expm1(v) : v;
    case Activation::kLeakyRelu: return v < C(0) ? alpha * v : v;
    case Activation::kTanh: return px_gpu::Tanh(v);
    case Activation::kSigmoid: return C(1) / (C(1) + px_gpu::Exp(-v));
  }
  return v;
}

// The epilogue (gemm_launch.h) of one value of channel ch.
template <typename T, typename Acc>
__device__ __forceinline__ Acc ApplyEpilogue(const Epilogue& e, Acc v, int64_t ch) {
  if (e.batch_norm) {
    const T* scale = static_cast<const T*>(e.args[0]);
    const T* offset = static_cast<const T*>(e.args[1]);
    const T* mean = static_cast<const T*>(e.args[2]);
    const T* variance = static_cast<const T*>(e.args[3]);
    const Acc factor =
        LoadAs<Acc>(scale + ch) / px_gpu::Sqrt(LoadAs<Acc>(variance + ch) + static_cast<Acc>(e.epsilon));
    v = (v - LoadAs<Acc>(mean + ch)) * factor + LoadAs<Acc>(offset + ch);
  } else if (e.bias) {
    v += LoadAs<Acc>(static_cast<const T*>(e.args[0]) + ch);
  }
  return Activate<Acc>(e.act, v, static_cast<Acc>(e.alpha));
}

template <typename T, typename Acc>
__device__ __forceinline__ T StoreAs(Acc v) {
  if constexpr (sizeof(T) == 2) {
    return px_gpu::FromFloat<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

}  // namespace plexus::cuda::gemm

#endif  // PLEXUS_PLUGINS_GPU_KERNELS_GEMM_DEVICE_H_

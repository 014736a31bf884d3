// Device code of the reductions (Sum, Mean, Max, Min, Prod) and BiasAdd
// (Softmax and LogSoftmax are in softmax.cu). No CUB (compile time): the
// tree reductions are a warp shuffle (px_gpu::ShuffleDown) and, for whole
// blocks, one partial per warp in shared memory. half and bfloat16
// accumulate in float.
#include <cmath>
#include <cstdint>

#include "gpu_portability.h"
#include "kernels/block_reduce.h"
#include "kernels/launch_util.h"
#include "kernels/reduce_launch.h"

namespace plexus::cuda {
namespace {

using red::Layout;
using red::ReducePlan;
using red::Reducer;
using px_gpu::kWarpSize;

// The reductions keep a warp per row up to longer rows (four independent
// loads in flight per lane keep the memory system busy).
constexpr int64_t kWarpReduceRowMax = 2048;

template <Reducer R, typename T>
__device__ __forceinline__ T Finish(px_gpu::ComputeType<T> acc, int64_t count) {
  using C = px_gpu::ComputeType<T>;
  if constexpr (R == Reducer::kMean) acc = acc / static_cast<C>(count);  // 0 / 0: NaN
  return px_gpu::FromCompute<T>(acc);
}

// Offset of row-major index i over dims (with the given strides).
__device__ __forceinline__ int64_t Decompose(int64_t i, int rank, const int64_t* dims,
                                             const int64_t* strides) {
  int64_t offset = 0;
  for (int d = rank - 1; d >= 0; --d) {
    const int64_t q = i / dims[d];
    offset += (i - q * dims[d]) * strides[d];
    i = q;
  }
  return offset;
}

// One warp (kWarp) or one block per output element. kGeneral: the layout is
// kGeneral; otherwise kRows (output o folds in[o * count, (o + 1) * count)).
template <Reducer R, typename T, bool kWarp, bool kGeneral>
__global__ void RowReduceKernel(const T* __restrict__ in, T* __restrict__ out,
                                const ReducePlan plan) {
  using C = px_gpu::ComputeType<T>;
  __shared__ C smem[kWarpSize + 1];
  const RowGroup<kWarp> g;
  const int lane = g.lane, width = g.width;
  for (int64_t o = g.first; o < plan.outputs; o += g.step) {
    C acc = Identity<R, C>();
    if constexpr (kGeneral) {
      const T* base = in + Decompose(o, plan.kept_rank, plan.kept_dims, plan.kept_strides);
      for (int64_t k = lane; k < plan.count; k += width) {
        acc = Fold<R>(acc, static_cast<C>(px_gpu::ToFloat(
                               base[Decompose(k, plan.red_rank, plan.red_dims, plan.red_strides)])));
      }
    } else {
      // Four independent partial folds, so four loads are in flight.
      const T* row = in + o * plan.count;
      C a1 = Identity<R, C>(), a2 = Identity<R, C>(), a3 = Identity<R, C>();
      int64_t k = lane;
      for (; k + 3 * width < plan.count; k += 4 * width) {
        const C v0 = static_cast<C>(px_gpu::ToFloat(row[k]));
        const C v1 = static_cast<C>(px_gpu::ToFloat(row[k + width]));
        const C v2 = static_cast<C>(px_gpu::ToFloat(row[k + 2 * width]));
        const C v3 = static_cast<C>(px_gpu::ToFloat(row[k + 3 * width]));
        acc = Fold<R>(acc, v0);
        a1 = Fold<R>(a1, v1);
        a2 = Fold<R>(a2, v2);
        a3 = Fold<R>(a3, v3);
      }
      for (; k < plan.count; k += width) acc = Fold<R>(acc, static_cast<C>(px_gpu::ToFloat(row[k])));
      acc = Fold<R>(Fold<R>(acc, a1), Fold<R>(a2, a3));
    }
    acc = GroupReduce<R, kWarp>(acc, smem);
    if (lane == 0) out[o] = Finish<R, T>(acc, plan.count);
  }
}

// [outer, r, inner] with inner > 1: blockDim.x (kWarpSize) consecutive
// columns per block, blockDim.y threads splitting r for each column, their
// partial results folded in shared memory.
constexpr int kColumnsPerBlock = kWarpSize;
constexpr int kMaxColumnSplit = 32;

template <Reducer R, typename T>
__global__ void ColumnReduceKernel(const T* __restrict__ in, T* __restrict__ out, int64_t outer,
                                   int64_t r, int64_t inner) {
  using C = px_gpu::ComputeType<T>;
  __shared__ C smem[kMaxColumnSplit][kColumnsPerBlock + 1];
  const int64_t columns = outer * inner;
  for (int64_t c0 = static_cast<int64_t>(blockIdx.x) * kColumnsPerBlock; c0 < columns;
       c0 += static_cast<int64_t>(gridDim.x) * kColumnsPerBlock) {
    const int64_t c = c0 + threadIdx.x;
    C acc = Identity<R, C>();
    if (c < columns) {
      const int64_t o = c / inner;
      const T* p = in + o * r * inner + (c - o * inner);
      const int64_t by = blockDim.y;
      C a1 = Identity<R, C>(), a2 = Identity<R, C>(), a3 = Identity<R, C>();
      int64_t k = threadIdx.y;
      for (; k + 3 * by < r; k += 4 * by) {
        const C v0 = static_cast<C>(px_gpu::ToFloat(p[k * inner]));
        const C v1 = static_cast<C>(px_gpu::ToFloat(p[(k + by) * inner]));
        const C v2 = static_cast<C>(px_gpu::ToFloat(p[(k + 2 * by) * inner]));
        const C v3 = static_cast<C>(px_gpu::ToFloat(p[(k + 3 * by) * inner]));
        acc = Fold<R>(acc, v0);
        a1 = Fold<R>(a1, v1);
        a2 = Fold<R>(a2, v2);
        a3 = Fold<R>(a3, v3);
      }
      for (; k < r; k += by) acc = Fold<R>(acc, static_cast<C>(px_gpu::ToFloat(p[k * inner])));
      acc = Fold<R>(Fold<R>(acc, a1), Fold<R>(a2, a3));
    }
    smem[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && c < columns) {
      for (unsigned y = 1; y < blockDim.y; ++y) acc = Fold<R>(acc, smem[y][threadIdx.x]);
      out[c] = Finish<R, T>(acc, r);
    }
    __syncthreads();
  }
}


// The same for long columns, in 16-byte vectors: each thread folds
// Pack16<T>::kSize adjacent columns (inner a multiple of it, so a vector
// never crosses from one outer index to the next), kVecSplit threads split
// r, and the block's kColumnsPerBlock vectors are folded in shared memory
// laid out [split][element][column] (no bank conflicts).
constexpr int kVecSplit = 8;

template <Reducer R, typename T>
__global__ void ColumnReduceVecKernel(const T* __restrict__ in, T* __restrict__ out,
                                      int64_t outer, int64_t r, int64_t inner) {
  using C = px_gpu::ComputeType<T>;
  using P = Pack16<T>;
  constexpr int kVec = P::kSize;
  __shared__ C smem[kVecSplit][kVec][kColumnsPerBlock + 1];
  const int64_t columns = outer * inner;
  const int64_t per_block = int64_t{kColumnsPerBlock} * kVec;
  for (int64_t c0 = static_cast<int64_t>(blockIdx.x) * per_block; c0 < columns;
       c0 += static_cast<int64_t>(gridDim.x) * per_block) {
    const int64_t c = c0 + static_cast<int64_t>(threadIdx.x) * kVec;
    C acc[kVec];
#pragma unroll
    for (int j = 0; j < kVec; ++j) acc[j] = Identity<R, C>();
    if (c < columns) {
      const int64_t o = c / inner;
      const T* p = in + o * r * inner + (c - o * inner);
      int64_t k = threadIdx.y;
      for (; k + kVecSplit < r; k += 2 * kVecSplit) {
        const P v0 = *reinterpret_cast<const P*>(p + k * inner);
        const P v1 = *reinterpret_cast<const P*>(p + (k + kVecSplit) * inner);
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          acc[j] = Fold<R>(Fold<R>(acc[j], static_cast<C>(px_gpu::ToFloat(v0.v[j]))),
                           static_cast<C>(px_gpu::ToFloat(v1.v[j])));
        }
      }
      for (; k < r; k += kVecSplit) {
        const P v0 = *reinterpret_cast<const P*>(p + k * inner);
#pragma unroll
        for (int j = 0; j < kVec; ++j) acc[j] = Fold<R>(acc[j], static_cast<C>(px_gpu::ToFloat(v0.v[j])));
      }
    }
#pragma unroll
    for (int j = 0; j < kVec; ++j) smem[threadIdx.y][j][threadIdx.x] = acc[j];
    __syncthreads();
    if (threadIdx.y == 0 && c < columns) {
      P res;
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        C a = acc[j];
        for (int y = 1; y < kVecSplit; ++y) a = Fold<R>(a, smem[y][j][threadIdx.x]);
        res.v[j] = Finish<R, T>(a, r);
      }
      *reinterpret_cast<P*>(out + c) = res;
    }
    __syncthreads();
  }
}

template <Reducer R, typename T, bool kGeneral>
void LaunchRows(const T* in, T* out, const ReducePlan& plan, px_gpu::Stream stream) {
  if (plan.count <= (kGeneral ? kWarpRowMax : kWarpReduceRowMax)) {
    constexpr int kWarps = kBlockSize / kWarpSize;
    PX_GPU_LAUNCH((RowReduceKernel<R, T, true, kGeneral>), RowGrid(plan.outputs, kWarps),
                  kBlockSize, 0, stream)(in, out, plan);
  } else {
    PX_GPU_LAUNCH((RowReduceKernel<R, T, false, kGeneral>), RowGrid(plan.outputs, 1), kRowBlock,
                  0, stream)(in, out, plan);
  }
}

template <Reducer R, typename T>
void LaunchReduceT(const void* in_raw, void* out_raw, const ReducePlan& plan,
                   px_gpu::Stream stream) {
  const T* in = static_cast<const T*>(in_raw);
  T* out = static_cast<T*>(out_raw);
  switch (plan.layout) {
    case Layout::kRows:
      LaunchRows<R, T, false>(in, out, plan, stream);
      return;
    case Layout::kGeneral:
      LaunchRows<R, T, true>(in, out, plan, stream);
      return;
    case Layout::kColumns: {
      const int64_t columns = plan.outer * plan.inner;
      // Many columns in whole vectors: 16-byte loads.
      constexpr int kVec = Pack16<T>::kSize;
      if (columns >= 8192 && plan.inner % kVec == 0 && Aligned16(in) && Aligned16(out)) {
        const dim3 block(kColumnsPerBlock, kVecSplit);
        PX_GPU_LAUNCH((ColumnReduceVecKernel<R, T>), RowGrid(columns, int64_t{kColumnsPerBlock} * kVec),
                      block, 0, stream)(in, out, plan.outer, plan.count, plan.inner);
        return;
      }
      // Few columns: more threads split each column's reduced length.
      const int split = columns < 8192 && plan.count >= 256 ? kMaxColumnSplit : 8;
      const dim3 block(kColumnsPerBlock, split);
      PX_GPU_LAUNCH((ColumnReduceKernel<R, T>), RowGrid(columns, kColumnsPerBlock), block, 0,
                    stream)(in, out, plan.outer, plan.count, plan.inner);
      return;
    }
  }
}

// ---------------------------------------------------------------------------
// BiasAdd
// ---------------------------------------------------------------------------

template <typename T, typename I>
__global__ void BiasAddKernel(const T* __restrict__ x, const T* __restrict__ bias,
                              T* __restrict__ y, I n, I channels, I inner) {
  using C = px_gpu::ComputeType<T>;
  const I stride = static_cast<I>(blockDim.x) * gridDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const I c = (inner == 1 ? i : i / inner) % channels;
    y[i] = px_gpu::FromCompute<T>(static_cast<C>(px_gpu::ToFloat(x[i])) +
                                  static_cast<C>(px_gpu::ToFloat(bias[c])));
  }
}

template <typename T>
void LaunchBiasAddT(const void* x, const void* bias, void* y, int64_t n, int64_t channels,
                    int64_t inner, px_gpu::Stream stream) {
  const T* xt = static_cast<const T*>(x);
  const T* bt = static_cast<const T*>(bias);
  T* yt = static_cast<T*>(y);
  // 32-bit index arithmetic (cheaper division) when everything fits.
  if (n < (int64_t{1} << 31)) {
    PX_GPU_LAUNCH((BiasAddKernel<T, int32_t>), GridFor(n), kBlockSize, 0, stream)(
        xt, bt, yt, static_cast<int32_t>(n), static_cast<int32_t>(channels),
        static_cast<int32_t>(inner));
  } else {
    PX_GPU_LAUNCH((BiasAddKernel<T, int64_t>), GridFor(n), kBlockSize, 0, stream)(
        xt, bt, yt, n, channels, inner);
  }
}

}  // namespace

namespace red {

void LaunchReduce(Reducer op, ew::Dtype dtype, const void* in, void* out, const ReducePlan& plan,
                  px_gpu::Stream stream) {
  VisitDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    switch (op) {
      case Reducer::kSum: LaunchReduceT<Reducer::kSum, T>(in, out, plan, stream); return;
      case Reducer::kMean: LaunchReduceT<Reducer::kMean, T>(in, out, plan, stream); return;
      case Reducer::kMax: LaunchReduceT<Reducer::kMax, T>(in, out, plan, stream); return;
      case Reducer::kMin: LaunchReduceT<Reducer::kMin, T>(in, out, plan, stream); return;
      case Reducer::kProd: LaunchReduceT<Reducer::kProd, T>(in, out, plan, stream); return;
    }
  });
}

void LaunchBiasAdd(ew::Dtype dtype, const void* x, const void* bias, void* y, int64_t n,
                   int64_t channels, int64_t inner, px_gpu::Stream stream) {
  VisitDtype(dtype, [&](auto tag) {
    LaunchBiasAddT<decltype(tag)>(x, bias, y, n, channels, inner, stream);
  });
}

}  // namespace red
}  // namespace plexus::cuda

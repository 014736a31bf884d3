// Warp and block folds for the device code of the reductions, Softmax and
// the softmax cross entropy (reduce.cu, xent.cu; included only by .cu
// files): a warp shuffle (px_gpu::ShuffleDown) and, for whole blocks, one
// partial per warp in shared memory. No CUB (compile time). Everything is in
// an unnamed namespace: each .cu file instantiates its own.
#ifndef PLEXUS_PLUGINS_GPU_KERNELS_BLOCK_REDUCE_H_
#define PLEXUS_PLUGINS_GPU_KERNELS_BLOCK_REDUCE_H_

#include <cmath>
#include <cstdint>

#include "gpu_portability.h"
#include "kernels/reduce_launch.h"

namespace plexus::cuda {
namespace {

using px_gpu::kWarpSize;
using red::Reducer;

// The row kernels (a warp or a block per row, in a grid-stride loop over
// rows): the threads of a block-per-row kernel, the longest row a warp
// takes (below that a whole block per row idles), and the most blocks.
constexpr int kRowBlock = 512;
constexpr int64_t kWarpRowMax = 512;
constexpr int64_t kMaxRowBlocks = 4096;

// Blocks for `rows` rows, rows_per_block to a block.
inline unsigned RowGrid(int64_t rows, int64_t rows_per_block) {
  int64_t blocks = (rows + rows_per_block - 1) / rows_per_block;
  if (blocks < 1) blocks = 1;
  if (blocks > kMaxRowBlocks) blocks = kMaxRowBlocks;
  return static_cast<unsigned>(blocks);
}

// The rows of a grid-stride loop where a warp (kWarp) or the whole block
// takes one row at a time: this thread's group (`group`, its warp in the
// block, 0 for a block), its first row, the stride between its rows, its
// place in the group (`lane`) and the group's width. Every thread of a group
// runs the same rows, so all reach the group's shuffles and barriers.
template <bool kWarp>
struct RowGroup {
  int group, lane, width;
  int64_t first, step;
  __device__ __forceinline__ RowGroup() {
    const int64_t per_block = kWarp ? blockDim.x / kWarpSize : 1;
    group = kWarp ? static_cast<int>(threadIdx.x / kWarpSize) : 0;
    lane = kWarp ? static_cast<int>(threadIdx.x % kWarpSize) : static_cast<int>(threadIdx.x);
    width = kWarp ? kWarpSize : static_cast<int>(blockDim.x);
    first = static_cast<int64_t>(blockIdx.x) * per_block + group;
    step = static_cast<int64_t>(gridDim.x) * per_block;
  }
};

template <Reducer R, typename C>
__device__ __forceinline__ C Identity() {
  if constexpr (R == Reducer::kProd) {
    return C(1);
  } else if constexpr (R == Reducer::kMax) {
    return C(-INFINITY);
  } else if constexpr (R == Reducer::kMin) {
    return C(INFINITY);
  } else {
    return C(0);
  }
}

// Max and Min skip NaN like the cpu plugin (a comparison with NaN is false).
template <Reducer R, typename C>
__device__ __forceinline__ C Fold(C acc, C v) {
  if constexpr (R == Reducer::kSum || R == Reducer::kMean) {
    return acc + v;
  } else if constexpr (R == Reducer::kProd) {
    return acc * v;
  } else if constexpr (R == Reducer::kMax) {
    return v > acc ? v : acc;
  } else {
    return v < acc ? v : acc;
  }
}

// The fold of v over the warp, in lane 0.
template <Reducer R, typename C>
__device__ __forceinline__ C WarpReduce(C v) {
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    v = Fold<R>(v, px_gpu::ShuffleDown(v, offset));
  }
  return v;
}

// The fold of v over the block, returned to every thread. smem holds
// kWarpSize + 1 values; every thread of the block must call it.
template <Reducer R, typename C>
__device__ C BlockAllReduce(C v, C* smem) {
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const int warps = (blockDim.x + kWarpSize - 1) / kWarpSize;
  v = WarpReduce<R>(v);
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  if (warp == 0) {
    C w = lane < warps ? smem[lane] : Identity<R, C>();
    w = WarpReduce<R>(w);
    if (lane == 0) smem[kWarpSize] = w;
  }
  __syncthreads();
  const C result = smem[kWarpSize];
  __syncthreads();  // the caller may reuse smem right away
  return result;
}

// The fold over a warp (kWarp) or the whole block, in every thread that
// needs it: lane 0 of the warp, or every thread of the block.
template <Reducer R, bool kWarp, typename C>
__device__ __forceinline__ C GroupReduce(C v, C* smem) {
  if constexpr (kWarp) {
    return WarpReduce<R>(v);
  } else {
    return BlockAllReduce<R>(v, smem);
  }
}

template <bool kWarp, typename C>
__device__ __forceinline__ C GroupBroadcast(C v) {
  if constexpr (kWarp) {
    return px_gpu::Shuffle(v, 0);
  } else {
    return v;
  }
}

}  // namespace
}  // namespace plexus::cuda

#endif  // PLEXUS_PLUGINS_GPU_KERNELS_BLOCK_REDUCE_H_

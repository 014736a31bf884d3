// Device code of Softmax and LogSoftmax over the last axis: each of `rows`
// rows of `cols` contiguous elements, the row maximum subtracted before exp;
// half and bfloat16 compute in float. No CUB (compile time): the folds are
// those of block_reduce.h.
//
// Three ways, the first that fits:
// - registers (SoftmaxRegisterKernel): the row is read once, in 16-byte
//   vectors, and held in registers between its three passes; a warp per row
//   up to 8 vectors a lane (1024 float or 2048 half columns), else a block
//   of kRegisterBlock threads per row up to 8 vectors a thread. Needs cols a
//   multiple of the vector's elements and 16-byte aligned rows;
// - shared memory (SoftmaxCachedKernel): the row read once, scalar, into
//   shared memory, while it fits kSoftmaxCacheBytes;
// - SoftmaxKernel: the input read in each of the three passes.
#include <cmath>
#include <cstdint>

#include "gpu_portability.h"
#include "kernels/block_reduce.h"
#include "kernels/launch_util.h"
#include "kernels/reduce_launch.h"

namespace plexus::cuda {
namespace {

using px_gpu::kWarpSize;

// Softmax caches its row in shared memory (one read of the input instead of
// three) when the block's rows fit in this much.
constexpr int64_t kSoftmaxCacheBytes = 46 * 1024;
// The threads of the register kernel's block per row, and the most 16-byte
// vectors one thread holds.
constexpr int kRegisterBlock = 256;
constexpr int kMaxItems = 8;

// kItems vectors of the row per thread, in registers; lane + i * width is
// the vector of item i. A warp (kWarp) or the whole block per row.
template <typename T, bool kLog, bool kWarp, int kItems>
__global__ void SoftmaxRegisterKernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows,
                                      int64_t cols) {
  using C = px_gpu::ComputeType<T>;
  using P = Pack16<T>;
  constexpr int kPack = P::kSize;
  __shared__ C smem[kWarpSize + 1];
  const RowGroup<kWarp> g;
  const int lane = g.lane, width = g.width;
  const int64_t packs = cols / kPack;
  for (int64_t row = g.first; row < rows; row += g.step) {
    const P* xr = reinterpret_cast<const P*>(x + row * cols);
    P* yr = reinterpret_cast<P*>(y + row * cols);
    C v[kItems][kPack];
    C max = Identity<Reducer::kMax, C>();
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int64_t p = lane + static_cast<int64_t>(i) * width;
      if (p < packs) {
        const P in = xr[p];
#pragma unroll
        for (int j = 0; j < kPack; ++j) {
          v[i][j] = static_cast<C>(px_gpu::ToFloat(in.v[j]));
          max = Fold<Reducer::kMax>(max, v[i][j]);
        }
      }
    }
    max = GroupBroadcast<kWarp>(GroupReduce<Reducer::kMax, kWarp>(max, smem));
    C sum = 0;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (lane + static_cast<int64_t>(i) * width < packs) {
#pragma unroll
        for (int j = 0; j < kPack; ++j) {
          const C e = px_gpu::Exp(v[i][j] - max);
          if constexpr (!kLog) v[i][j] = e;
          sum += e;
        }
      }
    }
    sum = GroupBroadcast<kWarp>(GroupReduce<Reducer::kSum, kWarp>(sum, smem));
    const C shift = kLog ? max + px_gpu::Log(sum) : C(0);
    const C scale = kLog ? C(1) : C(1) / sum;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int64_t p = lane + static_cast<int64_t>(i) * width;
      if (p < packs) {
        P o;
#pragma unroll
        for (int j = 0; j < kPack; ++j) {
          o.v[j] = px_gpu::FromCompute<T>(kLog ? v[i][j] - shift : v[i][j] * scale);
        }
        yr[p] = o;
      }
    }
  }
}

template <typename T, bool kLog, bool kWarp>
void LaunchRegisterItems(int items, const T* in, T* out, int64_t rows, int64_t cols,
                         px_gpu::Stream stream) {
  const int rows_per_block = kWarp ? kBlockSize / kWarpSize : 1;
  const int threads = kWarp ? kBlockSize : kRegisterBlock;
  const unsigned grid = RowGrid(rows, rows_per_block);
  switch (items) {
    case 1:
      PX_GPU_LAUNCH((SoftmaxRegisterKernel<T, kLog, kWarp, 1>), grid, threads, 0, stream)(
          in, out, rows, cols);
      return;
    case 2:
      PX_GPU_LAUNCH((SoftmaxRegisterKernel<T, kLog, kWarp, 2>), grid, threads, 0, stream)(
          in, out, rows, cols);
      return;
    case 4:
      PX_GPU_LAUNCH((SoftmaxRegisterKernel<T, kLog, kWarp, 4>), grid, threads, 0, stream)(
          in, out, rows, cols);
      return;
    default:
      PX_GPU_LAUNCH((SoftmaxRegisterKernel<T, kLog, kWarp, kMaxItems>), grid, threads, 0,
                    stream)(in, out, rows, cols);
      return;
  }
}

// The register kernel where it fits; false where it does not.
template <typename T, bool kLog>
bool LaunchSoftmaxRegisters(const T* in, T* out, int64_t rows, int64_t cols,
                            px_gpu::Stream stream) {
  constexpr int kPack = Pack16<T>::kSize;
  if (cols % kPack != 0 || !Aligned16(in) || !Aligned16(out)) return false;
  const int64_t packs = cols / kPack;
  auto items_for = [](int64_t per_thread) {
    return per_thread <= 1 ? 1 : per_thread <= 2 ? 2 : per_thread <= 4 ? 4 : kMaxItems;
  };
  if (packs <= int64_t{kWarpSize} * kMaxItems) {
    LaunchRegisterItems<T, kLog, true>(items_for((packs + kWarpSize - 1) / kWarpSize), in, out,
                                       rows, cols, stream);
    return true;
  }
  if (packs <= int64_t{kRegisterBlock} * kMaxItems) {
    LaunchRegisterItems<T, kLog, false>(items_for((packs + kRegisterBlock - 1) / kRegisterBlock),
                                        in, out, rows, cols, stream);
    return true;
  }
  return false;
}

// The row read in each pass (no cache): a warp (short rows) or a block per row.
template <typename T, bool kLog, bool kWarp>
__global__ void SoftmaxKernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows,
                              int64_t cols) {
  using C = px_gpu::ComputeType<T>;
  __shared__ C smem[kWarpSize + 1];
  const RowGroup<kWarp> g;
  const int lane = g.lane, width = g.width;
  for (int64_t row = g.first; row < rows; row += g.step) {
    const T* xr = x + row * cols;
    T* yr = y + row * cols;
    C max = Identity<Reducer::kMax, C>();
    for (int64_t k = lane; k < cols; k += width) {
      max = Fold<Reducer::kMax>(max, static_cast<C>(px_gpu::ToFloat(xr[k])));
    }
    max = GroupBroadcast<kWarp>(GroupReduce<Reducer::kMax, kWarp>(max, smem));
    C sum = 0;
    for (int64_t k = lane; k < cols; k += width) {
      sum += px_gpu::Exp(static_cast<C>(px_gpu::ToFloat(xr[k])) - max);
    }
    sum = GroupBroadcast<kWarp>(GroupReduce<Reducer::kSum, kWarp>(sum, smem));
    if constexpr (kLog) {
      const C log_sum = px_gpu::Log(sum);
      for (int64_t k = lane; k < cols; k += width) {
        yr[k] = px_gpu::FromCompute<T>(static_cast<C>(px_gpu::ToFloat(xr[k])) - max - log_sum);
      }
    } else {
      for (int64_t k = lane; k < cols; k += width) {
        yr[k] = px_gpu::FromCompute<T>(
            px_gpu::Exp(static_cast<C>(px_gpu::ToFloat(xr[k])) - max) / sum);
      }
    }
  }
}

// The row cached in shared memory (dynamic: the group's rows,
// cols values each, one group per warp or per block): the input is read
// once. Each thread reads back only the elements it wrote itself.
template <typename T, bool kLog, bool kWarp>
__global__ void SoftmaxCachedKernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows,
                                    int64_t cols) {
  using C = px_gpu::ComputeType<T>;
  __shared__ C smem[kWarpSize + 1];
  extern __shared__ unsigned char px_softmax_cache[];
  const RowGroup<kWarp> g;
  const int lane = g.lane, width = g.width;
  C* buf = reinterpret_cast<C*>(px_softmax_cache) + g.group * cols;
  for (int64_t row = g.first; row < rows; row += g.step) {
    const T* xr = x + row * cols;
    T* yr = y + row * cols;
    C max = Identity<Reducer::kMax, C>();
#pragma unroll 4
    for (int64_t k = lane; k < cols; k += width) {
      const C v = static_cast<C>(px_gpu::ToFloat(xr[k]));
      buf[k] = v;
      max = Fold<Reducer::kMax>(max, v);
    }
    max = GroupBroadcast<kWarp>(GroupReduce<Reducer::kMax, kWarp>(max, smem));
    C sum = 0;
    for (int64_t k = lane; k < cols; k += width) {
      const C e = px_gpu::Exp(buf[k] - max);
      if constexpr (!kLog) buf[k] = e;
      sum += e;
    }
    sum = GroupBroadcast<kWarp>(GroupReduce<Reducer::kSum, kWarp>(sum, smem));
    if constexpr (kLog) {
      const C log_sum = px_gpu::Log(sum);
      for (int64_t k = lane; k < cols; k += width) yr[k] = px_gpu::FromCompute<T>(buf[k] - max - log_sum);
    } else {
      const C inv = C(1) / sum;
      for (int64_t k = lane; k < cols; k += width) yr[k] = px_gpu::FromCompute<T>(buf[k] * inv);
    }
  }
}

template <typename T, bool kLog>
void LaunchSoftmaxT(const void* x, void* y, int64_t rows, int64_t cols, px_gpu::Stream stream) {
  const T* in = static_cast<const T*>(x);
  T* out = static_cast<T*>(y);
  if (LaunchSoftmaxRegisters<T, kLog>(in, out, rows, cols, stream)) return;
  using C = px_gpu::ComputeType<T>;
  const int64_t row_bytes = cols * static_cast<int64_t>(sizeof(C));
  // A warp per row while the block's eight rows fit the cache (up to about
  // 1400 float columns): short rows keep whole blocks busy without barriers.
  if ((kBlockSize / kWarpSize) * row_bytes <= kSoftmaxCacheBytes) {
    constexpr int kWarps = kBlockSize / kWarpSize;
    PX_GPU_LAUNCH((SoftmaxCachedKernel<T, kLog, true>), RowGrid(rows, kWarps), kBlockSize,
                  static_cast<size_t>(kWarps * row_bytes), stream)(in, out, rows, cols);
    return;
  }
  if (cols > kWarpRowMax && row_bytes <= kSoftmaxCacheBytes) {
    PX_GPU_LAUNCH((SoftmaxCachedKernel<T, kLog, false>), RowGrid(rows, 1), kRowBlock,
                  static_cast<size_t>(row_bytes), stream)(in, out, rows, cols);
    return;
  }
  if (cols <= kWarpRowMax) {
    constexpr int kWarps = kBlockSize / kWarpSize;
    PX_GPU_LAUNCH((SoftmaxKernel<T, kLog, true>), RowGrid(rows, kWarps), kBlockSize, 0, stream)(
        in, out, rows, cols);
  } else {
    PX_GPU_LAUNCH((SoftmaxKernel<T, kLog, false>), RowGrid(rows, 1), kRowBlock, 0, stream)(
        in, out, rows, cols);
  }
}

}  // namespace

namespace red {

void LaunchSoftmax(bool log, ew::Dtype dtype, const void* x, void* y, int64_t rows, int64_t cols,
                   px_gpu::Stream stream) {
  VisitDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (log) {
      LaunchSoftmaxT<T, true>(x, y, rows, cols, stream);
    } else {
      LaunchSoftmaxT<T, false>(x, y, rows, cols, stream);
    }
  });
}

}  // namespace red
}  // namespace plexus::cuda

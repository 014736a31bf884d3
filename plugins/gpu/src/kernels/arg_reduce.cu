// ArgMax / ArgMin and All / Any (device code; arg_reduce.cc checks and plans).
//
// ArgMax / ArgMin reproduce the cpu plugin's sequential scan (strict
// comparison, so the first index of the extreme value wins and NaN is
// skipped unless it is the first element): for long rows (inner 1, n >= 64)
// one 256-thread block per row, each thread scanning a strided part and the
// block combining (value, index) pairs (warp shuffles, then shared memory);
// otherwise one thread per output element scanning its column in order.
// The index is stored in 2, 4 or 8 bytes. Every dtype computes in its own
// type except half and bfloat16 (float); bool shares the uint8 kernels.
//
// All / Any: the output holds the identity (memset by arg_reduce.cc) and one
// thread per input element writes the absorbing value (false for All, true
// for Any) where it finds it: every writer of an element writes the same
// value, so no atomics are needed. A full reduction instead ORs the
// findings of a block in shared memory and writes once per block.
#include <cstdint>

#include "gpu_portability.h"
#include "kernels/elementwise_device.h"
#include "kernels/launch_util.h"
#include "kernels/arg_reduce_launch.h"

namespace plexus::cuda {
namespace {

template <typename C>
__device__ __forceinline__ bool Better(C a, C b, bool max) {
  return max ? a > b : a < b;
}

__device__ __forceinline__ void StoreIndex(void* out, int bytes, int64_t j, int64_t at) {
  switch (bytes) {
    case 2: static_cast<int16_t*>(out)[j] = static_cast<int16_t>(at); return;
    case 4: static_cast<int32_t*>(out)[j] = static_cast<int32_t>(at); return;
    default: static_cast<int64_t*>(out)[j] = at; return;
  }
}

// Takes (ov, oi) into (best, at) when it is better or equally good at a
// smaller index; an index of -1 means no (non-NaN) value yet.
template <typename C>
__device__ __forceinline__ void Combine(C& best, int64_t& at, C ov, int64_t oi, bool max) {
  if (oi < 0) return;
  if (at < 0 || Better(ov, best, max) || (!Better(best, ov, max) && oi < at)) {
    best = ov;
    at = oi;
  }
}

constexpr int kWarpsPerBlock = kBlockSize / px_gpu::kWarpSize;

template <typename T>
__global__ void ArgRowKernel(const T* __restrict__ x, void* __restrict__ out, int out_bytes,
                             int64_t rows, int64_t n, bool max) {
  using C = Compute<T>;
  __shared__ C warp_best[kWarpsPerBlock];
  __shared__ int64_t warp_at[kWarpsPerBlock];
  const int lane = threadIdx.x % px_gpu::kWarpSize;
  const int warp = threadIdx.x / px_gpu::kWarpSize;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* row = x + r * n;
    C best = C(0);
    int64_t at = -1;
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
      const C v = ToC(row[k]);
      if (px_gpu::IsNan(v)) continue;
      if (at < 0 || Better(v, best, max)) {
        best = v;
        at = k;
      }
    }
    for (int offset = px_gpu::kWarpSize / 2; offset > 0; offset /= 2) {
      const C ov = px_gpu::ShuffleDown(best, offset);
      const int64_t oi = px_gpu::ShuffleDown(at, offset);
      Combine(best, at, ov, oi, max);
    }
    if (lane == 0) {
      warp_best[warp] = best;
      warp_at[warp] = at;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int w = 1; w < kWarpsPerBlock; ++w) Combine(best, at, warp_best[w], warp_at[w], max);
      // A NaN first element stays the answer of the sequential scan.
      if (at < 0 || px_gpu::IsNan(ToC(row[0]))) at = 0;
      StoreIndex(out, out_bytes, r, at);
    }
    __syncthreads();  // the shared arrays are reused by the next row
  }
}

template <typename T>
__global__ void ArgColumnKernel(const T* __restrict__ x, void* __restrict__ out, int out_bytes,
                                int64_t outputs, int64_t n, int64_t inner, bool max) {
  using C = Compute<T>;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < outputs;
       j += stride) {
    const int64_t o = j / inner, i = j % inner;
    const T* p = x + o * n * inner + i;
    C best = ToC(p[0]);
    int64_t at = 0;
    for (int64_t k = 1; k < n; ++k) {
      const C v = ToC(p[k * inner]);
      if (Better(v, best, max)) {
        best = v;
        at = k;
      }
    }
    StoreIndex(out, out_bytes, j, at);
  }
}

template <typename T>
void LaunchArg(bool max, const void* x_raw, void* out, int out_bytes, int64_t outer, int64_t n,
               int64_t inner, px_gpu::Stream stream) {
  const T* x = static_cast<const T*>(x_raw);
  if (inner == 1 && n >= 64) {
    const int64_t blocks = outer < 8192 ? outer : 8192;
    PX_GPU_LAUNCH((ArgRowKernel<T>), static_cast<unsigned>(blocks), kBlockSize, 0, stream)(
        x, out, out_bytes, outer, n, max);
  } else {
    const int64_t outputs = outer * inner;
    PX_GPU_LAUNCH((ArgColumnKernel<T>), GridFor(outputs), kBlockSize, 0, stream)(
        x, out, out_bytes, outputs, n, inner, max);
  }
}

__global__ void LogicalFullKernel(const uint8_t* __restrict__ x, uint8_t* __restrict__ out,
                                  int64_t n, bool all) {
  __shared__ int hit;
  if (threadIdx.x == 0) hit = 0;
  __syncthreads();
  bool mine = false;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    mine |= (x[i] != 0) != all;
  }
  if (mine) hit = 1;  // every writer stores 1
  __syncthreads();
  if (threadIdx.x == 0 && hit != 0) *out = all ? 0 : 1;
}

template <typename Index>
struct LogicalGeometry {
  int rank;
  Index num_inputs;
  Index dims[red2::kMaxGroups];
  Index out_strides[red2::kMaxGroups];
};

template <typename Index>
__global__ void LogicalKernel(const uint8_t* __restrict__ x, uint8_t* __restrict__ out,
                              LogicalGeometry<Index> g, bool all) {
  const uint8_t absorb = all ? 0 : 1;
  const Index stride = static_cast<Index>(blockDim.x) * gridDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < g.num_inputs;
       i += stride) {
    if ((x[i] != 0) == all) continue;  // not the absorbing value
    Index rest = i, o = 0;
    for (int d = g.rank - 1; d > 0; --d) {
      const Index coord = rest % g.dims[d];
      rest /= g.dims[d];
      o += coord * g.out_strides[d];
    }
    o += rest * g.out_strides[0];
    // A stale read only costs a redundant store of the same value.
    if (out[o] != absorb) out[o] = absorb;
  }
}

template <typename Index>
LogicalGeometry<Index> MakeLogicalGeometry(const red2::LogicalPlan& plan) {
  LogicalGeometry<Index> g{};
  g.rank = plan.rank;
  g.num_inputs = static_cast<Index>(plan.num_inputs);
  for (int d = 0; d < plan.rank; ++d) {
    g.dims[d] = static_cast<Index>(plan.dims[d]);
    g.out_strides[d] = static_cast<Index>(plan.out_strides[d]);
  }
  return g;
}

}  // namespace

void red2::LaunchArgReduce(bool max, ew::Type type, const void* x, void* out, int out_bytes,
                           int64_t outer, int64_t n, int64_t inner, px_gpu::Stream stream) {
  auto run = [&](auto tag) {
    LaunchArg<decltype(tag)>(max, x, out, out_bytes, outer, n, inner, stream);
  };
  if (type == ew::Type::kBool) {
    run(uint8_t{});  // bytes 0 and 1 order like false and true
  } else if (ew::IsFloatType(type)) {
    VisitFloatType(type, run);
  } else {
    VisitIntType(type, run);
  }
}

void red2::LaunchLogicalReduce(bool all, const uint8_t* x, uint8_t* out, const LogicalPlan& plan,
                               bool full, px_gpu::Stream stream) {
  const int64_t n = plan.num_inputs;
  if (full) {
    PX_GPU_LAUNCH(LogicalFullKernel, GridFor(n), kBlockSize, 0, stream)(x, out, n, all);
  } else if (n < (int64_t{1} << 31)) {
    PX_GPU_LAUNCH((LogicalKernel<uint32_t>), GridFor(n), kBlockSize, 0, stream)(
        x, out, MakeLogicalGeometry<uint32_t>(plan), all);
  } else {
    PX_GPU_LAUNCH((LogicalKernel<int64_t>), GridFor(n), kBlockSize, 0, stream)(
        x, out, MakeLogicalGeometry<int64_t>(plan), all);
  }
}

}  // namespace plexus::cuda

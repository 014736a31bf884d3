// Device code of the data-movement kernels: Transpose (index decomposition,
// and 32 x 32 shared-memory tiles for swapping the last two dimensions),
// Cast, GatherV2 (with an index range check) and Pad. Elements are moved as
// opaque words of their size, except by Cast. Grid-stride loops; 32-bit index
// arithmetic below 2^31 elements.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gpu_portability.h"
#include "kernels/array_launch.h"
#include "kernels/launch_util.h"

namespace plexus::cuda {
namespace {

using arr::CastType;
using arr::PadPlan;
using arr::TransposePlan;

struct alignas(16) Word16 {
  uint64_t v[2];
};

// Calls f(W{}) with the word type of `size` bytes.
template <typename F>
void VisitWord(size_t size, F&& f) {
  switch (size) {
    case 1: f(uint8_t{}); return;
    case 2: f(uint16_t{}); return;
    case 4: f(uint32_t{}); return;
    case 8: f(uint64_t{}); return;
    default: f(Word16{}); return;
  }
}

constexpr int64_t kInt32Limit = int64_t{1} << 31;

// ---------------------------------------------------------------------------
// Transpose
// ---------------------------------------------------------------------------

template <typename W, typename I>
__global__ void TransposeKernel(const W* __restrict__ in, W* __restrict__ out,
                                const TransposePlan plan) {
  const I n = static_cast<I>(plan.n);
  const I stride = static_cast<I>(blockDim.x) * gridDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    I r = i, offset = 0;
    for (int d = plan.rank - 1; d >= 0; --d) {
      const I dim = static_cast<I>(plan.out_dims[d]);
      const I q = r / dim;
      offset += (r - q * dim) * static_cast<I>(plan.src_strides[d]);
      r = q;
    }
    out[i] = in[offset];
  }
}

constexpr int kTile = 32;
constexpr int kTileRows = 8;  // threads per tile column: blocks of 32 x 8

template <typename W>
__global__ void TransposeTiledKernel(const W* __restrict__ in, W* __restrict__ out, int64_t batch,
                                     int64_t rows, int64_t cols, int64_t tiles_r,
                                     int64_t tiles_c) {
  __shared__ W tile[kTile][kTile + 1];  // +1: no bank conflicts on the column reads
  const int64_t total = batch * tiles_r * tiles_c;
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int64_t t = blockIdx.x; t < total; t += gridDim.x) {
    const int64_t tc = t % tiles_c;
    const int64_t rest = t / tiles_c;
    const int64_t tr = rest % tiles_r;
    const int64_t b = rest / tiles_r;
    const W* src = in + b * rows * cols;
    W* dst = out + b * rows * cols;
    const int64_t r0 = tr * kTile, c0 = tc * kTile;
    for (int k = ty; k < kTile; k += kTileRows) {
      const int64_t r = r0 + k, c = c0 + tx;
      if (r < rows && c < cols) tile[k][tx] = src[r * cols + c];
    }
    __syncthreads();
    for (int k = ty; k < kTile; k += kTileRows) {
      const int64_t c = c0 + k, r = r0 + tx;  // output row c, column r
      if (c < cols && r < rows) dst[c * rows + r] = tile[tx][k];
    }
    __syncthreads();
  }
}

// ---------------------------------------------------------------------------
// Cast
// ---------------------------------------------------------------------------

template <typename T> struct CastInfo {
  static constexpr bool kFloating = false;
  static constexpr int kMantissa = 0;
};
template <> struct CastInfo<float> { static constexpr bool kFloating = true; static constexpr int kMantissa = 23; };
template <> struct CastInfo<double> { static constexpr bool kFloating = true; static constexpr int kMantissa = 52; };
template <> struct CastInfo<px_gpu::half> { static constexpr bool kFloating = true; static constexpr int kMantissa = 10; };
template <> struct CastInfo<px_gpu::bfloat16> { static constexpr bool kFloating = true; static constexpr int kMantissa = 7; };

// The integer limits (std::numeric_limits is host-only without relaxed
// constexpr).
template <typename T> struct IntLimits;
template <> struct IntLimits<int8_t> { static constexpr int8_t kLo = -128, kHi = 127; };
template <> struct IntLimits<int16_t> { static constexpr int16_t kLo = -32768, kHi = 32767; };
template <> struct IntLimits<int32_t> { static constexpr int32_t kLo = -2147483647 - 1, kHi = 2147483647; };
template <> struct IntLimits<int64_t> {
  static constexpr int64_t kLo = -9223372036854775807LL - 1, kHi = 9223372036854775807LL;
};
template <> struct IntLimits<uint8_t> { static constexpr uint8_t kLo = 0, kHi = 255; };
template <> struct IntLimits<uint16_t> { static constexpr uint16_t kLo = 0, kHi = 65535; };
template <> struct IntLimits<uint32_t> { static constexpr uint32_t kLo = 0, kHi = 4294967295u; };
template <> struct IntLimits<uint64_t> { static constexpr uint64_t kLo = 0, kHi = 18446744073709551615ull; };

template <typename T>
__device__ __forceinline__ px_gpu::ComputeType<T> ToCompute(T x) {
  if constexpr (sizeof(T) == 2 && CastInfo<T>::kFloating) {
    return px_gpu::ToFloat(x);
  } else {
    return x;
  }
}

// px_gpu::FromCompute takes any 2-byte type for a 16-bit float.
template <typename T>
__device__ __forceinline__ T FromC(px_gpu::ComputeType<T> x) {
  if constexpr (sizeof(T) == 2 && CastInfo<T>::kFloating) {
    return px_gpu::FromFloat<T>(x);
  } else {
    return x;
  }
}

template <typename D, typename S>
__device__ __forceinline__ D CastOne(S x, bool truncate) {
  using SC = px_gpu::ComputeType<S>;
  using DC = px_gpu::ComputeType<D>;
  const SC v = ToCompute(x);
  if constexpr (std::is_same_v<D, bool>) {
    return v != SC(0);
  } else if constexpr (CastInfo<S>::kFloating && !CastInfo<D>::kFloating) {
    // NaN gives 0, out-of-range values saturate.
    if (v != v) return D(0);
    if (v <= static_cast<SC>(IntLimits<D>::kLo)) return IntLimits<D>::kLo;
    if (v >= static_cast<SC>(IntLimits<D>::kHi)) return IntLimits<D>::kHi;
    return static_cast<D>(v);
  } else if constexpr (CastInfo<S>::kFloating && CastInfo<D>::kFloating &&
                       (CastInfo<S>::kMantissa > CastInfo<D>::kMantissa)) {
    if (!truncate) return FromC<D>(static_cast<DC>(v));
    // Truncate: drop the mantissa bits the destination cannot hold (through
    // float for a double source), as the cpu plugin does.
    float f;
    if constexpr (std::is_same_v<S, double>) {
      double w = v;
      if (w == w) {
        uint64_t u;
        memcpy(&u, &w, sizeof(u));
        u &= ~((uint64_t{1} << 29) - 1);
        memcpy(&w, &u, sizeof(u));
      }
      f = static_cast<float>(w);
    } else {
      f = static_cast<float>(v);
    }
    if (f == f) {
      constexpr int kDrop = 23 - (CastInfo<D>::kMantissa < 23 ? CastInfo<D>::kMantissa : 23);
      uint32_t u;
      memcpy(&u, &f, sizeof(u));
      u &= ~((uint32_t{1} << kDrop) - 1);
      memcpy(&f, &u, sizeof(u));
    }
    return FromC<D>(static_cast<DC>(f));
  } else {
    return FromC<D>(static_cast<DC>(v));
  }
}

template <typename D, typename S>
__global__ void CastKernel(const S* __restrict__ x, D* __restrict__ y, int64_t n, bool truncate) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    y[i] = CastOne<D>(x[i], truncate);
  }
}

template <typename F>
void VisitCastType(CastType t, F&& f) {
  switch (t) {
    case CastType::kFloat: f(float{}); return;
    case CastType::kDouble: f(double{}); return;
    case CastType::kHalf: f(px_gpu::half{}); return;
    case CastType::kBFloat16: f(px_gpu::bfloat16{}); return;
    case CastType::kInt8: f(int8_t{}); return;
    case CastType::kInt16: f(int16_t{}); return;
    case CastType::kInt32: f(int32_t{}); return;
    case CastType::kInt64: f(int64_t{}); return;
    case CastType::kUInt8: f(uint8_t{}); return;
    case CastType::kUInt16: f(uint16_t{}); return;
    case CastType::kUInt32: f(uint32_t{}); return;
    case CastType::kUInt64: f(uint64_t{}); return;
    case CastType::kBool: f(bool{}); return;
  }
}

// ---------------------------------------------------------------------------
// GatherV2
// ---------------------------------------------------------------------------

template <typename Index>
__global__ void GatherCheckKernel(const Index* __restrict__ indices, int64_t n, int64_t limit,
                                  unsigned long long* first_bad) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += stride) {
    const int64_t v = static_cast<int64_t>(indices[k]);
    if (v < 0 || v >= limit) {
      atomicMin(first_bad, static_cast<unsigned long long>(k));
      return;  // later k of this thread are larger
    }
  }
}

template <typename W, typename Index, typename I>
__global__ void GatherKernel(const W* __restrict__ params, const Index* __restrict__ indices,
                             W* __restrict__ out, int64_t total, int64_t outer, int64_t limit,
                             int64_t inner, int64_t n) {
  const I count = static_cast<I>(total);
  const I in_ = static_cast<I>(inner), n_ = static_cast<I>(n), outer_ = static_cast<I>(outer);
  const I stride = static_cast<I>(blockDim.x) * gridDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const I e = i % in_;
    const I rest = i / in_;
    const I j = rest % n_;
    const I bo = rest / n_;  // batch * outer + o
    const I b = bo / outer_;
    const int64_t idx = static_cast<int64_t>(indices[b * n_ + j]);
    if (idx < 0 || idx >= limit) {
      out[i] = W{};
    } else {
      out[i] = params[(static_cast<int64_t>(bo) * limit + idx) * inner + e];
    }
  }
}

// ---------------------------------------------------------------------------
// Pad
// ---------------------------------------------------------------------------

template <typename W, typename I>
__global__ void PadKernel(const W* __restrict__ in, W* __restrict__ out, const W* value_dev,
                          W value, const PadPlan plan) {
  const W pad = value_dev != nullptr ? *value_dev : value;
  const I n = static_cast<I>(plan.n);
  const I stride = static_cast<I>(blockDim.x) * gridDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    I r = i, offset = 0;
    bool inside = true;
    for (int d = plan.rank - 1; d >= 0; --d) {
      const I dim = static_cast<I>(plan.out_dims[d]);
      const I q = r / dim;
      const I c = r - q * dim - static_cast<I>(plan.before[d]);
      r = q;
      inside = inside && c >= 0 && c < static_cast<I>(plan.in_dims[d]);
      offset += c * static_cast<I>(plan.in_strides[d]);
    }
    out[i] = inside ? in[offset] : pad;
  }
}

}  // namespace

void arr::LaunchTranspose(size_t elem_size, const void* in, void* out, const TransposePlan& plan,
                          px_gpu::Stream stream) {
  VisitWord(elem_size, [&](auto tag) {
    using W = decltype(tag);
    if (plan.n < kInt32Limit) {
      PX_GPU_LAUNCH((TransposeKernel<W, int32_t>), GridFor(plan.n), kBlockSize, 0, stream)(
          static_cast<const W*>(in), static_cast<W*>(out), plan);
    } else {
      PX_GPU_LAUNCH((TransposeKernel<W, int64_t>), GridFor(plan.n), kBlockSize, 0, stream)(
          static_cast<const W*>(in), static_cast<W*>(out), plan);
    }
  });
}

void arr::LaunchTransposeTiled(size_t elem_size, const void* in, void* out, int64_t batch,
                               int64_t rows, int64_t cols, px_gpu::Stream stream) {
  const int64_t tiles_r = (rows + kTile - 1) / kTile, tiles_c = (cols + kTile - 1) / kTile;
  int64_t blocks = batch * tiles_r * tiles_c;
  if (blocks > 8 * kMaxBlocks) blocks = 8 * kMaxBlocks;
  const dim3 block(kTile, kTileRows);
  auto launch = [&](auto tag) {
    using W = decltype(tag);
    PX_GPU_LAUNCH((TransposeTiledKernel<W>), static_cast<unsigned>(blocks), block, 0, stream)(
        static_cast<const W*>(in), static_cast<W*>(out), batch, rows, cols, tiles_r, tiles_c);
  };
  switch (elem_size) {
    case 1: launch(uint8_t{}); return;
    case 2: launch(uint16_t{}); return;
    case 4: launch(uint32_t{}); return;
    default: launch(uint64_t{}); return;
  }
}

void arr::LaunchCast(CastType src, CastType dst, bool truncate, const void* x, void* y, int64_t n,
                     px_gpu::Stream stream) {
  VisitCastType(src, [&](auto stag) {
    using S = decltype(stag);
    VisitCastType(dst, [&](auto dtag) {
      using D = decltype(dtag);
      PX_GPU_LAUNCH((CastKernel<D, S>), GridFor(n), kBlockSize, 0, stream)(
          static_cast<const S*>(x), static_cast<D*>(y), n, truncate);
    });
  });
}

void arr::LaunchGatherCheck(bool indices64, const void* indices, int64_t n, int64_t limit,
                            int64_t* first_bad, px_gpu::Stream stream) {
  auto* bad = reinterpret_cast<unsigned long long*>(first_bad);
  if (indices64) {
    PX_GPU_LAUNCH((GatherCheckKernel<int64_t>), GridFor(n), kBlockSize, 0, stream)(
        static_cast<const int64_t*>(indices), n, limit, bad);
  } else {
    PX_GPU_LAUNCH((GatherCheckKernel<int32_t>), GridFor(n), kBlockSize, 0, stream)(
        static_cast<const int32_t*>(indices), n, limit, bad);
  }
}

void arr::LaunchGather(size_t elem_size, bool indices64, const void* params, const void* indices,
                       void* out, int64_t batch, int64_t outer, int64_t limit, int64_t inner,
                       int64_t n, px_gpu::Stream stream) {
  const int64_t total = batch * outer * n * inner;
  const bool small = total < kInt32Limit;
  VisitWord(elem_size, [&](auto tag) {
    using W = decltype(tag);
    auto launch = [&](auto index_tag) {
      using Index = decltype(index_tag);
      const W* p = static_cast<const W*>(params);
      const Index* idx = static_cast<const Index*>(indices);
      W* o = static_cast<W*>(out);
      if (small) {
        PX_GPU_LAUNCH((GatherKernel<W, Index, int32_t>), GridFor(total), kBlockSize, 0, stream)(
            p, idx, o, total, outer, limit, inner, n);
      } else {
        PX_GPU_LAUNCH((GatherKernel<W, Index, int64_t>), GridFor(total), kBlockSize, 0, stream)(
            p, idx, o, total, outer, limit, inner, n);
      }
    };
    if (indices64) {
      launch(int64_t{});
    } else {
      launch(int32_t{});
    }
  });
}

void arr::LaunchPad(size_t elem_size, const void* in, void* out, const void* value_dev,
                    uint64_t value_bits, const PadPlan& plan, px_gpu::Stream stream) {
  VisitWord(elem_size, [&](auto tag) {
    using W = decltype(tag);
    if constexpr (sizeof(W) <= 8) {
      W value;
      memcpy(&value, &value_bits, sizeof(W));  // little-endian: the low bytes
      const W* vd = static_cast<const W*>(value_dev);
      if (plan.n < kInt32Limit) {
        PX_GPU_LAUNCH((PadKernel<W, int32_t>), GridFor(plan.n), kBlockSize, 0, stream)(
            static_cast<const W*>(in), static_cast<W*>(out), vd, value, plan);
      } else {
        PX_GPU_LAUNCH((PadKernel<W, int64_t>), GridFor(plan.n), kBlockSize, 0, stream)(
            static_cast<const W*>(in), static_cast<W*>(out), vd, value, plan);
      }
    }
  });
}

}  // namespace plexus::cuda

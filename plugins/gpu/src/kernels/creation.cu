// Device code of the creation kernels: Fill (and OnesLike), Range and
// OneHot. Grid-stride loops, one thread per output element.
#include <cstdint>

#include "gpu_portability.h"
#include "kernels/launch_util.h"
#include "kernels/movement_launch.h"

namespace plexus::cuda {
namespace {

constexpr int64_t kInt32Limit = int64_t{1} << 31;

// Calls f(W{}) with the unsigned word type of `size` bytes (1, 2, 4, 8).
template <typename F>
void VisitFillWord(size_t size, F&& f) {
  switch (size) {
    case 1: f(uint8_t{}); return;
    case 2: f(uint16_t{}); return;
    case 4: f(uint32_t{}); return;
    default: f(uint64_t{}); return;
  }
}

template <typename W>
__global__ void FillKernel(const W* value_dev, W value, W* __restrict__ out, int64_t n) {
  const W v = value_dev != nullptr ? *value_dev : value;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += step) {
    out[i] = v;
  }
}

// Range in float or double: the product rounded on its own, then the sum
// (no fused multiply-add), like the cpu plugin's start + i * delta.
__device__ __forceinline__ float MulAdd(float start, float i, float delta) {
  return __fadd_rn(start, __fmul_rn(i, delta));
}
__device__ __forceinline__ double MulAdd(double start, double i, double delta) {
  return __dadd_rn(start, __dmul_rn(i, delta));
}

template <typename T, typename C>
__global__ void RangeFloatKernel(C start, C delta, T* __restrict__ out, int64_t n) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += step) {
    const C v = MulAdd(start, static_cast<C>(i), delta);
    if constexpr (sizeof(T) == 2) {
      out[i] = px_gpu::FromFloat<T>(v);
    } else {
      out[i] = v;
    }
  }
}

// Integers: int64 arithmetic (unsigned, so overflow wraps as on the cpu
// plugin's two's complement hardware), truncated to T.
template <typename T>
__global__ void RangeIntKernel(int64_t start, int64_t delta, T* __restrict__ out, int64_t n) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += step) {
    const uint64_t v = static_cast<uint64_t>(start) +
                       static_cast<uint64_t>(i) * static_cast<uint64_t>(delta);
    out[i] = static_cast<T>(v);
  }
}

template <typename W, typename Index, typename I>
__global__ void OneHotKernel(const Index* __restrict__ indices, const W* on_dev,
                             const W* off_dev, W* __restrict__ out, int64_t depth64,
                             int64_t suffix64, int64_t n64) {
  const W on = *on_dev, off = *off_dev;
  const I n = static_cast<I>(n64), suffix = static_cast<I>(suffix64),
          depth = static_cast<I>(depth64);
  const I step = static_cast<I>(blockDim.x) * gridDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const I s = i % suffix;
    const I t = i / suffix;
    const I d = t % depth;
    const I p = t / depth;
    const int64_t v = static_cast<int64_t>(indices[p * suffix + s]);
    out[i] = v == static_cast<int64_t>(d) ? on : off;
  }
}

}  // namespace

void mov::LaunchFill(size_t word, const void* value_dev, uint64_t value_bits, void* out,
                     int64_t n, px_gpu::Stream stream) {
  VisitFillWord(word, [&](auto w) {
    using W = decltype(w);
    PX_GPU_LAUNCH((FillKernel<W>), GridFor(n), kBlockSize, 0, stream)(
        static_cast<const W*>(value_dev), static_cast<W>(value_bits), static_cast<W*>(out), n);
  });
}

void mov::LaunchRange(RangeType type, double fstart, double fdelta, int64_t istart,
                      int64_t idelta, void* out, int64_t n, px_gpu::Stream stream) {
  const unsigned grid = GridFor(n);
  const float f0 = static_cast<float>(fstart), fd = static_cast<float>(fdelta);
  switch (type) {
    case RangeType::kFloat:
      PX_GPU_LAUNCH((RangeFloatKernel<float, float>), grid, kBlockSize, 0, stream)(
          f0, fd, static_cast<float*>(out), n);
      return;
    case RangeType::kDouble:
      PX_GPU_LAUNCH((RangeFloatKernel<double, double>), grid, kBlockSize, 0, stream)(
          fstart, fdelta, static_cast<double*>(out), n);
      return;
    case RangeType::kHalf:
      PX_GPU_LAUNCH((RangeFloatKernel<px_gpu::half, float>), grid, kBlockSize, 0, stream)(
          f0, fd, static_cast<px_gpu::half*>(out), n);
      return;
    case RangeType::kBFloat16:
      PX_GPU_LAUNCH((RangeFloatKernel<px_gpu::bfloat16, float>), grid, kBlockSize, 0, stream)(
          f0, fd, static_cast<px_gpu::bfloat16*>(out), n);
      return;
    case RangeType::kInt8:
      PX_GPU_LAUNCH((RangeIntKernel<int8_t>), grid, kBlockSize, 0, stream)(
          istart, idelta, static_cast<int8_t*>(out), n);
      return;
    case RangeType::kInt16:
      PX_GPU_LAUNCH((RangeIntKernel<int16_t>), grid, kBlockSize, 0, stream)(
          istart, idelta, static_cast<int16_t*>(out), n);
      return;
    case RangeType::kInt32:
      PX_GPU_LAUNCH((RangeIntKernel<int32_t>), grid, kBlockSize, 0, stream)(
          istart, idelta, static_cast<int32_t*>(out), n);
      return;
    case RangeType::kInt64:
      PX_GPU_LAUNCH((RangeIntKernel<int64_t>), grid, kBlockSize, 0, stream)(
          istart, idelta, static_cast<int64_t*>(out), n);
      return;
    case RangeType::kUInt16:
      PX_GPU_LAUNCH((RangeIntKernel<uint16_t>), grid, kBlockSize, 0, stream)(
          istart, idelta, static_cast<uint16_t*>(out), n);
      return;
    case RangeType::kUInt32:
      PX_GPU_LAUNCH((RangeIntKernel<uint32_t>), grid, kBlockSize, 0, stream)(
          istart, idelta, static_cast<uint32_t*>(out), n);
      return;
  }
}

void mov::LaunchOneHot(size_t word, int index_type, const void* indices, const void* on,
                       const void* off, void* out, int64_t depth, int64_t suffix, int64_t n,
                       bool wide, px_gpu::Stream stream) {
  VisitFillWord(word, [&](auto w) {
    using W = decltype(w);
    auto launch = [&](auto index_tag) {
      using Index = decltype(index_tag);
      const Index* idx = static_cast<const Index*>(indices);
      const W* on_w = static_cast<const W*>(on);
      const W* off_w = static_cast<const W*>(off);
      W* o = static_cast<W*>(out);
      if (wide || n >= kInt32Limit) {
        PX_GPU_LAUNCH((OneHotKernel<W, Index, int64_t>), GridFor(n), kBlockSize, 0, stream)(
            idx, on_w, off_w, o, depth, suffix, n);
      } else {
        PX_GPU_LAUNCH((OneHotKernel<W, Index, int32_t>), GridFor(n), kBlockSize, 0, stream)(
            idx, on_w, off_w, o, depth, suffix, n);
      }
    };
    switch (index_type) {
      case 0: launch(uint8_t{}); return;
      case 1: launch(int8_t{}); return;
      case 2: launch(int32_t{}); return;
      default: launch(int64_t{}); return;
    }
  });
}

}  // namespace plexus::cuda

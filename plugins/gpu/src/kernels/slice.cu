// Device code of Slice and StridedSlice: one thread per output element (a
// grid-stride loop), whose input offset is the sum of its coordinates times
// the (possibly negative) strides of at most 8 collapsed dimensions. Elements
// move as opaque words; 32-bit index arithmetic unless the caller asks for
// 64 bits.
#include <cstdint>

#include "gpu_portability.h"
#include "kernels/launch_util.h"
#include "kernels/slice_launch.h"

namespace plexus::cuda {
namespace {

using arr::TransposePlan;

struct alignas(16) SliceWord16 {
  uint64_t v[2];
};

template <typename W, typename I>
__global__ void SliceKernel(const W* __restrict__ in, W* __restrict__ out,
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

template <typename W>
void Launch(const void* in, void* out, const TransposePlan& plan, bool wide_index,
            px_gpu::Stream stream) {
  if (wide_index) {
    PX_GPU_LAUNCH((SliceKernel<W, int64_t>), GridFor(plan.n), kBlockSize, 0, stream)(
        static_cast<const W*>(in), static_cast<W*>(out), plan);
  } else {
    PX_GPU_LAUNCH((SliceKernel<W, int32_t>), GridFor(plan.n), kBlockSize, 0, stream)(
        static_cast<const W*>(in), static_cast<W*>(out), plan);
  }
}

}  // namespace

void arr::LaunchSlice(size_t elem_size, const void* in, void* out, const TransposePlan& plan,
                      bool wide_index, px_gpu::Stream stream) {
  switch (elem_size) {
    case 1: Launch<uint8_t>(in, out, plan, wide_index, stream); return;
    case 2: Launch<uint16_t>(in, out, plan, wide_index, stream); return;
    case 4: Launch<uint32_t>(in, out, plan, wide_index, stream); return;
    case 8: Launch<uint64_t>(in, out, plan, wide_index, stream); return;
    default: Launch<SliceWord16>(in, out, plan, wide_index, stream); return;
  }
}

}  // namespace plexus::cuda

// Select and SelectV2: out = cond ? t : e over a collapsed three-input
// broadcast plan (elementwise.cc builds it: SelectV2's NumPy broadcasting,
// and Select's scalar, vector and same-shape conditions as strides). The
// values move as opaque words of 1, 2, 4 or 8 bytes, so every dtype shares
// four instantiations. One thread per output element in a grid-stride loop;
// the same-shape case reads every input contiguously, the others recover
// coordinates (32-bit index arithmetic below 2^31 elements).
#include <cstdint>

#include "gpu_portability.h"
#include "kernels/elementwise_device.h"
#include "kernels/elementwise_launch.h"
#include "kernels/launch_util.h"

namespace plexus::cuda {
namespace {

// Steps 0 (repeat element 0) or 1 (contiguous) per input.
template <typename W>
__global__ void SelectFlatKernel(const uint8_t* __restrict__ cond, const W* __restrict__ t,
                                 const W* __restrict__ e, W* __restrict__ out, int64_t n,
                                 int c_step, int t_step, int e_step) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = cond[i * c_step] != 0 ? t[i * t_step] : e[i * e_step];
  }
}

template <typename W, typename Index>
__global__ void SelectBroadcastKernel(const uint8_t* __restrict__ cond, const W* __restrict__ t,
                                      const W* __restrict__ e, W* __restrict__ out,
                                      Geometry<3, Index> g) {
  const Index stride = static_cast<Index>(blockDim.x) * gridDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < g.num_elements;
       i += stride) {
    Index rest = i, ic = 0, it = 0, ie = 0;
    for (int d = g.rank - 1; d > 0; --d) {
      const Index coord = rest % g.dims[d];
      rest /= g.dims[d];
      ic += coord * g.strides[0][d];
      it += coord * g.strides[1][d];
      ie += coord * g.strides[2][d];
    }
    ic += rest * g.strides[0][0];
    it += rest * g.strides[1][0];
    ie += rest * g.strides[2][0];
    out[i] = cond[ic] != 0 ? t[it] : e[ie];
  }
}

template <typename W>
void LaunchWords(const void* cond_raw, const void* t_raw, const void* e_raw, void* out_raw,
                 const ew::SelectPlan& plan, px_gpu::Stream stream) {
  const uint8_t* cond = static_cast<const uint8_t*>(cond_raw);
  const W* t = static_cast<const W*>(t_raw);
  const W* e = static_cast<const W*>(e_raw);
  W* out = static_cast<W*>(out_raw);
  const int64_t n = plan.num_elements;
  const bool flat = plan.rank == 0 || (plan.rank == 1 && plan.strides[0][0] <= 1 &&
                                       plan.strides[1][0] <= 1 && plan.strides[2][0] <= 1);
  if (flat) {
    auto step = [&](int k) { return plan.rank == 0 ? 0 : static_cast<int>(plan.strides[k][0]); };
    PX_GPU_LAUNCH((SelectFlatKernel<W>), GridFor(n), kBlockSize, 0, stream)(
        cond, t, e, out, n, step(0), step(1), step(2));
  } else if (n < (int64_t{1} << 31)) {
    PX_GPU_LAUNCH((SelectBroadcastKernel<W, uint32_t>), GridFor(n), kBlockSize, 0, stream)(
        cond, t, e, out, MakeGeometry<3, uint32_t>(plan));
  } else {
    PX_GPU_LAUNCH((SelectBroadcastKernel<W, int64_t>), GridFor(n), kBlockSize, 0, stream)(
        cond, t, e, out, MakeGeometry<3, int64_t>(plan));
  }
}

}  // namespace

void ew::LaunchSelect(int word_size, const void* cond, const void* t, const void* e, void* out,
                      const SelectPlan& plan, px_gpu::Stream stream) {
  switch (word_size) {
    case 1: LaunchWords<uint8_t>(cond, t, e, out, plan, stream); return;
    case 2: LaunchWords<uint16_t>(cond, t, e, out, plan, stream); return;
    case 4: LaunchWords<uint32_t>(cond, t, e, out, plan, stream); return;
    default: LaunchWords<uint64_t>(cond, t, e, out, plan, stream); return;
  }
}

}  // namespace plexus::cuda

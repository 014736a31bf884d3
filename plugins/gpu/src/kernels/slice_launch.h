// The launch function of Slice and StridedSlice: plain C++ between the kernel
// classes (slice.cc, host compiler) and the device code (slice.cu, nvcc).
// Elements move as opaque words of 1, 2, 4, 8 or 16 bytes.
#ifndef PLEXUS_PLUGINS_GPU_KERNELS_SLICE_LAUNCH_H_
#define PLEXUS_PLUGINS_GPU_KERNELS_SLICE_LAUNCH_H_

#include "gpu_runtime.h"

#include <cstddef>
#include <cstdint>

#include "kernels/array_launch.h"

namespace plexus::cuda::arr {

// out (row-major over plan.out_dims, plan.n > 0 words) = in at
// sum(coord[d] * plan.src_strides[d]) words; strides may be negative (`in`
// then points inside the input). `wide_index` asks for 64-bit index
// arithmetic (input or output at least 2^31 words).
void LaunchSlice(size_t elem_size, const void* in, void* out, const TransposePlan& plan,
                 bool wide_index, px_gpu::Stream stream);

}  // namespace plexus::cuda::arr

#endif  // PLEXUS_PLUGINS_GPU_KERNELS_SLICE_LAUNCH_H_

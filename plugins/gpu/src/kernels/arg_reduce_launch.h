// The launch functions of ArgMax / ArgMin and All / Any: plain C++ between
// the kernel classes (arg_reduce.cc, host compiler) and the device code
// (arg_reduce.cu, nvcc).
#ifndef PLEXUS_PLUGINS_GPU_KERNELS_ARG_REDUCE_LAUNCH_H_
#define PLEXUS_PLUGINS_GPU_KERNELS_ARG_REDUCE_LAUNCH_H_

#include "gpu_runtime.h"

#include <cstdint>

#include "kernels/elementwise_launch.h"

namespace plexus::cuda::red2 {

// out[o, i] = the first k < n at which x[o, k, i] is the largest (max) or
// smallest value, NaN skipped unless it is x[o, 0, i] (the cpu plugin's
// sequential scan with a strict comparison). x is [outer, n, inner] of
// `type` (any ew::Type), n > 0, outer * inner > 0; out holds
// integers of out_bytes (2, 4 or 8) bytes.
void LaunchArgReduce(bool max, ew::Type type, const void* x, void* out, int out_bytes,
                     int64_t outer, int64_t n, int64_t inner, px_gpu::Stream stream);

// The most merged dimension groups All / Any handle (arg_reduce.cc refuses more).
constexpr int kMaxGroups = 16;

// A bool reduction: the input's dimensions merged into groups (dims,
// innermost last); input element i goes to output element
// sum(coord[d] * out_strides[d]) (stride 0 for reduced groups).
struct LogicalPlan {
  int rank = 0;
  int64_t num_inputs = 0;  // > 0
  int64_t dims[kMaxGroups] = {};
  int64_t out_strides[kMaxGroups] = {};
};

// All (all = true) or Any over `plan`; `out` (bool bytes) must hold the
// identity already (1 for All, 0 for Any): the kernel writes only the
// absorbing value. full: a single output element.
void LaunchLogicalReduce(bool all, const uint8_t* x, uint8_t* out, const LogicalPlan& plan,
                         bool full, px_gpu::Stream stream);

}  // namespace plexus::cuda::red2

#endif  // PLEXUS_PLUGINS_GPU_KERNELS_ARG_REDUCE_LAUNCH_H_

// The launch functions of the reductions, Softmax / LogSoftmax and BiasAdd:
// plain C++ between the kernel classes (reduce.cc, host compiler) and the
// device code (reduce.cu, nvcc).
#ifndef PLEXUS_PLUGINS_GPU_KERNELS_REDUCE_LAUNCH_H_
#define PLEXUS_PLUGINS_GPU_KERNELS_REDUCE_LAUNCH_H_

#include "gpu_runtime.h"

#include <cstdint>

#include "kernels/elementwise_launch.h"

namespace plexus::cuda::red {

enum class Reducer : int { kSum, kMean, kMax, kMin, kProd };

// The most merged groups of kept (or of reduced) dimensions a reduction
// handles; reduce.cc refuses more.
constexpr int kMaxGroups = 8;

// A reduction of a contiguous input, its dimensions merged into alternating
// groups of kept and reduced ones. Output element o (row-major over the kept
// groups, `outputs` in all) folds the `count` input elements at
//   base(o) + offset(k), k < count,
// where base decomposes o over kept_dims with kept_strides and offset
// decomposes k over red_dims with red_strides (innermost last).
//
// With one reduced group the input is [outer, count, inner] (layout kRows
// when inner is 1: rows of `count` contiguous elements; kColumns otherwise:
// each (outer, inner) column strided by inner) and the group arrays are
// unused; only layout kGeneral (two or more reduced groups) decomposes.
enum class Layout : int { kRows, kColumns, kGeneral };

struct ReducePlan {
  Layout layout = Layout::kRows;
  int64_t outer = 0;
  int64_t inner = 1;
  int64_t outputs = 0;
  int64_t count = 0;
  int kept_rank = 0;
  int64_t kept_dims[kMaxGroups] = {};
  int64_t kept_strides[kMaxGroups] = {};
  int red_rank = 0;
  int64_t red_dims[kMaxGroups] = {};
  int64_t red_strides[kMaxGroups] = {};
};

// out[o] = fold of the plan's elements (outputs > 0). count == 0 gives the
// identity (Sum 0, Prod 1, Max -inf, Min +inf; Mean 0 / 0 = NaN). half and
// bfloat16 accumulate in float.
void LaunchReduce(Reducer op, ew::Dtype dtype, const void* in, void* out, const ReducePlan& plan,
                  px_gpu::Stream stream);

// Softmax (or LogSoftmax) of each of `rows` rows of `cols` contiguous
// elements (rows, cols > 0).
void LaunchSoftmax(bool log, ew::Dtype dtype, const void* x, void* y, int64_t rows, int64_t cols,
                   px_gpu::Stream stream);

// y = x + bias[c] where c = (i / inner) % channels for element i < n (n > 0):
// inner 1 for channels last (NHWC), H*W for NCHW.
void LaunchBiasAdd(ew::Dtype dtype, const void* x, const void* bias, void* y, int64_t n,
                   int64_t channels, int64_t inner, px_gpu::Stream stream);

}  // namespace plexus::cuda::red

#endif  // PLEXUS_PLUGINS_GPU_KERNELS_REDUCE_LAUNCH_H_

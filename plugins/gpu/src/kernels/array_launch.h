// The launch functions of the data-movement kernels (Transpose, ConcatV2,
// Cast, GatherV2, Pad): plain C++ between the kernel classes (array.cc, host
// compiler) and the device code (array.cu, nvcc). Except Cast, the kernels
// move elements as opaque words of 1, 2, 4, 8 or 16 bytes, so every dtype
// shares one instantiation per size.
#ifndef PLEXUS_PLUGINS_GPU_KERNELS_ARRAY_LAUNCH_H_
#define PLEXUS_PLUGINS_GPU_KERNELS_ARRAY_LAUNCH_H_

#include "gpu_runtime.h"

#include <cstddef>
#include <cstdint>

namespace plexus::cuda::arr {

// The most dimensions the index-decomposing kernels take after collapsing;
// array.cc refuses more with UNIMPLEMENTED.
constexpr int kMaxRank = 8;

// out (row-major over out_dims, `n` elements) = in at sum(coord[d] *
// src_strides[d]) (strides in elements).
struct TransposePlan {
  int rank = 0;
  int64_t n = 0;
  int64_t out_dims[kMaxRank] = {};
  int64_t src_strides[kMaxRank] = {};
};

// elem_size is 1, 2, 4, 8 or 16 (n > 0).
void LaunchTranspose(size_t elem_size, const void* in, void* out, const TransposePlan& plan,
                     px_gpu::Stream stream);

// in [batch, rows, cols] -> out [batch, cols, rows] through 32 x 32 tiles in
// shared memory (coalesced reads and writes); elem_size 1, 2, 4 or 8.
void LaunchTransposeTiled(size_t elem_size, const void* in, void* out, int64_t batch,
                          int64_t rows, int64_t cols, px_gpu::Stream stream);

// The dtypes Cast converts between.
enum class CastType : int {
  kFloat, kDouble, kHalf, kBFloat16, kInt8, kInt16, kInt32, kInt64,
  kUInt8, kUInt16, kUInt32, kUInt64, kBool,
};

// y[i] = cast(x[i]) for i < n (n > 0), with the cpu plugin's rules: to bool
// is x != 0; float to integer saturates and gives 0 for NaN; `truncate`
// drops the mantissa bits a narrower floating type cannot hold instead of
// rounding.
void LaunchCast(CastType src, CastType dst, bool truncate, const void* x, void* y, int64_t n,
                px_gpu::Stream stream);

// *first_bad = the smallest k < n with indices[k] outside [0, limit), left
// untouched when none is (the caller fills it with a large value first).
void LaunchGatherCheck(bool indices64, const void* indices, int64_t n, int64_t limit,
                       int64_t* first_bad, px_gpu::Stream stream);

// params [batch, outer, limit, inner], indices [batch, n] ->
// out [batch, outer, n, inner]; inner counts words of elem_size bytes (1, 2,
// 4, 8 or 16). An index out of range gives zeros (the caller checks first).
void LaunchGather(size_t elem_size, bool indices64, const void* params, const void* indices,
                  void* out, int64_t batch, int64_t outer, int64_t limit, int64_t inner,
                  int64_t n, px_gpu::Stream stream);

// out (row-major over out_dims, n elements): in at coord - before where
// that lies inside in_dims, else the pad value: *value_dev when not null
// (a device scalar), else the low elem_size bytes of value_bits.
struct PadPlan {
  int rank = 0;
  int64_t n = 0;
  int64_t out_dims[kMaxRank] = {};
  int64_t in_dims[kMaxRank] = {};
  int64_t in_strides[kMaxRank] = {};
  int64_t before[kMaxRank] = {};
};

// elem_size 1, 2, 4 or 8.
void LaunchPad(size_t elem_size, const void* in, void* out, const void* value_dev,
               uint64_t value_bits, const PadPlan& plan, px_gpu::Stream stream);

}  // namespace plexus::cuda::arr

#endif  // PLEXUS_PLUGINS_GPU_KERNELS_ARRAY_LAUNCH_H_

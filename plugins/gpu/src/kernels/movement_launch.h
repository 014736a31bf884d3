// The launch functions of the data-movement and creation kernels of
// movement.cc (Tile, BroadcastTo, MirrorPad, Split, SplitV, Unpack, Pack,
// GatherNd, SpaceToBatchND, BatchToSpaceND, Fill, OnesLike, Range, OneHot):
// plain C++ between the kernel classes (movement.cc, host compiler) and the
// device code (movement.cu, nvcc). Elements move as opaque words of 1, 2, 4,
// 8 or 16 bytes, so every dtype shares one instantiation per word size.
// `wide` asks for 64-bit index arithmetic (some tensor of at least 2^31
// words); otherwise indices are 32-bit.
#ifndef PLEXUS_PLUGINS_GPU_KERNELS_MOVEMENT_LAUNCH_H_
#define PLEXUS_PLUGINS_GPU_KERNELS_MOVEMENT_LAUNCH_H_

#include "gpu_runtime.h"

#include <cstddef>
#include <cstdint>

namespace plexus::cuda::mov {

// The most dimensions a plan holds; movement.cc refuses more (after merging)
// with UNIMPLEMENTED.
constexpr int kMaxRank = 8;

// A block of `dims` (row-major, n words): the word at coordinate c moves
// from in + sum(c[d] * src_strides[d]) to out + sum(c[d] * dst_strides[d])
// (strides in words; source strides may be 0).
struct CopyPlan {
  int rank = 0;
  int64_t n = 0;
  int64_t dims[kMaxRank] = {};
  int64_t src_strides[kMaxRank] = {};
  int64_t dst_strides[kMaxRank] = {};
};
void LaunchStridedCopy(size_t word, const void* in, void* out, const CopyPlan& plan, bool wide,
                       px_gpu::Stream stream);

// Tile (and BroadcastTo): out (row-major over out_dims, contiguous, n words)
// at coordinate c = in at coordinate c[d] % in_dims[d] (in contiguous with
// in_strides); every in_dims[d] > 0.
struct TilePlan {
  int rank = 0;
  int64_t n = 0;
  int64_t out_dims[kMaxRank] = {};
  int64_t in_dims[kMaxRank] = {};
  int64_t in_strides[kMaxRank] = {};
};
void LaunchTile(size_t word, const void* in, void* out, const TilePlan& plan, bool wide,
                px_gpu::Stream stream);

// MirrorPad: out (row-major over out_dims, n words) at c = in at
// m(c[d] - before[d]) per dimension, where m reflects a position outside
// [0, in_dims[d]) back inside: REFLECT (symmetric false) excludes the edge,
// SYMMETRIC repeats it.
struct MirrorPlan {
  int rank = 0;
  int64_t n = 0;
  int64_t out_dims[kMaxRank] = {};
  int64_t in_dims[kMaxRank] = {};
  int64_t in_strides[kMaxRank] = {};
  int64_t before[kMaxRank] = {};
};
void LaunchMirrorPad(size_t word, const void* in, void* out, const MirrorPlan& plan,
                     bool symmetric, bool wide, px_gpu::Stream stream);

// SpaceToBatchND (to_batch) and BatchToSpaceND. The spatial side is
// [batch, space[0..m), rest], the batch side [blocks * batch, grid[0..m),
// rest] (rest in words); batch-side index (offset, b) with offset the
// row-major position in the block. Space position = grid position * block +
// block offset - pad (pad: paddings or crops before). SpaceToBatch writes
// zeros where that position lies outside the space.
struct SpaceBatchPlan {
  int m = 0;
  int64_t n = 0;      // output words
  int64_t batch = 0;  // the spatial side's batch
  int64_t rest = 0;
  int64_t block[kMaxRank] = {};
  int64_t space[kMaxRank] = {};
  int64_t grid[kMaxRank] = {};
  int64_t pad[kMaxRank] = {};
};
void LaunchSpaceBatch(size_t word, bool to_batch, const void* in, void* out,
                      const SpaceBatchPlan& plan, bool wide, px_gpu::Stream stream);

// out[i] = the value for i < n: *value_dev when not null (a device
// scalar), else the low `word` bytes of value_bits; word 1, 2, 4 or 8.
void LaunchFill(size_t word, const void* value_dev, uint64_t value_bits, void* out, int64_t n,
                px_gpu::Stream stream);

// Range: out[i] = start + i * delta for i < n, in the arithmetic of the cpu
// plugin: int64 for the integer types (wrapping into the output type),
// float for float, half and bfloat16, double for double (the product
// rounded before the sum, never fused).
enum class RangeType : int { kFloat, kDouble, kHalf, kBFloat16, kInt8, kInt16, kInt32, kInt64,
                             kUInt16, kUInt32 };
void LaunchRange(RangeType type, double fstart, double fdelta, int64_t istart, int64_t idelta,
                 void* out, int64_t n, px_gpu::Stream stream);

// OneHot: out [prefix, depth, suffix] (n words) = *on where indices[p *
// suffix + s] == the depth position, else *off (both device scalars).
// index_type: 0 uint8, 1 int8, 2 int32, 3 int64.
void LaunchOneHot(size_t word, int index_type, const void* indices, const void* on,
                  const void* off, void* out, int64_t depth, int64_t suffix, int64_t n,
                  bool wide, px_gpu::Stream stream);

// GatherNd. The index tuples: `count` rows of `depth` int32 or int64 values.
constexpr int kMaxGatherNdDepth = 16;
struct GatherNdPlan {
  int depth = 0;
  int64_t count = 0;
  int64_t slice = 0;  // words per gathered slice
  int64_t dims[kMaxGatherNdDepth] = {};
  int64_t strides[kMaxGatherNdDepth] = {};  // in words
};
// *first_bad = the smallest row m with some value outside [0, dims[j]),
// left untouched when none is (the caller fills it with a large value).
void LaunchGatherNdCheck(bool indices64, const void* indices, const GatherNdPlan& plan,
                         int64_t* first_bad, px_gpu::Stream stream);
// out [count, slice] = the slice at each tuple (zeros for a tuple out of
// range: the caller checks first).
void LaunchGatherNd(size_t word, bool indices64, const void* params, const void* indices,
                    void* out, const GatherNdPlan& plan, bool wide, px_gpu::Stream stream);

}  // namespace plexus::cuda::mov

#endif  // PLEXUS_PLUGINS_GPU_KERNELS_MOVEMENT_LAUNCH_H_

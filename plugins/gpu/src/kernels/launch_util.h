// Grid sizes and dtype dispatch shared by the .cu files.
#ifndef PLEXUS_PLUGINS_GPU_KERNELS_LAUNCH_UTIL_H_
#define PLEXUS_PLUGINS_GPU_KERNELS_LAUNCH_UTIL_H_

#include <cstdint>

#include "gpu_portability.h"
#include "kernels/elementwise_launch.h"

namespace plexus::cuda {

constexpr int kBlockSize = 256;
// Grid-stride loops need no more blocks than the GPU holds at once: 2048
// blocks of 256 threads is about two waves on an H100 (132 SMs x 2048
// threads).
constexpr int64_t kMaxBlocks = 2048;

inline unsigned GridFor(int64_t work_items) {
  int64_t blocks = (work_items + kBlockSize - 1) / kBlockSize;
  if (blocks < 1) blocks = 1;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  return static_cast<unsigned>(blocks);
}

// Calls f(T{}) with the device storage type of `dtype`.
template <typename F>
void VisitDtype(ew::Dtype dtype, F&& f) {
  switch (dtype) {
    case ew::Dtype::kFloat: f(float{}); return;
    case ew::Dtype::kDouble: f(double{}); return;
    case ew::Dtype::kHalf: f(px_gpu::half{}); return;
    case ew::Dtype::kBFloat16: f(px_gpu::bfloat16{}); return;
  }
}

inline bool Aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// 16 bytes of T, loaded and stored as one vector (from 16-byte aligned
// memory): 4 floats, 8 halves.
template <typename T>
struct alignas(16) Pack16 {
  static constexpr int kSize = 16 / static_cast<int>(sizeof(T));
  T v[kSize];
};

}  // namespace plexus::cuda

#endif  // PLEXUS_PLUGINS_GPU_KERNELS_LAUNCH_UTIL_H_

// Device code of the strided copies (Split, SplitV, Unpack, Pack), Tile and
// BroadcastTo, MirrorPad, SpaceToBatchND and BatchToSpaceND, and GatherNd
// (with its index range check). One thread per output word (grid-stride
// loops) decomposes its index into coordinates; words are opaque (1, 2, 4,
// 8 or 16 bytes). 32-bit index arithmetic unless the caller asks for 64.
#include <cstdint>

#include "gpu_portability.h"
#include "kernels/launch_util.h"
#include "kernels/movement_launch.h"

namespace plexus::cuda {
namespace {

using mov::CopyPlan;
using mov::GatherNdPlan;
using mov::MirrorPlan;
using mov::SpaceBatchPlan;
using mov::TilePlan;

struct alignas(16) MovWord16 {
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
    default: f(MovWord16{}); return;
  }
}

// Calls f(I{}) with the index type: int64_t when `wide`, else int32_t.
template <typename F>
void VisitIndex(bool wide, F&& f) {
  if (wide) {
    f(int64_t{});
  } else {
    f(int32_t{});
  }
}

// ---------------------------------------------------------------------------
// Strided copy
// ---------------------------------------------------------------------------

template <typename W, typename I>
__global__ void StridedCopyKernel(const W* __restrict__ in, W* __restrict__ out,
                                  const CopyPlan plan) {
  const I n = static_cast<I>(plan.n);
  const I step = static_cast<I>(blockDim.x) * gridDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    I r = i, src = 0, dst = 0;
    for (int d = plan.rank - 1; d >= 0; --d) {
      const I dim = static_cast<I>(plan.dims[d]);
      const I q = r / dim;
      const I c = r - q * dim;
      src += c * static_cast<I>(plan.src_strides[d]);
      dst += c * static_cast<I>(plan.dst_strides[d]);
      r = q;
    }
    out[dst] = in[src];
  }
}

// ---------------------------------------------------------------------------
// Tile
// ---------------------------------------------------------------------------

template <typename W, typename I>
__global__ void TileKernel(const W* __restrict__ in, W* __restrict__ out, const TilePlan plan) {
  const I n = static_cast<I>(plan.n);
  const I step = static_cast<I>(blockDim.x) * gridDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    I r = i, src = 0;
    for (int d = plan.rank - 1; d >= 0; --d) {
      const I dim = static_cast<I>(plan.out_dims[d]);
      const I q = r / dim;
      src += ((r - q * dim) % static_cast<I>(plan.in_dims[d])) * static_cast<I>(plan.in_strides[d]);
      r = q;
    }
    out[i] = in[src];
  }
}

// ---------------------------------------------------------------------------
// MirrorPad
// ---------------------------------------------------------------------------

template <typename W, typename I>
__global__ void MirrorPadKernel(const W* __restrict__ in, W* __restrict__ out,
                                const MirrorPlan plan, int symmetric) {
  const I n = static_cast<I>(plan.n);
  const I step = static_cast<I>(blockDim.x) * gridDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    I r = i, src = 0;
    for (int d = plan.rank - 1; d >= 0; --d) {
      const I dim = static_cast<I>(plan.out_dims[d]);
      const I q = r / dim;
      const I size = static_cast<I>(plan.in_dims[d]);
      I p = r - q * dim - static_cast<I>(plan.before[d]);
      // Paddings are below the size (REFLECT) or at most the size
      // (SYMMETRIC): one reflection lands inside.
      if (p < 0) p = -p - symmetric;
      if (p >= size) p = 2 * size - 2 + symmetric - p;
      src += p * static_cast<I>(plan.in_strides[d]);
      r = q;
    }
    out[i] = in[src];
  }
}

// ---------------------------------------------------------------------------
// SpaceToBatchND, BatchToSpaceND
// ---------------------------------------------------------------------------

template <typename W, typename I, bool kToBatch>
__global__ void SpaceBatchKernel(const W* __restrict__ in, W* __restrict__ out,
                                 const SpaceBatchPlan plan) {
  const I n = static_cast<I>(plan.n);
  const I rest = static_cast<I>(plan.rest);
  const I batch = static_cast<I>(plan.batch);
  const I step = static_cast<I>(blockDim.x) * gridDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const I e = i % rest;
    I t = i / rest;
    // The output's coordinates: grid positions (to batch) or space
    // positions (to space), innermost first.
    I pos[mov::kMaxRank];
    for (int d = plan.m - 1; d >= 0; --d) {
      const I dim = static_cast<I>(kToBatch ? plan.grid[d] : plan.space[d]);
      const I q = t / dim;
      pos[d] = t - q * dim;
      t = q;
    }
    if (kToBatch) {
      // t = offset * batch + b.
      const I b = t % batch;
      I offset = t / batch;
      I src = 0;
      bool inside = true;
      I off[mov::kMaxRank];
      for (int d = plan.m - 1; d >= 0; --d) {
        const I bs = static_cast<I>(plan.block[d]);
        off[d] = offset % bs;
        offset /= bs;
      }
      I s_index = b;
      for (int d = 0; d < plan.m; ++d) {
        const I s = pos[d] * static_cast<I>(plan.block[d]) + off[d] - static_cast<I>(plan.pad[d]);
        const I size = static_cast<I>(plan.space[d]);
        inside = inside && s >= 0 && s < size;
        s_index = s_index * size + s;
      }
      if (inside) {
        src = s_index * rest + e;
        out[i] = in[src];
      } else {
        out[i] = W{};
      }
    } else {
      // t = b; the batch-side offset comes from the space positions.
      const I b = t;
      I offset = 0, g_index = 0;
      for (int d = 0; d < plan.m; ++d) {
        const I bs = static_cast<I>(plan.block[d]);
        const I s = pos[d] + static_cast<I>(plan.pad[d]);
        offset = offset * bs + s % bs;
      }
      g_index = offset * batch + b;
      for (int d = 0; d < plan.m; ++d) {
        const I bs = static_cast<I>(plan.block[d]);
        const I s = pos[d] + static_cast<I>(plan.pad[d]);
        g_index = g_index * static_cast<I>(plan.grid[d]) + s / bs;
      }
      out[i] = in[g_index * rest + e];
    }
  }
}

// ---------------------------------------------------------------------------
// GatherNd
// ---------------------------------------------------------------------------

template <typename Index>
__global__ void GatherNdCheckKernel(const Index* __restrict__ indices, const GatherNdPlan plan,
                                    unsigned long long* first_bad) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t m = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; m < plan.count;
       m += step) {
    bool bad = false;
    for (int j = 0; j < plan.depth; ++j) {
      const int64_t v = static_cast<int64_t>(indices[m * plan.depth + j]);
      bad = bad || v < 0 || v >= plan.dims[j];
    }
    if (bad) {
      atomicMin(first_bad, static_cast<unsigned long long>(m));
      return;  // later rows of this thread are larger
    }
  }
}

template <typename W, typename Index, typename I>
__global__ void GatherNdKernel(const W* __restrict__ params, const Index* __restrict__ indices,
                               W* __restrict__ out, const GatherNdPlan plan) {
  const I slice = static_cast<I>(plan.slice);
  const I n = static_cast<I>(plan.count) * slice;
  const I step = static_cast<I>(blockDim.x) * gridDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const I e = i % slice;
    const I m = i / slice;
    I offset = 0;
    bool inside = true;
    for (int j = 0; j < plan.depth; ++j) {
      const int64_t v = static_cast<int64_t>(indices[static_cast<int64_t>(m) * plan.depth + j]);
      inside = inside && v >= 0 && v < plan.dims[j];
      offset += static_cast<I>(v) * static_cast<I>(plan.strides[j]);
    }
    out[i] = inside ? params[offset + e] : W{};
  }
}

}  // namespace

void mov::LaunchStridedCopy(size_t word, const void* in, void* out, const CopyPlan& plan,
                            bool wide, px_gpu::Stream stream) {
  VisitWord(word, [&](auto w) {
    using W = decltype(w);
    VisitIndex(wide, [&](auto index) {
      using I = decltype(index);
      PX_GPU_LAUNCH((StridedCopyKernel<W, I>), GridFor(plan.n), kBlockSize, 0, stream)(
          static_cast<const W*>(in), static_cast<W*>(out), plan);
    });
  });
}

void mov::LaunchTile(size_t word, const void* in, void* out, const TilePlan& plan, bool wide,
                     px_gpu::Stream stream) {
  VisitWord(word, [&](auto w) {
    using W = decltype(w);
    VisitIndex(wide, [&](auto index) {
      using I = decltype(index);
      PX_GPU_LAUNCH((TileKernel<W, I>), GridFor(plan.n), kBlockSize, 0, stream)(
          static_cast<const W*>(in), static_cast<W*>(out), plan);
    });
  });
}

void mov::LaunchMirrorPad(size_t word, const void* in, void* out, const MirrorPlan& plan,
                          bool symmetric, bool wide, px_gpu::Stream stream) {
  VisitWord(word, [&](auto w) {
    using W = decltype(w);
    VisitIndex(wide, [&](auto index) {
      using I = decltype(index);
      PX_GPU_LAUNCH((MirrorPadKernel<W, I>), GridFor(plan.n), kBlockSize, 0, stream)(
          static_cast<const W*>(in), static_cast<W*>(out), plan, symmetric ? 1 : 0);
    });
  });
}

void mov::LaunchSpaceBatch(size_t word, bool to_batch, const void* in, void* out,
                           const SpaceBatchPlan& plan, bool wide, px_gpu::Stream stream) {
  VisitWord(word, [&](auto w) {
    using W = decltype(w);
    VisitIndex(wide, [&](auto index) {
      using I = decltype(index);
      if (to_batch) {
        PX_GPU_LAUNCH((SpaceBatchKernel<W, I, true>), GridFor(plan.n), kBlockSize, 0, stream)(
            static_cast<const W*>(in), static_cast<W*>(out), plan);
      } else {
        PX_GPU_LAUNCH((SpaceBatchKernel<W, I, false>), GridFor(plan.n), kBlockSize, 0, stream)(
            static_cast<const W*>(in), static_cast<W*>(out), plan);
      }
    });
  });
}

void mov::LaunchGatherNdCheck(bool indices64, const void* indices, const GatherNdPlan& plan,
                              int64_t* first_bad, px_gpu::Stream stream) {
  auto* bad = reinterpret_cast<unsigned long long*>(first_bad);
  if (indices64) {
    PX_GPU_LAUNCH((GatherNdCheckKernel<int64_t>), GridFor(plan.count), kBlockSize, 0, stream)(
        static_cast<const int64_t*>(indices), plan, bad);
  } else {
    PX_GPU_LAUNCH((GatherNdCheckKernel<int32_t>), GridFor(plan.count), kBlockSize, 0, stream)(
        static_cast<const int32_t*>(indices), plan, bad);
  }
}

void mov::LaunchGatherNd(size_t word, bool indices64, const void* params, const void* indices,
                         void* out, const GatherNdPlan& plan, bool wide, px_gpu::Stream stream) {
  const int64_t n = plan.count * plan.slice;
  VisitWord(word, [&](auto w) {
    using W = decltype(w);
    VisitIndex(wide, [&](auto index) {
      using I = decltype(index);
      const W* p = static_cast<const W*>(params);
      W* o = static_cast<W*>(out);
      if (indices64) {
        PX_GPU_LAUNCH((GatherNdKernel<W, int64_t, I>), GridFor(n), kBlockSize, 0, stream)(
            p, static_cast<const int64_t*>(indices), o, plan);
      } else {
        PX_GPU_LAUNCH((GatherNdKernel<W, int32_t, I>), GridFor(n), kBlockSize, 0, stream)(
            p, static_cast<const int32_t*>(indices), o, plan);
      }
    });
  });
}

}  // namespace plexus::cuda

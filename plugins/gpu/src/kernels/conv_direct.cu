// Device code of Plexus's own convolutions (conv_direct_launch.h).
//
// Conv2D is an implicit GEMM per group: C[m, j] = sum over l of A[m, l] *
// B[l, j] with m = (b, oy, ox) an output pixel (M = n * oh * ow), j an output
// channel of the group, l = (r, s, ci) a filter tap and input channel (K =
// kh * kw * filter_in). B is the HWIO filter itself ([K, out_c] row-major, the
// group's columns); A is gathered from the input on the fly: no im2col
// buffer. The block tile, main loop and epilogue are the GEMM's
// (gemm_device.h); a thread gathers A along l (consecutive threads read
// consecutive input channels, contiguous in NHWC) and decomposes each of its
// 4 rows into (b, oy, ox) once per tile, each l once per slice.
//
// Depthwise: one thread per output element (grid-stride), looping over the
// kh x kw window; consecutive threads take consecutive channels (NHWC) or
// columns (NCHW).
#include <cstdint>

#include "gpu_portability.h"
#include "kernels/conv_direct_launch.h"
#include "kernels/gemm_device.h"
#include "kernels/launch_util.h"

namespace plexus::cuda::conv_direct {
namespace {

using gemm::ApplyEpilogue;
using gemm::Epilogue;
using gemm::kThreads;
using gemm::kTileK;
using gemm::kTileM;
using gemm::kTileN;
using gemm::LoadAs;
using gemm::Mapping;
using gemm::StoreAs;
using gemm::Tiles;

template <typename T, typename Acc>
__global__ void __launch_bounds__(kThreads)
    Conv2DKernel(const T* __restrict__ x, const T* __restrict__ f, T* __restrict__ y,
                 const ConvPlan p, const Epilogue e) {
  __shared__ Tiles<Acc> s;
  const int t = static_cast<int>(threadIdx.x);
  const int tx = t % 16, ty = t / 16;
  // A is gathered along k (input channels), B (the filter) is contiguous
  // along its columns.
  const Mapping ma = gemm::MappingFor(true, t);
  const Mapping mb = gemm::MappingFor(false, t);
  const int64_t pixels = p.oh * p.ow;
  const int64_t m = p.n * pixels;
  const int64_t per_group = p.out_c / p.groups;
  const int64_t k = p.kh * p.kw * p.filter_in;
  const int32_t filter_in32 = static_cast<int32_t>(p.filter_in);
  const int32_t kw32 = static_cast<int32_t>(p.kw);
  const int64_t tiles_m = (m + kTileM - 1) / kTileM;
  const int64_t tiles_n = (per_group + kTileN - 1) / kTileN;
  // Block-uniform loop bounds: every thread reaches MainLoop's barriers.
  for (int64_t g = blockIdx.z; g < p.groups; g += gridDim.z) {
    const int64_t ch0 = g * per_group;  // the group's first output channel
    const T* xg = x + g * p.filter_in * p.x_sc;
    for (int64_t tn = blockIdx.y; tn < tiles_n; tn += gridDim.y) {
      for (int64_t tm = blockIdx.x; tm < tiles_m; tm += gridDim.x) {
        const int64_t m0 = tm * kTileM, n0 = tn * kTileN;
        // The thread's 4 rows of A (ma.dl == 0: the same l for all four).
        bool row_ok[4];
        int64_t base[4], iy0[4], ix0[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const int64_t row = m0 + ma.x + q * ma.dx;
          row_ok[q] = row < m;
          const int64_t r = row_ok[q] ? row : 0;
          const int64_t b = r / pixels, pix = r % pixels;
          const int64_t oy = pix / p.ow, ox = pix % p.ow;
          base[q] = b * p.x_sn;
          iy0[q] = oy * p.sh - p.pad_top;
          ix0[q] = ox * p.sw - p.pad_left;
        }
        auto load_a = [&](int64_t k0, Acc (&v)[4]) {
          const int64_t l = k0 + ma.l;
          int64_t ci = 0, dy = 0, dx = 0;
          const bool l_ok = l < k;
          if (l_ok) {
            // 32-bit division: k < 2^31 (native_conv.cc checks).
            const int32_t l32 = static_cast<int32_t>(l);
            ci = l32 % filter_in32;
            const int32_t rs = l32 / filter_in32;
            dx = (rs % kw32) * p.dw;
            dy = (rs / kw32) * p.dh;
          }
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            const int64_t iy = iy0[q] + dy, ix = ix0[q] + dx;
            const bool ok = l_ok && row_ok[q] && iy >= 0 && iy < p.h && ix >= 0 && ix < p.w;
            v[q] = ok ? LoadAs<Acc>(xg + base[q] + iy * p.x_sh + ix * p.x_sw + ci * p.x_sc)
                      : Acc(0);
          }
        };
        auto load_b = [&](int64_t k0, Acc (&v)[4]) {
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            const int64_t j = n0 + mb.x + q * mb.dx, l = k0 + mb.l + q * mb.dl;
            v[q] = (j < per_group && l < k) ? LoadAs<Acc>(f + l * p.out_c + ch0 + j) : Acc(0);
          }
        };
        Acc acc[4][4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
#pragma unroll
          for (int j = 0; j < 4; ++j) acc[i][j] = Acc(0);
        }
        gemm::MainLoop<Acc>(s, k, ma, mb, load_a, load_b, acc);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int64_t row = m0 + ty + 16 * i;
          if (row >= m) continue;
          const int64_t b = row / pixels, pix = row % pixels;
          const int64_t out = b * p.y_sn + (pix / p.ow) * p.y_sh + (pix % p.ow) * p.y_sw;
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const int64_t col = n0 + tx + 16 * j;
            if (col >= per_group) continue;
            const int64_t ch = ch0 + col;
            y[out + ch * p.y_sc] = StoreAs<T>(ApplyEpilogue<T, Acc>(e, acc[i][j], ch));
          }
        }
      }
    }
  }
}

template <typename T, typename Acc>
__global__ void DepthwiseKernel(const T* __restrict__ x, const T* __restrict__ f,
                                T* __restrict__ y, const ConvPlan p, const Epilogue e) {
  const int64_t total = p.n * p.oh * p.ow * p.out_c;
  const bool channels_last = p.y_sc == 1;
  const int64_t grid = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += grid) {
    int64_t b, oy, ox, ch, rest = idx;
    if (channels_last) {
      ch = rest % p.out_c;
      rest /= p.out_c;
      ox = rest % p.ow;
      rest /= p.ow;
      oy = rest % p.oh;
      b = rest / p.oh;
    } else {
      ox = rest % p.ow;
      rest /= p.ow;
      oy = rest % p.oh;
      rest /= p.oh;
      ch = rest % p.out_c;
      b = rest / p.out_c;
    }
    const int64_t ci = ch / p.multiplier;
    const T* xb = x + b * p.x_sn + ci * p.x_sc;
    Acc acc = Acc(0);
    for (int64_t r = 0; r < p.kh; ++r) {
      const int64_t iy = oy * p.sh - p.pad_top + r * p.dh;
      if (iy < 0 || iy >= p.h) continue;
      for (int64_t s = 0; s < p.kw; ++s) {
        const int64_t ix = ox * p.sw - p.pad_left + s * p.dw;
        if (ix < 0 || ix >= p.w) continue;
        acc += LoadAs<Acc>(xb + iy * p.x_sh + ix * p.x_sw) *
               LoadAs<Acc>(f + (r * p.kw + s) * p.out_c + ch);
      }
    }
    y[b * p.y_sn + oy * p.y_sh + ox * p.y_sw + ch * p.y_sc] =
        StoreAs<T>(ApplyEpilogue<T, Acc>(e, acc, ch));
  }
}

int64_t Clamp(int64_t v, int64_t hi) { return v < 1 ? 1 : (v > hi ? hi : v); }

}  // namespace

void LaunchConv2D(ew::Dtype dtype, const void* x, const void* filter, void* y,
                  const ConvPlan& plan, const gemm::Epilogue& epilogue, px_gpu::Stream stream) {
  const int64_t m = plan.n * plan.oh * plan.ow;
  const int64_t per_group = plan.out_c / plan.groups;
  const dim3 grid(static_cast<unsigned>(Clamp((m + kTileM - 1) / kTileM, gemm::kMaxGridX)),
                  static_cast<unsigned>(Clamp((per_group + kTileN - 1) / kTileN, gemm::kMaxGridYZ)),
                  static_cast<unsigned>(Clamp(plan.groups, gemm::kMaxGridYZ)));
  VisitDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    using Acc = px_gpu::ComputeType<T>;
    PX_GPU_LAUNCH((Conv2DKernel<T, Acc>), grid, kThreads, 0, stream)(
        static_cast<const T*>(x), static_cast<const T*>(filter), static_cast<T*>(y), plan,
        epilogue);
  });
}

void LaunchDepthwise(ew::Dtype dtype, const void* x, const void* filter, void* y,
                     const ConvPlan& plan, const gemm::Epilogue& epilogue,
                     px_gpu::Stream stream) {
  const int64_t total = plan.n * plan.oh * plan.ow * plan.out_c;
  VisitDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    using Acc = px_gpu::ComputeType<T>;
    PX_GPU_LAUNCH((DepthwiseKernel<T, Acc>), GridFor(total), kBlockSize, 0, stream)(
        static_cast<const T*>(x), static_cast<const T*>(filter), static_cast<T*>(y), plan,
        epilogue);
  });
}

}  // namespace plexus::cuda::conv_direct

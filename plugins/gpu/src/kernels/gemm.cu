// Plexus's own batched, strided GEMM (gemm_launch.h): 64 x 64 block tiles,
// 16-deep k slices in shared memory, a 4 x 4 register tile per thread (see
// gemm_device.h), the epilogue applied before the one rounding to the
// output type. Used by native_matmul.cc.
#include <cstdint>

#include "gpu_portability.h"
#include "kernels/gemm_device.h"
#include "kernels/gemm_launch.h"
#include "kernels/launch_util.h"

namespace plexus::cuda::gemm {
namespace {

template <typename T, typename Acc>
__global__ void __launch_bounds__(kThreads)
    GemmKernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c,
               const GemmPlan p, const Epilogue e) {
  __shared__ Tiles<Acc> s;
  const int t = static_cast<int>(threadIdx.x);
  const int tx = t % 16, ty = t / 16;
  const Mapping ma = MappingFor(p.a_sk == 1, t);
  const Mapping mb = MappingFor(p.b_sk == 1, t);
  const int64_t tiles_m = (p.m + kTileM - 1) / kTileM;
  const int64_t tiles_n = (p.n + kTileN - 1) / kTileN;
  // Every loop bound below is the same for the whole block, so every thread
  // reaches the synchronizations of MainLoop.
  for (int64_t z = blockIdx.z; z < p.batch; z += gridDim.z) {
    int64_t a_off = 0, b_off = 0, rest = z;
    for (int d = p.batch_rank - 1; d >= 0; --d) {
      const int64_t index = rest % p.batch_dims[d];
      rest /= p.batch_dims[d];
      a_off += index * p.a_batch_strides[d];
      b_off += index * p.b_batch_strides[d];
    }
    const T* az = a + a_off;
    const T* bz = b + b_off;
    T* cz = c + z * p.c_sb;
    for (int64_t tn = blockIdx.y; tn < tiles_n; tn += gridDim.y) {
      for (int64_t tm = blockIdx.x; tm < tiles_m; tm += gridDim.x) {
        const int64_t m0 = tm * kTileM, n0 = tn * kTileN;
        auto load_a = [&](int64_t k0, Acc (&v)[4]) {
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            const int64_t i = m0 + ma.x + q * ma.dx, l = k0 + ma.l + q * ma.dl;
            v[q] = (i < p.m && l < p.k) ? LoadAs<Acc>(az + i * p.a_sm + l * p.a_sk) : Acc(0);
          }
        };
        auto load_b = [&](int64_t k0, Acc (&v)[4]) {
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            const int64_t j = n0 + mb.x + q * mb.dx, l = k0 + mb.l + q * mb.dl;
            v[q] = (j < p.n && l < p.k) ? LoadAs<Acc>(bz + l * p.b_sk + j * p.b_sn) : Acc(0);
          }
        };
        Acc acc[4][4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
#pragma unroll
          for (int j = 0; j < 4; ++j) acc[i][j] = Acc(0);
        }
        MainLoop<Acc>(s, p.k, ma, mb, load_a, load_b, acc);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int64_t row = m0 + ty + 16 * i;
          if (row >= p.m) continue;
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const int64_t col = n0 + tx + 16 * j;
            if (col >= p.n) continue;
            cz[row * p.c_sm + col] = StoreAs<T>(ApplyEpilogue<T, Acc>(e, acc[i][j], col));
          }
        }
      }
    }
  }
}

int64_t Clamp(int64_t v, int64_t hi) { return v < 1 ? 1 : (v > hi ? hi : v); }

}  // namespace

void LaunchGemm(ew::Dtype dtype, const void* a, const void* b, void* c, const GemmPlan& plan,
                const Epilogue& epilogue, px_gpu::Stream stream) {
  const dim3 grid(static_cast<unsigned>(Clamp((plan.m + kTileM - 1) / kTileM, kMaxGridX)),
                  static_cast<unsigned>(Clamp((plan.n + kTileN - 1) / kTileN, kMaxGridYZ)),
                  static_cast<unsigned>(Clamp(plan.batch, kMaxGridYZ)));
  VisitDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    using Acc = px_gpu::ComputeType<T>;
    PX_GPU_LAUNCH((GemmKernel<T, Acc>), grid, kThreads, 0, stream)(
        static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(c), plan, epilogue);
  });
}

}  // namespace plexus::cuda::gemm

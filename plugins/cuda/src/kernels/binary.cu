// Binary elementwise kernels with NumPy broadcasting, over the collapsed
// plan elementwise.cc builds (BroadcastPlan). Two kernels per op and dtype:
// - flat: the same-shape and scalar-operand cases (one dimension), with
//   128-bit loads and stores when the pointers allow;
// - broadcast: any plan, the coordinates recovered per element, in 32-bit
//   index arithmetic when the output has fewer than 2^31 elements.
// 16-bit types compute in float.
#include <cstdint>

#include "gpu_portability.h"
#include "kernels/elementwise_launch.h"
#include "kernels/launch_util.h"

namespace plexus::cuda {
namespace {

using ew::Binary;

// Maximum and Minimum return NaN when either operand is NaN (TensorFlow's).
template <Binary kOp, typename C>
__device__ __forceinline__ C ApplyBinary(C a, C b) {
  if constexpr (kOp == Binary::kAdd) {
    return a + b;
  } else if constexpr (kOp == Binary::kSub) {
    return a - b;
  } else if constexpr (kOp == Binary::kMul) {
    return a * b;
  } else if constexpr (kOp == Binary::kDiv) {
    return a / b;
  } else if constexpr (kOp == Binary::kMax) {
    return px_gpu::IsNan(a) ? a : (px_gpu::IsNan(b) ? b : (a > b ? a : b));
  } else if constexpr (kOp == Binary::kMin) {
    return px_gpu::IsNan(a) ? a : (px_gpu::IsNan(b) ? b : (a < b ? a : b));
  } else {
    static_assert(kOp == Binary::kSquaredDifference, "unhandled binary op");
    const C d = a - b;
    return d * d;
  }
}

template <Binary kOp, typename T>
__device__ __forceinline__ T Apply(T a, T b) {
  return px_gpu::FromCompute<T>(ApplyBinary<kOp>(px_gpu::ToFloat(a), px_gpu::ToFloat(b)));
}

// out[i] = op(a[i * a_step], b[i * b_step]) with steps 1 (contiguous) or 0
// (a scalar). vectorized: every pointer read with a step of 1, and out, is
// 16-byte aligned.
template <Binary kOp, typename T>
__global__ void FlatKernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                           int64_t n, int a_step, int b_step, bool vectorized) {
  using V = px_gpu::Vec16<T>;
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t done = 0;
  if (vectorized) {
    const int64_t nv = n / V::kLanes;
    const T a0 = a[0], b0 = b[0];
    for (int64_t i = tid; i < nv; i += stride) {
      V va, vb, vo;
      if (a_step != 0) va = reinterpret_cast<const V*>(a)[i];
      if (b_step != 0) vb = reinterpret_cast<const V*>(b)[i];
#pragma unroll
      for (int k = 0; k < V::kLanes; ++k) {
        vo.v[k] = Apply<kOp>(a_step != 0 ? va.v[k] : a0, b_step != 0 ? vb.v[k] : b0);
      }
      reinterpret_cast<V*>(out)[i] = vo;
    }
    done = nv * V::kLanes;
  }
  for (int64_t i = done + tid; i < n; i += stride) {
    out[i] = Apply<kOp>(a[i * a_step], b[i * b_step]);
  }
}

// The plan in the kernel's index type.
template <typename Index>
struct Geometry {
  int rank;
  Index num_elements;
  Index dims[ew::kMaxBroadcastRank];
  Index strides[2][ew::kMaxBroadcastRank];
};

template <Binary kOp, typename T, typename Index>
__global__ void BroadcastKernel(const T* __restrict__ a, const T* __restrict__ b,
                                T* __restrict__ out, Geometry<Index> g) {
  const Index stride = static_cast<Index>(blockDim.x) * gridDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < g.num_elements;
       i += stride) {
    Index rest = i, ia = 0, ib = 0;
    for (int d = g.rank - 1; d > 0; --d) {
      const Index coord = rest % g.dims[d];
      rest /= g.dims[d];
      ia += coord * g.strides[0][d];
      ib += coord * g.strides[1][d];
    }
    ia += rest * g.strides[0][0];
    ib += rest * g.strides[1][0];
    out[i] = Apply<kOp>(a[ia], b[ib]);
  }
}

template <typename Index>
Geometry<Index> MakeGeometry(const ew::BroadcastPlan& plan) {
  Geometry<Index> g{};
  g.rank = plan.rank;
  g.num_elements = static_cast<Index>(plan.num_elements);
  for (int d = 0; d < plan.rank; ++d) {
    g.dims[d] = static_cast<Index>(plan.dims[d]);
    g.strides[0][d] = static_cast<Index>(plan.strides[0][d]);
    g.strides[1][d] = static_cast<Index>(plan.strides[1][d]);
  }
  return g;
}

template <Binary kOp, typename T>
void Launch(const void* a_raw, const void* b_raw, void* out_raw, const ew::BroadcastPlan& plan,
            px_gpu::Stream stream) {
  const T* a = static_cast<const T*>(a_raw);
  const T* b = static_cast<const T*>(b_raw);
  T* out = static_cast<T*>(out_raw);
  const int64_t n = plan.num_elements;
  // Rank 0 (a scalar output) and rank 1 (same shapes, or a scalar operand)
  // are flat.
  const bool flat = plan.rank == 0 || (plan.rank == 1 && plan.strides[0][0] <= 1 &&
                                       plan.strides[1][0] <= 1);
  if (flat) {
    const int a_step = plan.rank == 0 ? 0 : static_cast<int>(plan.strides[0][0]);
    const int b_step = plan.rank == 0 ? 0 : static_cast<int>(plan.strides[1][0]);
    const bool vectorized = Aligned16(out) && (a_step == 0 || Aligned16(a)) &&
                            (b_step == 0 || Aligned16(b));
    const int64_t work = vectorized ? n / px_gpu::Vec16<T>::kLanes + 1 : n;
    PX_GPU_LAUNCH((FlatKernel<kOp, T>), GridFor(work), kBlockSize, 0, stream)(
        a, b, out, n, a_step, b_step, vectorized);
  } else if (n < (int64_t{1} << 31)) {
    PX_GPU_LAUNCH((BroadcastKernel<kOp, T, uint32_t>), GridFor(n), kBlockSize, 0, stream)(
        a, b, out, MakeGeometry<uint32_t>(plan));
  } else {
    PX_GPU_LAUNCH((BroadcastKernel<kOp, T, int64_t>), GridFor(n), kBlockSize, 0, stream)(
        a, b, out, MakeGeometry<int64_t>(plan));
  }
}

template <typename T>
void LaunchTyped(Binary op, const void* a, const void* b, void* out,
                 const ew::BroadcastPlan& plan, px_gpu::Stream stream) {
  switch (op) {
#define PX_BINARY_CASE(name) \
  case Binary::name: Launch<Binary::name, T>(a, b, out, plan, stream); return;
    PX_BINARY_CASE(kAdd)
    PX_BINARY_CASE(kSub)
    PX_BINARY_CASE(kMul)
    PX_BINARY_CASE(kDiv)
    PX_BINARY_CASE(kMax)
    PX_BINARY_CASE(kMin)
    PX_BINARY_CASE(kSquaredDifference)
#undef PX_BINARY_CASE
  }
}

}  // namespace

void ew::LaunchBinary(Binary op, Dtype dtype, const void* a, const void* b, void* out,
                      const BroadcastPlan& plan, cudaStream_t stream) {
  VisitDtype(dtype, [&](auto tag) { LaunchTyped<decltype(tag)>(op, a, b, out, plan, stream); });
}

}  // namespace plexus::cuda

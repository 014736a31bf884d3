// Device code of SoftmaxCrossEntropyWithLogits and its sparse form: one warp
// (up to kWarpRowMax classes) or one block per row, in a grid-stride loop
// over rows. Per row: the maximum, the sum of exp(f - max), then the loss
// and softmax(f) - labels in one more pass. The formulas and their NaN and
// infinity cases are the reference plugin's (sdk/reference/nn_grad.cc):
// the dense form multiplies every class's term by its label (0 * inf is
// NaN), the sparse form takes the labelled class's term alone. half and
// bfloat16 compute in float.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "gpu_portability.h"
#include "kernels/block_reduce.h"
#include "kernels/launch_util.h"
#include "kernels/nn_grad_launch.h"

namespace plexus::cuda {
namespace {

using grad::XentPlan;

// Dense labels: element (r, k) at r * row + k * col.
template <typename T>
struct DenseLabels {
  static constexpr bool kDense = true;
  const T* labels;
  int64_t row, col;
  struct Row {
    const T* p;
    int64_t col;
    bool bad;
    template <typename C>
    __device__ __forceinline__ C At(int64_t k) const {
      return static_cast<C>(px_gpu::ToFloat(p[k * col]));
    }
  };
  __device__ __forceinline__ Row RowAt(int64_t r, int64_t) const {
    return Row{labels + r * row, col, false};
  }
};

// Sparse labels: the class index of each row; out of range marks the row.
template <typename L>
struct SparseLabels {
  static constexpr bool kDense = false;
  const L* labels;
  struct Row {
    int64_t label;
    bool bad;
    template <typename C>
    __device__ __forceinline__ C At(int64_t k) const {
      return k == label ? C(1) : C(0);
    }
  };
  __device__ __forceinline__ Row RowAt(int64_t r, int64_t classes) const {
    const int64_t label = static_cast<int64_t>(labels[r]);
    return Row{label, label < 0 || label >= classes};
  }
};

// The arithmetic type of T: double for float and double, float for the
// 16-bit types.
template <typename T>
using XentCompute = std::conditional_t<std::is_same_v<T, float>, double, px_gpu::ComputeType<T>>;

template <typename T, bool kWarp, typename Labels>
__global__ void XentKernel(const T* __restrict__ f, XentPlan p, Labels labels,
                           T* __restrict__ loss, T* __restrict__ backprop,
                           unsigned* __restrict__ bad_row) {
  using C = XentCompute<T>;
  __shared__ C smem[kWarpSize + 1];
  const RowGroup<kWarp> g;
  const int lane = g.lane, width = g.width;
  const int64_t classes = p.classes;
  for (int64_t r = g.first; r < p.batch; r += g.step) {
    const T* fr = f + r * p.f_row;
    T* br = backprop + r * classes;
    C max = Identity<Reducer::kMax, C>();
    for (int64_t k = lane; k < classes; k += width) {
      max = Fold<Reducer::kMax>(max, static_cast<C>(px_gpu::ToFloat(fr[k * p.f_col])));
    }
    max = GroupBroadcast<kWarp>(GroupReduce<Reducer::kMax, kWarp>(max, smem));
    C sum = 0;
    for (int64_t k = lane; k < classes; k += width) {
      sum += px_gpu::Exp(static_cast<C>(px_gpu::ToFloat(fr[k * p.f_col])) - max);
    }
    sum = GroupBroadcast<kWarp>(GroupReduce<Reducer::kSum, kWarp>(sum, smem));
    const C log_sum = px_gpu::Log(sum);
    const typename Labels::Row row = labels.RowAt(r, classes);
    C l = 0;
    for (int64_t k = lane; k < classes; k += width) {
      const C shifted = static_cast<C>(px_gpu::ToFloat(fr[k * p.f_col])) - max;
      const C label = row.template At<C>(k);
      if (Labels::kDense || label != C(0)) l += label * (log_sum - shifted);
      const C value = row.bad ? C(NAN) : px_gpu::Exp(shifted - log_sum) - label;
      br[k] = px_gpu::FromCompute<T>(static_cast<px_gpu::ComputeType<T>>(value));
    }
    l = GroupReduce<Reducer::kSum, kWarp>(l, smem);
    if (lane == 0) {
      loss[r] = px_gpu::FromCompute<T>(static_cast<px_gpu::ComputeType<T>>(row.bad ? C(NAN) : l));
      if (row.bad) atomicMin(bad_row, static_cast<unsigned>(r));
    }
  }
}


template <typename T, typename Labels>
void LaunchXent(const void* features, const Labels& labels, void* loss, void* backprop,
                const XentPlan& plan, unsigned* bad_row, px_gpu::Stream stream) {
  const T* f = static_cast<const T*>(features);
  T* l = static_cast<T*>(loss);
  T* b = static_cast<T*>(backprop);
  if (plan.classes <= kWarpRowMax) {
    constexpr int kWarps = kBlockSize / kWarpSize;
    PX_GPU_LAUNCH((XentKernel<T, true, Labels>), RowGrid(plan.batch, kWarps), kBlockSize, 0,
                  stream)(f, plan, labels, l, b, bad_row);
  } else {
    PX_GPU_LAUNCH((XentKernel<T, false, Labels>), RowGrid(plan.batch, 1), kRowBlock, 0, stream)(
        f, plan, labels, l, b, bad_row);
  }
}

}  // namespace

void grad::LaunchSoftmaxXent(ew::Dtype dtype, const void* features, const void* labels,
                             void* loss, void* backprop, const XentPlan& plan,
                             px_gpu::Stream stream) {
  VisitDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    const DenseLabels<T> dense{static_cast<const T*>(labels), plan.l_row, plan.l_col};
    LaunchXent<T>(features, dense, loss, backprop, plan, nullptr, stream);
  });
}

void grad::LaunchSparseSoftmaxXent(ew::Dtype dtype, bool int64_labels, const void* features,
                                   const void* labels, void* loss, void* backprop, int64_t batch,
                                   int64_t classes, unsigned* bad_row, px_gpu::Stream stream) {
  XentPlan plan;
  plan.batch = batch;
  plan.classes = classes;
  plan.f_row = classes;
  plan.f_col = 1;
  VisitDtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (int64_labels) {
      LaunchXent<T>(features, SparseLabels<int64_t>{static_cast<const int64_t*>(labels)}, loss,
                    backprop, plan, bad_row, stream);
    } else {
      LaunchXent<T>(features, SparseLabels<int32_t>{static_cast<const int32_t*>(labels)}, loss,
                    backprop, plan, bad_row, stream);
    }
  });
}

}  // namespace plexus::cuda

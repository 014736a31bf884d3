// CPU kernels: DepthToSpace and SpaceToDepth (plexus/sdk/depth_space.h).
// NHWC moves block_size * depth / block_size^2 contiguous elements at a time
// (one block row of one pixel); NCHW goes element by element. Rows of the
// depth-side tensor run in parallel (OpenMP).
#include <algorithm>
#include <cstdint>

#include "kernels/register_kernels.h"
#include "plexus/sdk/depth_space.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

bool Parallel(int64_t items, int64_t work) { return items > 1 && work > (int64_t{1} << 15); }

template <bool kToSpace>
class DepthSpaceKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { attrs_.Read(attrs); }
  void Compute(sdk::Call& call) override {
    const sdk::DepthSpaceShape s = kToSpace
                                       ? sdk::DepthToSpaceShapeOf(call.input_shape(0), attrs_)
                                       : sdk::SpaceToDepthShapeOf(call.input_shape(0), attrs_);
    const int64_t b = s.block, d = s.depth / (b * b), rows = s.batch * s.height;
    sdk::VisitAll(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      T* y = call.AllocateOutput<T>(0, kToSpace ? s.space_shape() : s.depth_shape());
      const int64_t work = rows * s.width * s.depth;
#pragma omp parallel for schedule(static) if (Parallel(rows, work))
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t n = r / s.height, i = r % s.height;
        for (int64_t j = 0; j < s.width; ++j) {
          for (int64_t bi = 0; bi < b; ++bi) {
            if (!s.nchw) {
              // (bj, c) is contiguous on both sides.
              int64_t depth_at = 0, space_at = 0;
              s.Offsets(n, i, j, bi, 0, 0, &depth_at, &space_at);
              if constexpr (kToSpace) {
                std::copy_n(x + depth_at, b * d, y + space_at);
              } else {
                std::copy_n(x + space_at, b * d, y + depth_at);
              }
              continue;
            }
            for (int64_t bj = 0; bj < b; ++bj) {
              for (int64_t c = 0; c < d; ++c) {
                int64_t depth_at = 0, space_at = 0;
                s.Offsets(n, i, j, bi, bj, c, &depth_at, &space_at);
                if constexpr (kToSpace) {
                  y[space_at] = x[depth_at];
                } else {
                  y[depth_at] = x[space_at];
                }
              }
            }
          }
        }
      }
    });
  }

 private:
  sdk::DepthSpaceAttrs attrs_;
};

}  // namespace

PX_Status* RegisterDepthSpaceFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  PX_Status* s = nullptr;
  if ((s = sdk::RegisterKernel<DepthSpaceKernel<true>>(info, registrar, sdk::sig::kDepthToSpace,
                                                       {sdk::AllTypes()})) ||
      (s = sdk::RegisterKernel<DepthSpaceKernel<false>>(info, registrar, sdk::sig::kSpaceToDepth,
                                                        {sdk::AllTypes()}))) {
    return s;
  }
  return nullptr;
}

}  // namespace plexus::cpu

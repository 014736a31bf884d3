// Reference kernels: DepthToSpace and SpaceToDepth (see reference_kernels.h),
// one element at a time through plexus/sdk/depth_space.h's index map, NHWC
// and NCHW, every fixed-size dtype.
#include <cstdint>

#include "plexus/sdk/depth_space.h"
#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

template <bool kToSpace>
class DepthSpaceKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { attrs_.Read(attrs); }
  void Compute(sdk::Call& call) override {
    const sdk::DepthSpaceShape s = kToSpace
                                       ? sdk::DepthToSpaceShapeOf(call.input_shape(0), attrs_)
                                       : sdk::SpaceToDepthShapeOf(call.input_shape(0), attrs_);
    const int64_t b = s.block, d = s.depth / (b * b);
    sdk::VisitAll(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      T* y = call.AllocateOutput<T>(0, kToSpace ? s.space_shape() : s.depth_shape());
      for (int64_t n = 0; n < s.batch; ++n) {
        for (int64_t i = 0; i < s.height; ++i) {
          for (int64_t j = 0; j < s.width; ++j) {
            for (int64_t bi = 0; bi < b; ++bi) {
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
      }
    });
  }

 private:
  sdk::DepthSpaceAttrs attrs_;
};

}  // namespace

PX_Status* RegisterDepthSpaceKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  PX_Status* s = nullptr;
  if ((s = sdk::RegisterKernel<DepthSpaceKernel<true>>(info, registrar, sdk::sig::kDepthToSpace,
                                                       {sdk::AllTypes()})) ||
      (s = sdk::RegisterKernel<DepthSpaceKernel<false>>(info, registrar, sdk::sig::kSpaceToDepth,
                                                        {sdk::AllTypes()}))) {
    return s;
  }
  return nullptr;
}

}  // namespace plexus::reference

// Device code of the activation gradients (ReluGrad .. ReciprocalGrad):
// out = grad(a, b) over two same-shape inputs, in the flat two-input kernel
// of elementwise_device.h (128-bit loads and stores when the pointers
// allow). 16-bit types compute in float. The formulas are the reference
// plugin's (sdk/reference/activation_grad.cc).
#include <cstdint>

#include "gpu_portability.h"
#include "kernels/elementwise_device.h"
#include "kernels/elementwise_launch.h"
#include "kernels/launch_util.h"
#include "kernels/nn_grad_launch.h"

namespace plexus::cuda {
namespace {

using grad::Activation;

template <Activation kOp, typename C>
__device__ __forceinline__ C ApplyGrad(C a, C b, float alpha) {
  if constexpr (kOp == Activation::kRelu) {
    return b > C(0) ? a : C(0);
  } else if constexpr (kOp == Activation::kRelu6) {
    return b > C(0) && b < C(6) ? a : C(0);
  } else if constexpr (kOp == Activation::kElu) {
    return b < C(0) ? a * (b + C(1)) : a;
  } else if constexpr (kOp == Activation::kSelu) {
    const C scale = C(1.0507009873554804934193349852946);
    const C scale_alpha = C(1.7580993408473768599402175208123);
    return b < C(0) ? a * (b + scale_alpha) : a * scale;
  } else if constexpr (kOp == Activation::kLeakyRelu) {
    return b > C(0) ? a : a * static_cast<C>(alpha);
  } else if constexpr (kOp == Activation::kSoftplus) {
    return a / (px_gpu::Exp(-b) + C(1));
  } else if constexpr (kOp == Activation::kSoftsign) {
    const C d = C(1) + px_gpu::Abs(b);
    return a / (d * d);
  } else if constexpr (kOp == Activation::kSigmoid) {
    return b * a * (C(1) - a);
  } else if constexpr (kOp == Activation::kTanh) {
    return b * (C(1) - a * a);
  } else if constexpr (kOp == Activation::kRsqrt) {
    return C(-0.5) * b * (a * a * a);
  } else if constexpr (kOp == Activation::kSqrt) {
    return C(0.5) * b / a;
  } else {
    static_assert(kOp == Activation::kReciprocal, "unhandled activation gradient");
    return -b * a * a;
  }
}

template <Activation kOp, typename T>
struct GradFn {
  float alpha;
  __device__ __forceinline__ T operator()(T a, T b) const {
    return FromC<T>(ApplyGrad<kOp>(ToC(a), ToC(b), alpha));
  }
};

// The same-shape plan: one dimension of n, both inputs with step 1.
ew::BroadcastPlan FlatPlan(int64_t n) {
  ew::BroadcastPlan plan;
  plan.rank = 1;
  plan.num_elements = n;
  plan.dims[0] = n;
  plan.strides[0][0] = 1;
  plan.strides[1][0] = 1;
  return plan;
}

template <Activation kOp, typename T>
void Launch(const void* a, const void* b, void* out, int64_t n, float alpha, px_gpu::Stream s) {
  LaunchPlan2<T, T>(a, b, out, FlatPlan(n), GradFn<kOp, T>{alpha}, s);
}

template <typename T>
void LaunchFloat(Activation op, const void* a, const void* b, void* out, int64_t n, float alpha,
                 px_gpu::Stream s) {
  switch (op) {
#define PX_GRAD_CASE(name) \
  case Activation::name: Launch<Activation::name, T>(a, b, out, n, alpha, s); return;
    PX_GRAD_CASE(kRelu)
    PX_GRAD_CASE(kRelu6)
    PX_GRAD_CASE(kElu)
    PX_GRAD_CASE(kSelu)
    PX_GRAD_CASE(kLeakyRelu)
    PX_GRAD_CASE(kSoftplus)
    PX_GRAD_CASE(kSoftsign)
    PX_GRAD_CASE(kSigmoid)
    PX_GRAD_CASE(kTanh)
    PX_GRAD_CASE(kRsqrt)
    PX_GRAD_CASE(kSqrt)
    PX_GRAD_CASE(kReciprocal)
#undef PX_GRAD_CASE
  }
}

}  // namespace

void grad::LaunchActivationGrad(Activation op, ew::Type type, const void* a, const void* b,
                                void* out, int64_t n, float alpha, px_gpu::Stream stream) {
  if (ew::IsFloatType(type)) {
    VisitFloatType(type, [&](auto tag) {
      LaunchFloat<decltype(tag)>(op, a, b, out, n, alpha, stream);
    });
    return;
  }
  // Integers: ReluGrad and Relu6Grad only (the kernel class checks).
  VisitIntType(type, [&](auto tag) {
    using T = decltype(tag);
    if (op == Activation::kRelu) {
      Launch<Activation::kRelu, T>(a, b, out, n, alpha, stream);
    } else if (op == Activation::kRelu6) {
      Launch<Activation::kRelu6, T>(a, b, out, n, alpha, stream);
    }
  });
}

}  // namespace plexus::cuda

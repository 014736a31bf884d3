// CPU kernels: the fused optimizer updates (core/src/ops/optimizer_ops.cc).
//
// They run on every training step, so each is a single pass over memory:
// one loop reads var, the accumulators and grad and writes every output for
// an element before moving on (no temporaries, no second sweep). The loops
// are vectorizable (float and double; half and bfloat16 convert each element
// to float inside the same loop), and large tensors are split into chunks
// that run on several threads (OpenMP, as the other cpu kernels). The
// hyperparameters are host-memory scalars read once per call.
//
// An element's outputs depend only on that element's inputs, so the loops
// stay correct even if the host hands an output the buffer of the matching
// input.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <type_traits>
#include <vector>

#include "kernels/register_kernels.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

using sdk::Shape;

// Elements per chunk, and the size from which chunks run in parallel.
constexpr int64_t kChunk = 16384;
constexpr int64_t kParallelElements = int64_t{1} << 15;

// Calls body(i) for every i in [0, n): chunks in parallel when n is large,
// each chunk a vectorizable loop.
template <typename Body>
void ElementLoop(int64_t n, const Body& body) {
  const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (chunks > 1 && n >= kParallelElements)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t end = std::min(n, (c + 1) * kChunk);
#pragma omp simd
    for (int64_t i = c * kChunk; i < end; ++i) body(i);
  }
}

// Checks that the hyperparameters are scalars and that the tensors have
// var's shape (input tensors[0]). The shape functions check the same; this
// guards direct launches.
void CheckInputs(sdk::Call& call, std::initializer_list<size_t> tensors,
                 std::initializer_list<size_t> scalars) {
  for (size_t i : scalars) {
    PX_SDK_CHECK(call.input_rank(i) == 0, "hyperparameter input %zu is not a scalar: shape %s", i,
                 sdk::ShapeString(call.input_shape(i)).c_str());
  }
  const DLTensor& var = call.input(*tensors.begin());
  for (size_t i : tensors) {
    const DLTensor& t = call.input(i);
    PX_SDK_CHECK(t.ndim == var.ndim && std::equal(var.shape, var.shape + var.ndim, t.shape),
                 "input %zu does not have var's shape: %s and %s", i,
                 sdk::ShapeString(call.input_shape(i)).c_str(),
                 sdk::ShapeString(call.input_shape(*tensors.begin())).c_str());
  }
}

template <typename T>
sdk::ComputeType<T> Scalar(sdk::Call& call, size_t i) {
  return static_cast<sdk::ComputeType<T>>(call.input<T>(i)[0]);
}

class GradientDescentKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    CheckInputs(call, {0, 2}, {1});
    const int64_t n = call.input_size(0);
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const T* var = call.input<T>(0);
      const C alpha = Scalar<T>(call, 1);
      const T* delta = call.input<T>(2);
      T* var_out = call.AllocateOutputLike<T>(0, 0);
      ElementLoop(n, [=](int64_t i) {
        var_out[i] = static_cast<T>(static_cast<C>(var[i]) - alpha * static_cast<C>(delta[i]));
      });
    });
  }
};

class MomentumKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { nesterov_ = attrs.Bool("use_nesterov", false); }
  void Compute(sdk::Call& call) override {
    CheckInputs(call, {0, 1, 3}, {2, 4});
    const int64_t n = call.input_size(0);
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const T* var = call.input<T>(0);
      const T* accum = call.input<T>(1);
      const C lr = Scalar<T>(call, 2);
      const T* grad = call.input<T>(3);
      const C momentum = Scalar<T>(call, 4);
      T* var_out = call.AllocateOutputLike<T>(0, 0);
      T* accum_out = call.AllocateOutputLike<T>(1, 0);
      if (nesterov_) {
        ElementLoop(n, [=](int64_t i) {
          const C g = static_cast<C>(grad[i]);
          const C a = static_cast<C>(accum[i]) * momentum + g;
          var_out[i] = static_cast<T>(static_cast<C>(var[i]) - (g * lr + a * momentum * lr));
          accum_out[i] = static_cast<T>(a);
        });
      } else {
        ElementLoop(n, [=](int64_t i) {
          const C a = static_cast<C>(accum[i]) * momentum + static_cast<C>(grad[i]);
          var_out[i] = static_cast<T>(static_cast<C>(var[i]) - a * lr);
          accum_out[i] = static_cast<T>(a);
        });
      }
    });
  }

 private:
  bool nesterov_ = false;
};

class AdamKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { nesterov_ = attrs.Bool("use_nesterov", false); }
  void Compute(sdk::Call& call) override {
    CheckInputs(call, {0, 1, 2, 9}, {3, 4, 5, 6, 7, 8});
    const int64_t n = call.input_size(0);
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const T* var = call.input<T>(0);
      const T* m = call.input<T>(1);
      const T* v = call.input<T>(2);
      const C beta1_power = Scalar<T>(call, 3);
      const C beta2_power = Scalar<T>(call, 4);
      const C lr = Scalar<T>(call, 5);
      const C beta1 = Scalar<T>(call, 6);
      const C beta2 = Scalar<T>(call, 7);
      const C epsilon = Scalar<T>(call, 8);
      const T* grad = call.input<T>(9);
      T* var_out = call.AllocateOutputLike<T>(0, 0);
      T* m_out = call.AllocateOutputLike<T>(1, 0);
      T* v_out = call.AllocateOutputLike<T>(2, 0);
      const C lr_t = lr * std::sqrt(C(1) - beta2_power) / (C(1) - beta1_power);
      const C one_minus_beta1 = C(1) - beta1;
      const C one_minus_beta2 = C(1) - beta2;
      // Written in the reference kernel's order of operations, so both
      // round alike.
      auto update = [=](int64_t i, auto nesterov) {
        const C g = static_cast<C>(grad[i]);
        C mi = static_cast<C>(m[i]);
        C vi = static_cast<C>(v[i]);
        mi += (g - mi) * one_minus_beta1;
        vi += (g * g - vi) * one_minus_beta2;
        const C step = decltype(nesterov)::value ? (mi * beta1 + one_minus_beta1 * g) : mi;
        var_out[i] = static_cast<T>(static_cast<C>(var[i]) - lr_t * step / (std::sqrt(vi) + epsilon));
        m_out[i] = static_cast<T>(mi);
        v_out[i] = static_cast<T>(vi);
      };
      if (nesterov_) {
        ElementLoop(n, [=](int64_t i) { update(i, std::true_type{}); });
      } else {
        ElementLoop(n, [=](int64_t i) { update(i, std::false_type{}); });
      }
    });
  }

 private:
  bool nesterov_ = false;
};

class AdamWKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    CheckInputs(call, {0, 1, 2, 10}, {3, 4, 5, 6, 7, 8, 9});
    const int64_t n = call.input_size(0);
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const T* var = call.input<T>(0);
      const T* m = call.input<T>(1);
      const T* v = call.input<T>(2);
      const C beta1_power = Scalar<T>(call, 3);
      const C beta2_power = Scalar<T>(call, 4);
      const C lr = Scalar<T>(call, 5);
      const C beta1 = Scalar<T>(call, 6);
      const C beta2 = Scalar<T>(call, 7);
      const C epsilon = Scalar<T>(call, 8);
      const C weight_decay = Scalar<T>(call, 9);
      const T* grad = call.input<T>(10);
      T* var_out = call.AllocateOutputLike<T>(0, 0);
      T* m_out = call.AllocateOutputLike<T>(1, 0);
      T* v_out = call.AllocateOutputLike<T>(2, 0);
      const C decay = C(1) - lr * weight_decay;
      const C step_size = lr / (C(1) - beta1_power);
      const C bias_correction2_sqrt = std::sqrt(C(1) - beta2_power);
      const C one_minus_beta1 = C(1) - beta1;
      const C one_minus_beta2 = C(1) - beta2;
      ElementLoop(n, [=](int64_t i) {
        const C g = static_cast<C>(grad[i]);
        const C mi = static_cast<C>(m[i]) + one_minus_beta1 * (g - static_cast<C>(m[i]));
        const C vi = static_cast<C>(v[i]) * beta2 + one_minus_beta2 * g * g;
        const C denom = std::sqrt(vi) / bias_correction2_sqrt + epsilon;
        var_out[i] = static_cast<T>(static_cast<C>(var[i]) * decay - step_size * (mi / denom));
        m_out[i] = static_cast<T>(mi);
        v_out[i] = static_cast<T>(vi);
      });
    });
  }
};

class RMSPropKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    CheckInputs(call, {0, 1, 2, 7}, {3, 4, 5, 6});
    const int64_t n = call.input_size(0);
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const T* var = call.input<T>(0);
      const T* ms = call.input<T>(1);
      const T* mom = call.input<T>(2);
      const C lr = Scalar<T>(call, 3);
      const C rho = Scalar<T>(call, 4);
      const C momentum = Scalar<T>(call, 5);
      const C epsilon = Scalar<T>(call, 6);
      const T* grad = call.input<T>(7);
      T* var_out = call.AllocateOutputLike<T>(0, 0);
      T* ms_out = call.AllocateOutputLike<T>(1, 0);
      T* mom_out = call.AllocateOutputLike<T>(2, 0);
      const C one_minus_rho = C(1) - rho;
      ElementLoop(n, [=](int64_t i) {
        const C g = static_cast<C>(grad[i]);
        C msi = static_cast<C>(ms[i]);
        msi += (g * g - msi) * one_minus_rho;
        const C momi = static_cast<C>(mom[i]) * momentum + (g * lr) / std::sqrt(msi + epsilon);
        var_out[i] = static_cast<T>(static_cast<C>(var[i]) - momi);
        ms_out[i] = static_cast<T>(msi);
        mom_out[i] = static_cast<T>(momi);
      });
    });
  }
};

}  // namespace

PX_Status* RegisterOptimizerFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> kFloat = sdk::FloatTypes();
  PX_Status* s = nullptr;
  if ((s = sdk::RegisterKernel<GradientDescentKernel>(
           info, registrar, sdk::sig::kPlexusApplyGradientDescent, {kFloat}))) {
    return s;
  }
  if ((s = sdk::RegisterKernel<MomentumKernel>(info, registrar, sdk::sig::kPlexusApplyMomentum,
                                               {kFloat}))) {
    return s;
  }
  if ((s = sdk::RegisterKernel<AdamKernel>(info, registrar, sdk::sig::kPlexusApplyAdam,
                                           {kFloat}))) {
    return s;
  }
  if ((s = sdk::RegisterKernel<AdamWKernel>(info, registrar, sdk::sig::kPlexusApplyAdamW,
                                            {kFloat}))) {
    return s;
  }
  return sdk::RegisterKernel<RMSPropKernel>(info, registrar, sdk::sig::kPlexusApplyRMSProp,
                                            {kFloat});
}

}  // namespace plexus::cpu

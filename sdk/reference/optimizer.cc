// Reference kernels: the fused optimizer updates (see reference_kernels.h and
// core/src/ops/optimizer_ops.cc). Functional: each returns the new var and
// accumulators. Hyperparameters are host-memory scalars of T; half and
// bfloat16 compute in float, float and double in their own type.
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

using sdk::Shape;

// Checks that the hyperparameters are scalars and that the tensors have
// var's shape (input tensors[0]).
void CheckInputs(sdk::Call& call, std::initializer_list<size_t> tensors,
                 std::initializer_list<size_t> scalars) {
  for (size_t i : scalars) {
    PX_SDK_CHECK(call.input_rank(i) == 0, "hyperparameter input %zu is not a scalar: shape %s", i,
                 sdk::ShapeString(call.input_shape(i)).c_str());
  }
  const Shape var = call.input_shape(*tensors.begin());
  for (size_t i : tensors) {
    PX_SDK_CHECK(call.input_shape(i) == var, "input %zu does not have var's shape: %s and %s", i,
                 sdk::ShapeString(call.input_shape(i)).c_str(), sdk::ShapeString(var).c_str());
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
      for (int64_t i = 0; i < n; ++i) {
        var_out[i] = static_cast<T>(static_cast<C>(var[i]) - alpha * static_cast<C>(delta[i]));
      }
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
      for (int64_t i = 0; i < n; ++i) {
        const C g = static_cast<C>(grad[i]);
        const C a = static_cast<C>(accum[i]) * momentum + g;
        C v = static_cast<C>(var[i]);
        if (nesterov_) {
          v -= g * lr + a * momentum * lr;
        } else {
          v -= a * lr;
        }
        var_out[i] = static_cast<T>(v);
        accum_out[i] = static_cast<T>(a);
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
      for (int64_t i = 0; i < n; ++i) {
        const C g = static_cast<C>(grad[i]);
        C mi = static_cast<C>(m[i]);
        C vi = static_cast<C>(v[i]);
        mi += (g - mi) * (C(1) - beta1);
        vi += (g * g - vi) * (C(1) - beta2);
        const C step = nesterov_ ? (mi * beta1 + (C(1) - beta1) * g) : mi;
        var_out[i] = static_cast<T>(static_cast<C>(var[i]) - lr_t * step / (std::sqrt(vi) + epsilon));
        m_out[i] = static_cast<T>(mi);
        v_out[i] = static_cast<T>(vi);
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
      for (int64_t i = 0; i < n; ++i) {
        const C g = static_cast<C>(grad[i]);
        // PyTorch: m.lerp_(g, 1 - beta1); v.mul_(beta2).addcmul_(g, g, 1 - beta2).
        const C mi = static_cast<C>(m[i]) + (C(1) - beta1) * (g - static_cast<C>(m[i]));
        const C vi = static_cast<C>(v[i]) * beta2 + (C(1) - beta2) * g * g;
        const C denom = std::sqrt(vi) / bias_correction2_sqrt + epsilon;
        var_out[i] = static_cast<T>(static_cast<C>(var[i]) * decay - step_size * (mi / denom));
        m_out[i] = static_cast<T>(mi);
        v_out[i] = static_cast<T>(vi);
      }
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
      for (int64_t i = 0; i < n; ++i) {
        const C g = static_cast<C>(grad[i]);
        C msi = static_cast<C>(ms[i]);
        msi += (g * g - msi) * (C(1) - rho);
        const C momi = static_cast<C>(mom[i]) * momentum + (g * lr) / std::sqrt(msi + epsilon);
        var_out[i] = static_cast<T>(static_cast<C>(var[i]) - momi);
        ms_out[i] = static_cast<T>(msi);
        mom_out[i] = static_cast<T>(momi);
      }
    });
  }
};

}  // namespace

PX_Status* RegisterOptimizerKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
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

}  // namespace plexus::reference

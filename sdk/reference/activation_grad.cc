// Reference kernels: gradients of the activations and of the unary math ops
// (see reference_kernels.h), and UnsortedSegmentSum.
//
// ReluGrad, Relu6Grad, EluGrad, SeluGrad, LeakyReluGrad, SoftplusGrad, SoftsignGrad take
// (gradients, features-or-outputs); SigmoidGrad, TanhGrad, RsqrtGrad,
// SqrtGrad, ReciprocalGrad, InvGrad take (y, dy). Both inputs have one shape.
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

using sdk::Shape;

enum class Grad {
  kRelu, kRelu6, kElu, kSelu, kLeakyRelu, kSoftplus, kSoftsign,
  kSigmoid, kTanh, kRsqrt, kSqrt, kReciprocal,
};

Grad GradFromName(const std::string& op) {
  static const struct { const char* name; Grad grad; } kOps[] = {
      {"ReluGrad", Grad::kRelu},           {"Relu6Grad", Grad::kRelu6},
      {"EluGrad", Grad::kElu},             {"SeluGrad", Grad::kSelu},
      {"LeakyReluGrad", Grad::kLeakyRelu}, {"SoftplusGrad", Grad::kSoftplus},
      {"SigmoidGrad", Grad::kSigmoid},     {"TanhGrad", Grad::kTanh},
      {"RsqrtGrad", Grad::kRsqrt},         {"SqrtGrad", Grad::kSqrt},
      {"ReciprocalGrad", Grad::kReciprocal}, {"InvGrad", Grad::kReciprocal},
      {"SoftsignGrad", Grad::kSoftsign},
  };
  for (const auto& e : kOps) {
    if (op == e.name) return e.grad;
  }
  PX_SDK_CHECK(false, "no reference activation-gradient kernel for op %s", op.c_str());
  return Grad::kRelu;
}

class ActivationGradKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    grad_ = GradFromName(attrs.op());
    if (grad_ == Grad::kLeakyRelu) alpha_ = attrs.Float("alpha", 0.2f);
  }

  void Compute(sdk::Call& call) override {
    const Shape shape = call.input_shape(0);
    PX_SDK_CHECK(shape == call.input_shape(1), "both inputs must have the same shape, got %s and %s",
                 sdk::ShapeString(shape).c_str(), sdk::ShapeString(call.input_shape(1)).c_str());
    const int64_t n = sdk::NumElements(shape);
    sdk::VisitReal(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const T* a = call.input<T>(0);
      const T* b = call.input<T>(1);
      T* out = call.AllocateOutput<T>(0, shape);
      for (int64_t i = 0; i < n; ++i) {
        out[i] = static_cast<T>(Value<C>(static_cast<C>(a[i]), static_cast<C>(b[i])));
      }
    }, "activation gradient");
  }

 private:
  // (a, b) = (gradients, features/outputs) or (y, dy), by op.
  template <typename C>
  C Value(C a, C b) const {
    switch (grad_) {
      case Grad::kRelu: return b > C(0) ? a : C(0);
      case Grad::kRelu6: return b > C(0) && b < C(6) ? a : C(0);
      default: break;
    }
    if constexpr (std::is_floating_point_v<C>) {
      switch (grad_) {
        case Grad::kElu: return b < C(0) ? a * (b + C(1)) : a;
        case Grad::kSelu: {
          const C scale = C(1.0507009873554804934193349852946);
          const C scale_alpha = C(1.7580993408473768599402175208123);
          return b < C(0) ? a * (b + scale_alpha) : a * scale;
        }
        case Grad::kLeakyRelu: return b > C(0) ? a : a * static_cast<C>(alpha_);
        case Grad::kSoftplus: return a / (std::exp(-b) + C(1));
        case Grad::kSoftsign: {
          const C d = C(1) + std::fabs(b);
          return a / (d * d);
        }
        case Grad::kSigmoid: return b * a * (C(1) - a);
        case Grad::kTanh: return b * (C(1) - a * a);
        case Grad::kRsqrt: return C(-0.5) * b * (a * a * a);
        case Grad::kSqrt: return C(0.5) * b / a;
        case Grad::kReciprocal: return -b * a * a;
        default: break;
      }
    }
    PX_SDK_CHECK(false, "this activation gradient needs a floating-point dtype");
    return C(0);
  }

  Grad grad_ = Grad::kRelu;
  float alpha_ = 0.2f;
};

// UnsortedSegmentSum: output[ids[i], j] += data[i, j] with data viewed as
// [size(ids), inner]; negative ids are dropped. Floats accumulate in double.
class UnsortedSegmentSumKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const Shape data_shape = call.input_shape(0);
    const Shape ids_shape = call.input_shape(1);
    const std::vector<int64_t> num = call.input_int_values(2);
    PX_SDK_CHECK(call.input_rank(2) == 0 && num.size() == 1,
                 "num_segments must be a scalar, got shape %s",
                 sdk::ShapeString(call.input_shape(2)).c_str());
    const int64_t num_segments = num[0];
    PX_SDK_CHECK(num_segments >= 0, "Input num_segments == %lld must not be negative.",
                 static_cast<long long>(num_segments));
    bool prefix = ids_shape.size() <= data_shape.size();
    for (size_t i = 0; prefix && i < ids_shape.size(); ++i) prefix = ids_shape[i] == data_shape[i];
    PX_SDK_CHECK(prefix, "data.shape = %s does not start with segment_ids.shape = %s",
                 sdk::ShapeString(data_shape).c_str(), sdk::ShapeString(ids_shape).c_str());
    const int64_t rows = sdk::NumElements(ids_shape);
    int64_t inner = 1;
    for (size_t i = ids_shape.size(); i < data_shape.size(); ++i) inner *= data_shape[i];
    Shape out_shape{num_segments};
    out_shape.insert(out_shape.end(), data_shape.begin() + ids_shape.size(), data_shape.end());

    const std::vector<int64_t> ids = call.input_int_values(1);
    for (int64_t i = 0; i < rows; ++i) {
      if (ids[i] >= num_segments) {
        PX_SDK_CHECK(false, "segment_ids%s = %lld is out of range [0, %lld)",
                     IndexString(ids_shape, i).c_str(), static_cast<long long>(ids[i]),
                     static_cast<long long>(num_segments));
      }
    }
    sdk::VisitReal(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Acc = std::conditional_t<std::is_floating_point_v<sdk::ComputeType<T>>, double, T>;
      const T* data = call.input<T>(0);
      T* out = call.AllocateOutput<T>(0, out_shape);
      std::vector<Acc> sum(static_cast<size_t>(num_segments * inner), Acc(0));
      for (int64_t i = 0; i < rows; ++i) {
        if (ids[i] < 0) continue;
        for (int64_t j = 0; j < inner; ++j) {
          // Integers wrap like TensorFlow's (two's complement), without
          // signed-overflow undefined behaviour.
          Acc& s = sum[ids[i] * inner + j];
          if constexpr (std::is_integral_v<Acc>) {
            using U = std::make_unsigned_t<Acc>;
            s = static_cast<Acc>(static_cast<U>(s) + static_cast<U>(data[i * inner + j]));
          } else {
            s += static_cast<Acc>(data[i * inner + j]);
          }
        }
      }
      for (size_t k = 0; k < sum.size(); ++k) out[k] = static_cast<T>(sum[k]);
    }, "UnsortedSegmentSum");
  }

 private:
  // "[1,2]" for flat index 5 of shape [2,3].
  static std::string IndexString(const Shape& shape, int64_t flat) {
    std::vector<int64_t> index(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
      index[d] = flat % shape[d];
      flat /= shape[d];
    }
    return sdk::ShapeString(index);
  }
};

}  // namespace

PX_Status* RegisterActivationGradKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> kFloat = sdk::FloatTypes();
  const std::vector<PX_DataType> kReal = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF, PX_DT_BFLOAT16,
                                          PX_DT_INT8,  PX_DT_INT16,  PX_DT_INT32, PX_DT_INT64,
                                          PX_DT_UINT8};
  for (const sdk::OpSignature* op : {&sdk::sig::kReluGrad, &sdk::sig::kRelu6Grad}) {
    if (PX_Status* s = sdk::RegisterKernel<ActivationGradKernel>(info, registrar, *op, {kReal})) {
      return s;
    }
  }
  for (const sdk::OpSignature* op :
       {&sdk::sig::kEluGrad, &sdk::sig::kSeluGrad, &sdk::sig::kLeakyReluGrad,
        &sdk::sig::kSoftplusGrad, &sdk::sig::kSoftsignGrad, &sdk::sig::kSigmoidGrad,
        &sdk::sig::kTanhGrad, &sdk::sig::kRsqrtGrad, &sdk::sig::kSqrtGrad,
        &sdk::sig::kReciprocalGrad, &sdk::sig::kInvGrad}) {
    if (PX_Status* s = sdk::RegisterKernel<ActivationGradKernel>(info, registrar, *op, {kFloat})) {
      return s;
    }
  }
  return sdk::RegisterKernel<UnsortedSegmentSumKernel>(
      info, registrar, sdk::sig::kUnsortedSegmentSum,
      {kReal, {PX_DT_INT32, PX_DT_INT64}, {PX_DT_INT32, PX_DT_INT64}});
}

}  // namespace plexus::reference

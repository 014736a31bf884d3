// Reference kernels: the activations family (see reference_kernels.h).
// Relu, Relu6, Elu, Selu, LeakyRelu, Softplus, Softsign, Gelu elementwise; Softmax and
// LogSoftmax over the last axis, with the row sums accumulated in double.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

using sdk::Shape;

enum class Act { kRelu, kRelu6, kElu, kSelu, kLeakyRelu, kSoftplus, kSoftsign, kGelu };

Act ActFromName(const std::string& op) {
  static const struct { const char* name; Act act; } kOps[] = {
      {"Relu", Act::kRelu},         {"Relu6", Act::kRelu6},        {"Elu", Act::kElu},
      {"Selu", Act::kSelu},         {"LeakyRelu", Act::kLeakyRelu}, {"Softplus", Act::kSoftplus},
      {"Gelu", Act::kGelu},         {"Softsign", Act::kSoftsign},
  };
  for (const auto& e : kOps) {
    if (op == e.name) return e.act;
  }
  PX_SDK_CHECK(false, "no reference activation kernel for op %s", op.c_str());
  return Act::kRelu;
}

class ActivationKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    act_ = ActFromName(attrs.op());
    if (act_ == Act::kLeakyRelu) alpha_ = attrs.Float("alpha", 0.2f);
    if (act_ == Act::kGelu) approximate_ = attrs.Bool("approximate", true);
  }

  void Compute(sdk::Call& call) override {
    const Shape shape = call.input_shape(0);
    const int64_t n = sdk::NumElements(shape);
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const T* x = call.input<T>(0);
      T* y = call.AllocateOutput<T>(0, shape);
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(Value<C>(static_cast<C>(x[i])));
    });
  }

 private:
  template <typename C>
  C Value(C x) const {
    // Written so that NaN passes through (comparisons with NaN are false).
    switch (act_) {
      case Act::kRelu: return x < C(0) ? C(0) : x;
      case Act::kRelu6: return x < C(0) ? C(0) : (x > C(6) ? C(6) : x);
      default: break;
    }
    if constexpr (std::is_floating_point_v<C>) {
      switch (act_) {
        case Act::kElu: return x < C(0) ? std::expm1(x) : x;
        case Act::kSelu: {
          const C scale = C(1.0507009873554804934193349852946);
          const C alpha = C(1.6732632423543772848170429916717);
          return x < C(0) ? scale * alpha * std::expm1(x) : scale * x;
        }
        case Act::kLeakyRelu: return x < C(0) ? static_cast<C>(alpha_) * x : x;
        case Act::kSoftplus:
          // log(1 + e^x) without overflow: max(x, 0) + log1p(e^-|x|).
          return std::max(x, C(0)) + std::log1p(std::exp(-std::fabs(x)));
        case Act::kSoftsign: return x / (std::fabs(x) + C(1));
        case Act::kGelu:
          if (approximate_) {
            const C k = C(0.7978845608028654);  // sqrt(2 / pi)
            return C(0.5) * x * (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x)));
          }
          return C(0.5) * x * (C(1) + std::erf(x * C(0.7071067811865476)));
        default: break;
      }
    }
    return x;
  }

  Act act_ = Act::kRelu;
  float alpha_ = 0.2f;
  bool approximate_ = true;
};

class SoftmaxKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { log_ = std::string(attrs.op()) == "LogSoftmax"; }

  void Compute(sdk::Call& call) override {
    const Shape shape = call.input_shape(0);
    PX_SDK_CHECK(!shape.empty(), "logits must have rank >= 1, got shape %s",
                 sdk::ShapeString(shape).c_str());
    const int64_t cols = shape.back();
    const int64_t rows = cols == 0 ? 0 : sdk::NumElements(shape) / cols;
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      T* y = call.AllocateOutput<T>(0, shape);
      for (int64_t r = 0; r < rows; ++r) {
        const T* xr = x + r * cols;
        T* yr = y + r * cols;
        double max = -INFINITY;
        for (int64_t c = 0; c < cols; ++c) max = std::max(max, static_cast<double>(xr[c]));
        double sum = 0;
        for (int64_t c = 0; c < cols; ++c) sum += std::exp(static_cast<double>(xr[c]) - max);
        for (int64_t c = 0; c < cols; ++c) {
          double shifted = static_cast<double>(xr[c]) - max;
          double v = log_ ? shifted - std::log(sum) : std::exp(shifted) / sum;
          yr[c] = static_cast<T>(static_cast<sdk::ComputeType<T>>(v));
        }
      }
    });
  }

 private:
  bool log_ = false;
};

const std::vector<PX_DataType> kFloat = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF, PX_DT_BFLOAT16};
const std::vector<PX_DataType> kReal = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF,  PX_DT_BFLOAT16,
                                        PX_DT_INT8,  PX_DT_INT16,  PX_DT_INT32, PX_DT_INT64,
                                        PX_DT_UINT8};

}  // namespace

PX_Status* RegisterActivationKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  for (const sdk::OpSignature* op : {&sdk::sig::kRelu, &sdk::sig::kRelu6}) {
    if (PX_Status* s = sdk::RegisterKernel<ActivationKernel>(info, registrar, *op, {kReal})) {
      return s;
    }
  }
  for (const sdk::OpSignature* op : {&sdk::sig::kElu, &sdk::sig::kSelu, &sdk::sig::kLeakyRelu,
                                     &sdk::sig::kSoftplus, &sdk::sig::kSoftsign,
                                     &sdk::sig::kGelu}) {
    if (PX_Status* s = sdk::RegisterKernel<ActivationKernel>(info, registrar, *op, {kFloat})) {
      return s;
    }
  }
  for (const sdk::OpSignature* op : {&sdk::sig::kSoftmax, &sdk::sig::kLogSoftmax}) {
    if (PX_Status* s = sdk::RegisterKernel<SoftmaxKernel>(info, registrar, *op, {kFloat})) {
      return s;
    }
  }
  return nullptr;
}

}  // namespace plexus::reference

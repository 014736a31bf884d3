// CPU kernels: the activation family, written with sdk::OpKernel. Relu and
// Relu6 for integers are plain loops here; the floating-point math is in
// activation_family_<dtype>.cc (Eigen, one dtype per file).
#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/elementwise_impl.h"
#include "kernels/register_kernels.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

using ew::Act;
using sdk::Shape;

// The dtypes of this family: the floats and int8/16/32/64, uint8.
template <typename F>
void VisitTypes(PX_DataType t, F&& f) {
  sdk::VisitReal(t, std::forward<F>(f), "activation");
}

Act ActFromName(const std::string& op) {
  static const struct { const char* name; Act act; } kOps[] = {
      {"Relu", Act::kRelu},         {"Relu6", Act::kRelu6},         {"Elu", Act::kElu},
      {"Selu", Act::kSelu},         {"LeakyRelu", Act::kLeakyRelu}, {"Softplus", Act::kSoftplus},
      {"Gelu", Act::kGelu},         {"Softsign", Act::kSoftsign},
  };
  for (const auto& e : kOps) {
    if (op == e.name) return e.act;
  }
  PX_SDK_CHECK(false, "no cpu activation kernel for op %s", op.c_str());
  return Act::kRelu;
}

class ActivationKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    act_ = ActFromName(attrs.op());
    alpha_ = attrs.Float("alpha", 0.2f);
    approximate_ = attrs.Bool("approximate", true);
  }

  void Compute(sdk::Call& call) override {
    const Shape shape = call.input_shape(0);
    const int64_t n = sdk::NumElements(shape);
    VisitTypes(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      T* y = call.AllocateOutput<T>(0, shape);
      if constexpr (std::is_integral_v<T>) {
        if (act_ == Act::kRelu) {
          for (int64_t i = 0; i < n; ++i) y[i] = ew::IsNeg(x[i]) ? T(0) : x[i];
        } else if (act_ == Act::kRelu6) {
          for (int64_t i = 0; i < n; ++i) y[i] = ew::IsNeg(x[i]) ? T(0) : std::min(x[i], T(6));
        } else {
          sdk::UnsupportedType(call.input_dtype(0), "activation");
        }
      } else {
        ew::RunActivation(act_, alpha_, approximate_, x, y, n);
      }
    });
  }

 private:
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
    VisitTypes(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_integral_v<T>) {
        sdk::UnsupportedType(call.input_dtype(0), "Softmax");
      } else {
        const T* x = call.input<T>(0);
        T* y = call.AllocateOutput<T>(0, shape);
        ew::RunSoftmax(log_, x, y, rows, cols);
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

PX_Status* RegisterActivationFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
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

}  // namespace plexus::cpu

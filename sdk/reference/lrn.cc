// Reference kernels: LRN and LRNGrad (see reference_kernels.h), one depth
// window at a time in double (half and bfloat16 read as float).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "plexus/sdk/lrn.h"
#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

template <typename T>
double AsDouble(T v) {
  return static_cast<double>(static_cast<sdk::ComputeType<T>>(v));
}

class LrnKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { attrs_.Read(attrs); }
  void Compute(sdk::Call& call) override {
    const sdk::Shape shape = call.input_shape(0);
    const int64_t pixels = sdk::LrnPixelsOf(shape), depth = shape[3];
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      T* y = call.AllocateOutput<T>(0, shape);
      for (int64_t p = 0; p < pixels; ++p) {
        const T* in = x + p * depth;
        for (int64_t d = 0; d < depth; ++d) {
          double sum = 0;
          for (int64_t k = attrs_.Begin(d); k < attrs_.End(d, depth); ++k) {
            sum += AsDouble(in[k]) * AsDouble(in[k]);
          }
          const double norm = double(attrs_.bias) + double(attrs_.alpha) * sum;
          y[p * depth + d] = static_cast<T>(AsDouble(in[d]) * std::pow(norm, -double(attrs_.beta)));
        }
      }
    });
  }

 private:
  sdk::LrnAttrs attrs_;
};

// d input[k] = sum over the windows j that hold k of
//   grads[j] * (pow(N_j, -beta) [k == j] - 2 alpha beta input[k] output[j] / N_j)
class LrnGradKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { attrs_.Read(attrs); }
  void Compute(sdk::Call& call) override {
    const sdk::Shape shape = call.input_shape(0);
    const int64_t pixels =
        sdk::LrnGradPixelsOf(shape, call.input_shape(1), call.input_shape(2));
    const int64_t depth = shape[3];
    const double alpha = attrs_.alpha, beta = attrs_.beta, bias = attrs_.bias;
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* g = call.input<T>(0);
      const T* x = call.input<T>(1);
      const T* act = call.input<T>(2);
      T* y = call.AllocateOutput<T>(0, shape);
      std::vector<double> acc(static_cast<size_t>(depth));
      for (int64_t p = 0; p < pixels; ++p) {
        const int64_t o = p * depth;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t j = 0; j < depth; ++j) {
          const double gs = AsDouble(g[o + j]);
          if (gs == 0) continue;
          double norm = 0;
          for (int64_t k = attrs_.Begin(j); k < attrs_.End(j, depth); ++k) {
            norm += AsDouble(x[o + k]) * AsDouble(x[o + k]);
          }
          norm = alpha * norm + bias;
          const double pre = std::pow(norm, -beta);
          const double ab2 = -2.0 * alpha * beta * AsDouble(act[o + j]);
          for (int64_t k = attrs_.Begin(j); k < attrs_.End(j, depth); ++k) {
            double dyi = AsDouble(x[o + k]) * ab2 / norm;
            if (k == j) dyi += pre;
            acc[k] += dyi * gs;
          }
        }
        for (int64_t k = 0; k < depth; ++k) y[o + k] = static_cast<T>(acc[k]);
      }
    });
  }

 private:
  sdk::LrnAttrs attrs_;
};

}  // namespace

PX_Status* RegisterLrnKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> types = {PX_DT_HALF, PX_DT_BFLOAT16, PX_DT_FLOAT};
  PX_Status* s = nullptr;
  if ((s = sdk::RegisterKernel<LrnKernel>(info, registrar, sdk::sig::kLRN, {types})) ||
      (s = sdk::RegisterKernel<LrnGradKernel>(info, registrar, sdk::sig::kLRNGrad, {types}))) {
    return s;
  }
  return nullptr;
}

}  // namespace plexus::reference

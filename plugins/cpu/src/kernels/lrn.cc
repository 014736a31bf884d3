// CPU kernels: LRN and LRNGrad (plexus/sdk/lrn.h) in float, following
// TensorFlow's CPU kernels: LRN sums each window's squares and scales by
// alpha, except for a depth above 384 with beta 0.5 or 1, where TensorFlow
// slides one running sum of alpha * x^2 along the depth (and so does this
// kernel); beta 1 and 0.5 take a reciprocal and a reciprocal square root,
// other betas exp(-beta * log(norm)). LRNGrad is TensorFlow's loop. Half and
// bfloat16 compute in float. Pixels run in parallel (OpenMP).
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/register_kernels.h"
#include "plexus/sdk/lrn.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

bool Parallel(int64_t items, int64_t work) { return items > 1 && work > (int64_t{1} << 14); }

constexpr int64_t kSlidingDepth = 384;

// The float attributes as TensorFlow holds them: in the image type.
template <typename T>
sdk::LrnAttrs InType(sdk::LrnAttrs a) {
  auto round = [](float v) { return static_cast<float>(static_cast<T>(v)); };
  a.bias = round(a.bias);
  a.alpha = round(a.alpha);
  a.beta = round(a.beta);
  return a;
}

class LrnKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { attrs_.Read(attrs); }
  void Compute(sdk::Call& call) override {
    const sdk::Shape shape = call.input_shape(0);
    const int64_t pixels = sdk::LrnPixelsOf(shape), depth = shape[3];
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const sdk::LrnAttrs a = InType<T>(attrs_);
      const bool sliding = depth > kSlidingDepth && (a.beta == 0.5f || a.beta == 1.0f);
      const T* x = call.input<T>(0);
      T* y = call.AllocateOutput<T>(0, shape);
#pragma omp parallel for schedule(static) if (Parallel(pixels, pixels * depth * 4))
      for (int64_t p = 0; p < pixels; ++p) {
        std::vector<float> in(static_cast<size_t>(depth)), norm(static_cast<size_t>(depth));
        for (int64_t d = 0; d < depth; ++d) in[d] = static_cast<float>(x[p * depth + d]);
        if (sliding) {
          // TensorFlow's running sum over alpha * x^2, zero padded by radius.
          const int64_t r = a.radius;
          std::vector<float> padded(static_cast<size_t>(depth + 2 * r), 0.0f);
          for (int64_t d = 0; d < depth; ++d) padded[d + r] = in[d] * in[d] * a.alpha;
          float acc = 0;
          for (int64_t i = 0; i < 2 * r; ++i) acc += padded[i];
          for (int64_t d = 0; d < depth; ++d) {
            acc += padded[d + 2 * r];
            norm[d] = a.bias + acc;
            acc -= padded[d];
          }
        } else {
          for (int64_t d = 0; d < depth; ++d) {
            float sum = 0;
            for (int64_t k = a.Begin(d); k < a.End(d, depth); ++k) sum += in[k] * in[k];
            norm[d] = sum * a.alpha + a.bias;
          }
        }
        for (int64_t d = 0; d < depth; ++d) {
          float scale;
          if (a.beta == 1.0f) {
            scale = 1.0f / norm[d];
          } else if (a.beta == 0.5f) {
            scale = 1.0f / std::sqrt(norm[d]);
          } else {
            scale = std::exp(std::log(norm[d]) * -a.beta);
          }
          y[p * depth + d] = static_cast<T>(in[d] * scale);
        }
      }
    });
  }

 private:
  sdk::LrnAttrs attrs_;
};

class LrnGradKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { attrs_.Read(attrs); }
  void Compute(sdk::Call& call) override {
    const sdk::Shape shape = call.input_shape(0);
    const int64_t pixels =
        sdk::LrnGradPixelsOf(shape, call.input_shape(1), call.input_shape(2));
    const int64_t depth = shape[3];
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const sdk::LrnAttrs a = InType<T>(attrs_);
      const float alpha_beta_2 = -2.0f * a.alpha * a.beta;
      const T* g = call.input<T>(0);
      const T* x = call.input<T>(1);
      const T* act = call.input<T>(2);
      T* y = call.AllocateOutput<T>(0, shape);
#pragma omp parallel for schedule(static) if (Parallel(pixels, pixels * depth * depth))
      for (int64_t p = 0; p < pixels; ++p) {
        const int64_t o = p * depth;
        std::vector<float> out(static_cast<size_t>(depth), 0.0f);
        for (int64_t j = 0; j < depth; ++j) {
          const float gs = static_cast<float>(g[o + j]);
          if (gs == 0.0f) continue;
          const int64_t begin = a.Begin(j), end = a.End(j, depth);
          float norm = 0;
          for (int64_t k = begin; k < end; ++k) {
            const float v = static_cast<float>(x[o + k]);
            norm += v * v;
          }
          norm = a.alpha * norm + a.bias;
          const float pre = std::pow(norm, -a.beta);
          const float activations_ab2 = alpha_beta_2 * static_cast<float>(act[o + j]);
          for (int64_t k = begin; k < end; ++k) {
            float dyi = static_cast<float>(x[o + k]) * activations_ab2 / norm;
            if (k == j) dyi += pre;
            dyi *= gs;
            out[k] += dyi;
          }
        }
        for (int64_t k = 0; k < depth; ++k) y[o + k] = static_cast<T>(out[k]);
      }
    });
  }

 private:
  sdk::LrnAttrs attrs_;
};

}  // namespace

PX_Status* RegisterLrnFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> types = {PX_DT_HALF, PX_DT_BFLOAT16, PX_DT_FLOAT};
  PX_Status* s = nullptr;
  if ((s = sdk::RegisterKernel<LrnKernel>(info, registrar, sdk::sig::kLRN, {types})) ||
      (s = sdk::RegisterKernel<LrnGradKernel>(info, registrar, sdk::sig::kLRNGrad, {types}))) {
    return s;
  }
  return nullptr;
}

}  // namespace plexus::cpu

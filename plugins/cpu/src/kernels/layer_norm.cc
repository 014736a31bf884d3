// CPU kernel of _PlexusLayerNorm (core/src/ops/layer_norm_ops.cc): each row
// of the input over its last axis, in one pass over the row for the mean,
// one for the variance and one for the output while the row is in cache,
// instead of the ten separate kernels of Keras' decomposition. Float rows
// run in fused_steps.h's widest loops, split over the OpenMP team when
// there are many; double rows run here, accumulating in double.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/fused_epilogue.h"
#include "kernels/fused_steps.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

// Rows per OpenMP chunk, and the least work (elements) worth a team.
constexpr int64_t kRowsPerChunk = 16;
constexpr int64_t kParallelElements = int64_t{1} << 15;

void DoubleRows(const double* x, const double* gamma, const double* beta, double epsilon, int64_t c, int64_t r0,
                int64_t r1, double* y) {
  for (int64_t r = r0; r < r1; ++r) {
    const double* xr = x + r * c;
    double mean = 0, variance = 0;
    for (int64_t i = 0; i < c; ++i) mean += xr[i];
    mean /= static_cast<double>(c);
    for (int64_t i = 0; i < c; ++i) variance += (xr[i] - mean) * (xr[i] - mean);
    variance /= static_cast<double>(c);
    const double inv = 1.0 / std::sqrt(variance + epsilon);
    for (int64_t i = 0; i < c; ++i) y[r * c + i] = (xr[i] - mean) * (inv * gamma[i]) + beta[i];
  }
}

class LayerNormKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    epsilon_ = attrs.Float("epsilon");
    dtype_ = attrs.Type("T");
    if (dtype_ != PX_DT_FLOAT && dtype_ != PX_DT_DOUBLE) {
      throw sdk::Error(PX_CODE_UNIMPLEMENTED, "_PlexusLayerNorm takes float or double");
    }
  }

  void Compute(sdk::Call& call) override {
    const sdk::Shape xs = call.input_shape(0);
    PX_SDK_CHECK(!xs.empty(), "_PlexusLayerNorm input must have at least one dimension, got a scalar");
    const int64_t c = xs.back();
    static const char* const kNames[] = {"x", "gamma", "beta"};
    for (size_t i = 0; i < 3; ++i) {
      PX_SDK_CHECK(call.input_dtype(i) == dtype_, "_PlexusLayerNorm %s is %s, expected %s", kNames[i],
                   sdk::DtypeName(call.input_dtype(i)), sdk::DtypeName(dtype_));
      if (i > 0) {
        PX_SDK_CHECK(sdk::NumElements(call.input_shape(i)) == c,
                     "_PlexusLayerNorm %s has %lld elements, expected the input's last dimension %lld", kNames[i],
                     static_cast<long long>(sdk::NumElements(call.input_shape(i))), static_cast<long long>(c));
      }
    }
    const int64_t rows = c == 0 ? 0 : sdk::NumElements(xs) / c;
    if (dtype_ == PX_DT_FLOAT) {
      Run<float>(call, xs, rows, c, [](const float* x, const float* g, const float* b, float eps, int64_t c,
                                       int64_t r0, int64_t r1, float* y) {
        static const fused_steps::LayerNormFn rows_fn = fused_steps::WidestLayerNorm();
        rows_fn(x, g, b, eps, c, r0, r1, y);
      });
    } else {
      Run<double>(call, xs, rows, c, [](const double* x, const double* g, const double* b, double eps, int64_t c,
                                        int64_t r0, int64_t r1, double* y) { DoubleRows(x, g, b, eps, c, r0, r1, y); });
    }
  }

 private:
  template <typename T, typename F>
  void Run(sdk::Call& call, const sdk::Shape& xs, int64_t rows, int64_t c, F rows_fn) {
    const T* x = call.input<T>(0);
    const T* gamma = call.input<T>(1);
    const T* beta = call.input<T>(2);
    T* y = call.AllocateOutput<T>(0, xs);
    if (rows == 0) return;
    const T eps = static_cast<T>(epsilon_);
    const int64_t chunks = (rows + kRowsPerChunk - 1) / kRowsPerChunk;
    // The output may share the input's buffer: each row is read whole
    // (mean, variance) before it is written, and rows are independent.
#pragma omp parallel for schedule(static) if (chunks > 1 && rows * c >= kParallelElements)
    for (int64_t k = 0; k < chunks; ++k) {
      const int64_t r0 = k * kRowsPerChunk;
      rows_fn(x, gamma, beta, eps, c, r0, std::min(rows, r0 + kRowsPerChunk), y);
    }
  }

  float epsilon_ = 0;
  PX_DataType dtype_ = PX_DT_FLOAT;
};

}  // namespace

PX_Status* RegisterLayerNormKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  return sdk::RegisterKernel<LayerNormKernel>(info, registrar, sdk::sig::kPlexusLayerNorm,
                                              {{PX_DT_FLOAT, PX_DT_DOUBLE}});
}

}  // namespace plexus::cpu

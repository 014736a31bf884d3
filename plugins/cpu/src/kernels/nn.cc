// CPU kernels: the nn family, written with sdk::OpKernel.
//
// BiasAdd, MaxPool, AvgPool and FusedBatchNorm (V1, V2, V3; inference)
// here; Conv2D and DepthwiseConv2dNative in nn_conv.cc. The loops run over
// NHWC with the channels innermost (contiguous); NCHW pooling transposes.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/nn_internal.h"
#include "kernels/nn_window.h"
#include "kernels/register_kernels.h"
#include "kernels/vector_isa.h"
#include "plexus/sdk/op_signatures.h"
#include "threading.h"

namespace plexus::cpu {
namespace {

template <typename F>
void VisitReal(PX_DataType t, F&& f) {
  sdk::VisitReal(t, std::forward<F>(f), "nn");
}

std::vector<PX_DataType> RealTypes() {
  return {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF,  PX_DT_BFLOAT16, PX_DT_INT8,
          PX_DT_INT16, PX_DT_INT32,  PX_DT_INT64, PX_DT_UINT8};
}

class BiasAddKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { nchw_ = ReadNchw(attrs); }
  void Compute(sdk::Call& call) override {
    const sdk::Shape shape = call.input_shape(0);
    const sdk::Shape bias_shape = call.input_shape(1);
    PX_SDK_CHECK(shape.size() >= 2, "BiasAdd value must be at least rank 2, got %s",
                 sdk::ShapeString(shape).c_str());
    const size_t channel_dim = nchw_ ? 1 : shape.size() - 1;
    const int64_t channels = shape[channel_dim];
    PX_SDK_CHECK(bias_shape.size() == 1 && bias_shape[0] == channels,
                 "BiasAdd bias must be 1-D with the %lld channels of value %s (%s), got %s",
                 static_cast<long long>(channels), sdk::ShapeString(shape).c_str(),
                 nchw_ ? "NCHW" : "NHWC", sdk::ShapeString(bias_shape).c_str());
    int64_t inner = 1;
    for (size_t d = channel_dim + 1; d < shape.size(); ++d) inner *= shape[d];
    const int64_t total = sdk::NumElements(shape);
    const int64_t outer = channels * inner == 0 ? 0 : total / (channels * inner);
    VisitReal(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const T* x = call.input<T>(0);
      const T* bias = call.input<T>(1);
      T* y = call.AllocateOutput<T>(0, shape);
      const std::vector<C> b(bias, bias + channels);
      for (int64_t o = 0; o < outer; ++o) {
        if (inner == 1) {  // channels last: add the bias vector to each row
          const T* src = x + o * channels;
          T* dst = y + o * channels;
          for (int64_t c = 0; c < channels; ++c) {
            dst[c] = static_cast<T>(static_cast<C>(src[c]) + b[c]);
          }
          continue;
        }
        for (int64_t c = 0; c < channels; ++c) {
          const int64_t base = (o * channels + c) * inner;
          const C bc = b[c];
          for (int64_t i = 0; i < inner; ++i) {
            y[base + i] = static_cast<T>(static_cast<C>(x[base + i]) + bc);
          }
        }
      }
    });
  }

 private:
  bool nchw_ = false;
};

// Pooling over NHWC: each output pixel folds the in-bounds part of its
// window, all channels at once (a vector loop: the accumulator and the
// input never share memory). Output rows [r0, r1) of batch x output
// height; acc holds c values of the compute type.
#define PX_POOL_INLINE inline __attribute__((always_inline))
template <bool kMax, typename T>
PX_POOL_INLINE void PoolRows(const T* x, int64_t h, int64_t w, int64_t c, const Window& win,
                             int64_t oh, int64_t ow, int64_t top, int64_t left, T* y, int64_t r0,
                             int64_t r1, sdk::ComputeType<T>* __restrict acc) {
  using C = sdk::ComputeType<T>;
  const C lowest = std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity()
                                                        : std::numeric_limits<C>::lowest();
  for (int64_t row = r0; row < r1; ++row) {
    const int64_t b = row / oh, i = row % oh;
    const int64_t h0 = i * win.sh - top;
    const int64_t hs = h0 > 0 ? h0 : 0, he = h0 + win.kh < h ? h0 + win.kh : h;
    for (int64_t j = 0; j < ow; ++j) {
      const int64_t w0 = j * win.sw - left;
      const int64_t ws = w0 > 0 ? w0 : 0, we = w0 + win.kw < w ? w0 + win.kw : w;
      for (int64_t k = 0; k < c; ++k) acc[k] = kMax ? lowest : C(0);
      for (int64_t ih = hs; ih < he; ++ih) {
        for (int64_t iw = ws; iw < we; ++iw) {
          const T* __restrict src = x + ((b * h + ih) * w + iw) * c;
          for (int64_t k = 0; k < c; ++k) {
            const C v = static_cast<C>(src[k]);
            if (kMax) {
              acc[k] = v > acc[k] ? v : acc[k];
            } else {
              acc[k] += v;
            }
          }
        }
      }
      T* __restrict dst = y + ((b * oh + i) * ow + j) * c;
      if (kMax) {
        for (int64_t k = 0; k < c; ++k) dst[k] = static_cast<T>(acc[k]);
      } else {
        const int64_t hn = he - hs > 0 ? he - hs : 0, wn = we - ws > 0 ? we - ws : 0;
        const C scale = C(1) / static_cast<C>(hn * wn);
        for (int64_t k = 0; k < c; ++k) dst[k] = static_cast<T>(acc[k] * scale);
      }
    }
  }
}

// The float loop for each instruction set (chosen at run time, as the
// direct depthwise convolution's is): the baseline's SSE2 folds 4 channels
// an instruction, AVX-512 16.
template <bool kMax>
__attribute__((target("avx512f,avx512vl,avx2,fma"))) void PoolRowsAvx512(
    const float* x, int64_t h, int64_t w, int64_t c, const Window& win, int64_t oh, int64_t ow,
    int64_t top, int64_t left, float* y, int64_t r0, int64_t r1, float* acc) {
  PoolRows<kMax, float>(x, h, w, c, win, oh, ow, top, left, y, r0, r1, acc);
}
template <bool kMax>
__attribute__((target("avx2,fma"))) void PoolRowsAvx2(const float* x, int64_t h, int64_t w, int64_t c,
                                                     const Window& win, int64_t oh, int64_t ow,
                                                     int64_t top, int64_t left, float* y, int64_t r0,
                                                     int64_t r1, float* acc) {
  PoolRows<kMax, float>(x, h, w, c, win, oh, ow, top, left, y, r0, r1, acc);
}

// Output rows run in parallel when there is enough work, each thread with
// its own accumulator.
template <bool kMax, typename T>
void PoolNhwc(const T* x, int64_t n, int64_t h, int64_t w, int64_t c, const Window& win,
              int64_t oh, int64_t ow, int64_t top, int64_t left, T* y) {
  using C = sdk::ComputeType<T>;
  const VectorIsa isa = WidestVectorIsa();
  const int64_t rows = n * oh;
  const int team = TeamSize();
  std::vector<C> accs(static_cast<size_t>(team * c));
  // (Below about 4M window reads the second thread's wake-up cost more than
  // it saved: hey_snips' 14-wide max pool over 400x128, 90 -> 156 us.)
  const bool parallel = team > 1 && rows > 1 && rows * ow * c * win.kh * win.kw > (int64_t{1} << 22);
  const int64_t chunks = parallel ? team : 1;
#pragma omp parallel for schedule(static) num_threads(team) if (parallel)
  for (int64_t ci = 0; ci < chunks; ++ci) {
    const int64_t r0 = rows * ci / chunks, r1 = rows * (ci + 1) / chunks;
    C* acc = accs.data() + static_cast<int64_t>(ThreadIndex()) * c;
    if constexpr (std::is_same_v<T, float>) {
      if (isa == VectorIsa::kAvx512) {
        PoolRowsAvx512<kMax>(x, h, w, c, win, oh, ow, top, left, y, r0, r1, acc);
        continue;
      }
      if (isa == VectorIsa::kAvx2) {
        PoolRowsAvx2<kMax>(x, h, w, c, win, oh, ow, top, left, y, r0, r1, acc);
        continue;
      }
    }
    PoolRows<kMax, T>(x, h, w, c, win, oh, ow, top, left, y, r0, r1, acc);
  }
}

template <bool kMax>
class PoolKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { window_.Read(attrs, true); }
  void Compute(sdk::Call& call) override {
    const sdk::Shape xs = call.input_shape(0);
    PX_SDK_CHECK(xs.size() == 4, "%s input must be 4-D, got %s", kMax ? "MaxPool" : "AvgPool",
                 sdk::ShapeString(xs).c_str());
    const bool nchw = window_.nchw;
    const int64_t n = xs[0], c = xs[nchw ? 1 : 3], h = xs[nchw ? 2 : 1], w = xs[nchw ? 3 : 2];
    int64_t oh, ow, top, left;
    window_.Output(h, window_.kh, window_.sh, 1, window_.pad_top, window_.pad_bottom, &oh, &top);
    window_.Output(w, window_.kw, window_.sw, 1, window_.pad_left, window_.pad_right, &ow, &left);
    const sdk::Shape out_shape = nchw ? sdk::Shape{n, c, oh, ow} : sdk::Shape{n, oh, ow, c};
    auto run = [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      T* y = call.AllocateOutput<T>(0, out_shape);
      if (!nchw) {
        PoolNhwc<kMax>(x, n, h, w, c, window_, oh, ow, top, left, y);
        return;
      }
      const std::vector<T> x_nhwc = NchwToNhwc(x, n, c, h, w);
      std::vector<T> y_nhwc(static_cast<size_t>(sdk::NumElements(out_shape)));
      PoolNhwc<kMax>(x_nhwc.data(), n, h, w, c, window_, oh, ow, top, left, y_nhwc.data());
      NhwcToNchw(y_nhwc.data(), n, oh, ow, c, y);
    };
    if (kMax) {
      VisitReal(call.input_dtype(0), run);
    } else {
      sdk::VisitFloat(call.input_dtype(0), run);
    }
  }

 private:
  Window window_;
};

// FusedBatchNorm, V2, V3 in inference mode:
// y = (x - mean) * (scale / sqrt(variance + epsilon)) + offset, computed in
// double with the per-channel factor folded once; the statistics outputs
// pass mean and variance through and V3's reserve_space_3 is a scalar 0.
class FusedBatchNormKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    nchw_ = ReadNchw(attrs);
    epsilon_ = attrs.Float("epsilon", 1e-4f);
    training_ = attrs.Bool("is_training", true);
  }
  void Compute(sdk::Call& call) override {
    if (training_) {
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                             "FusedBatchNorm with is_training=true is not supported; only "
                             "inference (is_training=false) is");
    }
    const sdk::Shape shape = call.input_shape(0);
    PX_SDK_CHECK(shape.size() == 4, "x must be 4-D, got %s", sdk::ShapeString(shape).c_str());
    const int64_t channels = shape[nchw_ ? 1 : 3];
    static const char* kNames[] = {"", "scale", "offset", "mean", "variance"};
    for (size_t i = 1; i <= 4; ++i) {
      const sdk::Shape s = call.input_shape(i);
      PX_SDK_CHECK(s.size() == 1 && s[0] == channels,
                   "%s must be 1-D with the %lld channels of x %s, got %s", kNames[i],
                   static_cast<long long>(channels), sdk::ShapeString(shape).c_str(),
                   sdk::ShapeString(s).c_str());
    }
    const float* scale = call.input<float>(1);
    const float* offset = call.input<float>(2);
    const float* mean = call.input<float>(3);
    const float* variance = call.input<float>(4);
    std::vector<double> factor(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) {
      factor[c] = 1.0 / std::sqrt(static_cast<double>(variance[c]) + epsilon_) * scale[c];
    }
    const int64_t inner = nchw_ ? shape[2] * shape[3] : 1;
    const int64_t total = sdk::NumElements(shape);
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const T* x = call.input<T>(0);
      T* y = call.AllocateOutput<T>(0, shape);
      if (total == 0) return;
      if (!nchw_) {
        for (int64_t p = 0; p < total / channels; ++p) {
          const T* src = x + p * channels;
          T* dst = y + p * channels;
          for (int64_t c = 0; c < channels; ++c) {
            const double v = static_cast<double>(static_cast<C>(src[c]));
            dst[c] = static_cast<T>(static_cast<C>((v - mean[c]) * factor[c] + offset[c]));
          }
        }
        return;
      }
      for (int64_t p = 0; p < total / inner; ++p) {
        const int64_t c = p % channels;
        const T* src = x + p * inner;
        T* dst = y + p * inner;
        const double m = mean[c], s = factor[c], o = offset[c];
        for (int64_t i = 0; i < inner; ++i) {
          const double v = static_cast<double>(static_cast<C>(src[i]));
          dst[i] = static_cast<T>(static_cast<C>((v - m) * s + o));
        }
      }
    });
    const sdk::Shape stats{channels};
    const float* pass[] = {mean, variance, mean, variance};
    for (size_t o = 1; o <= 4; ++o) {
      float* out = call.AllocateOutput<float>(o, stats);
      std::copy(pass[o - 1], pass[o - 1] + channels, out);
    }
    if (call.num_outputs() > 5) *call.AllocateOutput<float>(5, {}) = 0.0f;
  }

 private:
  bool nchw_ = false;
  float epsilon_ = 1e-4f;
  bool training_ = true;
};

}  // namespace

PX_Status* RegisterNnFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> floats = sdk::FloatTypes();
  const std::vector<PX_DataType> real = RealTypes();
  const std::vector<PX_DataType> bn_x = {PX_DT_FLOAT, PX_DT_HALF, PX_DT_BFLOAT16};
  const std::vector<PX_DataType> f32 = {PX_DT_FLOAT};
  PX_Status* s = nullptr;
  if ((s = sdk::RegisterKernel<BiasAddKernel>(info, registrar, sdk::sig::kBiasAdd, {real})) ||
      (s = RegisterConvKernels(info, registrar)) ||
      (s = sdk::RegisterKernel<PoolKernel<true>>(info, registrar, sdk::sig::kMaxPool, {real})) ||
      (s = sdk::RegisterKernel<PoolKernel<false>>(info, registrar, sdk::sig::kAvgPool, {floats})) ||
      (s = sdk::RegisterKernel<FusedBatchNormKernel>(info, registrar, sdk::sig::kFusedBatchNorm,
                                                     {f32})) ||
      (s = sdk::RegisterKernel<FusedBatchNormKernel>(info, registrar, sdk::sig::kFusedBatchNormV2,
                                                     {bn_x, f32})) ||
      (s = sdk::RegisterKernel<FusedBatchNormKernel>(info, registrar, sdk::sig::kFusedBatchNormV3,
                                                     {bn_x, f32}))) {
    return s;
  }
  return nullptr;
}

}  // namespace plexus::cpu

// Reference kernels: the nn family (see reference_kernels.h).
//
// BiasAdd, Conv2D, DepthwiseConv2dNative, MaxPool, AvgPool and
// FusedBatchNorm (V1, V2, V3; inference only), as direct loops over every
// output element, in either data format.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/conv_grouping.h"
#include "plexus/sdk/window.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

template <typename T>
constexpr bool kIsFloat = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                          std::is_same_v<T, sdk::half> || std::is_same_v<T, sdk::bfloat16>;

template <typename T>
double ToDouble(T v) {
  return static_cast<double>(static_cast<sdk::ComputeType<T>>(v));
}
template <typename T>
T FromDouble(double v) {
  return static_cast<T>(static_cast<sdk::ComputeType<T>>(v));
}

// Element offsets of a 4-D tensor in NHWC or NCHW.
struct Layout {
  int64_t n, h, w, c;
  bool nchw;
  Layout(const sdk::Shape& s, bool is_nchw)
      : n(s[0]), h(s[is_nchw ? 2 : 1]), w(s[is_nchw ? 3 : 2]), c(s[is_nchw ? 1 : 3]),
        nchw(is_nchw) {}
  int64_t At(int64_t bn, int64_t bh, int64_t bw, int64_t bc) const {
    return nchw ? ((bn * c + bc) * h + bh) * w + bw : ((bn * h + bh) * w + bw) * c + bc;
  }
  sdk::Shape ShapeWith(int64_t oh, int64_t ow, int64_t oc) const {
    return nchw ? sdk::Shape{n, oc, oh, ow} : sdk::Shape{n, oh, ow, oc};
  }
};

using sdk::Window;

class BiasAddKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { nchw_ = sdk::ReadNchw(attrs); }
  void Compute(sdk::Call& call) override {
    const sdk::Shape shape = call.input_shape(0);
    const sdk::Shape bias_shape = call.input_shape(1);
    PX_SDK_CHECK(shape.size() >= 2, "BiasAdd value must be at least rank 2, got %s",
                 sdk::ShapeString(shape).c_str());
    const size_t channel_dim = nchw_ ? 1 : shape.size() - 1;
    PX_SDK_CHECK(bias_shape.size() == 1 && bias_shape[0] == shape[channel_dim],
                 "BiasAdd bias must be 1-D with the %lld channels of value %s, got %s",
                 static_cast<long long>(shape[channel_dim]), sdk::ShapeString(shape).c_str(),
                 sdk::ShapeString(bias_shape).c_str());
    int64_t inner = 1;
    for (size_t d = channel_dim + 1; d < shape.size(); ++d) inner *= shape[d];
    const int64_t channels = shape[channel_dim];
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      const T* b = call.input<T>(1);
      T* y = call.AllocateOutput<T>(0, shape);
      const int64_t n = sdk::NumElements(shape);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t c = (i / inner) % channels;
        using C = sdk::ComputeType<T>;
        y[i] = static_cast<T>(static_cast<C>(x[i]) + static_cast<C>(b[c]));
      }
    });
  }

 private:
  bool nchw_ = false;
};

// Conv2D (filter [KH, KW, C_in / groups, C_out], sdk::ConvGroups) and
// DepthwiseConv2dNative (filter [KH, KW, C, multiplier], output channel
// c * multiplier + m).
template <bool kDepthwise>
class ConvKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { window_.Read(attrs, false); }
  void Compute(sdk::Call& call) override {
    const char* op = kDepthwise ? "DepthwiseConv2dNative" : "Conv2D";
    const sdk::Shape in_shape = call.input_shape(0), f_shape = call.input_shape(1);
    PX_SDK_CHECK(in_shape.size() == 4, "%s input must be 4-D, got %s", op,
                 sdk::ShapeString(in_shape).c_str());
    PX_SDK_CHECK(f_shape.size() == 4, "%s filter must be 4-D, got %s", op,
                 sdk::ShapeString(f_shape).c_str());
    const Layout in(in_shape, window_.nchw);
    const int64_t kh = f_shape[0], kw = f_shape[1], f_in = f_shape[2], f_out = f_shape[3];
    int64_t out_c, groups = 1;
    if (kDepthwise) {
      PX_SDK_CHECK(in.c == f_in, "input depth %lld must equal the filter depth %lld",
                   static_cast<long long>(in.c), static_cast<long long>(f_in));
      out_c = in.c * f_out;
    } else {
      groups = sdk::ConvGroups(op, in.c, f_in, f_out);
      out_c = f_out;
    }
    int64_t oh, ow, top, left;
    window_.Output(in.h, kh, window_.sh, window_.dh, window_.pad_top, window_.pad_bottom, &oh,
                   &top);
    window_.Output(in.w, kw, window_.sw, window_.dw, window_.pad_left, window_.pad_right, &ow,
                   &left);
    const sdk::Shape out_shape = in.ShapeWith(oh, ow, out_c);
    const Layout out(out_shape, window_.nchw);
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = std::conditional_t<kIsFloat<T>, double, int64_t>;
      const T* x = call.input<T>(0);
      const T* f = call.input<T>(1);
      T* y = call.AllocateOutput<T>(0, out_shape);
      for (int64_t n = 0; n < in.n; ++n) {
        for (int64_t i = 0; i < oh; ++i) {
          for (int64_t j = 0; j < ow; ++j) {
            for (int64_t o = 0; o < out_c; ++o) {
              A sum = 0;
              for (int64_t a = 0; a < kh; ++a) {
                const int64_t ih = i * window_.sh - top + a * window_.dh;
                if (ih < 0 || ih >= in.h) continue;
                for (int64_t b = 0; b < kw; ++b) {
                  const int64_t iw = j * window_.sw - left + b * window_.dw;
                  if (iw < 0 || iw >= in.w) continue;
                  if (kDepthwise) {
                    const int64_t c = o / f_out, m = o % f_out;
                    sum += Value<A>(x[in.At(n, ih, iw, c)]) *
                           Value<A>(f[((a * kw + b) * f_in + c) * f_out + m]);
                  } else {
                    // Output o reads input channels c0 + [0, f_in) of its group.
                    const int64_t c0 = o / (f_out / groups) * f_in;
                    for (int64_t c = 0; c < f_in; ++c) {
                      sum += Value<A>(x[in.At(n, ih, iw, c0 + c)]) *
                             Value<A>(f[((a * kw + b) * f_in + c) * f_out + o]);
                    }
                  }
                }
              }
              if constexpr (kIsFloat<T>) {
                y[out.At(n, i, j, o)] = FromDouble<T>(sum);
              } else {
                y[out.At(n, i, j, o)] = static_cast<T>(static_cast<uint64_t>(sum));
              }
            }
          }
        }
      }
    });
  }

 private:
  template <typename A, typename T>
  static A Value(T v) {
    if constexpr (kIsFloat<T>) {
      return ToDouble(v);
    } else {
      return static_cast<A>(v);
    }
  }
  Window window_;
};

// MaxPool and AvgPool. Positions outside the input (SAME or EXPLICIT
// padding) are skipped: AvgPool divides by the count of in-bounds elements.
template <bool kMax>
class PoolKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { window_.Read(attrs, true); }
  void Compute(sdk::Call& call) override {
    const sdk::Shape in_shape = call.input_shape(0);
    PX_SDK_CHECK(in_shape.size() == 4, "%s input must be 4-D, got %s",
                 kMax ? "MaxPool" : "AvgPool", sdk::ShapeString(in_shape).c_str());
    const Layout in(in_shape, window_.nchw);
    int64_t oh, ow, top, left;
    window_.Output(in.h, window_.kh, window_.sh, 1, window_.pad_top, window_.pad_bottom, &oh,
                   &top);
    window_.Output(in.w, window_.kw, window_.sw, 1, window_.pad_left, window_.pad_right, &ow,
                   &left);
    const sdk::Shape out_shape = in.ShapeWith(oh, ow, in.c);
    const Layout out(out_shape, window_.nchw);
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const T* x = call.input<T>(0);
      T* y = call.AllocateOutput<T>(0, out_shape);
      for (int64_t n = 0; n < in.n; ++n) {
        for (int64_t i = 0; i < oh; ++i) {
          for (int64_t j = 0; j < ow; ++j) {
            for (int64_t c = 0; c < in.c; ++c) {
              C best = std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity()
                                                           : std::numeric_limits<C>::lowest();
              double sum = 0;
              int64_t count = 0;
              for (int64_t a = 0; a < window_.kh; ++a) {
                const int64_t ih = i * window_.sh - top + a;
                if (ih < 0 || ih >= in.h) continue;
                for (int64_t b = 0; b < window_.kw; ++b) {
                  const int64_t iw = j * window_.sw - left + b;
                  if (iw < 0 || iw >= in.w) continue;
                  const C v = static_cast<C>(x[in.At(n, ih, iw, c)]);
                  if (v > best) best = v;
                  sum += static_cast<double>(v);
                  ++count;
                }
              }
              if (kMax) {
                y[out.At(n, i, j, c)] = static_cast<T>(best);
              } else {
                y[out.At(n, i, j, c)] = static_cast<T>(static_cast<C>(sum / count));
              }
            }
          }
        }
      }
    });
  }

 private:
  Window window_;
};

// FusedBatchNorm, V2 and V3 in inference mode:
// y = (x - mean) * rsqrt(variance + epsilon) * scale + offset; the
// statistics outputs pass mean and variance through.
class FusedBatchNormKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    nchw_ = sdk::ReadNchw(attrs);
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
    const Layout x_layout(shape, nchw_);
    static const char* kNames[] = {"", "scale", "offset", "mean", "variance"};
    for (size_t i = 1; i <= 4; ++i) {
      const sdk::Shape s = call.input_shape(i);
      PX_SDK_CHECK(s.size() == 1 && s[0] == x_layout.c,
                   "%s must be 1-D with the %lld channels of x %s, got %s", kNames[i],
                   static_cast<long long>(x_layout.c), sdk::ShapeString(shape).c_str(),
                   sdk::ShapeString(s).c_str());
    }
    const float* scale = call.input<float>(1);
    const float* offset = call.input<float>(2);
    const float* mean = call.input<float>(3);
    const float* variance = call.input<float>(4);
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      T* y = call.AllocateOutput<T>(0, shape);
      for (int64_t n = 0; n < x_layout.n; ++n) {
        for (int64_t h = 0; h < x_layout.h; ++h) {
          for (int64_t w = 0; w < x_layout.w; ++w) {
            for (int64_t c = 0; c < x_layout.c; ++c) {
              const int64_t i = x_layout.At(n, h, w, c);
              const double inv = 1.0 / std::sqrt(static_cast<double>(variance[c]) + epsilon_);
              y[i] = FromDouble<T>((ToDouble(x[i]) - mean[c]) * inv * scale[c] + offset[c]);
            }
          }
        }
      }
    });
    const sdk::Shape channels{x_layout.c};
    const float* pass[] = {mean, variance, mean, variance};
    for (size_t o = 1; o <= 4; ++o) {
      float* out = call.AllocateOutput<float>(o, channels);
      std::copy(pass[o - 1], pass[o - 1] + x_layout.c, out);
    }
    if (call.num_outputs() > 5) *call.AllocateOutput<float>(5, {}) = 0.0f;
  }

 private:
  bool nchw_ = false;
  float epsilon_ = 1e-4f;
  bool training_ = true;
};

}  // namespace

PX_Status* RegisterNnKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> floats = sdk::FloatTypes();
  const std::vector<PX_DataType> real = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF,
                                         PX_DT_BFLOAT16, PX_DT_INT8, PX_DT_INT16,
                                         PX_DT_INT32, PX_DT_INT64, PX_DT_UINT8};
  std::vector<PX_DataType> conv = floats;
  conv.push_back(PX_DT_INT32);
  const std::vector<PX_DataType> bn_x = {PX_DT_FLOAT, PX_DT_HALF, PX_DT_BFLOAT16};
  const std::vector<PX_DataType> f32 = {PX_DT_FLOAT};
  PX_Status* s = nullptr;
  if ((s = sdk::RegisterKernel<BiasAddKernel>(info, registrar, sdk::sig::kBiasAdd, {real})) ||
      (s = sdk::RegisterKernel<ConvKernel<false>>(info, registrar, sdk::sig::kConv2D, {conv})) ||
      (s = sdk::RegisterKernel<ConvKernel<true>>(info, registrar, sdk::sig::kDepthwiseConv2dNative,
                                                 {floats})) ||
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

}  // namespace plexus::reference

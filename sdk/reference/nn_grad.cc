// Reference kernels: neural-network gradients and losses (see
// reference_kernels.h).
//
// BiasAddGrad, MaxPoolGrad, MaxPoolGradV2, AvgPoolGrad,
// SoftmaxCrossEntropyWithLogits, SparseSoftmaxCrossEntropyWithLogits, L2Loss
// and FusedBatchNormGrad (V1, V2, V3), as direct loops in double (int64 for
// integer sums, cast back to the element type as TensorFlow's wrapping sums
// would give).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/window.h"
#include "plexus/sdk/xent.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

template <typename T>
constexpr bool kIsFloat = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                          std::is_same_v<T, sdk::half> || std::is_same_v<T, sdk::bfloat16>;

// The accumulation type: double for floats, int64 for integers.
template <typename T>
using Acc = std::conditional_t<kIsFloat<T>, double, int64_t>;

template <typename T>
Acc<T> ToAcc(T v) {
  if constexpr (kIsFloat<T>) {
    return static_cast<double>(static_cast<sdk::ComputeType<T>>(v));
  } else {
    return static_cast<int64_t>(v);
  }
}
// a + b in the accumulation type: integers wrap (in uint64), as the sums
// of the cpu plugin and TensorFlow do, where an int64 overflow would be
// undefined behaviour.
template <typename A>
A AccAdd(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    return static_cast<A>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return a + b;
  }
}
template <typename T>
T FromAcc(Acc<T> v) {
  if constexpr (kIsFloat<T>) {
    return static_cast<T>(static_cast<sdk::ComputeType<T>>(v));
  } else {
    return static_cast<T>(static_cast<uint64_t>(v));  // wraps like a sum in T
  }
}

std::vector<PX_DataType> RealTypes() {
  return {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF,  PX_DT_BFLOAT16, PX_DT_INT8,
          PX_DT_INT16, PX_DT_INT32,  PX_DT_INT64, PX_DT_UINT8};
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
  sdk::Shape ShapeWith(int64_t oh, int64_t ow) const {
    return nchw ? sdk::Shape{n, c, oh, ow} : sdk::Shape{n, oh, ow, c};
  }
};

// BiasAddGrad: the sum of out_backprop over every dimension but the channel
// one (the last, or dimension 1 with NCHW).
class BiasAddGradKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { nchw_ = sdk::ReadNchw(attrs); }
  void Compute(sdk::Call& call) override {
    const sdk::Shape shape = call.input_shape(0);
    PX_SDK_CHECK(shape.size() >= 2, "BiasAddGrad out_backprop must be at least 2-D, got %s",
                 sdk::ShapeString(shape).c_str());
    const size_t channel_dim = nchw_ ? 1 : shape.size() - 1;
    const int64_t channels = shape[channel_dim];
    int64_t inner = 1;
    for (size_t d = channel_dim + 1; d < shape.size(); ++d) inner *= shape[d];
    sdk::VisitReal(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* g = call.input<T>(0);
      T* out = call.AllocateOutput<T>(0, {channels});
      std::vector<Acc<T>> sum(static_cast<size_t>(channels), 0);
      const int64_t n = sdk::NumElements(shape);
      for (int64_t i = 0; i < n; ++i) {
        Acc<T>& s = sum[(i / inner) % channels];
        s = AccAdd(s, ToAcc(g[i]));
      }
      for (int64_t c = 0; c < channels; ++c) out[c] = FromAcc<T>(sum[c]);
    });
  }

 private:
  bool nchw_ = false;
};

// The pooled size and top/left padding of input `in`, checked against the
// shapes of the gradient-side tensors.
struct Pooled {
  int64_t oh, ow, top, left;
};
Pooled PoolGeometry(const sdk::Window& w, const Layout& in) {
  Pooled p;
  w.Output(in.h, w.kh, w.sh, 1, w.pad_top, w.pad_bottom, &p.oh, &p.top);
  w.Output(in.w, w.kw, w.sw, 1, w.pad_left, w.pad_right, &p.ow, &p.left);
  return p;
}
// MaxPoolGrad (and V2): each grad element goes to the first maximum of its
// window (in row-major window order) in orig_input; orig_output only has
// its shape checked, as in TensorFlow's cpu kernel.
class MaxPoolGradKernel : public sdk::OpKernel {
 public:
  explicit MaxPoolGradKernel(bool v2 = false) : v2_(v2) {}
  void Init(sdk::Attrs& attrs) override {
    if (v2_) {
      window_.ReadPoolingV2(attrs);  // ksize and strides: inputs 3 and 4
    } else {
      window_.Read(attrs, true);
    }
  }
  void Compute(sdk::Call& call) override {
    sdk::Window w = window_;
    if (v2_) w.SetPoolSizes(call.input_int_values(3), call.input_int_values(4));
    const sdk::Shape in_shape = call.input_shape(0);
    PX_SDK_CHECK(in_shape.size() == 4, "orig_input must be 4-D, got %s",
                 sdk::ShapeString(in_shape).c_str());
    const Layout in(in_shape, w.nchw);
    const Pooled p = PoolGeometry(w, in);
    const sdk::Shape out_shape = in.ShapeWith(p.oh, p.ow);
    sdk::CheckPooledShape("orig_output", call.input_shape(1), out_shape);
    sdk::CheckPooledShape("grad", call.input_shape(2), out_shape);
    const Layout out(out_shape, w.nchw);
    sdk::VisitReal(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const T* x = call.input<T>(0);
      const T* g = call.input<T>(2);
      T* dx = call.AllocateOutput<T>(0, in_shape);
      std::vector<Acc<T>> acc(static_cast<size_t>(sdk::NumElements(in_shape)), 0);
      for (int64_t n = 0; n < in.n; ++n) {
        for (int64_t i = 0; i < p.oh; ++i) {
          for (int64_t j = 0; j < p.ow; ++j) {
            for (int64_t c = 0; c < in.c; ++c) {
              int64_t best_at = -1;
              C best = C(0);
              for (int64_t a = 0; a < w.kh; ++a) {
                const int64_t ih = i * w.sh - p.top + a;
                if (ih < 0 || ih >= in.h) continue;
                for (int64_t b = 0; b < w.kw; ++b) {
                  const int64_t iw = j * w.sw - p.left + b;
                  if (iw < 0 || iw >= in.w) continue;
                  const int64_t at = in.At(n, ih, iw, c);
                  const C v = static_cast<C>(x[at]);
                  if (best_at < 0 || v > best) {
                    best = v;
                    best_at = at;
                  }
                }
              }
              if (best_at >= 0) acc[best_at] = AccAdd(acc[best_at], ToAcc(g[out.At(n, i, j, c)]));
            }
          }
        }
      }
      for (size_t k = 0; k < acc.size(); ++k) dx[k] = FromAcc<T>(acc[k]);
    });
  }

 private:
  bool v2_;
  sdk::Window window_;
};

class MaxPoolGradV2Kernel : public MaxPoolGradKernel {
 public:
  MaxPoolGradV2Kernel() : MaxPoolGradKernel(true) {}
};

// AvgPoolGrad: each grad element is spread evenly over the in-bounds part
// of its window (the count AvgPool divided by).
class AvgPoolGradKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { window_.Read(attrs, true); }
  void Compute(sdk::Call& call) override {
    const std::vector<int64_t> dims = call.input_int_values(0);
    PX_SDK_CHECK(call.input_rank(0) == 1 && dims.size() == 4,
                 "orig_input_shape must be a 1-D tensor of 4 elements, got shape %s",
                 sdk::ShapeString(call.input_shape(0)).c_str());
    for (int64_t d : dims) {
      PX_SDK_CHECK(d >= 0, "orig_input_shape must be non-negative, got %s",
                   sdk::ShapeString(dims).c_str());
    }
    const sdk::Shape in_shape(dims.begin(), dims.end());
    const Layout in(in_shape, window_.nchw);
    const sdk::Shape grad_shape = call.input_shape(1);
    PX_SDK_CHECK(grad_shape.size() == 4, "grad must be 4-D, got %s",
                 sdk::ShapeString(grad_shape).c_str());
    const Pooled p = PoolGeometry(window_, in);
    const sdk::Shape out_shape = in.ShapeWith(p.oh, p.ow);
    sdk::CheckPooledShape("grad", grad_shape, out_shape);
    const Layout out(out_shape, window_.nchw);
    sdk::VisitFloat(call.input_dtype(1), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* g = call.input<T>(1);
      T* dx = call.AllocateOutput<T>(0, in_shape);
      std::vector<double> acc(static_cast<size_t>(sdk::NumElements(in_shape)), 0.0);
      for (int64_t n = 0; n < in.n; ++n) {
        for (int64_t i = 0; i < p.oh; ++i) {
          for (int64_t j = 0; j < p.ow; ++j) {
            const int64_t h0 = std::max<int64_t>(i * window_.sh - p.top, 0);
            const int64_t h1 = std::min(i * window_.sh - p.top + window_.kh, in.h);
            const int64_t w0 = std::max<int64_t>(j * window_.sw - p.left, 0);
            const int64_t w1 = std::min(j * window_.sw - p.left + window_.kw, in.w);
            const int64_t count = (h1 - h0) * (w1 - w0);
            if (count <= 0) continue;
            for (int64_t c = 0; c < in.c; ++c) {
              const double share = ToAcc(g[out.At(n, i, j, c)]) / static_cast<double>(count);
              for (int64_t ih = h0; ih < h1; ++ih) {
                for (int64_t iw = w0; iw < w1; ++iw) acc[in.At(n, ih, iw, c)] += share;
              }
            }
          }
        }
      }
      for (size_t k = 0; k < acc.size(); ++k) dx[k] = FromAcc<T>(acc[k]);
    });
  }

 private:
  sdk::Window window_;
};

// One row of softmax cross entropy: loss = sum(labels * (logsumexp(f) -
// f)), backprop = softmax(f) - labels. `label_at(k)` is the label of class
// k. The dense form multiplies every class's term by its label (so a 0
// label times an infinite term is NaN, as in TensorFlow); the sparse form
// takes the labelled class's term alone.
template <typename T, typename LabelAt>
void XentRow(const T* f, int64_t f_step, int64_t classes, LabelAt label_at, bool dense, T* loss,
             T* backprop) {
  double max = -std::numeric_limits<double>::infinity();
  for (int64_t k = 0; k < classes; ++k) max = std::max(max, ToAcc(f[k * f_step]));
  double sum = 0;
  for (int64_t k = 0; k < classes; ++k) sum += std::exp(ToAcc(f[k * f_step]) - max);
  const double log_sum = std::log(sum);
  double l = 0;
  for (int64_t k = 0; k < classes; ++k) {
    const double shifted = ToAcc(f[k * f_step]) - max;
    const double label = label_at(k);
    if (dense || label != 0) l += label * (log_sum - shifted);
    backprop[k] = FromAcc<T>(std::exp(shifted - log_sum) - label);
  }
  *loss = FromAcc<T>(l);
}

class SoftmaxXentKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const sdk::XentShape shape = sdk::DenseXentShape(call.input_shape(0), call.input_shape(1));
    const int64_t batch = shape.batch, classes = shape.classes;
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      const T* y = call.input<T>(1);
      T* loss = call.AllocateOutput<T>(0, {batch});
      T* backprop = call.AllocateOutput<T>(1, {batch, classes});
      for (int64_t r = 0; r < batch; ++r) {
        const T* labels = y + r * shape.l_row;
        XentRow(x + r * shape.f_row, shape.f_col, classes,
                [&](int64_t k) { return ToAcc(labels[k * shape.l_col]); }, true, loss + r,
                backprop + r * classes);
      }
    });
  }
};

// The sparse form: labels [batch] of class indices, all checked first.
class SparseSoftmaxXentKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const sdk::XentShape shape = sdk::SparseXentShape(call.input_shape(0), call.input_shape(1));
    const int64_t batch = shape.batch, classes = shape.classes;
    const std::vector<int64_t> labels = call.input_int_values(1);
    sdk::CheckSparseLabels(labels, classes);
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      T* loss = call.AllocateOutput<T>(0, {batch});
      T* backprop = call.AllocateOutput<T>(1, {batch, classes});
      for (int64_t r = 0; r < batch; ++r) {
        const int64_t label = labels[r];
        XentRow(x + r * classes, 1, classes,
                [&](int64_t k) { return k == label ? 1.0 : 0.0; }, false, loss + r,
                backprop + r * classes);
      }
    });
  }
};

// L2Loss: sum(t^2) / 2 as a scalar.
class L2LossKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* t = call.input<T>(0);
      const int64_t n = call.input_size(0);
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += ToAcc(t[i]) * ToAcc(t[i]);
      *call.AllocateOutput<T>(0, {}) = FromAcc<T>(sum / 2);
    });
  }
};

// FusedBatchNormGrad, V2, V3 (TensorFlow's cpu formulas), per channel c with
// inv = 1 / sqrt(variance + epsilon) and the mean and variance from
// reserve_space_1/2:
//   offset_backprop = sum(dy), scale_backprop = sum(dy * (x - mean)) * inv,
//   training:  dx = scale * inv * (dy - mean(dy) - (x - mean) * inv^2 *
//              mean(dy * (x - mean)))
//   inference: dx = dy * scale * inv.
// reserve_space_3/4 (V3: 4/5) are empty [0] placeholders.
class FusedBatchNormGradKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    format_ = attrs.String("data_format", "NHWC");
    PX_SDK_CHECK(format_ == "NHWC" || format_ == "NCHW" ||
                     (attrs.num_inputs() == 6 && (format_ == "NDHWC" || format_ == "NCDHW")),
                 "data_format must be NHWC or NCHW%s, got '%s'",
                 attrs.num_inputs() == 6 ? " (or NDHWC, NCDHW)" : "", format_.c_str());
    epsilon_ = attrs.Float("epsilon", 1e-4f);
    training_ = attrs.Bool("is_training", true);
  }
  void Compute(sdk::Call& call) override {
    const sdk::Shape shape = call.input_shape(1);
    const size_t rank = format_.size();
    PX_SDK_CHECK(shape.size() == rank, "x must be %zu-D with data_format %s, got %s", rank,
                 format_.c_str(), sdk::ShapeString(shape).c_str());
    PX_SDK_CHECK(call.input_shape(0) == shape,
                 "y_backprop and x must have the same shape, got %s and %s",
                 sdk::ShapeString(call.input_shape(0)).c_str(), sdk::ShapeString(shape).c_str());
    const bool channels_first = format_[1] == 'C';
    const size_t cdim = channels_first ? 1 : rank - 1;
    const int64_t channels = shape[cdim];
    int64_t inner = 1;
    for (size_t d = cdim + 1; d < rank; ++d) inner *= shape[d];
    static const char* kNames[] = {"", "", "scale", "reserve_space_1", "reserve_space_2"};
    for (size_t i = 2; i <= 4; ++i) {
      const sdk::Shape s = call.input_shape(i);
      PX_SDK_CHECK(s.size() == 1 && s[0] == channels,
                   "%s must be 1-D with the %lld channels of x %s, got %s", kNames[i],
                   static_cast<long long>(channels), sdk::ShapeString(shape).c_str(),
                   sdk::ShapeString(s).c_str());
    }
    const float* scale = call.input<float>(2);
    const float* mean = call.input<float>(3);
    const float* variance = call.input<float>(4);
    const int64_t total = sdk::NumElements(shape);
    const int64_t count = channels == 0 ? 0 : total / channels;
    float* scale_backprop = call.AllocateOutput<float>(1, {channels});
    float* offset_backprop = call.AllocateOutput<float>(2, {channels});
    call.AllocateOutput<float>(3, {0});
    call.AllocateOutput<float>(4, {0});
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* dy = call.input<T>(0);
      const T* x = call.input<T>(1);
      T* dx = call.AllocateOutput<T>(0, shape);
      std::vector<double> sum_dy(static_cast<size_t>(channels), 0.0);
      std::vector<double> sum_dy_xc(static_cast<size_t>(channels), 0.0);
      for (int64_t i = 0; i < total; ++i) {
        const int64_t c = (i / inner) % channels;
        sum_dy[c] += ToAcc(dy[i]);
        sum_dy_xc[c] += ToAcc(dy[i]) * (ToAcc(x[i]) - mean[c]);
      }
      std::vector<double> inv(static_cast<size_t>(channels));
      for (int64_t c = 0; c < channels; ++c) {
        inv[c] = 1.0 / std::sqrt(static_cast<double>(variance[c]) + epsilon_);
        offset_backprop[c] = static_cast<float>(sum_dy[c]);
        scale_backprop[c] = static_cast<float>(sum_dy_xc[c] * inv[c]);
      }
      for (int64_t i = 0; i < total; ++i) {
        const int64_t c = (i / inner) % channels;
        const double g = ToAcc(dy[i]);
        if (training_) {
          const double xc = ToAcc(x[i]) - mean[c];
          dx[i] = FromAcc<T>(scale[c] * inv[c] *
                             (g - sum_dy[c] / count - xc * inv[c] * inv[c] * sum_dy_xc[c] / count));
        } else {
          dx[i] = FromAcc<T>(g * scale[c] * inv[c]);
        }
      }
    });
  }

 private:
  std::string format_;
  float epsilon_ = 1e-4f;
  bool training_ = true;
};

}  // namespace

PX_Status* RegisterNnGradKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> floats = sdk::FloatTypes();
  const std::vector<PX_DataType> real = RealTypes();
  const std::vector<PX_DataType> bn_x = {PX_DT_FLOAT, PX_DT_HALF, PX_DT_BFLOAT16};
  const std::vector<PX_DataType> f32 = {PX_DT_FLOAT};
  const std::vector<PX_DataType> labels = {PX_DT_INT32, PX_DT_INT64};
  PX_Status* s = nullptr;
  if ((s = sdk::RegisterKernel<BiasAddGradKernel>(info, registrar, sdk::sig::kBiasAddGrad,
                                                  {real})) ||
      (s = sdk::RegisterKernel<MaxPoolGradKernel>(info, registrar, sdk::sig::kMaxPoolGrad,
                                                  {real})) ||
      (s = sdk::RegisterKernel<MaxPoolGradV2Kernel>(info, registrar, sdk::sig::kMaxPoolGradV2,
                                                    {real})) ||
      (s = sdk::RegisterKernel<AvgPoolGradKernel>(info, registrar, sdk::sig::kAvgPoolGrad,
                                                  {floats})) ||
      (s = sdk::RegisterKernel<SoftmaxXentKernel>(
           info, registrar, sdk::sig::kSoftmaxCrossEntropyWithLogits, {floats})) ||
      (s = sdk::RegisterKernel<SparseSoftmaxXentKernel>(
           info, registrar, sdk::sig::kSparseSoftmaxCrossEntropyWithLogits, {floats, labels})) ||
      (s = sdk::RegisterKernel<L2LossKernel>(info, registrar, sdk::sig::kL2Loss, {floats})) ||
      (s = sdk::RegisterKernel<FusedBatchNormGradKernel>(info, registrar,
                                                         sdk::sig::kFusedBatchNormGrad, {f32})) ||
      (s = sdk::RegisterKernel<FusedBatchNormGradKernel>(
           info, registrar, sdk::sig::kFusedBatchNormGradV2, {bn_x, f32})) ||
      (s = sdk::RegisterKernel<FusedBatchNormGradKernel>(
           info, registrar, sdk::sig::kFusedBatchNormGradV3, {bn_x, f32}))) {
    return s;
  }
  return nullptr;
}

}  // namespace plexus::reference

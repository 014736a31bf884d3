// Reference kernels: the fused ops the graph optimizer creates (see
// reference_kernels.h and plexus/sdk/fused.h).
//
// _FusedMatMul, _FusedConv2D and _FusedDepthwiseConv2dNative compose the
// plain loops of MatMul, Conv2D and DepthwiseConv2dNative with the plain
// epilogue, step by step as the separate nodes would: the
// product (accumulated in double) is stored in T, BiasAdd adds in the
// compute type and stores in T, FusedBatchNorm computes in double and stores
// in T, and the activation reads that T value.
#include "plexus/sdk/fused.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "plexus/sdk/fused_elementwise.h"
#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/conv_grouping.h"
#include "plexus/sdk/window.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

template <typename T>
double ToDouble(T v) {
  return static_cast<double>(static_cast<sdk::ComputeType<T>>(v));
}
template <typename T>
T FromDouble(double v) {
  return static_cast<T>(static_cast<sdk::ComputeType<T>>(v));
}

// y[i] for i in [0, n), channel (i / inner) % channels: the epilogue after
// the product, each step stored in T.
// With `addend` (_PlexusFusedConv2DAdd), y[i] + addend[i] comes between
// the per-channel step and the activation.
template <typename T>
void Epilogue(const sdk::FusedSpec& spec, sdk::Call& call, int64_t n, int64_t inner,
              int64_t channels, T* y, const T* addend = nullptr) {
  using C = sdk::ComputeType<T>;
  if (spec.batch_norm) {
    const T* scale = call.input<T>(2);
    const T* offset = call.input<T>(3);
    const T* mean = call.input<T>(4);
    const T* variance = call.input<T>(5);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t c = (i / inner) % channels;
      const double inv = 1.0 / std::sqrt(ToDouble(variance[c]) + spec.epsilon);
      y[i] = FromDouble<T>((ToDouble(y[i]) - ToDouble(mean[c])) * inv * ToDouble(scale[c]) +
                           ToDouble(offset[c]));
    }
  } else {
    const T* bias = call.input<T>(2);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t c = (i / inner) % channels;
      y[i] = static_cast<T>(static_cast<C>(y[i]) + static_cast<C>(bias[c]));
    }
  }
  if (addend != nullptr) {
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(static_cast<C>(y[i]) + static_cast<C>(addend[i]));
  }
  if (spec.activation == sdk::FusedActivation::kNone) return;
  const C alpha = static_cast<C>(spec.leakyrelu_alpha);
  for (int64_t i = 0; i < n; ++i) {
    y[i] = static_cast<T>(sdk::ApplyFusedActivation<C>(spec.activation, static_cast<C>(y[i]),
                                                       alpha));
  }
}

// The arguments must be 1-D with `channels` elements.
void CheckArgs(const sdk::FusedSpec& spec, sdk::Call& call, const char* op, int64_t channels) {
  static const char* kBnNames[] = {"scale", "offset", "mean", "variance"};
  for (int64_t i = 0; i < spec.num_args; ++i) {
    const sdk::Shape s = call.input_shape(2 + i);
    PX_SDK_CHECK(s.size() == 1 && s[0] == channels, "%s %s must be 1-D with %lld elements, got %s",
                 op, spec.batch_norm ? kBnNames[i] : "bias", static_cast<long long>(channels),
                 sdk::ShapeString(s).c_str());
  }
}

class FusedMatMulKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    spec_ = sdk::ReadFusedSpec(attrs, "_FusedMatMul", /*allow_batch_norm=*/false);
    ta_ = attrs.Bool("transpose_a", false);
    tb_ = attrs.Bool("transpose_b", false);
  }
  void Compute(sdk::Call& call) override {
    const sdk::Shape as = call.input_shape(0), bs = call.input_shape(1);
    PX_SDK_CHECK(as.size() == 2 && bs.size() == 2,
                 "_FusedMatMul needs rank-2 inputs, got In[0]: %s, In[1]: %s",
                 sdk::ShapeString(as).c_str(), sdk::ShapeString(bs).c_str());
    const int64_t m = ta_ ? as[1] : as[0], k = ta_ ? as[0] : as[1];
    const int64_t kb = tb_ ? bs[1] : bs[0], n = tb_ ? bs[0] : bs[1];
    PX_SDK_CHECK(k == kb, "Matrix size-incompatible: In[0]: %s, In[1]: %s",
                 sdk::ShapeString(as).c_str(), sdk::ShapeString(bs).c_str());
    CheckArgs(spec_, call, "_FusedMatMul", n);
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* a = call.input<T>(0);
      const T* b = call.input<T>(1);
      T* y = call.AllocateOutput<T>(0, {m, n});
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (int64_t p = 0; p < k; ++p) {
            sum += ToDouble(a[ta_ ? p * m + i : i * k + p]) *
                   ToDouble(b[tb_ ? j * k + p : p * n + j]);
          }
          y[i * n + j] = FromDouble<T>(sum);
        }
      }
      Epilogue<T>(spec_, call, m * n, 1, n, y);
    });
  }

 private:
  sdk::FusedSpec spec_;
  bool ta_ = false, tb_ = false;
};

// _FusedConv2D, and _PlexusFusedConv2DAdd: the same with its last input
// added before the activation.
class FusedConv2DKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    add_ = std::string(attrs.op()) == sdk::sig::kPlexusFusedConv2DAdd.op;
    spec_ = sdk::ReadFusedSpec(attrs, "_FusedConv2D", /*allow_batch_norm=*/true);
    const std::string filter_format = attrs.String("filter_format", "HWIO");
    if (filter_format != "HWIO") {
      throw sdk::KernelError(
          PX_CODE_UNIMPLEMENTED,
          sdk::Format("_FusedConv2D supports filter_format HWIO only, got '%s'",
                      filter_format.c_str()));
    }
    window_.Read(attrs, false);
    if (add_ && window_.nchw) {
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED, "_PlexusFusedConv2DAdd supports data_format NHWC only");
    }
  }
  void Compute(sdk::Call& call) override {
    const sdk::Shape xs = call.input_shape(0), fs = call.input_shape(1);
    PX_SDK_CHECK(xs.size() == 4, "_FusedConv2D input must be 4-D, got %s",
                 sdk::ShapeString(xs).c_str());
    PX_SDK_CHECK(fs.size() == 4, "_FusedConv2D filter must be 4-D, got %s",
                 sdk::ShapeString(fs).c_str());
    const bool nchw = window_.nchw;
    const int64_t batch = xs[0], c_in = xs[nchw ? 1 : 3], h = xs[nchw ? 2 : 1],
                  w = xs[nchw ? 3 : 2];
    const int64_t kh = fs[0], kw = fs[1], f_in = fs[2], c_out = fs[3];
    const int64_t groups = sdk::ConvGroups("_FusedConv2D", c_in, f_in, c_out);
    int64_t oh, ow, top, left;
    window_.Output(h, kh, window_.sh, window_.dh, window_.pad_top, window_.pad_bottom, &oh, &top);
    window_.Output(w, kw, window_.sw, window_.dw, window_.pad_left, window_.pad_right, &ow,
                   &left);
    CheckArgs(spec_, call, "_FusedConv2D", c_out);
    const sdk::Shape out_shape =
        nchw ? sdk::Shape{batch, c_out, oh, ow} : sdk::Shape{batch, oh, ow, c_out};
    // Element offsets in either layout.
    auto in_at = [&](int64_t n, int64_t i, int64_t j, int64_t c) {
      return nchw ? ((n * c_in + c) * h + i) * w + j : ((n * h + i) * w + j) * c_in + c;
    };
    auto out_at = [&](int64_t n, int64_t i, int64_t j, int64_t c) {
      return nchw ? ((n * c_out + c) * oh + i) * ow + j : ((n * oh + i) * ow + j) * c_out + c;
    };
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      const T* f = call.input<T>(1);
      T* y = call.AllocateOutput<T>(0, out_shape);
      for (int64_t n = 0; n < batch; ++n) {
        for (int64_t i = 0; i < oh; ++i) {
          for (int64_t j = 0; j < ow; ++j) {
            for (int64_t o = 0; o < c_out; ++o) {
              double sum = 0;
              for (int64_t a = 0; a < kh; ++a) {
                const int64_t ih = i * window_.sh - top + a * window_.dh;
                if (ih < 0 || ih >= h) continue;
                for (int64_t b = 0; b < kw; ++b) {
                  const int64_t iw = j * window_.sw - left + b * window_.dw;
                  if (iw < 0 || iw >= w) continue;
                  const int64_t c0 = o / (c_out / groups) * f_in;  // o's group
                  for (int64_t c = 0; c < f_in; ++c) {
                    sum += ToDouble(x[in_at(n, ih, iw, c0 + c)]) *
                           ToDouble(f[((a * kw + b) * f_in + c) * c_out + o]);
                  }
                }
              }
              y[out_at(n, i, j, o)] = FromDouble<T>(sum);
            }
          }
        }
      }
      const int64_t inner = nchw ? oh * ow : 1;
      const T* addend = nullptr;
      if (add_) addend = call.input<T>(sdk::FusedConvAddendInput(call, spec_, out_shape));
      Epilogue<T>(spec_, call, sdk::NumElements(out_shape), inner, c_out, y, addend);
    });
  }

 private:
  sdk::FusedSpec spec_;
  sdk::Window window_;
  bool add_ = false;
};

// _FusedDepthwiseConv2dNative: DepthwiseConv2dNative's loops (filter
// [KH, KW, C, multiplier], output channel c * multiplier + q), then the
// epilogue over the C * multiplier output channels.
class FusedDepthwiseConvKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    spec_ = sdk::ReadFusedSpec(attrs, "_FusedDepthwiseConv2dNative", /*allow_batch_norm=*/true);
    window_.Read(attrs, false);
  }
  void Compute(sdk::Call& call) override {
    const sdk::Shape xs = call.input_shape(0), fs = call.input_shape(1);
    PX_SDK_CHECK(xs.size() == 4, "_FusedDepthwiseConv2dNative input must be 4-D, got %s",
                 sdk::ShapeString(xs).c_str());
    PX_SDK_CHECK(fs.size() == 4, "_FusedDepthwiseConv2dNative filter must be 4-D, got %s",
                 sdk::ShapeString(fs).c_str());
    const bool nchw = window_.nchw;
    const int64_t batch = xs[0], c_in = xs[nchw ? 1 : 3], h = xs[nchw ? 2 : 1],
                  w = xs[nchw ? 3 : 2];
    const int64_t kh = fs[0], kw = fs[1], mult = fs[3];
    PX_SDK_CHECK(c_in == fs[2], "input depth %lld must equal the filter depth %lld",
                 static_cast<long long>(c_in), static_cast<long long>(fs[2]));
    const int64_t c_out = c_in * mult;
    int64_t oh, ow, top, left;
    window_.Output(h, kh, window_.sh, window_.dh, window_.pad_top, window_.pad_bottom, &oh, &top);
    window_.Output(w, kw, window_.sw, window_.dw, window_.pad_left, window_.pad_right, &ow,
                   &left);
    CheckArgs(spec_, call, "_FusedDepthwiseConv2dNative", c_out);
    const sdk::Shape out_shape =
        nchw ? sdk::Shape{batch, c_out, oh, ow} : sdk::Shape{batch, oh, ow, c_out};
    auto in_at = [&](int64_t n, int64_t i, int64_t j, int64_t c) {
      return nchw ? ((n * c_in + c) * h + i) * w + j : ((n * h + i) * w + j) * c_in + c;
    };
    auto out_at = [&](int64_t n, int64_t i, int64_t j, int64_t c) {
      return nchw ? ((n * c_out + c) * oh + i) * ow + j : ((n * oh + i) * ow + j) * c_out + c;
    };
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      const T* f = call.input<T>(1);
      T* y = call.AllocateOutput<T>(0, out_shape);
      for (int64_t n = 0; n < batch; ++n) {
        for (int64_t i = 0; i < oh; ++i) {
          for (int64_t j = 0; j < ow; ++j) {
            for (int64_t c = 0; c < c_in; ++c) {
              for (int64_t q = 0; q < mult; ++q) {
                double sum = 0;
                for (int64_t a = 0; a < kh; ++a) {
                  const int64_t ih = i * window_.sh - top + a * window_.dh;
                  if (ih < 0 || ih >= h) continue;
                  for (int64_t b = 0; b < kw; ++b) {
                    const int64_t iw = j * window_.sw - left + b * window_.dw;
                    if (iw < 0 || iw >= w) continue;
                    sum += ToDouble(x[in_at(n, ih, iw, c)]) *
                           ToDouble(f[((a * kw + b) * c_in + c) * mult + q]);
                  }
                }
                y[out_at(n, i, j, c * mult + q)] = FromDouble<T>(sum);
              }
            }
          }
        }
      }
      const int64_t inner = nchw ? oh * ow : 1;
      Epilogue<T>(spec_, call, sdk::NumElements(out_shape), inner, c_out, y);
    });
  }

 private:
  sdk::FusedSpec spec_;
  sdk::Window window_;
};

}  // namespace

namespace {

// _PlexusFusedElementwise: each element runs the program with plain scalar
// code in the compute type, the way the separate reference kernels would.
class FusedElementwiseKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    program_ = sdk::ParseFusedProgram(attrs.StringList("program"), attrs.Int("N"));
    shape_ = attrs.IntList("shape");
    sdk::FusedShapeElements(shape_);  // throws for a negative or overflowing shape
  }
  void Compute(sdk::Call& call) override {
    const int64_t n = sdk::NumElements(shape_);
    for (size_t i = 0; i < call.num_inputs(); ++i) {
      const int64_t m = sdk::NumElements(call.input_shape(i));
      PX_SDK_CHECK(m == n || m == 1, "_PlexusFusedElementwise: input %zu has %lld elements, expected %lld or 1", i,
                   static_cast<long long>(m), static_cast<long long>(n));
    }
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* y = call.AllocateOutput<T>(0, shape_);
      std::vector<double> r(program_.size());
      for (int64_t e = 0; e < n; ++e) {
        auto operand = [&](const sdk::FusedOperand& o) -> double {
          if (o.kind == sdk::FusedOperand::kConstant) return static_cast<double>(static_cast<T>(o.value));
          if (o.kind == sdk::FusedOperand::kResult) return r[o.index];
          const T* x = call.input<T>(o.index);
          return static_cast<double>(sdk::NumElements(call.input_shape(o.index)) == 1 ? x[0] : x[e]);
        };
        for (size_t j = 0; j < program_.size(); ++j) {
          const sdk::FusedInstruction& ins = program_[j];
          const T a = static_cast<T>(operand(ins.a));
          const T b = ins.arity == 2 ? static_cast<T>(operand(ins.b)) : T(0);
          r[j] = static_cast<double>(static_cast<T>(Apply(ins.op, a, b)));
        }
        y[e] = static_cast<T>(r.back());
      }
    });
  }

 private:
  template <typename T>
  static T Apply(const std::string& op, T a, T b) {
    if (op == "Neg") return -a;
    if (op == "Abs") return std::fabs(a);
    if (op == "Exp") return std::exp(a);
    if (op == "Log") return std::log(a);
    if (op == "Sqrt") return std::sqrt(a);
    if (op == "Rsqrt") return T(1) / std::sqrt(a);
    if (op == "Square") return a * a;
    if (op == "Reciprocal") return T(1) / a;
    if (op == "Tanh") return std::tanh(a);
    if (op == "Sigmoid") return T(1) / (T(1) + std::exp(-a));
    if (op == "Relu") return std::isnan(a) ? a : (a > T(0) ? a : T(0));
    if (op == "Relu6") return std::isnan(a) ? a : std::min(std::max(a, T(0)), T(6));
    if (op == "Add" || op == "AddV2") return a + b;
    if (op == "Sub") return a - b;
    if (op == "Mul") return a * b;
    if (op == "Div" || op == "RealDiv") return a / b;
    if (op == "Maximum") return std::isnan(a) || std::isnan(b) ? std::numeric_limits<T>::quiet_NaN() : std::max(a, b);
    if (op == "Minimum") return std::isnan(a) || std::isnan(b) ? std::numeric_limits<T>::quiet_NaN() : std::min(a, b);
    if (op == "SquaredDifference") return (a - b) * (a - b);
    throw sdk::Error(PX_CODE_UNIMPLEMENTED, "unknown fused op " + op);
  }

  std::vector<sdk::FusedInstruction> program_;
  sdk::Shape shape_;
};

// _PlexusLayerNorm: each row normalized in double, the two-pass way.
class LayerNormKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { epsilon_ = attrs.Float("epsilon"); }
  void Compute(sdk::Call& call) override {
    const sdk::Shape xs = call.input_shape(0);
    PX_SDK_CHECK(!xs.empty(), "_PlexusLayerNorm input must have at least one dimension");
    const int64_t c = xs.back();
    for (size_t i = 1; i < 3; ++i) {
      PX_SDK_CHECK(sdk::NumElements(call.input_shape(i)) == c,
                   "_PlexusLayerNorm input %zu has %lld elements, expected the last dimension %lld", i,
                   static_cast<long long>(sdk::NumElements(call.input_shape(i))), static_cast<long long>(c));
    }
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      const T* gamma = call.input<T>(1);
      const T* beta = call.input<T>(2);
      T* y = call.AllocateOutput<T>(0, xs);
      const int64_t rows = c == 0 ? 0 : sdk::NumElements(xs) / c;
      for (int64_t r = 0; r < rows; ++r) {
        const T* xr = x + r * c;
        double mean = 0, var = 0;
        for (int64_t i = 0; i < c; ++i) mean += static_cast<double>(xr[i]);
        mean /= static_cast<double>(c);
        for (int64_t i = 0; i < c; ++i) var += (static_cast<double>(xr[i]) - mean) * (static_cast<double>(xr[i]) - mean);
        var /= static_cast<double>(c);
        const double inv = 1.0 / std::sqrt(var + static_cast<double>(epsilon_));
        for (int64_t i = 0; i < c; ++i) {
          y[r * c + i] = static_cast<T>((static_cast<double>(xr[i]) - mean) * inv * static_cast<double>(gamma[i]) +
                                        static_cast<double>(beta[i]));
        }
      }
    });
  }

 private:
  float epsilon_ = 0;
};

}  // namespace

PX_Status* RegisterFusedKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> floats = sdk::FloatTypes();
  PX_Status* s = nullptr;
  if ((s = sdk::RegisterKernel<FusedMatMulKernel>(info, registrar, sdk::sig::kFusedMatMul,
                                                  {floats})) ||
      (s = sdk::RegisterKernel<FusedConv2DKernel>(info, registrar, sdk::sig::kFusedConv2D,
                                                  {floats})) ||
      (s = sdk::RegisterKernel<FusedDepthwiseConvKernel>(
           info, registrar, sdk::sig::kFusedDepthwiseConv2dNative, {floats})) ||
      (s = sdk::RegisterKernel<FusedElementwiseKernel>(
           info, registrar, sdk::sig::kPlexusFusedElementwise, {{PX_DT_FLOAT, PX_DT_DOUBLE}})) ||
      (s = sdk::RegisterKernel<LayerNormKernel>(info, registrar, sdk::sig::kPlexusLayerNorm,
                                                {{PX_DT_FLOAT, PX_DT_DOUBLE}})) ||
      (s = sdk::RegisterKernel<FusedConv2DKernel>(info, registrar, sdk::sig::kPlexusFusedConv2DAdd,
                                                  {{PX_DT_FLOAT, PX_DT_DOUBLE}}))) {
    return s;
  }
  return nullptr;
}

}  // namespace plexus::reference

// Reference kernels: the convolution gradients (see reference_kernels.h).
//
// Conv2DBackpropInput, Conv2DBackpropFilter,
// DepthwiseConv2dNativeBackpropInput and DepthwiseConv2dNativeBackpropFilter
// as direct loops over the forward convolution's (output pixel, filter tap)
// pairs, accumulating in double (int64 for int32), in either data format.
// The sizes input (input_sizes or filter_sizes) is a host-memory int32 [4].
#include <cstdint>
#include <string>
#include <type_traits>
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

// The accumulator type: double for the floats, int64 for the integers.
template <typename T>
using Acc = std::conditional_t<kIsFloat<T>, double, int64_t>;

template <typename T>
Acc<T> Value(T v) {
  if constexpr (kIsFloat<T>) {
    return static_cast<double>(static_cast<sdk::ComputeType<T>>(v));
  } else {
    return static_cast<int64_t>(v);
  }
}
template <typename T>
T FromAcc(Acc<T> v) {
  if constexpr (kIsFloat<T>) {
    return static_cast<T>(static_cast<sdk::ComputeType<T>>(v));
  } else {
    return static_cast<T>(static_cast<uint64_t>(v));  // wraps, as int32 arithmetic does
  }
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
};

// The forward convolution behind a gradient op: the input and filter shapes,
// checked against each other and against out_backprop's shape.
struct GradGeometry {
  sdk::Shape input, filter;
  int64_t oh, ow, top, left, out_c;
  int64_t groups = 1;  // Conv2D's (sdk::ConvGroups)
};

GradGeometry GeometryOf(const char* op, bool depthwise, const sdk::Window& window,
                        const sdk::Shape& input, const sdk::Shape& filter,
                        const sdk::Shape& out_backprop) {
  PX_SDK_CHECK(input.size() == 4, "%s input must be 4-D, got %s", op,
               sdk::ShapeString(input).c_str());
  PX_SDK_CHECK(filter.size() == 4, "%s filter must be 4-D, got %s", op,
               sdk::ShapeString(filter).c_str());
  PX_SDK_CHECK(out_backprop.size() == 4, "%s out_backprop must be 4-D, got %s", op,
               sdk::ShapeString(out_backprop).c_str());
  for (int64_t d : input) PX_SDK_CHECK(d >= 0, "input_sizes must be non-negative");
  for (int64_t d : filter) PX_SDK_CHECK(d >= 0, "filter_sizes must be non-negative");
  const Layout in(input, window.nchw);
  GradGeometry g;
  g.input = input;
  g.filter = filter;
  if (depthwise) {
    PX_SDK_CHECK(in.c == filter[2], "input depth %lld must equal the filter depth %lld",
                 static_cast<long long>(in.c), static_cast<long long>(filter[2]));
    g.out_c = in.c * filter[3];
  } else {
    g.groups = sdk::ConvGroups(op, in.c, filter[2], filter[3]);
    g.out_c = filter[3];
  }
  window.Output(in.h, filter[0], window.sh, window.dh, window.pad_top, window.pad_bottom, &g.oh,
                &g.top);
  window.Output(in.w, filter[1], window.sw, window.dw, window.pad_left, window.pad_right, &g.ow,
                &g.left);
  const sdk::Shape expected = window.nchw ? sdk::Shape{in.n, g.out_c, g.oh, g.ow}
                                          : sdk::Shape{in.n, g.oh, g.ow, g.out_c};
  PX_SDK_CHECK(out_backprop == expected,
               "out_backprop must have shape %s (the output of the forward convolution of input "
               "%s with filter %s), got %s",
               sdk::ShapeString(expected).c_str(), sdk::ShapeString(input).c_str(),
               sdk::ShapeString(filter).c_str(), sdk::ShapeString(out_backprop).c_str());
  return g;
}

// The sizes input (index i) as a shape.
sdk::Shape SizesInput(sdk::Call& call, size_t i, const char* name) {
  PX_SDK_CHECK(call.input_rank(i) == 1 && call.input_size(i) == 4,
               "%s must be a vector of 4 elements, got shape %s", name,
               sdk::ShapeString(call.input_shape(i)).c_str());
  return call.input_int_values(i);
}

// Visits every (input element, filter element, out_backprop element) triple
// of the forward convolution: f(x_offset, filter_offset, dy_offset).
template <typename F>
void ForEachTap(const GradGeometry& g, const sdk::Window& window, bool depthwise, F&& f) {
  const Layout in(g.input, window.nchw);
  const sdk::Shape out_shape = window.nchw ? sdk::Shape{in.n, g.out_c, g.oh, g.ow}
                                           : sdk::Shape{in.n, g.oh, g.ow, g.out_c};
  const Layout out(out_shape, window.nchw);
  const int64_t kh = g.filter[0], kw = g.filter[1], f_in = g.filter[2], f_out = g.filter[3];
  for (int64_t n = 0; n < in.n; ++n) {
    for (int64_t i = 0; i < g.oh; ++i) {
      for (int64_t j = 0; j < g.ow; ++j) {
        for (int64_t a = 0; a < kh; ++a) {
          const int64_t ih = i * window.sh - g.top + a * window.dh;
          if (ih < 0 || ih >= in.h) continue;
          for (int64_t b = 0; b < kw; ++b) {
            const int64_t iw = j * window.sw - g.left + b * window.dw;
            if (iw < 0 || iw >= in.w) continue;
            for (int64_t o = 0; o < g.out_c; ++o) {
              if (depthwise) {
                const int64_t c = o / f_out, m = o % f_out;
                f(in.At(n, ih, iw, c), ((a * kw + b) * f_in + c) * f_out + m, out.At(n, i, j, o));
              } else {
                const int64_t c0 = o / (f_out / g.groups) * f_in;  // o's group
                for (int64_t c = 0; c < f_in; ++c) {
                  f(in.At(n, ih, iw, c0 + c), ((a * kw + b) * f_in + c) * f_out + o,
                    out.At(n, i, j, o));
                }
              }
            }
          }
        }
      }
    }
  }
}

// kFilter false: the gradient with respect to the input (inputs
// input_sizes, filter, out_backprop); true: with respect to the filter
// (inputs input, filter_sizes, out_backprop).
template <bool kFilter, bool kDepthwise>
class ConvGradKernel : public sdk::OpKernel {
 public:
  static constexpr const char* kOp =
      kDepthwise ? (kFilter ? "DepthwiseConv2dNativeBackpropFilter"
                            : "DepthwiseConv2dNativeBackpropInput")
                 : (kFilter ? "Conv2DBackpropFilter" : "Conv2DBackpropInput");

  void Init(sdk::Attrs& attrs) override { window_.Read(attrs, false); }
  void Compute(sdk::Call& call) override {
    const sdk::Shape sizes =
        SizesInput(call, kFilter ? 1 : 0, kFilter ? "filter_sizes" : "input_sizes");
    const sdk::Shape input = kFilter ? call.input_shape(0) : sizes;
    const sdk::Shape filter = kFilter ? sizes : call.input_shape(1);
    const GradGeometry g =
        GeometryOf(kOp, kDepthwise, window_, input, filter, call.input_shape(2));
    auto run = [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* other = call.input<T>(kFilter ? 0 : 1);  // input or filter
      const T* dy = call.input<T>(2);
      T* out = call.AllocateOutput<T>(0, sizes);
      std::vector<Acc<T>> acc(static_cast<size_t>(sdk::NumElements(sizes)), Acc<T>(0));
      ForEachTap(g, window_, kDepthwise, [&](int64_t xi, int64_t fi, int64_t yi) {
        if (kFilter) {
          acc[fi] += Value(other[xi]) * Value(dy[yi]);
        } else {
          acc[xi] += Value(other[fi]) * Value(dy[yi]);
        }
      });
      for (size_t k = 0; k < acc.size(); ++k) out[k] = FromAcc<T>(acc[k]);
    };
    const PX_DataType t = call.input_dtype(2);
    if (t == PX_DT_INT32) {
      run(sdk::TypeTag<int32_t>{});
    } else {
      sdk::VisitFloat(t, run);
    }
  }

 private:
  sdk::Window window_;
};

}  // namespace

PX_Status* RegisterConvGradKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  std::vector<PX_DataType> input_types = sdk::FloatTypes();
  input_types.push_back(PX_DT_INT32);
  PX_Status* s = nullptr;
  if ((s = sdk::RegisterKernel<ConvGradKernel<false, false>>(
           info, registrar, sdk::sig::kConv2DBackpropInput, {input_types})) ||
      (s = sdk::RegisterKernel<ConvGradKernel<true, false>>(
           info, registrar, sdk::sig::kConv2DBackpropFilter, {sdk::FloatTypes()})) ||
      (s = sdk::RegisterKernel<ConvGradKernel<false, true>>(
           info, registrar, sdk::sig::kDepthwiseConv2dNativeBackpropInput, {sdk::FloatTypes()})) ||
      (s = sdk::RegisterKernel<ConvGradKernel<true, true>>(
           info, registrar, sdk::sig::kDepthwiseConv2dNativeBackpropFilter, {sdk::FloatTypes()}))) {
    return s;
  }
  return nullptr;
}

}  // namespace plexus::reference

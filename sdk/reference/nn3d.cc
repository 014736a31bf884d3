// Reference kernels: 3-D convolution and pooling (see reference_kernels.h).
//
// Conv3D (filter [kd, kh, kw, c, out]), MaxPool3D and AvgPool3D on NDHWC
// tensors, as direct loops over every output element; sums in double (int
// types do not occur: TensorFlow's types are the floats). Positions outside
// the input (SAME padding) are skipped: AvgPool3D divides by the number of
// positions inside, as TensorFlow's does.
//
// Conv3D's gradients walk the same windows: Conv3DBackpropInputV2 adds
// dy * filter to every input position a window tap read, and
// Conv3DBackpropFilterV2 adds x * dy to every tap, in double.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "plexus/sdk/op_signatures.h"
#include "plexus/sdk/window3d.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

// Offset of (b, z, y, x, ch) in an NDHWC tensor of spatial size dims[3].
inline int64_t At(int64_t b, int64_t z, int64_t y, int64_t x, int64_t ch, const int64_t dims[3],
                  int64_t channels) {
  return (((b * dims[0] + z) * dims[1] + y) * dims[2] + x) * channels + ch;
}

template <typename T>
double ToDouble(T v) {
  return static_cast<double>(static_cast<sdk::ComputeType<T>>(v));
}

// Calls f(z, y, x) for every input position the window of output
// (oz, oy, ox) covers inside the input.
template <typename F>
void ForEachTap(const sdk::Geometry3D& g, const sdk::Window3D& w, int64_t oz, int64_t oy,
                int64_t ox, F&& f) {
  for (int64_t a = 0; a < g.k[0]; ++a) {
    const int64_t z = oz * w.s[0] - g.before[0] + a * w.d[0];
    if (z < 0 || z >= g.in[0]) continue;
    for (int64_t b = 0; b < g.k[1]; ++b) {
      const int64_t y = oy * w.s[1] - g.before[1] + b * w.d[1];
      if (y < 0 || y >= g.in[1]) continue;
      for (int64_t c = 0; c < g.k[2]; ++c) {
        const int64_t x = ox * w.s[2] - g.before[2] + c * w.d[2];
        if (x < 0 || x >= g.in[2]) continue;
        f(z, y, x, (a * g.k[1] + b) * g.k[2] + c);
      }
    }
  }
}

class Conv3DKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { window_.Read(attrs, "Conv3D", false); }
  void Compute(sdk::Call& call) override {
    const sdk::Shape xs = call.input_shape(0), fs = call.input_shape(1);
    PX_SDK_CHECK(fs.size() == 5, "Conv3D filter must be 5-D, got %s", sdk::ShapeString(fs).c_str());
    PX_SDK_CHECK(xs.size() == 5 && xs[4] == fs[3],
                 "Conv3D input and filter must have the same depth: input %s, filter %s",
                 sdk::ShapeString(xs).c_str(), sdk::ShapeString(fs).c_str());
    const int64_t taps[3] = {fs[0], fs[1], fs[2]};
    const sdk::Geometry3D g = sdk::Geometry3DOf("Conv3D", window_, xs, taps, fs[4]);
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      const T* f = call.input<T>(1);
      T* y = call.AllocateOutput<T>(0, sdk::Shape{g.n, g.out[0], g.out[1], g.out[2], g.out_c});
      std::vector<double> acc(static_cast<size_t>(g.out_c));
      for (int64_t n = 0; n < g.n; ++n) {
        for (int64_t oz = 0; oz < g.out[0]; ++oz) {
          for (int64_t oy = 0; oy < g.out[1]; ++oy) {
            for (int64_t ox = 0; ox < g.out[2]; ++ox) {
              std::fill(acc.begin(), acc.end(), 0.0);
              ForEachTap(g, window_, oz, oy, ox, [&](int64_t z, int64_t yy, int64_t xx, int64_t tap) {
                for (int64_t c = 0; c < g.c; ++c) {
                  const double v = ToDouble(x[At(n, z, yy, xx, c, g.in, g.c)]);
                  const T* fr = f + (tap * g.c + c) * g.out_c;
                  for (int64_t o = 0; o < g.out_c; ++o) acc[o] += v * ToDouble(fr[o]);
                }
              });
              T* out = y + At(n, oz, oy, ox, 0, g.out, g.out_c);
              for (int64_t o = 0; o < g.out_c; ++o) out[o] = static_cast<T>(acc[o]);
            }
          }
        }
      }
    });
  }

 private:
  sdk::Window3D window_;
};

template <bool kMax>
class Pool3DKernel : public sdk::OpKernel {
 public:
  static constexpr const char* kOp = kMax ? "MaxPool3D" : "AvgPool3D";
  void Init(sdk::Attrs& attrs) override { window_.Read(attrs, kOp, true); }
  void Compute(sdk::Call& call) override {
    const sdk::Shape xs = call.input_shape(0);
    PX_SDK_CHECK(xs.size() == 5, "%s input must be 5-D, got %s", kOp, sdk::ShapeString(xs).c_str());
    const sdk::Geometry3D g = sdk::Geometry3DOf(kOp, window_, xs, window_.k, xs[4]);
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      T* y = call.AllocateOutput<T>(0, sdk::Shape{g.n, g.out[0], g.out[1], g.out[2], g.c});
      for (int64_t n = 0; n < g.n; ++n) {
        for (int64_t oz = 0; oz < g.out[0]; ++oz) {
          for (int64_t oy = 0; oy < g.out[1]; ++oy) {
            for (int64_t ox = 0; ox < g.out[2]; ++ox) {
              for (int64_t c = 0; c < g.c; ++c) {
                double acc = kMax ? -std::numeric_limits<double>::infinity() : 0.0;
                int64_t count = 0;
                ForEachTap(g, window_, oz, oy, ox, [&](int64_t z, int64_t yy, int64_t xx, int64_t) {
                  const double v = ToDouble(x[At(n, z, yy, xx, c, g.in, g.c)]);
                  acc = kMax ? (v > acc || v != v ? v : acc) : acc + v;
                  ++count;
                });
                y[At(n, oz, oy, ox, c, g.out, g.c)] =
                    static_cast<T>(kMax ? acc : acc / static_cast<double>(count));
              }
            }
          }
        }
      }
    });
  }

 private:
  sdk::Window3D window_;
};

// Conv3DBackpropInputV2 (kFilter false: input 0 is input_sizes) and
// Conv3DBackpropFilterV2 (input 1 is filter_sizes).
template <bool kFilter>
class Conv3DBackpropKernel : public sdk::OpKernel {
 public:
  static constexpr const char* kOp = kFilter ? "Conv3DBackpropFilterV2" : "Conv3DBackpropInputV2";
  void Init(sdk::Attrs& attrs) override { window_.Read(attrs, kOp, false); }
  void Compute(sdk::Call& call) override {
    const sdk::Shape dys = call.input_shape(2);
    const sdk::Shape xs = kFilter ? call.input_shape(0) : SizesOf(call, 0, "input_sizes");
    const sdk::Shape fs = kFilter ? SizesOf(call, 1, "filter_sizes") : call.input_shape(1);
    const sdk::Geometry3D g = sdk::Conv3DBackpropGeometryOf(kOp, window_, xs, fs, dys);
    sdk::VisitFloat(call.input_dtype(2), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* data = call.input<T>(kFilter ? 0 : 1);  // x, or the filter
      const T* dy = call.input<T>(2);
      T* out = call.AllocateOutput<T>(0, kFilter ? fs : xs);
      std::vector<double> acc(static_cast<size_t>(sdk::NumElements(kFilter ? fs : xs)), 0.0);
      for (int64_t n = 0; n < g.n; ++n) {
        for (int64_t oz = 0; oz < g.out[0]; ++oz) {
          for (int64_t oy = 0; oy < g.out[1]; ++oy) {
            for (int64_t ox = 0; ox < g.out[2]; ++ox) {
              const T* d = dy + At(n, oz, oy, ox, 0, g.out, g.out_c);
              ForEachTap(g, window_, oz, oy, ox, [&](int64_t z, int64_t yy, int64_t xx, int64_t tap) {
                for (int64_t c = 0; c < g.c; ++c) {
                  const int64_t xi = At(n, z, yy, xx, c, g.in, g.c);
                  const int64_t fi = (tap * g.c + c) * g.out_c;
                  for (int64_t o = 0; o < g.out_c; ++o) {
                    if constexpr (kFilter) {
                      acc[fi + o] += ToDouble(data[xi]) * ToDouble(d[o]);
                    } else {
                      acc[xi] += ToDouble(d[o]) * ToDouble(data[fi + o]);
                    }
                  }
                }
              });
            }
          }
        }
      }
      for (size_t i = 0; i < acc.size(); ++i) out[i] = static_cast<T>(acc[i]);
    });
  }

 private:
  // The shape held by a sizes input (input_sizes, filter_sizes).
  static sdk::Shape SizesOf(sdk::Call& call, int index, const char* name) {
    const sdk::Shape s = call.input_shape(index);
    PX_SDK_CHECK(s.size() == 1 && s[0] == 5, "%s: %s must be a vector of 5 elements, got shape %s",
                 kOp, name, sdk::ShapeString(s).c_str());
    return call.input_int_values(index);
  }

  sdk::Window3D window_;
};

}  // namespace

PX_Status* RegisterNn3dGradKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  PX_Status* s = sdk::RegisterKernel<Conv3DBackpropKernel<false>>(
      info, registrar, sdk::sig::kConv3DBackpropInputV2,
      {sdk::FloatTypes(), {PX_DT_INT32, PX_DT_INT64}});
  if (s != nullptr) return s;
  return sdk::RegisterKernel<Conv3DBackpropKernel<true>>(
      info, registrar, sdk::sig::kConv3DBackpropFilterV2, {sdk::FloatTypes()});
}

PX_Status* RegisterNn3dKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> max_types = {PX_DT_HALF, PX_DT_BFLOAT16, PX_DT_FLOAT};
  PX_Status* s = nullptr;
  if ((s = sdk::RegisterKernel<Conv3DKernel>(info, registrar, sdk::sig::kConv3D,
                                             {sdk::FloatTypes()})) ||
      (s = sdk::RegisterKernel<Pool3DKernel<true>>(info, registrar, sdk::sig::kMaxPool3D,
                                                   {max_types})) ||
      (s = sdk::RegisterKernel<Pool3DKernel<false>>(info, registrar, sdk::sig::kAvgPool3D,
                                                    {sdk::FloatTypes()}))) {
    return s;
  }
  return nullptr;
}

}  // namespace plexus::reference

// Reference kernels: the image family (see reference_kernels.h).
//
// ResizeBilinear, ResizeNearestNeighbor, ResizeBicubic, ResizeBilinearGrad
// and ResizeNearestNeighborGrad on NHWC images, one output element at a
// time. The sampling rules (source coordinates, taps, weights) are
// TensorFlow's, from plexus/sdk/image_resize.h; the blends are computed in
// float in TensorFlow's order, as its CPU kernels do, so results agree with
// TensorFlow's to the float rounding.
#include <cstdint>
#include <vector>

#include "plexus/sdk/image_resize.h"
#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

using sdk::ResizeMode;

template <typename T>
float AsFloat(T v) {
  return static_cast<float>(static_cast<sdk::ComputeType<T>>(v));
}

// Offset of (b, y, x, c) in an NHWC image of height h, width w, c channels.
inline int64_t At(int64_t b, int64_t y, int64_t x, int64_t c, int64_t h, int64_t w,
                  int64_t channels) {
  return ((b * h + y) * w + x) * channels + c;
}

enum class Method { kBilinear, kNearest, kBicubic };

template <Method kMethod>
class ResizeKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { mode_.Read(attrs); }
  void Compute(sdk::Call& call) override {
    const sdk::ResizeShape s =
        sdk::ResizeShapeOf(call.input_shape(0), call.input_shape(1), call.input_int_values(1));
    const float sh = mode_.Scale(s.in_h, s.out_h), sw = mode_.Scale(s.in_w, s.out_w);
    const sdk::Shape out_shape{s.batch, s.out_h, s.out_w, s.channels};
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      auto in = [&](int64_t b, int64_t y, int64_t xx, int64_t c) {
        return x[At(b, y, xx, c, s.in_h, s.in_w, s.channels)];
      };
      if constexpr (kMethod == Method::kNearest) {
        T* y = call.AllocateOutput<T>(0, out_shape);
        for (int64_t b = 0; b < s.batch; ++b) {
          for (int64_t i = 0; i < s.out_h; ++i) {
            const int64_t si = mode_.Nearest(i, sh, s.in_h);
            for (int64_t j = 0; j < s.out_w; ++j) {
              const int64_t sj = mode_.Nearest(j, sw, s.in_w);
              for (int64_t c = 0; c < s.channels; ++c) {
                y[At(b, i, j, c, s.out_h, s.out_w, s.channels)] = in(b, si, sj, c);
              }
            }
          }
        }
      } else {
        float* y = call.AllocateOutput<float>(0, out_shape);
        if (kMethod == Method::kBilinear && s.out_h == s.in_h && s.out_w == s.in_w) {
          // TensorFlow copies a same-size bilinear resize (no blends, so
          // infinities stay infinite).
          for (int64_t k = 0; k < sdk::NumElements(out_shape); ++k) y[k] = AsFloat(x[k]);
          return;
        }
        for (int64_t b = 0; b < s.batch; ++b) {
          for (int64_t i = 0; i < s.out_h; ++i) {
            for (int64_t j = 0; j < s.out_w; ++j) {
              for (int64_t c = 0; c < s.channels; ++c) {
                float v;
                if constexpr (kMethod == Method::kBilinear) {
                  const sdk::LinearTap ty = sdk::LinearTapOf(mode_, i, sh, s.in_h);
                  const sdk::LinearTap tx = sdk::LinearTapOf(mode_, j, sw, s.in_w);
                  v = sdk::Lerp2D(AsFloat(in(b, ty.lower, tx.lower, c)),
                                  AsFloat(in(b, ty.lower, tx.upper, c)),
                                  AsFloat(in(b, ty.upper, tx.lower, c)),
                                  AsFloat(in(b, ty.upper, tx.upper, c)), tx.lerp, ty.lerp);
                } else {
                  // Along y for each of the four columns, then along x.
                  const sdk::CubicTaps ty = sdk::CubicTapsOf(mode_, i, sh, s.in_h);
                  const sdk::CubicTaps tx = sdk::CubicTapsOf(mode_, j, sw, s.in_w);
                  float column[4];
                  for (int k = 0; k < 4; ++k) {
                    column[k] = AsFloat(in(b, ty.index[0], tx.index[k], c)) * ty.weight[0] +
                                AsFloat(in(b, ty.index[1], tx.index[k], c)) * ty.weight[1] +
                                AsFloat(in(b, ty.index[2], tx.index[k], c)) * ty.weight[2] +
                                AsFloat(in(b, ty.index[3], tx.index[k], c)) * ty.weight[3];
                  }
                  v = column[0] * tx.weight[0] + column[1] * tx.weight[1] +
                      column[2] * tx.weight[2] + column[3] * tx.weight[3];
                }
                y[At(b, i, j, c, s.out_h, s.out_w, s.channels)] = v;
              }
            }
          }
        }
      }
    });
  }

 private:
  ResizeMode mode_;
};

// ResizeBilinearGrad: grads (float [b, rh, rw, c]) spread back onto the
// original image's [b, h, w, c] with the forward weights. Products in float
// as TensorFlow's; sums in double for double, in float otherwise.
class ResizeBilinearGradKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { mode_.Read(attrs); }
  void Compute(sdk::Call& call) override {
    const sdk::Shape gs = call.input_shape(0), os = call.input_shape(1);
    PX_SDK_CHECK(gs.size() == 4, "input_grad must be 4-dimensional, got %s",
                 sdk::ShapeString(gs).c_str());
    PX_SDK_CHECK(os.size() == 4, "original_image must be 4-dimensional, got %s",
                 sdk::ShapeString(os).c_str());
    PX_SDK_CHECK(call.input_dtype(0) == PX_DT_FLOAT, "input_grad must be of type float");
    PX_SDK_CHECK(gs[1] > 0 && gs[2] > 0, "resized dimensions must be positive, got %s",
                 sdk::ShapeString(gs).c_str());
    PX_SDK_CHECK(os[1] > 0 && os[2] > 0, "original dimensions must be positive, got %s",
                 sdk::ShapeString(os).c_str());
    const int64_t batch = gs[0], rh = gs[1], rw = gs[2], channels = gs[3], h = os[1], w = os[2];
    const float sh = mode_.Scale(h, rh), sw = mode_.Scale(w, rw);
    const float* g = call.input<float>(0);
    sdk::VisitFloat(call.input_dtype(1), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
      std::vector<Acc> acc(static_cast<size_t>(batch * h * w * channels), Acc(0));
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t i = 0; i < rh; ++i) {
          const sdk::LinearTap ty = sdk::LinearTapOf(mode_, i, sh, h);
          for (int64_t j = 0; j < rw; ++j) {
            const sdk::LinearTap tx = sdk::LinearTapOf(mode_, j, sw, w);
            for (int64_t c = 0; c < channels; ++c) {
              const float d = g[At(b, i, j, c, rh, rw, channels)];
              acc[At(b, ty.lower, tx.lower, c, h, w, channels)] +=
                  Acc(d * (1.0f - ty.lerp) * (1.0f - tx.lerp));
              acc[At(b, ty.lower, tx.upper, c, h, w, channels)] +=
                  Acc(d * (1.0f - ty.lerp) * tx.lerp);
              acc[At(b, ty.upper, tx.lower, c, h, w, channels)] +=
                  Acc(d * ty.lerp * (1.0f - tx.lerp));
              acc[At(b, ty.upper, tx.upper, c, h, w, channels)] += Acc(d * ty.lerp * tx.lerp);
            }
          }
        }
      }
      T* out = call.AllocateOutput<T>(0, sdk::Shape{batch, h, w, channels});
      for (size_t k = 0; k < acc.size(); ++k) out[k] = static_cast<T>(acc[k]);
    });
  }

 private:
  ResizeMode mode_;
};

// ResizeNearestNeighborGrad: each grads pixel added to the original pixel
// the forward op copied it from; the original size is the size input.
class ResizeNearestNeighborGradKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { mode_.Read(attrs); }
  void Compute(sdk::Call& call) override {
    const sdk::Shape gs = call.input_shape(0), ss = call.input_shape(1);
    PX_SDK_CHECK(gs.size() == 4, "input must be 4-dimensional, got %s",
                 sdk::ShapeString(gs).c_str());
    const std::vector<int64_t> size = call.input_int_values(1);
    PX_SDK_CHECK(ss.size() == 1 && size.size() == 2,
                 "size must be a vector of two elements, got shape %s",
                 sdk::ShapeString(ss).c_str());
    PX_SDK_CHECK(size[0] > 0 && size[1] > 0, "size's elements must be positive");
    const int64_t batch = gs[0], rh = gs[1], rw = gs[2], channels = gs[3];
    const int64_t h = size[0], w = size[1];
    const float sh = mode_.Scale(h, rh), sw = mode_.Scale(w, rw);  // original / grads
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const T* g = call.input<T>(0);
      std::vector<C> acc(static_cast<size_t>(batch * h * w * channels), C(0));
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t i = 0; i < rh; ++i) {
          const int64_t ti = mode_.Nearest(i, sh, h);
          for (int64_t j = 0; j < rw; ++j) {
            const int64_t tj = mode_.Nearest(j, sw, w);
            for (int64_t c = 0; c < channels; ++c) {
              acc[At(b, ti, tj, c, h, w, channels)] += static_cast<C>(g[At(b, i, j, c, rh, rw, channels)]);
            }
          }
        }
      }
      T* out = call.AllocateOutput<T>(0, sdk::Shape{batch, h, w, channels});
      for (size_t k = 0; k < acc.size(); ++k) out[k] = static_cast<T>(acc[k]);
    });
  }

 private:
  ResizeMode mode_;
};

}  // namespace

PX_Status* RegisterImageKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  // TensorFlow's type lists: every real type but uint32/uint64 for the
  // resizes, the floats for the bilinear gradient.
  const std::vector<PX_DataType> images = {PX_DT_INT8,  PX_DT_UINT8, PX_DT_INT16, PX_DT_UINT16,
                                           PX_DT_INT32, PX_DT_INT64, PX_DT_HALF,  PX_DT_FLOAT,
                                           PX_DT_DOUBLE, PX_DT_BFLOAT16};
  const std::vector<PX_DataType> nn_grad = {PX_DT_UINT8, PX_DT_INT8, PX_DT_INT32, PX_DT_HALF,
                                            PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_BFLOAT16};
  PX_Status* s = nullptr;
  if ((s = sdk::RegisterKernel<ResizeKernel<Method::kBilinear>>(info, registrar,
                                                                 sdk::sig::kResizeBilinear, {images})) ||
      (s = sdk::RegisterKernel<ResizeKernel<Method::kNearest>>(
           info, registrar, sdk::sig::kResizeNearestNeighbor, {images})) ||
      (s = sdk::RegisterKernel<ResizeKernel<Method::kBicubic>>(info, registrar,
                                                                sdk::sig::kResizeBicubic, {images})) ||
      (s = sdk::RegisterKernel<ResizeBilinearGradKernel>(
           info, registrar, sdk::sig::kResizeBilinearGrad, {sdk::FloatTypes()})) ||
      (s = sdk::RegisterKernel<ResizeNearestNeighborGradKernel>(
           info, registrar, sdk::sig::kResizeNearestNeighborGrad, {nn_grad}))) {
    return s;
  }
  return nullptr;
}

}  // namespace plexus::reference

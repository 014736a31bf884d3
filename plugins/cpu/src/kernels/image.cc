// CPU kernels: image resizing. ResizeBilinear, ResizeNearestNeighbor,
// ResizeBicubic, ResizeBilinearGrad and ResizeNearestNeighborGrad on NHWC
// images, with TensorFlow's sampling rules (plexus/sdk/image_resize.h).
//
// The source taps of every output column are computed once per call (their
// element offsets, channels folded in) and those of every output row once
// per row; rows of the output run in parallel (OpenMP), the channels of a
// pixel are the contiguous inner loop. The blends are float in TensorFlow's
// order, so results match its CPU kernels. The gradients run images in
// parallel, each accumulating into its own slice of the output.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels/register_kernels.h"
#include "plexus/sdk/image_resize.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

using sdk::ResizeMode;

// True when a loop of `work` elements is worth several threads.
bool Parallel(int64_t items, int64_t work) { return items > 1 && work > (int64_t{1} << 14); }

template <typename T>
inline float AsFloat(T v) {
  return static_cast<float>(static_cast<sdk::ComputeType<T>>(v));
}

// Column taps with element offsets within a row (index * channels).
std::vector<sdk::LinearTap> LinearColumns(const ResizeMode& mode, int64_t out_w, float scale,
                                          int64_t in_w, int64_t channels) {
  std::vector<sdk::LinearTap> taps(static_cast<size_t>(out_w));
  for (int64_t j = 0; j < out_w; ++j) {
    taps[j] = sdk::LinearTapOf(mode, j, scale, in_w);
    taps[j].lower *= channels;
    taps[j].upper *= channels;
  }
  return taps;
}

template <typename T>
void ResizeBilinearImpl(const ResizeMode& mode, const sdk::ResizeShape& s, const T* x, float* y) {
  const int64_t c = s.channels, in_row = s.in_w * c, out_row = s.out_w * c;
  if (s.out_h == s.in_h && s.out_w == s.in_w) {  // TensorFlow copies (no blends)
    const int64_t n = s.batch * s.in_h * in_row;
    for (int64_t k = 0; k < n; ++k) y[k] = AsFloat(x[k]);
    return;
  }
  const float sh = mode.Scale(s.in_h, s.out_h), sw = mode.Scale(s.in_w, s.out_w);
  const std::vector<sdk::LinearTap> cols = LinearColumns(mode, s.out_w, sw, s.in_w, c);
  const int64_t rows = s.batch * s.out_h;
#pragma omp parallel for schedule(static) if (Parallel(rows, rows * out_row))
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t b = r / s.out_h, i = r % s.out_h;
    const sdk::LinearTap ty = sdk::LinearTapOf(mode, i, sh, s.in_h);
    const T* top = x + (b * s.in_h + ty.lower) * in_row;
    const T* bottom = x + (b * s.in_h + ty.upper) * in_row;
    float* out = y + r * out_row;
    for (int64_t j = 0; j < s.out_w; ++j) {
      const sdk::LinearTap& tx = cols[j];
      for (int64_t k = 0; k < c; ++k) {
        out[j * c + k] = sdk::Lerp2D(AsFloat(top[tx.lower + k]), AsFloat(top[tx.upper + k]),
                                     AsFloat(bottom[tx.lower + k]), AsFloat(bottom[tx.upper + k]),
                                     tx.lerp, ty.lerp);
      }
    }
  }
}

template <typename T>
void ResizeNearestImpl(const ResizeMode& mode, const sdk::ResizeShape& s, const T* x, T* y) {
  const int64_t c = s.channels, in_row = s.in_w * c, out_row = s.out_w * c;
  const float sh = mode.Scale(s.in_h, s.out_h), sw = mode.Scale(s.in_w, s.out_w);
  std::vector<int64_t> cols(static_cast<size_t>(s.out_w));
  for (int64_t j = 0; j < s.out_w; ++j) cols[j] = mode.Nearest(j, sw, s.in_w) * c;
  const int64_t rows = s.batch * s.out_h;
#pragma omp parallel for schedule(static) if (Parallel(rows, rows * out_row))
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t b = r / s.out_h, i = r % s.out_h;
    const T* src = x + (b * s.in_h + mode.Nearest(i, sh, s.in_h)) * in_row;
    T* out = y + r * out_row;
    for (int64_t j = 0; j < s.out_w; ++j) std::copy_n(src + cols[j], c, out + j * c);
  }
}

template <typename T>
void ResizeBicubicImpl(const ResizeMode& mode, const sdk::ResizeShape& s, const T* x, float* y) {
  const int64_t c = s.channels, in_row = s.in_w * c, out_row = s.out_w * c;
  const float sh = mode.Scale(s.in_h, s.out_h), sw = mode.Scale(s.in_w, s.out_w);
  std::vector<sdk::CubicTaps> cols(static_cast<size_t>(s.out_w));
  for (int64_t j = 0; j < s.out_w; ++j) {
    cols[j] = sdk::CubicTapsOf(mode, j, sw, s.in_w);
    for (int64_t& index : cols[j].index) index *= c;
  }
  const int64_t rows = s.batch * s.out_h;
#pragma omp parallel for schedule(static) if (Parallel(rows, rows * out_row * 16))
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t b = r / s.out_h, i = r % s.out_h;
    const sdk::CubicTaps ty = sdk::CubicTapsOf(mode, i, sh, s.in_h);
    const T* src[4];
    for (int k = 0; k < 4; ++k) src[k] = x + (b * s.in_h + ty.index[k]) * in_row;
    float* out = y + r * out_row;
    for (int64_t j = 0; j < s.out_w; ++j) {
      const sdk::CubicTaps& tx = cols[j];
      for (int64_t k = 0; k < c; ++k) {
        // Along y for each of the four columns, then along x.
        float column[4];
        for (int q = 0; q < 4; ++q) {
          const int64_t o = tx.index[q] + k;
          column[q] = AsFloat(src[0][o]) * ty.weight[0] + AsFloat(src[1][o]) * ty.weight[1] +
                      AsFloat(src[2][o]) * ty.weight[2] + AsFloat(src[3][o]) * ty.weight[3];
        }
        out[j * c + k] = column[0] * tx.weight[0] + column[1] * tx.weight[1] +
                         column[2] * tx.weight[2] + column[3] * tx.weight[3];
      }
    }
  }
}

enum class Method { kBilinear, kNearest, kBicubic };

template <Method kMethod>
class ResizeKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { mode_.Read(attrs); }
  void Compute(sdk::Call& call) override {
    const sdk::ResizeShape s =
        sdk::ResizeShapeOf(call.input_shape(0), call.input_shape(1), call.input_int_values(1));
    const sdk::Shape out_shape{s.batch, s.out_h, s.out_w, s.channels};
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      if constexpr (kMethod == Method::kNearest) {
        ResizeNearestImpl<T>(mode_, s, x, call.AllocateOutput<T>(0, out_shape));
      } else if constexpr (kMethod == Method::kBilinear) {
        ResizeBilinearImpl<T>(mode_, s, x, call.AllocateOutput<float>(0, out_shape));
      } else {
        ResizeBicubicImpl<T>(mode_, s, x, call.AllocateOutput<float>(0, out_shape));
      }
    });
  }

 private:
  ResizeMode mode_;
};

// ResizeBilinearGrad: grads (float) spread onto the original image with the
// forward weights; products in float, sums in double for double and float
// otherwise (TensorFlow's CPU kernel).
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
    const int64_t batch = gs[0], rh = gs[1], rw = gs[2], c = gs[3], h = os[1], w = os[2];
    const float sh = mode_.Scale(h, rh), sw = mode_.Scale(w, rw);
    const std::vector<sdk::LinearTap> cols = LinearColumns(mode_, rw, sw, w, c);
    const float* g = call.input<float>(0);
    sdk::VisitFloat(call.input_dtype(1), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
      T* out = call.AllocateOutput<T>(0, sdk::Shape{batch, h, w, c});
      const int64_t image = h * w * c;
#pragma omp parallel for schedule(static) if (Parallel(batch, batch * rh * rw * c * 4))
      for (int64_t b = 0; b < batch; ++b) {
        std::vector<Acc> acc(static_cast<size_t>(image), Acc(0));
        for (int64_t i = 0; i < rh; ++i) {
          const sdk::LinearTap ty = sdk::LinearTapOf(mode_, i, sh, h);
          Acc* top = acc.data() + ty.lower * w * c;
          Acc* bottom = acc.data() + ty.upper * w * c;
          const float* grow = g + (b * rh + i) * rw * c;
          for (int64_t j = 0; j < rw; ++j) {
            const sdk::LinearTap& tx = cols[j];
            for (int64_t k = 0; k < c; ++k) {
              const float d = grow[j * c + k];
              top[tx.lower + k] += Acc(d * (1.0f - ty.lerp) * (1.0f - tx.lerp));
              top[tx.upper + k] += Acc(d * (1.0f - ty.lerp) * tx.lerp);
              bottom[tx.lower + k] += Acc(d * ty.lerp * (1.0f - tx.lerp));
              bottom[tx.upper + k] += Acc(d * ty.lerp * tx.lerp);
            }
          }
        }
        T* dst = out + b * image;
        for (int64_t e = 0; e < image; ++e) dst[e] = static_cast<T>(acc[e]);
      }
    });
  }

 private:
  ResizeMode mode_;
};

// ResizeNearestNeighborGrad: each grads pixel added to the original pixel
// the forward op copied it from (the original size is the size input).
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
    const int64_t batch = gs[0], rh = gs[1], rw = gs[2], c = gs[3], h = size[0], w = size[1];
    const float sh = mode_.Scale(h, rh), sw = mode_.Scale(w, rw);  // original / grads
    std::vector<int64_t> cols(static_cast<size_t>(rw));
    for (int64_t j = 0; j < rw; ++j) cols[j] = mode_.Nearest(j, sw, w) * c;
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = sdk::ComputeType<T>;
      const T* g = call.input<T>(0);
      T* out = call.AllocateOutput<T>(0, sdk::Shape{batch, h, w, c});
      const int64_t image = h * w * c;
#pragma omp parallel for schedule(static) if (Parallel(batch, batch * rh * rw * c))
      for (int64_t b = 0; b < batch; ++b) {
        std::vector<C> acc(static_cast<size_t>(image), C(0));
        for (int64_t i = 0; i < rh; ++i) {
          C* row = acc.data() + mode_.Nearest(i, sh, h) * w * c;
          const T* grow = g + (b * rh + i) * rw * c;
          for (int64_t j = 0; j < rw; ++j) {
            for (int64_t k = 0; k < c; ++k) row[cols[j] + k] += static_cast<C>(grow[j * c + k]);
          }
        }
        T* dst = out + b * image;
        for (int64_t e = 0; e < image; ++e) dst[e] = static_cast<T>(acc[e]);
      }
    });
  }

 private:
  ResizeMode mode_;
};

}  // namespace

PX_Status* RegisterImageFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  // TensorFlow's type lists.
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

}  // namespace plexus::cpu

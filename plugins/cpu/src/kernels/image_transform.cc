// CPU kernels: image transforms and filtered resizes.
// ImageProjectiveTransformV2/V3, ResizeArea, ScaleAndTranslate and
// ScaleAndTranslateGrad on NHWC images, with TensorFlow's sampling rules and
// float arithmetic (plexus/sdk/image_transform.h, image_scale.h), so results
// match its CPU kernels.
//
// Output rows run in parallel (OpenMP); the channels of a pixel are the
// inner loop. The projective transform maps each output pixel once for all
// its channels; ResizeArea computes the column spans once per call;
// ScaleAndTranslate filters all rows of the batch, then all columns, each
// row independently.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/register_kernels.h"
#include "plexus/sdk/image_resize.h"
#include "plexus/sdk/image_scale.h"
#include "plexus/sdk/image_transform.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

// True when a loop of `work` elements is worth several threads.
bool Parallel(int64_t items, int64_t work) { return items > 1 && work > (int64_t{1} << 14); }

template <bool kV3>
class ProjectiveTransformKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { mode_.Read(attrs); }
  void Compute(sdk::Call& call) override {
    const sdk::ProjectiveShape s = sdk::ProjectiveShapeOf(
        call.input_shape(0), call.input_shape(1), call.input_shape(2), call.input_int_values(2));
    float fill = 0.0f;
    if constexpr (kV3) {
      PX_SDK_CHECK(call.input_shape(3).empty(), "fill_value must be a scalar, got shape %s",
                   sdk::ShapeString(call.input_shape(3)).c_str());
      fill = *call.input<float>(3);
    }
    const float* transforms = call.input<float>(1);
    const sdk::ProjectiveMode mode = mode_;
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      T* y = call.AllocateOutput<T>(0, sdk::Shape{s.batch, s.out_h, s.out_w, s.channels});
      const T fill_value = sdk::FromFloatLikeX86<T>(fill);
      const int64_t image = s.in_h * s.in_w * s.channels, rows = s.batch * s.out_h;
      const int64_t out_row = s.out_w * s.channels;
#pragma omp parallel for schedule(static) if (Parallel(rows, rows * out_row * 4))
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t b = r / s.out_h, i = r % s.out_h;
        const float* t = transforms + (s.shared_transform ? 0 : b * 8);
        const T* src_image = x + b * image;
        T* out = y + r * out_row;
        for (int64_t j = 0; j < s.out_w; ++j) {
          const sdk::ProjectiveSource src =
              sdk::ProjectiveSourceOf(t, i, j, mode.fill, s.in_h, s.in_w);
          for (int64_t c = 0; c < s.channels; ++c) {
            out[j * s.channels + c] = sdk::ProjectiveValue(src_image, s.in_h, s.in_w, s.channels,
                                                           c, src, mode.bilinear, fill_value);
          }
        }
      }
    });
  }

 private:
  sdk::ProjectiveMode mode_;
};

class ResizeAreaKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    mode_.align_corners = attrs.Bool("align_corners", false);
  }
  void Compute(sdk::Call& call) override {
    const sdk::ResizeShape s =
        sdk::ResizeShapeOf(call.input_shape(0), call.input_shape(1), call.input_int_values(1));
    const float sh = mode_.Scale(s.in_h, s.out_h), sw = mode_.Scale(s.in_w, s.out_w);
    const float inv_area = sdk::ResizeAreaScale(sh, sw);
    std::vector<sdk::AreaSpan> cols(static_cast<size_t>(s.out_w));
    for (int64_t j = 0; j < s.out_w; ++j) cols[j] = sdk::AreaSpanOf(j, sw);
    float* y = call.AllocateOutput<float>(0, sdk::Shape{s.batch, s.out_h, s.out_w, s.channels});
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      const int64_t rows = s.batch * s.out_h, out_row = s.out_w * s.channels;
#pragma omp parallel for schedule(static) if (Parallel(rows, rows * out_row * 4))
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t b = r / s.out_h, i = r % s.out_h;
        const T* image = x + b * s.in_h * s.in_w * s.channels;
        const sdk::AreaSpan ys = sdk::AreaSpanOf(i, sh);
        const float in_y = static_cast<float>(i) * sh, in_y1 = static_cast<float>(i + 1) * sh;
        for (int64_t j = 0; j < s.out_w; ++j) {
          sdk::ResizeAreaPixel(image, s.in_h, s.in_w, s.channels, ys, in_y, in_y1, sh, cols[j],
                               inv_area, y + r * out_row + j * s.channels);
        }
      }
    });
  }

 private:
  sdk::ResizeMode mode_;
};

struct ScaleTranslate {
  float row_scale, col_scale, row_translation, col_translation;
};

ScaleTranslate ReadScaleTranslate(sdk::Call& call) {
  ScaleTranslate st;
  sdk::ReadScaleTranslate(call.input_shape(2), call.input<float>(2), "scale", &st.row_scale,
                          &st.col_scale);
  PX_SDK_CHECK(st.row_scale > 0 && st.col_scale > 0, "Scale must be greater than zero.");
  sdk::ReadScaleTranslate(call.input_shape(3), call.input<float>(3), "translation",
                          &st.row_translation, &st.col_translation);
  return st;
}

// The two passes of ScaleAndTranslate (and its gradient) over a batch:
// x [batch, in_h, in_w, c] to y [batch, out_h, out_w, c], through `mid`
// ([batch, out_h, in_w, c]).
template <typename T>
void FilterBatch(const sdk::Spans& rows, const sdk::Spans& cols, const T* x, int64_t batch,
                 int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w, int64_t c, float* y) {
  const int64_t in_row = in_w * c, out_row = out_w * c, n = batch * out_h;
  std::vector<float> mid(static_cast<size_t>(n * in_row));
#pragma omp parallel for schedule(static) if (Parallel(n, n * in_row * rows.span_size))
  for (int64_t r = 0; r < n; ++r) {
    const int64_t b = r / out_h, i = r % out_h;
    sdk::GatherSpanRow(rows, x + b * in_h * in_row, in_h, in_row, i, mid.data() + r * in_row);
  }
#pragma omp parallel for schedule(static) if (Parallel(n, n * out_row * cols.span_size))
  for (int64_t r = 0; r < n; ++r) {
    sdk::GatherSpanColumns(cols, mid.data() + r * in_row, in_w, out_w, c, y + r * out_row);
  }
}

class ScaleAndTranslateKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    kernel_ = sdk::SamplingKernelOf(attrs.String("kernel_type", "lanczos3"));
    antialias_ = attrs.Bool("antialias", true);
  }
  void Compute(sdk::Call& call) override {
    const sdk::ResizeShape s =
        sdk::ResizeShapeOf(call.input_shape(0), call.input_shape(1), call.input_int_values(1));
    const ScaleTranslate st = ReadScaleTranslate(call);
    float* y = call.AllocateOutput<float>(0, sdk::Shape{s.batch, s.out_h, s.out_w, s.channels});
    if (s.batch == 0) return;
    const sdk::Spans cols = sdk::ComputeSpans(kernel_, s.out_w, s.in_w, st.col_scale,
                                              st.col_translation, antialias_);
    const sdk::Spans rows = sdk::ComputeSpans(kernel_, s.out_h, s.in_h, st.row_scale,
                                              st.row_translation, antialias_);
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      FilterBatch(rows, cols, call.input<T>(0), s.batch, s.in_h, s.in_w, s.out_h, s.out_w,
                  s.channels, y);
    });
  }

 private:
  sdk::SamplingKernel kernel_ = sdk::SamplingKernel::kLanczos3;
  bool antialias_ = true;
};

class ScaleAndTranslateGradKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    kernel_ = sdk::SamplingKernelOf(attrs.String("kernel_type", "lanczos3"));
    antialias_ = attrs.Bool("antialias", true);
  }
  void Compute(sdk::Call& call) override {
    const sdk::Shape gs = call.input_shape(0), os = call.input_shape(1);
    PX_SDK_CHECK(gs.size() == 4, "input_grad must be 4-dimensional, got %s",
                 sdk::ShapeString(gs).c_str());
    PX_SDK_CHECK(call.input_dtype(0) == PX_DT_FLOAT, "input_grad must be of type float");
    PX_SDK_CHECK(os.size() == 4, "original_image must be 4-dimensional, got %s",
                 sdk::ShapeString(os).c_str());
    PX_SDK_CHECK(os[0] == gs[0] && os[3] == gs[3],
                 "grads %s and original_image %s differ in batch or channels",
                 sdk::ShapeString(gs).c_str(), sdk::ShapeString(os).c_str());
    const ScaleTranslate st = ReadScaleTranslate(call);
    const int64_t batch = gs[0], fh = gs[1], fw = gs[2], c = gs[3], h = os[1], w = os[2];
    float* out = call.AllocateOutput<float>(0, sdk::Shape{batch, h, w, c});
    if (batch * h * w * c == 0) return;
    const sdk::Spans cols =
        sdk::ComputeGradSpans(kernel_, fw, w, st.col_scale, st.col_translation, antialias_);
    const sdk::Spans rows =
        sdk::ComputeGradSpans(kernel_, fh, h, st.row_scale, st.row_translation, antialias_);
    FilterBatch(rows, cols, call.input<float>(0), batch, fh, fw, h, w, c, out);
  }

 private:
  sdk::SamplingKernel kernel_ = sdk::SamplingKernel::kLanczos3;
  bool antialias_ = true;
};

}  // namespace

PX_Status* RegisterImageTransformFamily(sdk::RegistrationInfo* info,
                                        PX_KernelRegistrar* registrar) {
  // TensorFlow's type lists.
  const std::vector<PX_DataType> resize = {PX_DT_INT8,  PX_DT_UINT8, PX_DT_INT16, PX_DT_UINT16,
                                           PX_DT_INT32, PX_DT_INT64, PX_DT_HALF,  PX_DT_FLOAT,
                                           PX_DT_DOUBLE, PX_DT_BFLOAT16};
  const std::vector<PX_DataType> projective = {PX_DT_UINT8, PX_DT_INT32,  PX_DT_INT64,
                                               PX_DT_HALF,  PX_DT_BFLOAT16, PX_DT_FLOAT,
                                               PX_DT_DOUBLE};
  namespace sig = sdk::sig;
  PX_Status* s = nullptr;
  if ((s = sdk::RegisterKernel<ProjectiveTransformKernel<false>>(
           info, registrar, sig::kImageProjectiveTransformV2, {projective})) ||
      (s = sdk::RegisterKernel<ProjectiveTransformKernel<true>>(
           info, registrar, sig::kImageProjectiveTransformV3, {projective})) ||
      (s = sdk::RegisterKernel<ResizeAreaKernel>(info, registrar, sig::kResizeArea, {resize})) ||
      (s = sdk::RegisterKernel<ScaleAndTranslateKernel>(info, registrar, sig::kScaleAndTranslate,
                                                        {resize})) ||
      (s = sdk::RegisterKernel<ScaleAndTranslateGradKernel>(
           info, registrar, sig::kScaleAndTranslateGrad, {{PX_DT_FLOAT}}))) {
    return s;
  }
  return nullptr;
}

}  // namespace plexus::cpu

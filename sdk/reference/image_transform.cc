// Reference kernels: the image transforms and filtered resizes (see
// reference_kernels.h): ImageProjectiveTransformV2/V3, ResizeArea,
// ScaleAndTranslate and ScaleAndTranslateGrad on NHWC images, one output
// element (or pixel) at a time. The sampling rules and TensorFlow's float
// arithmetic are plexus/sdk/image_transform.h and image_scale.h, so results
// agree with TensorFlow's CPU kernels to the float rounding.
#include <cstdint>
#include <vector>

#include "plexus/sdk/image_resize.h"
#include "plexus/sdk/image_scale.h"
#include "plexus/sdk/image_transform.h"
#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

// ImageProjectiveTransformV2 (fill value 0) and V3 (fill_value input).
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
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      T* y = call.AllocateOutput<T>(0, sdk::Shape{s.batch, s.out_h, s.out_w, s.channels});
      const T fill_value = sdk::FromFloatLikeX86<T>(fill);
      const int64_t image = s.in_h * s.in_w * s.channels;
      for (int64_t b = 0; b < s.batch; ++b) {
        const float* t = transforms + (s.shared_transform ? 0 : b * 8);
        for (int64_t i = 0; i < s.out_h; ++i) {
          for (int64_t j = 0; j < s.out_w; ++j) {
            const sdk::ProjectiveSource src =
                sdk::ProjectiveSourceOf(t, i, j, mode_.fill, s.in_h, s.in_w);
            T* out = y + ((b * s.out_h + i) * s.out_w + j) * s.channels;
            for (int64_t c = 0; c < s.channels; ++c) {
              out[c] = sdk::ProjectiveValue(x + b * image, s.in_h, s.in_w, s.channels, c, src,
                                            mode_.bilinear, fill_value);
            }
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
    float* y = call.AllocateOutput<float>(0, sdk::Shape{s.batch, s.out_h, s.out_w, s.channels});
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      for (int64_t b = 0; b < s.batch; ++b) {
        const T* image = x + b * s.in_h * s.in_w * s.channels;
        for (int64_t i = 0; i < s.out_h; ++i) {
          const sdk::AreaSpan ys = sdk::AreaSpanOf(i, sh);
          const float in_y = static_cast<float>(i) * sh, in_y1 = static_cast<float>(i + 1) * sh;
          for (int64_t j = 0; j < s.out_w; ++j) {
            sdk::ResizeAreaPixel(image, s.in_h, s.in_w, s.channels, ys, in_y, in_y1, sh,
                                 sdk::AreaSpanOf(j, sw), inv_area,
                                 y + ((b * s.out_h + i) * s.out_w + j) * s.channels);
          }
        }
      }
    });
  }

 private:
  sdk::ResizeMode mode_;
};

// The scale and translation inputs (2 and 3) of ScaleAndTranslate(Grad).
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
    std::vector<float> rows_done(static_cast<size_t>(s.out_h * s.in_w * s.channels));
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      const int64_t in_row = s.in_w * s.channels, out_row = s.out_w * s.channels;
      for (int64_t b = 0; b < s.batch; ++b) {
        // Rows first (out_h rows of the input's width), then columns.
        for (int64_t i = 0; i < s.out_h; ++i) {
          sdk::GatherSpanRow(rows, x + b * s.in_h * in_row, s.in_h, in_row, i,
                             rows_done.data() + i * in_row);
        }
        for (int64_t i = 0; i < s.out_h; ++i) {
          sdk::GatherSpanColumns(cols, rows_done.data() + i * in_row, s.in_w, s.out_w, s.channels,
                                 y + (b * s.out_h + i) * out_row);
        }
      }
    });
  }

 private:
  sdk::SamplingKernel kernel_ = sdk::SamplingKernel::kLanczos3;
  bool antialias_ = true;
};

// ScaleAndTranslateGrad: grads [batch, out_h, out_w, channels] spread back
// onto the original image's height and width with the transposed spans.
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
    const sdk::Spans cols =
        sdk::ComputeGradSpans(kernel_, fw, w, st.col_scale, st.col_translation, antialias_);
    const sdk::Spans rows =
        sdk::ComputeGradSpans(kernel_, fh, h, st.row_scale, st.row_translation, antialias_);
    const float* g = call.input<float>(0);
    std::vector<float> rows_done(static_cast<size_t>(h * fw * c));
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < h; ++i) {
        sdk::GatherSpanRow(rows, g + b * fh * fw * c, fh, fw * c, i, rows_done.data() + i * fw * c);
      }
      for (int64_t i = 0; i < h; ++i) {
        sdk::GatherSpanColumns(cols, rows_done.data() + i * fw * c, fw, w, c,
                               out + (b * h + i) * w * c);
      }
    }
  }

 private:
  sdk::SamplingKernel kernel_ = sdk::SamplingKernel::kLanczos3;
  bool antialias_ = true;
};

}  // namespace

PX_Status* RegisterImageTransformKernels(sdk::RegistrationInfo* info,
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

}  // namespace plexus::reference

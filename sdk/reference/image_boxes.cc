// Reference kernels: the box ops of the image family (see
// reference_kernels.h): CropAndResize and NonMaxSuppressionV3, V4, V5.
//
// CropAndResize samples each crop pixel from its box with TensorFlow's float
// arithmetic (plexus/sdk/image_resize.h), one output element at a time.
// Non-max suppression is plexus/sdk/non_max_suppression.h; its output size
// depends on the data, so the outputs are allocated after it runs (the
// shape functions leave them unknown unless pad_to_max_output_size).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "plexus/sdk/image_resize.h"
#include "plexus/sdk/non_max_suppression.h"
#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

class CropAndResizeKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    const std::string method = attrs.String("method", "bilinear");
    PX_SDK_CHECK(method == "bilinear" || method == "nearest",
                 "method must be 'bilinear' or 'nearest', got '%s'", method.c_str());
    bilinear_ = method == "bilinear";
    extrapolation_ = attrs.Float("extrapolation_value", 0.0f);
  }
  void Compute(sdk::Call& call) override {
    const sdk::CropShape s =
        sdk::CropShapeOf(call.input_shape(0), call.input_shape(1), call.input_shape(2),
                         call.input_shape(3), call.input_int_values(3));
    const float* boxes = call.input<float>(1);
    const int32_t* box_ind = call.input<int32_t>(2);
    sdk::CheckCropBoxes(boxes, box_ind, s);
    float* y = call.AllocateOutput<float>(0, sdk::Shape{s.num_boxes, s.crop_h, s.crop_w, s.depth});
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* image = call.input<T>(0);
      auto at = [&](int64_t b, int64_t i, int64_t j, int64_t d) {
        return static_cast<float>(
            static_cast<sdk::ComputeType<T>>(image[((b * s.h + i) * s.w + j) * s.depth + d]));
      };
      for (int64_t n = 0; n < s.num_boxes; ++n) {
        const float* box = boxes + n * 4;
        const int64_t b = box_ind[n];
        for (int64_t i = 0; i < s.crop_h; ++i) {
          const float in_y = sdk::CropSource(box[0], box[2], i, s.crop_h, s.h);
          for (int64_t j = 0; j < s.crop_w; ++j) {
            const float in_x = sdk::CropSource(box[1], box[3], j, s.crop_w, s.w);
            float* out = y + ((n * s.crop_h + i) * s.crop_w + j) * s.depth;
            const bool outside = in_y < 0 || in_y > static_cast<float>(s.h - 1) || in_x < 0 ||
                                 in_x > static_cast<float>(s.w - 1);
            for (int64_t d = 0; d < s.depth; ++d) {
              if (outside) {
                out[d] = extrapolation_;
              } else if (bilinear_) {
                const int64_t top = static_cast<int64_t>(std::floor(in_y));
                const int64_t bottom = static_cast<int64_t>(std::ceil(in_y));
                const int64_t left = static_cast<int64_t>(std::floor(in_x));
                const int64_t right = static_cast<int64_t>(std::ceil(in_x));
                out[d] = sdk::Lerp2D(at(b, top, left, d), at(b, top, right, d),
                                     at(b, bottom, left, d), at(b, bottom, right, d),
                                     in_x - static_cast<float>(left),
                                     in_y - static_cast<float>(top));
              } else {
                out[d] = at(b, static_cast<int64_t>(std::round(in_y)),
                            static_cast<int64_t>(std::round(in_x)), d);
              }
            }
          }
        }
      }
    });
  }

 private:
  bool bilinear_ = true;
  float extrapolation_ = 0.0f;
};

// kVersion 3, 4 or 5: NonMaxSuppressionV3 (indices), V4 (+ valid_outputs,
// pad_to_max_output_size), V5 (+ soft_nms_sigma, selected_scores).
template <int kVersion>
class NonMaxSuppressionKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    if (kVersion >= 4) pad_ = attrs.Bool("pad_to_max_output_size", false);
  }
  void Compute(sdk::Call& call) override { sdk::ComputeNonMaxSuppression(call, kVersion, pad_); }

 private:
  bool pad_ = false;
};

}  // namespace

PX_Status* RegisterImageBoxKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> crop_types = {PX_DT_UINT8, PX_DT_UINT16, PX_DT_INT8,
                                               PX_DT_INT16, PX_DT_INT32,  PX_DT_INT64,
                                               PX_DT_HALF,  PX_DT_FLOAT,  PX_DT_DOUBLE};
  const std::vector<PX_DataType> nms = {PX_DT_HALF, PX_DT_FLOAT};
  PX_Status* s = nullptr;
  if ((s = sdk::RegisterKernel<CropAndResizeKernel>(info, registrar, sdk::sig::kCropAndResize,
                                                    {crop_types})) ||
      (s = sdk::RegisterKernel<NonMaxSuppressionKernel<3>>(
           info, registrar, sdk::sig::kNonMaxSuppressionV3, {nms, nms})) ||
      (s = sdk::RegisterKernel<NonMaxSuppressionKernel<4>>(
           info, registrar, sdk::sig::kNonMaxSuppressionV4, {nms, nms})) ||
      (s = sdk::RegisterKernel<NonMaxSuppressionKernel<5>>(
           info, registrar, sdk::sig::kNonMaxSuppressionV5, {nms}))) {
    return s;
  }
  return nullptr;
}

}  // namespace plexus::reference

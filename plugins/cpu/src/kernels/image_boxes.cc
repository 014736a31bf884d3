// CPU kernels: the box ops of the image family. CropAndResize runs boxes in
// parallel (OpenMP), each crop row sampling its source rows once, with
// TensorFlow's float arithmetic (plexus/sdk/image_resize.h).
// NonMaxSuppressionV3/V4/V5 run the SDK's sequential greedy selection
// (plexus/sdk/non_max_suppression.h) and allocate their outputs once the
// number of selected boxes is known.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/register_kernels.h"
#include "plexus/sdk/image_resize.h"
#include "plexus/sdk/non_max_suppression.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

template <typename T>
inline float AsFloat(T v) {
  return static_cast<float>(static_cast<sdk::ComputeType<T>>(v));
}

template <typename T>
void CropBox(const T* image, const sdk::CropShape& s, const float* box, int64_t b, bool bilinear,
             float extrapolation, float* out) {
  const int64_t d = s.depth, row = s.w * d;
  const T* base = image + b * s.h * row;
  for (int64_t i = 0; i < s.crop_h; ++i) {
    const float in_y = sdk::CropSource(box[0], box[2], i, s.crop_h, s.h);
    float* out_row = out + i * s.crop_w * d;
    if (in_y < 0 || in_y > static_cast<float>(s.h - 1)) {
      std::fill(out_row, out_row + s.crop_w * d, extrapolation);
      continue;
    }
    const int64_t top = static_cast<int64_t>(std::floor(in_y));
    const int64_t bottom = static_cast<int64_t>(std::ceil(in_y));
    const float y_lerp = in_y - static_cast<float>(top);
    const int64_t nearest_y = static_cast<int64_t>(std::round(in_y));
    for (int64_t j = 0; j < s.crop_w; ++j) {
      const float in_x = sdk::CropSource(box[1], box[3], j, s.crop_w, s.w);
      float* px = out_row + j * d;
      if (in_x < 0 || in_x > static_cast<float>(s.w - 1)) {
        std::fill(px, px + d, extrapolation);
        continue;
      }
      if (!bilinear) {
        const T* src = base + nearest_y * row + static_cast<int64_t>(std::round(in_x)) * d;
        for (int64_t k = 0; k < d; ++k) px[k] = AsFloat(src[k]);
        continue;
      }
      const int64_t left = static_cast<int64_t>(std::floor(in_x)) * d;
      const int64_t right = static_cast<int64_t>(std::ceil(in_x)) * d;
      const float x_lerp = in_x - std::floor(in_x);
      const T* t = base + top * row;
      const T* u = base + bottom * row;
      for (int64_t k = 0; k < d; ++k) {
        px[k] = sdk::Lerp2D(AsFloat(t[left + k]), AsFloat(t[right + k]), AsFloat(u[left + k]),
                            AsFloat(u[right + k]), x_lerp, y_lerp);
      }
    }
  }
}

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
    const int64_t per_box = s.crop_h * s.crop_w * s.depth;
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* image = call.input<T>(0);
#pragma omp parallel for schedule(static) if (s.num_boxes > 1 && s.num_boxes * per_box > (1 << 14))
      for (int64_t n = 0; n < s.num_boxes; ++n) {
        CropBox(image, s, boxes + n * 4, box_ind[n], bilinear_, extrapolation_, y + n * per_box);
      }
    });
  }

 private:
  bool bilinear_ = true;
  float extrapolation_ = 0.0f;
};

// kVersion 3, 4 or 5 (see plexus/sdk/non_max_suppression.h).
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

PX_Status* RegisterImageBoxFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
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

}  // namespace plexus::cpu

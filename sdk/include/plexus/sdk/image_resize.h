// TensorFlow's image resize sampling rules (ResizeBilinear,
// ResizeNearestNeighbor, ResizeBicubic and their gradients), to the float
// rounding TensorFlow's CPU kernels use: the scale is computed in float,
// source coordinates in float, bicubic weights come from TensorFlow's
// 1025-entry coefficient table. Shared by the cpu and reference plugins so
// both sample the same source pixels and refuse the same inputs with the
// same messages; a vendor's plugin can use it too.
//
// Coordinates: output index i maps to the source coordinate
//   legacy:             i * scale
//   half_pixel_centers: (i + 0.5) * scale - 0.5   (nearest: without - 0.5)
// where scale = in / out, or (in - 1) / (out - 1) with align_corners and
// out > 1. half_pixel_centers with align_corners is refused.
#ifndef PLEXUS_SDK_IMAGE_RESIZE_H_
#define PLEXUS_SDK_IMAGE_RESIZE_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "plexus/sdk/kernel.h"

namespace plexus::sdk {

// align_corners and half_pixel_centers of a resize op or its gradient.
struct ResizeMode {
  bool align_corners = false;
  bool half_pixel_centers = false;

  void Read(const Attrs& attrs) {
    align_corners = attrs.Bool("align_corners", false);
    half_pixel_centers = attrs.Bool("half_pixel_centers", false);
    PX_SDK_CHECK(!(align_corners && half_pixel_centers),
                 "If half_pixel_centers is True, align_corners must be False.");
  }

  // TensorFlow's CalculateResizeScale: source pixels per output pixel.
  float Scale(int64_t in, int64_t out) const {
    return align_corners && out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                    : static_cast<float>(in) / static_cast<float>(out);
  }

  // The source coordinate of output index i (bilinear and bicubic).
  float Source(int64_t i, float scale) const {
    return half_pixel_centers ? (static_cast<float>(i) + 0.5f) * scale - 0.5f
                              : static_cast<float>(i) * scale;
  }

  // The source index of output index i for nearest neighbour sampling.
  int64_t Nearest(int64_t i, float scale, int64_t in) const {
    const float src = half_pixel_centers ? (static_cast<float>(i) + 0.5f) * scale
                                         : static_cast<float>(i) * scale;
    int64_t k = std::min(static_cast<int64_t>(align_corners ? std::round(src) : std::floor(src)),
                         in - 1);
    if (half_pixel_centers) k = std::max<int64_t>(0, k);
    return k;
  }
};

// The two source indices and the weight of the upper one, for linear
// interpolation along one dimension.
struct LinearTap {
  int64_t lower, upper;
  float lerp;
};

inline LinearTap LinearTapOf(const ResizeMode& mode, int64_t i, float scale, int64_t in) {
  const float src = mode.Source(i, scale);
  const float floor = std::floor(src);
  return LinearTap{std::max<int64_t>(static_cast<int64_t>(floor), 0),
                   std::min<int64_t>(static_cast<int64_t>(std::ceil(src)), in - 1), src - floor};
}

// TensorFlow's bilinear blend of four values (in float, in its order).
inline float Lerp2D(float top_left, float top_right, float bottom_left, float bottom_right,
                    float x_lerp, float y_lerp) {
  const float top = top_left + (top_right - top_left) * x_lerp;
  const float bottom = bottom_left + (bottom_right - bottom_left) * x_lerp;
  return top + (bottom - top) * y_lerp;
}

// Four source indices and weights for cubic interpolation along one
// dimension: Keys' cubic with a = -0.75 (legacy), or a = -0.5 with
// half_pixel_centers, where taps outside the image get weight 0 and the
// others are renormalized (TensorFlow's scale_and_translate borders).
struct CubicTaps {
  int64_t index[4];
  float weight[4];
};

// TensorFlow's coefficient table: 1025 fractional offsets, two weights each.
inline const std::vector<float>& CubicCoefficients(bool keys) {
  constexpr int kTableSize = 1024;
  auto make = [](double a) {
    std::vector<float> table((kTableSize + 1) * 2);
    for (int i = 0; i <= kTableSize; ++i) {
      float x = static_cast<float>(i * 1.0 / kTableSize);
      table[i * 2] = static_cast<float>(((a + 2) * x - (a + 3)) * x * x + 1);
      x += 1.0f;
      table[i * 2 + 1] = static_cast<float>(((a * x - 5 * a) * x + 8 * a) * x - 4 * a);
    }
    return table;
  };
  static const std::vector<float> keys_table = make(-0.5f);
  static const std::vector<float> legacy_table = make(-0.75f);
  return keys ? keys_table : legacy_table;
}

inline CubicTaps CubicTapsOf(const ResizeMode& mode, int64_t i, float scale, int64_t in) {
  constexpr int64_t kTableSize = 1024;
  const float src = mode.Source(i, scale);
  const int64_t base = static_cast<int64_t>(std::floor(src));
  const float delta = src - static_cast<float>(base);
  const int64_t offset = std::lrint(delta * kTableSize);
  const std::vector<float>& table = CubicCoefficients(mode.half_pixel_centers);
  const float raw[4] = {table[offset * 2 + 1], table[offset * 2],
                        table[(kTableSize - offset) * 2], table[(kTableSize - offset) * 2 + 1]};
  CubicTaps t;
  for (int k = 0; k < 4; ++k) {
    const int64_t want = base - 1 + k;
    t.index[k] = std::min(in - 1, std::max<int64_t>(0, want));
    t.weight[k] = mode.half_pixel_centers && t.index[k] != want ? 0.0f : raw[k];
  }
  if (mode.half_pixel_centers) {
    const float sum = t.weight[0] + t.weight[1] + t.weight[2] + t.weight[3];
    if (std::abs(sum) >= 1000.0f * std::numeric_limits<float>::min()) {
      const float inverse = 1.0f / sum;
      for (float& w : t.weight) w *= inverse;
    }
  }
  return t;
}

// The images input of a resize op, checked: [batch, height, width,
// channels] with a nonempty image and at least one channel.
struct ResizeShape {
  int64_t batch, in_h, in_w, channels, out_h, out_w;
};

// images [batch, h, w, c] and the int32 size [out_h, out_w] (input values).
inline ResizeShape ResizeShapeOf(const Shape& images, const Shape& size_shape,
                                 const std::vector<int64_t>& size) {
  PX_SDK_CHECK(images.size() == 4, "input must be 4-dimensional, got %s",
               ShapeString(images).c_str());
  PX_SDK_CHECK(images[3] > 0, "image must have at least one channel");
  PX_SDK_CHECK(images[1] > 0 && images[2] > 0, "input image must be of non-zero size");
  PX_SDK_CHECK(size_shape.size() == 1 && size.size() == 2,
               "size must be a vector of two elements, got shape %s",
               ShapeString(size_shape).c_str());
  PX_SDK_CHECK(size[0] > 0 && size[1] > 0, "output dimensions must be positive, got [%lld, %lld]",
               static_cast<long long>(size[0]), static_cast<long long>(size[1]));
  return ResizeShape{images[0], images[1], images[2], images[3], size[0], size[1]};
}

// CropAndResize: the shapes of image [batch, h, w, depth], boxes
// [num_boxes, 4], box_ind [num_boxes] and crop_size (values [ch, cw]),
// checked as TensorFlow checks them.
struct CropShape {
  int64_t batch, h, w, depth, num_boxes, crop_h, crop_w;
};

inline CropShape CropShapeOf(const Shape& image, const Shape& boxes, const Shape& box_ind,
                             const Shape& crop_size_shape, const std::vector<int64_t>& crop_size) {
  PX_SDK_CHECK(image.size() == 4, "input image must be 4-D, got %s", ShapeString(image).c_str());
  PX_SDK_CHECK(image[1] > 0 && image[2] > 0, "image dimensions must be positive, got %s",
               ShapeString(image).c_str());
  PX_SDK_CHECK(boxes.size() == 2, "boxes must be 2-D, got %s", ShapeString(boxes).c_str());
  PX_SDK_CHECK(box_ind.size() == 1, "box_ind must be 1-D, got %s", ShapeString(box_ind).c_str());
  const bool empty = boxes[0] * boxes[1] == 0 && box_ind[0] == 0;
  PX_SDK_CHECK(empty || boxes[1] == 4, "boxes must have 4 columns, got %s",
               ShapeString(boxes).c_str());
  PX_SDK_CHECK(empty || box_ind[0] == boxes[0], "box_ind has %lld elements for %lld boxes",
               static_cast<long long>(box_ind[0]), static_cast<long long>(boxes[0]));
  PX_SDK_CHECK(crop_size_shape.size() == 1 && crop_size.size() == 2,
               "crop_size must be a vector of two elements, got shape %s",
               ShapeString(crop_size_shape).c_str());
  PX_SDK_CHECK(crop_size[0] > 0 && crop_size[1] > 0, "crop dimensions must be positive");
  return CropShape{image[0], image[1], image[2], image[3], empty ? 0 : boxes[0], crop_size[0],
                   crop_size[1]};
}

// Fails unless every box coordinate is finite and every box_ind value is
// an image of the batch.
inline void CheckCropBoxes(const float* boxes, const int32_t* box_ind, const CropShape& s) {
  for (int64_t k = 0; k < s.num_boxes * 4; ++k) {
    PX_SDK_CHECK(std::isfinite(boxes[k]),
                 "Boxes contains at least one element that is not finite");
  }
  for (int64_t b = 0; b < s.num_boxes; ++b) {
    if (box_ind[b] < 0 || box_ind[b] >= s.batch) {
      throw KernelError(PX_CODE_OUT_OF_RANGE,
                        Format("box_ind has values outside [0, batch_size): box %lld has %d, "
                               "batch_size %lld",
                               static_cast<long long>(b), box_ind[b],
                               static_cast<long long>(s.batch)));
    }
  }
}

// The source coordinate of sample i of `crop` samples between the
// normalized box edges a1 and a2 in an image dimension of `size` pixels
// (TensorFlow's float arithmetic; one sample takes the box's centre).
inline float CropSource(float a1, float a2, int64_t i, int64_t crop, int64_t size) {
  const float last = static_cast<float>(size - 1);
  if (crop > 1) {
    const float scale = (a2 - a1) * last / static_cast<float>(crop - 1);
    return a1 * last + static_cast<float>(i) * scale;
  }
  return static_cast<float>(0.5 * (a1 + a2) * last);
}

}  // namespace plexus::sdk

#endif  // PLEXUS_SDK_IMAGE_RESIZE_H_

// LRN and LRNGrad (local response normalization across the depth of NHWC
// images): attributes and input checks shared by the cpu and reference
// plugins.
//
//   sqr_sum[..., d] = sum(input[..., d - r : d + r + 1] ** 2)
//   output = input / (bias + alpha * sqr_sum) ** beta
//
// with r = depth_radius (the window clipped to the depth).
#ifndef PLEXUS_SDK_LRN_H_
#define PLEXUS_SDK_LRN_H_

#include <algorithm>
#include <cstdint>
#include <limits>

#include "plexus/sdk/kernel.h"

namespace plexus::sdk {

struct LrnAttrs {
  int64_t radius = 5;
  float bias = 1.0f, alpha = 1.0f, beta = 0.5f;

  void Read(const Attrs& attrs) {
    radius = attrs.Int("depth_radius", 5);
    PX_SDK_CHECK(radius <= std::numeric_limits<int>::max(), "depth_radius = %lld larger than int max",
                 static_cast<long long>(radius));
    // TensorFlow's bounds check refuses a negative radius too (and the
    // window arithmetic below would overflow for -2^63).
    PX_SDK_CHECK(radius >= 0, "depth_radius = %lld is negative", static_cast<long long>(radius));
    bias = attrs.Float("bias", 1.0f);
    alpha = attrs.Float("alpha", 1.0f);
    beta = attrs.Float("beta", 0.5f);
  }
  // The window [begin, end) of depth index d in a depth of `depth`.
  int64_t Begin(int64_t d) const { return std::max<int64_t>(0, d - radius); }
  int64_t End(int64_t d, int64_t depth) const { return std::min<int64_t>(depth, d + radius + 1); }
};

// LRN's input: 4-D. Returns the number of pixels (batch * rows * cols).
inline int64_t LrnPixelsOf(const Shape& in) {
  PX_SDK_CHECK(in.size() == 4, "input must be 4-dimensional, got %s", ShapeString(in).c_str());
  PX_SDK_CHECK(NumElements(in) <= std::numeric_limits<int>::max(), "argument to LRN too large");
  return in[0] * in[1] * in[2];
}

// LRNGrad's inputs: three 4-D tensors of one shape.
inline int64_t LrnGradPixelsOf(const Shape& grads, const Shape& image, const Shape& output) {
  PX_SDK_CHECK(grads.size() == 4 && image.size() == 4 && output.size() == 4,
               "inputs must be 4-dimensional, got %s, %s and %s", ShapeString(grads).c_str(),
               ShapeString(image).c_str(), ShapeString(output).c_str());
  PX_SDK_CHECK(grads == image && grads == output,
               "input_grads, input_image, and out_image should have the same shape, got %s, %s "
               "and %s",
               ShapeString(grads).c_str(), ShapeString(image).c_str(), ShapeString(output).c_str());
  return grads[0] * grads[1] * grads[2];
}

}  // namespace plexus::sdk

#endif  // PLEXUS_SDK_LRN_H_

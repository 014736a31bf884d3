// TensorFlow's filtered resizes, to the float rounding its CPU kernels use:
// ScaleAndTranslate (the antialiased resize of tf.image.resize, and its
// gradient ScaleAndTranslateGrad) and ResizeArea. Shared by the cpu and
// reference plugins, and usable by a vendor's.
//
// ScaleAndTranslate samples output pixel i (along one dimension) at source
// position (i + 0.5) / scale - translate / scale, with a sampling kernel
// (lanczos1/3/5, gaussian, box, triangle, keyscubic, mitchellcubic) that is
// widened by 1 / scale when downsampling with antialias. Each output pixel
// has a span of source pixels with normalized weights (an empty span when
// the sample falls outside the source); rows are filtered first, then
// columns, summing in float in TensorFlow's order.
//
// ResizeArea averages the source area each output pixel covers, weighting
// the partly covered border pixels by the covered fraction.
#ifndef PLEXUS_SDK_IMAGE_SCALE_H_
#define PLEXUS_SDK_IMAGE_SCALE_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "plexus/sdk/image_transform.h"
#include "plexus/sdk/kernel.h"

namespace plexus::sdk {

enum class SamplingKernel {
  kLanczos1,
  kLanczos3,
  kLanczos5,
  kGaussian,
  kBox,
  kTriangle,
  kKeysCubic,
  kMitchellCubic
};

// The kernel_type attribute, checked.
inline SamplingKernel SamplingKernelOf(const std::string& name) {
  static const struct {
    const char* name;
    SamplingKernel kernel;
  } kKernels[] = {{"lanczos1", SamplingKernel::kLanczos1},
                  {"lanczos3", SamplingKernel::kLanczos3},
                  {"lanczos5", SamplingKernel::kLanczos5},
                  {"gaussian", SamplingKernel::kGaussian},
                  {"box", SamplingKernel::kBox},
                  {"triangle", SamplingKernel::kTriangle},
                  {"keyscubic", SamplingKernel::kKeysCubic},
                  {"mitchellcubic", SamplingKernel::kMitchellCubic}};
  for (const auto& k : kKernels) {
    if (name == k.name) return k.kernel;
  }
  PX_SDK_CHECK(false,
               "Unrecognized kernel type: %s (expected lanczos1, lanczos3, lanczos5, gaussian, "
               "box, triangle, keyscubic or mitchellcubic)",
               name.c_str());
  return SamplingKernel::kLanczos3;
}

inline float SamplingKernelRadius(SamplingKernel k) {
  switch (k) {
    case SamplingKernel::kLanczos1: return 1.0f;
    case SamplingKernel::kLanczos3: return 3.0f;
    case SamplingKernel::kLanczos5: return 5.0f;
    case SamplingKernel::kGaussian: return 1.5f;
    case SamplingKernel::kKeysCubic:
    case SamplingKernel::kMitchellCubic: return 2.0f;
    default: return 1.0f;  // box, triangle
  }
}

// The kernel's value at x (TensorFlow's sampling_kernels.h formulas).
inline float SamplingKernelValue(SamplingKernel k, float x) {
  x = std::abs(x);
  switch (k) {
    case SamplingKernel::kLanczos1:
    case SamplingKernel::kLanczos3:
    case SamplingKernel::kLanczos5: {
      constexpr float kPi = 3.14159265359f;
      const float radius = SamplingKernelRadius(k);
      if (x > radius) return 0.0f;
      if (x <= 1e-3) return 1.0f;
      return radius * std::sin(kPi * x) * std::sin(kPi * x / radius) / (kPi * kPi * x * x);
    }
    case SamplingKernel::kGaussian: {
      constexpr float kRadius = 1.5f, kSigma = kRadius / 3.0f;
      if (x >= kRadius) return 0.0f;
      return static_cast<float>(std::exp(-x * x / (2.0 * kSigma * kSigma)));
    }
    case SamplingKernel::kBox:
      return x < 0.5f ? 1.0f : x == 0.5f ? 0.5f : 0.0f;
    case SamplingKernel::kTriangle:
      return x < 1.0f ? 1.0f - x : 0.0f;
    case SamplingKernel::kKeysCubic:
      if (x >= 2.0f) return 0.0f;
      if (x >= 1.0f) return ((-0.5f * x + 2.5f) * x - 4.0f) * x + 2.0f;
      return ((1.5f * x - 2.5f) * x) * x + 1.0f;
    case SamplingKernel::kMitchellCubic:
      if (x >= 2.0f) return 0.0f;
      if (x >= 1.0f) {
        return (((-7.0f / 18.0f) * x + 2.0f) * x - 10.0f / 3.0f) * x + 16.0f / 9.0f;
      }
      return (((7.0f / 6.0f) * x - 2.0f) * x) * x + 8.0f / 9.0f;
  }
  return 0.0f;
}

// For every output pixel of one dimension: the first source pixel of its
// span and span_size weights (zeros past the span's end, all zeros for an
// empty span).
struct Spans {
  int64_t span_size = 0;
  std::vector<int64_t> starts;
  std::vector<float> weights;
};

inline Spans ComputeSpans(SamplingKernel kernel, int64_t output_size, int64_t input_size,
                          float scale, float translate, bool antialias) {
  const float radius = SamplingKernelRadius(kernel);
  const float inv_scale = static_cast<float>(1.0 / scale);
  const float inv_translate = -inv_scale * translate;
  const float kernel_scale = antialias ? std::max(inv_scale, 1.0f) : 1.0f;
  Spans spans;
  spans.span_size = std::min<int64_t>(
      2 * static_cast<int64_t>(TruncateToInt32(std::ceil(radius * kernel_scale))) + 1, input_size);
  spans.starts.assign(static_cast<size_t>(output_size), 0);
  spans.weights.assign(static_cast<size_t>(spans.span_size * output_size), 0.0f);
  const float one_over_kernel_scale = 1.0f / kernel_scale;
  std::vector<float> temp;
  for (int64_t x = 0; x < output_size; ++x) {
    const float sample = (static_cast<float>(x) + 0.5f) * inv_scale + inv_translate;
    if (sample < 0 || sample > static_cast<float>(input_size)) continue;  // empty span
    int64_t start = TruncateToInt64(std::ceil(sample - radius * kernel_scale - 0.5f));
    int64_t end = TruncateToInt64(std::floor(sample + radius * kernel_scale - 0.5f));
    start = std::min(std::max<int64_t>(start, 0), input_size - 1);
    end = std::min(std::max<int64_t>(end, 0), input_size - 1) + 1;
    if (end - start > spans.span_size) {
      throw KernelError(PX_CODE_INTERNAL, Format("Span is too large: %lld vs %lld.",
                                                 static_cast<long long>(end - start),
                                                 static_cast<long long>(spans.span_size)));
    }
    float total = 0.0f;
    temp.clear();
    for (int64_t source = start; source < end; ++source) {
      const float pos = static_cast<float>(source) + 0.5f - sample;
      const float weight = SamplingKernelValue(kernel, std::abs(pos * one_over_kernel_scale));
      total += weight;
      temp.push_back(weight);
    }
    if (std::abs(total) >= 1000.0f * std::numeric_limits<float>::min()) {
      const float inverse = 1.0f / total;
      float* out = spans.weights.data() + spans.span_size * x;
      for (float weight : temp) *out++ = weight * inverse;
    }
    spans.starts[x] = start;
  }
  return spans;
}

// The transposed spans for the gradient: for every forward input pixel, the
// forward output pixels it fed and their weights.
inline Spans ComputeGradSpans(SamplingKernel kernel, int64_t forward_output_size,
                              int64_t forward_input_size, float scale, float translate,
                              bool antialias) {
  const Spans forward = ComputeSpans(kernel, forward_output_size, forward_input_size, scale,
                                     translate, antialias);
  struct Component {
    int64_t index;
    float weight;
  };
  std::vector<std::vector<Component>> components(static_cast<size_t>(forward_input_size));
  for (int64_t out = 0; out < forward_output_size; ++out) {
    int64_t in = forward.starts[out];
    for (int64_t j = 0; j < forward.span_size; ++j, ++in) {
      const float weight = forward.weights[out * forward.span_size + j];
      if (weight != 0.0f && in < forward_input_size) components[in].push_back({out, weight});
    }
  }
  Spans grad;
  for (const auto& c : components) {  // outputs are visited in order: already sorted
    if (!c.empty()) grad.span_size = std::max(grad.span_size, c.back().index - c.front().index + 1);
  }
  grad.starts.assign(static_cast<size_t>(forward_input_size), 0);
  grad.weights.assign(static_cast<size_t>(grad.span_size * forward_input_size), 0.0f);
  for (int64_t in = 0; in < forward_input_size; ++in) {
    if (components[in].empty()) continue;
    const int64_t start = components[in].front().index;
    grad.starts[in] = start;
    for (const Component& c : components[in]) {
      grad.weights[in * grad.span_size + c.index - start] += c.weight;
    }
  }
  return grad;
}

// Row y of one image's rows filtered: out_row (row_size floats) from image
// (in_h rows of row_size = width * channels values), TensorFlow's
// GatherRows.
template <typename T>
void GatherSpanRow(const Spans& rows, const T* image, int64_t in_h, int64_t row_size, int64_t y,
                   float* out_row) {
  std::fill(out_row, out_row + row_size, 0.0f);
  const int64_t start = rows.starts[y];
  const int64_t span = std::min(start + rows.span_size, in_h) - start;
  const float* weights = rows.weights.data() + y * rows.span_size;
  for (int64_t k = 0; k < span; ++k) {
    const T* in_row = image + row_size * (start + k);
    const float w = weights[k];
    for (int64_t e = 0; e < row_size; ++e) {
      out_row[e] += w * static_cast<float>(static_cast<ComputeType<T>>(in_row[e]));
    }
  }
}

// One row's columns filtered: out_row (out_w x channels) from in_row (in_w x
// channels floats), TensorFlow's GatherColumns.
inline void GatherSpanColumns(const Spans& cols, const float* in_row, int64_t in_w, int64_t out_w,
                              int64_t channels, float* out_row) {
  for (int64_t x = 0; x < out_w; ++x) {
    const int64_t start = cols.starts[x];
    const int64_t span = std::min(start + cols.span_size, in_w) - start;
    const float* weights = cols.weights.data() + x * cols.span_size;
    float* out = out_row + x * channels;
    std::fill(out, out + channels, 0.0f);
    for (int64_t k = 0; k < span; ++k) {
      const float* in_pix = in_row + (start + k) * channels;
      for (int64_t c = 0; c < channels; ++c) out[c] += weights[k] * in_pix[c];
    }
  }
}

// The scale and translation inputs: two floats each ([row, column]).
inline void ReadScaleTranslate(const Shape& shape, const float* values, const char* what,
                               float* row, float* col) {
  PX_SDK_CHECK(shape.size() == 1, "%s must be 1-dimensional, got %s", what,
               ShapeString(shape).c_str());
  PX_SDK_CHECK(shape[0] == 2, "%s must have two elements, got %s", what,
               ShapeString(shape).c_str());
  *row = values[0];
  *col = values[1];
}

// ResizeArea: the source pixels [start, end) output pixel i covers along one
// dimension, and the weights of the first and last (the inner ones weigh
// 1), with TensorFlow's float arithmetic. Indices past the image are
// clamped when read (align_corners can reach them).
struct AreaSpan {
  int64_t start, end;
  float start_weight, last_weight;
};

// The covered fraction of source pixel v for the area [in, in1) (scale =
// in1 - in, the source pixels per output pixel).
inline float AreaWeight(int64_t v, float in, float in1, float scale) {
  const float fv = static_cast<float>(v), fv1 = static_cast<float>(v + 1);
  return fv < in ? (fv1 > in1 ? scale : fv1 - in) : (fv1 > in1 ? in1 - fv : 1.0f);
}

inline AreaSpan AreaSpanOf(int64_t i, float scale) {
  const float in = static_cast<float>(i) * scale;
  const float in1 = static_cast<float>(i + 1) * scale;
  AreaSpan s;
  s.start = TruncateToInt64(std::floor(in));
  s.end = TruncateToInt64(std::ceil(in1));
  s.start_weight = AreaWeight(s.start, in, in1, scale);
  s.last_weight = AreaWeight(s.end - 1, in, in1, scale);
  return s;
}

inline int64_t ClampIndex(int64_t v, int64_t limit) {
  return std::min(limit - 1, std::max<int64_t>(0, v));
}

// Output pixel (i, j) of one image (h x w x channels) into out[channels]:
// per source row, the weighted sum along x, then rows weighted and summed,
// times 1 / (scale_h * scale_w).
template <typename T>
void ResizeAreaPixel(const T* image, int64_t h, int64_t w, int64_t channels, const AreaSpan& ys,
                     float in_y, float in_y1, float scale_h, const AreaSpan& xs, float inv_area,
                     float* out) {
  auto at = [&](int64_t y, int64_t x, int64_t c) {
    return static_cast<float>(
        static_cast<ComputeType<T>>(image[(ClampIndex(y, h) * w + ClampIndex(x, w)) * channels + c]));
  };
  for (int64_t c = 0; c < channels; ++c) {
    float sum = 0;
    for (int64_t y = ys.start; y < ys.end; ++y) {
      const float y_weight = AreaWeight(y, in_y, in_y1, scale_h);
      float sum_y = at(y, xs.start, c) * xs.start_weight;
      if (xs.start + 1 != xs.end) {
        for (int64_t x = xs.start + 1; x < xs.end - 1; ++x) sum_y += at(y, x, c);
        sum_y += at(y, xs.end - 1, c) * xs.last_weight;
      }
      sum += sum_y * y_weight;
    }
    out[c] = sum * inv_area;
  }
}

// 1 / (scale_h * scale_w) as TensorFlow rounds it.
inline float ResizeAreaScale(float scale_h, float scale_w) {
  return static_cast<float>(1.0 / (scale_h * scale_w));
}

}  // namespace plexus::sdk

#endif  // PLEXUS_SDK_IMAGE_SCALE_H_

// Greedy non-max suppression as TensorFlow's NonMaxSuppressionV3, V4 and V5
// run it: boxes visited by descending score (ties: the lower index first),
// a box dropped when its IOU with a box already selected exceeds the
// threshold, or with soft-NMS (soft_nms_sigma > 0) its score decayed by
// exp(-0.5 * iou^2 / sigma) and the box put back in line while it stays
// above score_threshold. Arithmetic in the box type T (float or half: every
// product rounded to T, as TensorFlow's Eigen::half does), IOUs in float.
// Shared by the cpu and reference plugins so both select the same boxes in
// the same order (the algorithm is sequential: there is no faster form to
// give the cpu plugin). The output size depends on the data, so the kernels
// allocate the outputs after running it (ComputeNonMaxSuppression).
#ifndef PLEXUS_SDK_NON_MAX_SUPPRESSION_H_
#define PLEXUS_SDK_NON_MAX_SUPPRESSION_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <queue>
#include <vector>

#include "plexus/sdk/kernel.h"

namespace plexus::sdk {

// x rounded to T (identity for float).
template <typename T>
inline float RoundTo(float x) {
  return static_cast<float>(static_cast<T>(x));
}

// Intersection over union of boxes i and j of [n, 4] (y1, x1, y2, x2 in any
// corner order), 0 when either is empty.
template <typename T>
float BoxIou(const T* boxes, int64_t i, int64_t j) {
  auto at = [&](int64_t b, int k) { return static_cast<float>(boxes[b * 4 + k]); };
  const float ymin_i = std::min(at(i, 0), at(i, 2)), xmin_i = std::min(at(i, 1), at(i, 3));
  const float ymax_i = std::max(at(i, 0), at(i, 2)), xmax_i = std::max(at(i, 1), at(i, 3));
  const float ymin_j = std::min(at(j, 0), at(j, 2)), xmin_j = std::min(at(j, 1), at(j, 3));
  const float ymax_j = std::max(at(j, 0), at(j, 2)), xmax_j = std::max(at(j, 1), at(j, 3));
  const float area_i = (ymax_i - ymin_i) * (xmax_i - xmin_i);
  const float area_j = (ymax_j - ymin_j) * (xmax_j - xmin_j);
  if (area_i <= 0 || area_j <= 0) return 0.0f;
  const float iy = std::max(std::min(ymax_i, ymax_j) - std::max(ymin_i, ymin_j), 0.0f);
  const float ix = std::max(std::min(xmax_i, xmax_j) - std::max(xmin_i, xmin_j), 0.0f);
  const float intersection = iy * ix;
  return intersection / (area_i + area_j - intersection);
}

// The selected box indices (at most max_output, in selection order) and
// their (possibly decayed) scores, values of T held in float.
struct NmsSelection {
  std::vector<int32_t> indices;
  std::vector<float> scores;
};

template <typename T>
NmsSelection NonMaxSuppression(const T* boxes, const T* scores, int64_t num_boxes,
                               int64_t max_output, float iou_threshold, float score_threshold,
                               float soft_nms_sigma) {
  struct Candidate {
    int32_t index;
    float score;
    int64_t suppress_begin;  // selections already compared against
  };
  auto lower = [](const Candidate& a, const Candidate& b) {
    return a.score < b.score || (a.score == b.score && a.index > b.index);
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(lower)> queue(lower);
  for (int64_t i = 0; i < num_boxes; ++i) {
    const float s = static_cast<float>(scores[i]);
    if (s > score_threshold) queue.push(Candidate{static_cast<int32_t>(i), s, 0});
  }
  const bool soft = soft_nms_sigma > 0.0f;
  const float scale = soft ? RoundTo<T>(-0.5f / soft_nms_sigma) : 0.0f;
  NmsSelection out;
  while (static_cast<int64_t>(out.indices.size()) < max_output && !queue.empty()) {
    Candidate next = queue.top();
    queue.pop();
    const float original = next.score;
    bool hard_suppressed = false;
    for (int64_t j = static_cast<int64_t>(out.indices.size()) - 1; j >= next.suppress_begin; --j) {
      const float iou = RoundTo<T>(BoxIou(boxes, next.index, out.indices[j]));
      const float weight =
          soft || iou <= iou_threshold
              ? RoundTo<T>(std::exp(RoundTo<T>(RoundTo<T>(scale * iou) * iou)))
              : 0.0f;
      next.score = RoundTo<T>(next.score * weight);
      if (!soft && iou > iou_threshold) {
        hard_suppressed = true;
        break;
      }
      if (next.score <= score_threshold) break;
    }
    next.suppress_begin = static_cast<int64_t>(out.indices.size());
    if (hard_suppressed) continue;
    if (next.score == original) {
      out.indices.push_back(next.index);
      out.scores.push_back(next.score);
    } else if (next.score > score_threshold) {
      queue.push(next);
    }
  }
  return out;
}

// The arguments every version shares, checked as TensorFlow checks them:
// boxes [n, 4], scores [n], scalar max_output_size (>= 0) and thresholds.
inline int64_t CheckNmsInputs(const Shape& boxes, const Shape& scores, const Shape& max_output,
                              int64_t max_output_value, float iou_threshold) {
  PX_SDK_CHECK(max_output.empty(), "max_output_size must be 0-D, got shape %s",
               ShapeString(max_output).c_str());
  PX_SDK_CHECK(iou_threshold >= 0.0f && iou_threshold <= 1.0f, "iou_threshold must be in [0, 1]");
  PX_SDK_CHECK(boxes.size() == 2, "boxes must be 2-D, got shape %s", ShapeString(boxes).c_str());
  PX_SDK_CHECK(boxes[1] == 4, "boxes must have 4 columns, got shape %s",
               ShapeString(boxes).c_str());
  PX_SDK_CHECK(scores.size() == 1, "scores must be 1-D, got shape %s",
               ShapeString(scores).c_str());
  PX_SDK_CHECK(scores[0] == boxes[0], "scores has %lld elements for %lld boxes",
               static_cast<long long>(scores[0]), static_cast<long long>(boxes[0]));
  PX_SDK_CHECK(max_output_value >= 0, "max_output_size must be non-negative, got %lld",
               static_cast<long long>(max_output_value));
  return boxes[0];
}

// The float value of scalar input i (float or half).
inline float NmsScalar(Call& call, size_t i, const char* name) {
  PX_SDK_CHECK(call.input_rank(i) == 0, "%s must be 0-D, got shape %s", name,
               ShapeString(call.input_shape(i)).c_str());
  float v = 0;
  VisitFloat(call.input_dtype(i), [&](auto tag) {
    using T = typename decltype(tag)::type;
    v = static_cast<float>(static_cast<ComputeType<T>>(*call.input<T>(i)));
  });
  return v;
}

// A whole NonMaxSuppressionV<version> launch (3, 4 or 5) on host memory:
// checks the inputs, selects, allocates and writes the outputs
// (selected_indices, V5's selected_scores, V4/V5's valid_outputs), padded
// with zeros to max_output_size when `pad`.
inline void ComputeNonMaxSuppression(Call& call, int version, bool pad) {
  PX_SDK_CHECK(call.input_rank(2) == 0, "max_output_size must be 0-D, got shape %s",
               ShapeString(call.input_shape(2)).c_str());
  const int64_t max_output = call.input_int_values(2)[0];
  VisitFloat(call.input_dtype(0), [&](auto tag) {
    using T = typename decltype(tag)::type;
    // The thresholds in the box type, as TensorFlow converts them.
    const float iou = RoundTo<T>(NmsScalar(call, 3, "iou_threshold"));
    const float score = RoundTo<T>(NmsScalar(call, 4, "score_threshold"));
    const float sigma = version == 5 ? RoundTo<T>(NmsScalar(call, 5, "soft_nms_sigma")) : 0.0f;
    PX_SDK_CHECK(sigma >= 0.0f, "soft_nms_sigma must be >= 0");
    const int64_t n = CheckNmsInputs(call.input_shape(0), call.input_shape(1),
                                     call.input_shape(2), max_output, iou);
    NmsSelection sel =
        NonMaxSuppression(call.input<T>(0), call.input<T>(1), n, max_output, iou, score, sigma);
    const int64_t valid = static_cast<int64_t>(sel.indices.size());
    const int64_t size = pad ? max_output : valid;
    sel.indices.resize(static_cast<size_t>(size), 0);
    sel.scores.resize(static_cast<size_t>(size), 0.0f);
    int32_t* indices = call.AllocateOutput<int32_t>(0, Shape{size});
    std::copy(sel.indices.begin(), sel.indices.end(), indices);
    if (version == 5) {
      T* scores = call.AllocateOutput<T>(1, Shape{size});
      for (int64_t k = 0; k < size; ++k) scores[k] = static_cast<T>(sel.scores[k]);
    }
    if (version >= 4) {
      *call.AllocateOutput<int32_t>(version == 5 ? 2 : 1, Shape{}) = static_cast<int32_t>(valid);
    }
  });
}

}  // namespace plexus::sdk

#endif  // PLEXUS_SDK_NON_MAX_SUPPRESSION_H_

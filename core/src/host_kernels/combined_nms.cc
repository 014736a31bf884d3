// Host kernel of CombinedNonMaxSuppression (schema in ops/image_host_ops.cc),
// TensorFlow's algorithm: per image and class, greedy non-max suppression
// of the boxes scoring above score_threshold (highest score first, a box
// dropped when its IoU with a kept one exceeds iou_threshold, at most
// max_output_size_per_class kept); then every class's kept boxes ranked by
// score, the best max_total_size returned (boxes clipped to [0, 1] with
// clip_boxes), zero-padded, with the count of valid detections.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/sdk/non_max_suppression.h"
#include "plexus/status.h"

namespace plexus {
namespace {

struct Detection {
  float score = -std::numeric_limits<float>::infinity();
  int64_t cls = -1;
  const float* box = nullptr;
};

absl::StatusOr<float> FloatScalar(HostOpContext& ctx, int i, const char* name) {
  const Tensor& t = ctx.input(i);
  if (t.dtype() != DataType::kFloat || t.dims() != 0) {
    return ctx.InvalidArgument(absl::StrCat(name, " must be a float scalar, got ", t.DebugString(0)));
  }
  return t.data<float>()[0];
}

absl::StatusOr<int32_t> IntScalar(HostOpContext& ctx, int i, const char* name) {
  const Tensor& t = ctx.input(i);
  if (t.dtype() != DataType::kInt32 || t.dims() != 0) {
    return ctx.InvalidArgument(absl::StrCat(name, " must be an int32 scalar, got ", t.DebugString(0)));
  }
  if (t.data<int32_t>()[0] <= 0) {
    return ctx.InvalidArgument(absl::StrCat(name, " must be > 0, got ", t.data<int32_t>()[0]));
  }
  return t.data<int32_t>()[0];
}

absl::Status CombinedNms(HostOpContext& ctx) {
  const Tensor& boxes = ctx.input(0);
  const Tensor& scores = ctx.input(1);
  if (boxes.dtype() != DataType::kFloat || boxes.dims() != 4 || boxes.shape()[3] != 4) {
    return ctx.InvalidArgument(absl::StrCat("boxes must be float [batch, num_boxes, q, 4], got ", boxes.DebugString(0)));
  }
  if (scores.dtype() != DataType::kFloat || scores.dims() != 3) {
    return ctx.InvalidArgument(
        absl::StrCat("scores must be float [batch, num_boxes, num_classes], got ", scores.DebugString(0)));
  }
  const int64_t batch = boxes.shape()[0], num_boxes = boxes.shape()[1], q = boxes.shape()[2];
  const int64_t classes = scores.shape()[2];
  if (scores.shape()[0] != batch || scores.shape()[1] != num_boxes) {
    return ctx.InvalidArgument(absl::StrCat("boxes ", ShapeToString(boxes.shape()), " and scores ",
                                            ShapeToString(scores.shape()), " disagree on batch or num_boxes"));
  }
  if (q != 1 && q != classes) {
    return ctx.InvalidArgument(absl::StrCat("third dimension of boxes must be either 1 or num classes (", classes,
                                            "), got ", q));
  }
  PX_ASSIGN_OR_RETURN(int32_t per_class, IntScalar(ctx, 2, "max_output_size_per_class"));
  PX_ASSIGN_OR_RETURN(int32_t total, IntScalar(ctx, 3, "max_total_size"));
  PX_ASSIGN_OR_RETURN(float iou_threshold, FloatScalar(ctx, 4, "iou_threshold"));
  PX_ASSIGN_OR_RETURN(float score_threshold, FloatScalar(ctx, 5, "score_threshold"));
  if (iou_threshold < 0 || iou_threshold > 1) return ctx.InvalidArgument("iou_threshold must be in [0, 1]");
  PX_ASSIGN_OR_RETURN(bool pad_per_class, GetAttrBool(ctx.node(), "pad_per_class"));
  PX_ASSIGN_OR_RETURN(bool clip, GetAttrBool(ctx.node(), "clip_boxes"));
  const int64_t size_per_class = std::min<int64_t>(per_class, num_boxes);
  const int64_t per_batch = pad_per_class ? std::min<int64_t>(total, static_cast<int64_t>(per_class) * classes) : total;

  PX_ASSIGN_OR_RETURN(Tensor out_boxes, Tensor::AllocateHost(DataType::kFloat, {batch, per_batch, 4}));
  PX_ASSIGN_OR_RETURN(Tensor out_scores, Tensor::AllocateHost(DataType::kFloat, {batch, per_batch}));
  PX_ASSIGN_OR_RETURN(Tensor out_classes, Tensor::AllocateHost(DataType::kFloat, {batch, per_batch}));
  PX_ASSIGN_OR_RETURN(Tensor valid, Tensor::AllocateHost(DataType::kInt32, {batch}));
  std::fill_n(out_boxes.data<float>(), out_boxes.num_elements(), 0.0f);
  std::fill_n(out_scores.data<float>(), out_scores.num_elements(), 0.0f);
  std::fill_n(out_classes.data<float>(), out_classes.num_elements(), 0.0f);

  for (int64_t b = 0; b < batch; ++b) {
    const float* box_data = boxes.data<float>() + b * num_boxes * q * 4;
    const float* score_data = scores.data<float>() + b * num_boxes * classes;
    // Slots class-major, in selection order, as TensorFlow lays them out.
    std::vector<Detection> kept(static_cast<size_t>(size_per_class * classes));
    for (int64_t c = 0; c < classes; ++c) {
      const int64_t column = q > 1 ? c : 0;
      auto box = [&](int64_t i) { return box_data + (i * q + column) * 4; };
      // This class's boxes as one [num_boxes, 4] array, for the IoU the
      // NonMaxSuppression kernels use (plexus/sdk/non_max_suppression.h).
      std::vector<float> class_boxes(static_cast<size_t>(num_boxes * 4));
      for (int64_t i = 0; i < num_boxes; ++i) std::copy_n(box(i), 4, &class_boxes[i * 4]);
      // Highest score first; equal scores by lower box index.
      std::vector<std::pair<float, int64_t>> candidates;
      for (int64_t i = 0; i < num_boxes; ++i) {
        const float s = score_data[i * classes + c];
        if (s > score_threshold) candidates.emplace_back(s, i);
      }
      std::stable_sort(candidates.begin(), candidates.end(),
                       [](const auto& x, const auto& y) { return x.first > y.first; });
      std::vector<int64_t> selected;
      for (const auto& [s, i] : candidates) {
        if (static_cast<int64_t>(selected.size()) >= size_per_class) break;
        bool keep = true;
        for (size_t j = selected.size(); j-- > 0;) {
          if (sdk::BoxIou(class_boxes.data(), i, selected[j]) > iou_threshold) {
            keep = false;
            break;
          }
        }
        if (!keep) continue;
        kept[static_cast<size_t>(c * size_per_class) + selected.size()] = {s, c, box(i)};
        selected.push_back(i);
      }
    }
    std::stable_sort(kept.begin(), kept.end(), [](const Detection& x, const Detection& y) { return x.score > y.score; });
    const int64_t found = std::count_if(kept.begin(), kept.end(), [](const Detection& d) { return d.cls >= 0; });
    const int64_t n = std::min<int64_t>(found, pad_per_class ? per_batch : total);
    valid.data<int32_t>()[b] = static_cast<int32_t>(n);
    for (int64_t k = 0; k < n; ++k) {
      const Detection& d = kept[k];
      for (int j = 0; j < 4; ++j) {
        const float v = d.box[j];
        out_boxes.data<float>()[(b * per_batch + k) * 4 + j] = clip ? std::max(std::min(v, 1.0f), 0.0f) : v;
      }
      out_scores.data<float>()[b * per_batch + k] = d.score;
      out_classes.data<float>()[b * per_batch + k] = static_cast<float>(d.cls);
    }
  }
  ctx.set_output(0, std::move(out_boxes));
  ctx.set_output(1, std::move(out_scores));
  ctx.set_output(2, std::move(out_classes));
  ctx.set_output(3, std::move(valid));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("CombinedNonMaxSuppression", CombinedNms);

}  // namespace
}  // namespace plexus

// Output shapes and index checks of the selection and indexed-update ops:
// TopKV2, the segment reductions (Segment*, UnsortedSegment*) and the
// tensor-scatter family (TensorScatter*), written once and shared by the
// core's shape functions and by the reference and cpu kernels, so that all
// three agree on every shape and on every error message.
//
// Plain C++ over array_shapes.h (the core includes it too). A dimension of -1
// is unknown (shape functions at import time); kernels pass exact shapes.
// Each check returns an empty string when its arguments are valid, else the
// error message; the caller turns that into INVALID_ARGUMENT and prefixes the
// node and op.
#ifndef PLEXUS_SDK_INDEX_SHAPES_H_
#define PLEXUS_SDK_INDEX_SHAPES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "plexus/sdk/array_shapes.h"

namespace plexus::index_shapes {

using array_shapes::Dims;
using array_shapes::Known;
using array_shapes::Msg;
using array_shapes::Str;

// TopKV2: input [..., n] and k give [..., k] (k unknown: [..., ?]).
inline std::string TopK(const Dims& in, int64_t k, bool k_known, Dims* out) {
  if (in.empty()) return Msg("input must be >= 1-D, got shape ", in);
  if (k_known) {
    if (k < 0) return Msg("Need k >= 0, got ", k);
    if (Known(in.back()) && in.back() < k) {
      return Msg("input must have at least k columns. Had ", in.back(), ", needed ", k);
    }
  }
  *out = in;
  out->back() = k_known ? k : -1;
  return "";
}

// ---------------------------------------------------------------------------
// Segment reductions
// ---------------------------------------------------------------------------

// The sorted ops (SegmentSum, ...): segment_ids is a vector as long as data's
// first dimension. num_segments (-1 when unknown) gives
// [num_segments] + data.shape[1:].
inline std::string SortedSegment(const Dims& data, const Dims& ids, int64_t num_segments, Dims* out) {
  if (ids.size() != 1) return Msg("segment_ids should be a vector, got shape ", ids);
  if (data.empty()) return Msg("data must be at least a vector, got a scalar");
  if (Known(data[0]) && Known(ids[0]) && data[0] != ids[0]) {
    return Msg("segment_ids should be the same size as dimension 0 of data: segment_ids has shape ", ids,
               ", data has shape ", data);
  }
  *out = data;
  (*out)[0] = num_segments;
  return "";
}

// The sorted ops' ids: non-negative and non-decreasing. Sets *num_segments
// to the last id plus one (0 when there is none). The message names the
// first bad index.
template <typename I>
std::string SortedSegmentIds(const I* ids, int64_t n, int64_t* num_segments) {
  int64_t previous = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t id = static_cast<int64_t>(ids[i]);
    if (id < 0) return Msg("segment ids must be >= 0: segment_ids[", i, "] = ", id);
    if (id < previous) {
      return Msg("segment ids are not increasing: segment_ids[", i, "] = ", id, " follows segment_ids[", i - 1,
                 "] = ", previous);
    }
    previous = id;
  }
  if (previous == INT64_MAX) return Msg("segment ids must be < ", INT64_MAX, ": segment_ids[", n - 1, "] = ", previous);
  *num_segments = n == 0 ? 0 : previous + 1;
  return "";
}

// The unsorted ops (UnsortedSegmentSum, ...): segment_ids' shape is a prefix
// of data's; the output is [num_segments] + data.shape[rank(segment_ids):]
// (num_segments unknown: [?] + ...).
inline std::string UnsortedSegment(const Dims& data, const Dims& ids, int64_t num_segments, bool num_known,
                                   Dims* out) {
  if (num_known && num_segments < 0) return Msg("Input num_segments == ", num_segments, " must not be negative.");
  if (!num_known) num_segments = -1;
  bool prefix = ids.size() <= data.size();
  for (size_t i = 0; prefix && i < ids.size(); ++i) {
    if (Known(ids[i]) && Known(data[i]) && ids[i] != data[i]) prefix = false;
  }
  if (!prefix) return Msg("data.shape = ", data, " does not start with segment_ids.shape = ", ids);
  out->assign(1, num_segments);
  out->insert(out->end(), data.begin() + static_cast<std::ptrdiff_t>(ids.size()), data.end());
  return "";
}

// The first id >= num_segments (negative ids are dropped), named with its
// position in segment_ids.
template <typename I>
std::string UnsortedSegmentIds(const I* ids, const Dims& ids_shape, int64_t num_segments) {
  const int64_t n = array_shapes::NumElements(ids_shape);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t id = static_cast<int64_t>(ids[i]);
    if (id < num_segments) continue;
    Dims index(ids_shape.size());
    int64_t flat = i;
    for (size_t d = ids_shape.size(); d-- > 0;) {
      index[d] = flat % ids_shape[d];
      flat /= ids_shape[d];
    }
    return Msg("segment_ids", index, " = ", id, " is out of range [0, ", num_segments, ")");
  }
  return "";
}

// ---------------------------------------------------------------------------
// Scatter into a shape (ScatterNd, TensorScatter*)
// ---------------------------------------------------------------------------

// indices [..., K] address slices of `shape` (K <= rank); updates must be
// indices.shape[:-1] + shape[K:]. Unknown dimensions pass.
inline std::string ScatterNd(const Dims& indices, const Dims& updates, const Dims& shape) {
  if (indices.empty()) return Msg("indices must be at least a vector, got shape ", indices);
  for (int64_t d : shape) {
    if (d < -1) return Msg("shape has a negative dimension: ", shape);
  }
  const int64_t k = indices.back();
  if (!Known(k)) return "";
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (k > rank) return Msg("the last dimension of indices (", k, ") must not exceed the rank of shape ", shape);
  Dims want(indices.begin(), indices.end() - 1);
  for (int64_t i = k; i < rank; ++i) want.push_back(shape[i]);
  bool ok = updates.size() == want.size();
  for (size_t i = 0; ok && i < want.size(); ++i) ok = !Known(updates[i]) || !Known(want[i]) || updates[i] == want[i];
  if (!ok) {
    return Msg("updates must have shape ", want, " for indices of shape ", indices, " and shape ", shape, ", got ",
               updates);
  }
  return "";
}

// A checked scatter's layout: n index rows of k coordinates, each naming a
// slice of `slice` elements; strides are the element strides of shape's
// first k dimensions.
struct ScatterLayout {
  int64_t n = 1, k = 0, slice = 1;
  Dims strides;
};

// The layout of a scatter whose shapes ScatterNd accepted (exact shapes).
inline ScatterLayout MakeScatterLayout(const Dims& indices, const Dims& shape) {
  ScatterLayout l;
  const int64_t rank = static_cast<int64_t>(shape.size());
  l.k = indices.back();
  for (size_t i = 0; i + 1 < indices.size(); ++i) l.n *= indices[i];
  for (int64_t i = l.k; i < rank; ++i) l.slice *= shape[i];
  l.strides.assign(static_cast<size_t>(l.k), 0);
  int64_t stride = l.slice;
  for (int64_t j = l.k - 1; j >= 0; --j) {
    l.strides[j] = stride;
    stride *= shape[j];
  }
  return l;
}

// The element offset of every index row, checked against shape; the message
// names the first row that does not index into it. With skip_bad (the
// bad_indices_policy "IGNORE") such rows get offset -1 instead.
template <typename I>
std::string ScatterOffsets(const ScatterLayout& l, const I* idx, const Dims& shape, std::vector<int64_t>* offsets,
                           bool skip_bad = false) {
  offsets->assign(static_cast<size_t>(l.n), 0);
  for (int64_t i = 0; i < l.n; ++i) {
    int64_t offset = 0;
    for (int64_t j = 0; j < l.k; ++j) {
      const int64_t v = static_cast<int64_t>(idx[i * l.k + j]);
      if ((v < 0 || v >= shape[j]) && skip_bad) {
        offset = -1;
        break;
      }
      if (v < 0 || v >= shape[j]) {
        std::string row;
        for (int64_t m = 0; m < l.k; ++m) row += (m ? ", " : "") + std::to_string(idx[i * l.k + m]);
        return Msg("indices[", i, "] = [", row, "] does not index into shape ", shape);
      }
      offset += v * l.strides[j];
    }
    (*offsets)[i] = offset;
  }
  return "";
}

// TensorScatter*(tensor, indices, updates): the output has tensor's shape.
// TensorFlow refuses index rows into an empty tensor even when K is 0.
inline std::string TensorScatter(const Dims& tensor, const Dims& indices, const Dims& updates) {
  std::string error = ScatterNd(indices, updates, tensor);
  if (!error.empty()) return error;
  const int64_t size = array_shapes::NumElements(tensor);
  const int64_t rows = indices.empty() ? -1 : array_shapes::NumElements(Dims(indices.begin(), indices.end() - 1));
  if (size == 0 && Known(rows) && rows > 0) return "Indices and updates specified for empty output shape";
  return "";
}

}  // namespace plexus::index_shapes

#endif  // PLEXUS_SDK_INDEX_SHAPES_H_

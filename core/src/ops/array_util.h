// Helpers of the array ops' shape functions (array_ops.cc, shape_ops.cc):
// the known values of inputs, rank checks, and shape-valued inputs read as
// partial shapes.
#ifndef PLEXUS_CORE_SRC_OPS_ARRAY_UTIL_H_
#define PLEXUS_CORE_SRC_OPS_ARRAY_UTIL_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/sdk/array_shapes.h"
#include "plexus/tensor.h"
#include "plexus/tensor_proto.h"

namespace plexus {
namespace array_util {

using array_shapes::Dims;

// The index types of shape-like inputs, int32 by default.
inline constexpr char kIndexTypes32And64[] = "{int32, int64} = int32";

// The value of input i when known: the run-time value, or at import time
// the value of a Const node feeding it. `storage` holds a parsed constant.
inline const Tensor* KnownValue(const InferenceContext& ctx, int i, Tensor* storage) {
  if (const Tensor* t = ctx.input_value(i)) return t;
  const Node& node = ctx.node();
  if (i >= node.num_inputs()) return nullptr;
  const Node* producer = node.inputs[i].node;
  if (producer == nullptr || producer->op != "Const") return nullptr;
  const tf::AttrValue* value = producer->FindAttr("value");
  if (value == nullptr || !value->has_tensor()) return nullptr;
  auto parsed = TensorFromProto(value->tensor());
  if (!parsed.ok()) return nullptr;
  *storage = *std::move(parsed);
  return storage;
}

// Input i's integer values (int8/16/32/64, uint8), when known.
inline bool KnownInts(const InferenceContext& ctx, int i, Dims* out) {
  Tensor storage;
  const Tensor* t = KnownValue(ctx, i, &storage);
  if (t == nullptr) return false;
  const int64_t n = t->num_elements();
  out->resize(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    switch (t->dtype()) {
      case DataType::kInt32: (*out)[k] = t->data<int32_t>()[k]; break;
      case DataType::kInt64: (*out)[k] = t->data<int64_t>()[k]; break;
      case DataType::kInt16: (*out)[k] = t->data<int16_t>()[k]; break;
      case DataType::kInt8: (*out)[k] = t->data<int8_t>()[k]; break;
      case DataType::kUInt8: (*out)[k] = t->data<uint8_t>()[k]; break;
      default: return false;
    }
  }
  return true;
}

inline bool KnownScalarInt(const InferenceContext& ctx, int i, int64_t* out) {
  Dims v;
  if (!KnownInts(ctx, i, &v) || v.size() != 1) return false;
  *out = v[0];
  return true;
}

inline absl::Status Check(const InferenceContext& ctx, const std::string& error) {
  return error.empty() ? absl::OkStatus() : ctx.Error(error);
}

// Fails unless input i has rank `rank` (when its rank is known).
inline absl::Status CheckRank(const InferenceContext& ctx, int i, int64_t rank, const char* what) {
  const PartialShape& s = ctx.input(i);
  if (s.rank_known() && s.rank() != rank) {
    const std::string want = rank == 0   ? "a scalar"
                             : rank == 1 ? "a vector"
                             : rank == 2 ? "a matrix"
                                         : absl::StrCat(rank, "-D");
    return ctx.Error(absl::StrCat(what, " must be ", want, ", got shape ", s.ToString()));
  }
  return absl::OkStatus();
}

// The length of vector input i when known, else -1.
inline int64_t VectorLength(const InferenceContext& ctx, int i) {
  const PartialShape& s = ctx.input(i);
  return s.rank_known() && s.rank() == 1 ? s.dim(0) : -1;
}

// The most dimensions a tensor may have (TensorFlow's limit).
inline constexpr int64_t kMaxRank = 254;

// A shape of unknown dimensions whose rank is the length n of a shape
// vector (unknown when n is), or an error naming the node when n is more
// than a tensor's rank may be: a Placeholder of shape [2^62] fed as a
// shape once made the shape functions allocate 2^62 dimensions.
inline absl::StatusOr<PartialShape> UnknownOfLength(const InferenceContext& ctx, int64_t n,
                                                    absl::string_view what) {
  if (n < 0) return PartialShape::Unknown();
  if (n > kMaxRank) {
    return ctx.Error(absl::StrCat(what, " has ", n, " elements, more dimensions than a tensor may have (",
                                  kMaxRank, ")"));
  }
  return PartialShape::UnknownOfRank(n);
}

// The shape described by a 1-D shape-valued input (Reshape, Fill,
// BroadcastTo): exact when its value is known, else of known rank when its
// length is known.
inline absl::StatusOr<PartialShape> ShapeFromInput(const InferenceContext& ctx, int i, bool* known) {
  Dims v;
  *known = KnownInts(ctx, i, &v);
  if (*known) return PartialShape(v);
  const PartialShape& s = ctx.input(i);
  if (s.rank_known() && s.rank() == 0) return PartialShape(Shape{});
  return UnknownOfLength(ctx, VectorLength(ctx, i), "shape");
}

}  // namespace array_util
}  // namespace plexus

#endif  // PLEXUS_CORE_SRC_OPS_ARRAY_UTIL_H_

// The values of small integer tensors known while a graph is imported
// (ir/static_values.h), so that shape functions which read their inputs'
// values can give static shapes. Keras' Reshape layer computes its target
// shape as Pack(StridedSlice(Shape(x), 0, 1), d1, d2, ...), so once x's
// shape is static these few ops decide whether every shape after it is;
// TensorFlow's shape inference evaluates the same ops for the same reason.
//
// Only integer tensors of at most kMaxElements elements, and only through:
// Const, Shape, Size, Rank (from static shapes), Identity, Cast between
// integer types, Pack of scalars, ConcatV2 of vectors, and a StridedSlice
// of a vector with one begin/end/stride (begin, end and shrink masks).
// Anything else has no known value.
#include <climits>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/static_values.h"
#include "plexus/tensor.h"
#include "plexus/tensor_proto.h"

namespace plexus {
namespace {

constexpr int64_t kMaxElements = 4096;

bool IsInt(DataType t) {
  return t == DataType::kInt32 || t == DataType::kInt64 || t == DataType::kInt16 || t == DataType::kInt8;
}

int64_t Get(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kInt64: return t.data<int64_t>()[i];
    case DataType::kInt32: return t.data<int32_t>()[i];
    case DataType::kInt16: return t.data<int16_t>()[i];
    case DataType::kInt8: return t.data<int8_t>()[i];
    default: return 0;
  }
}

// A tensor of `dtype` (int32 or int64) holding `values` with `shape`.
std::optional<Tensor> Make(DataType dtype, const Shape& shape, const std::vector<int64_t>& values) {
  if (dtype != DataType::kInt32 && dtype != DataType::kInt64) return std::nullopt;
  auto t = Tensor::AllocateHost(dtype, shape);
  if (!t.ok() || t->num_elements() != static_cast<int64_t>(values.size())) return std::nullopt;
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DataType::kInt64) {
      t->data<int64_t>()[i] = values[i];
    } else {
      if (values[i] < INT32_MIN || values[i] > INT32_MAX) return std::nullopt;
      t->data<int32_t>()[i] = static_cast<int32_t>(values[i]);
    }
  }
  return *std::move(t);
}

DataType OutType(const Node& node, const char* attr, DataType fallback) {
  auto t = GetAttrType(node, attr);
  return t.ok() ? *t : fallback;
}

std::optional<Tensor> FromConst(const Node& node) {
  if (node.output_types.size() != 1 || !IsInt(node.output_types[0])) return std::nullopt;
  const tf::AttrValue* value = node.FindAttr("value");
  if (value == nullptr || !value->has_tensor()) return std::nullopt;
  int64_t elements = 1;
  for (const auto& d : value->tensor().tensor_shape().dim()) {
    if (d.size() < 0 || (d.size() > 0 && elements > kMaxElements / d.size())) return std::nullopt;
    elements *= d.size();
  }
  if (elements > kMaxElements) return std::nullopt;
  auto tensor = TensorFromProto(value->tensor());
  if (!tensor.ok()) return std::nullopt;
  return *std::move(tensor);
}

// StridedSlice of a vector with one begin, end and stride.
std::optional<Tensor> SliceVector(const Node& node, const std::vector<const Tensor*>& v) {
  if (v.size() != 4 || v[0] == nullptr || v[1] == nullptr || v[2] == nullptr || v[3] == nullptr) return std::nullopt;
  const Tensor& x = *v[0];
  if (x.dims() != 1 || v[1]->num_elements() != 1 || v[2]->num_elements() != 1 || v[3]->num_elements() != 1) {
    return std::nullopt;
  }
  auto mask = [&](const char* name) {
    auto m = GetAttrInt(node, name);
    return m.ok() ? *m : 0;
  };
  if (mask("ellipsis_mask") != 0 || mask("new_axis_mask") != 0) return std::nullopt;
  const int64_t n = x.shape()[0];
  const int64_t stride = Get(*v[3], 0);
  if (stride == 0) return std::nullopt;
  const bool shrink = (mask("shrink_axis_mask") & 1) != 0;
  int64_t begin = Get(*v[1], 0), end = Get(*v[2], 0);
  if (shrink) {
    if (begin < 0) begin += n;
    if (begin < 0 || begin >= n) return std::nullopt;
    return Make(x.dtype(), {}, {Get(x, begin)});
  }
  // Python's slice rules, clamped to the vector.
  auto clamp = [&](int64_t i, bool is_begin, bool masked) {
    if (masked) return stride > 0 ? (is_begin ? int64_t{0} : n) : (is_begin ? n - 1 : int64_t{-1});
    if (i < 0) i += n;
    if (stride > 0) return i < 0 ? int64_t{0} : (i > n ? n : i);
    return i < -1 ? int64_t{-1} : (i > n - 1 ? n - 1 : i);
  };
  begin = clamp(begin, true, (mask("begin_mask") & 1) != 0);
  end = clamp(end, false, (mask("end_mask") & 1) != 0);
  std::vector<int64_t> out;
  for (int64_t i = begin; stride > 0 ? i < end : i > end; i += stride) out.push_back(Get(x, i));
  return Make(x.dtype(), {static_cast<int64_t>(out.size())}, out);
}

std::optional<Tensor> StaticIntValue(const Node& node, const std::vector<PartialShape>& shapes,
                                     const std::vector<const Tensor*>& v) {
  const std::string& op = node.op;
  if (op == "Const") return FromConst(node);
  if (node.output_types.empty() || !IsInt(node.output_types[0])) return std::nullopt;
  if (op == "Shape" || op == "Size" || op == "Rank") {
    if (shapes.empty()) return std::nullopt;
    const PartialShape& s = shapes[0];
    const DataType out = OutType(node, "out_type", DataType::kInt32);
    if (op == "Rank") {
      if (!s.rank_known()) return std::nullopt;
      return Make(DataType::kInt32, {}, {s.rank()});
    }
    if (!s.fully_defined()) return std::nullopt;
    if (op == "Size") {
      int64_t n = 1;
      for (int64_t d : s.dims()) n *= d;
      return Make(out, {}, {n});
    }
    if (s.rank() > kMaxElements) return std::nullopt;
    return Make(out, {s.rank()}, std::vector<int64_t>(s.dims().begin(), s.dims().end()));
  }
  if (op == "Identity" && v.size() == 1 && v[0] != nullptr) return *v[0];
  if (op == "Cast" && v.size() == 1 && v[0] != nullptr) {
    std::vector<int64_t> values(static_cast<size_t>(v[0]->num_elements()));
    for (size_t i = 0; i < values.size(); ++i) values[i] = Get(*v[0], static_cast<int64_t>(i));
    return Make(node.output_types[0], v[0]->shape(), values);
  }
  if (op == "Pack") {
    auto axis = GetAttrInt(node, "axis");
    if (!axis.ok() || *axis != 0 || v.empty() || v.size() > kMaxElements) return std::nullopt;
    std::vector<int64_t> values;
    for (const Tensor* t : v) {
      if (t == nullptr || t->dims() != 0) return std::nullopt;
      values.push_back(Get(*t, 0));
    }
    return Make(node.output_types[0], {static_cast<int64_t>(values.size())}, values);
  }
  if (op == "ConcatV2" && v.size() >= 2) {
    const Tensor* axis = v.back();
    if (axis == nullptr || axis->num_elements() != 1 || (Get(*axis, 0) != 0 && Get(*axis, 0) != -1)) {
      return std::nullopt;
    }
    std::vector<int64_t> values;
    for (size_t k = 0; k + 1 < v.size(); ++k) {
      if (v[k] == nullptr || v[k]->dims() != 1) return std::nullopt;
      for (int64_t i = 0; i < v[k]->num_elements(); ++i) values.push_back(Get(*v[k], i));
    }
    if (static_cast<int64_t>(values.size()) > kMaxElements) return std::nullopt;
    return Make(node.output_types[0], {static_cast<int64_t>(values.size())}, values);
  }
  if (op == "StridedSlice") return SliceVector(node, v);
  return std::nullopt;
}

std::shared_ptr<const Tensor> Evaluate(const Node& node, const std::vector<PartialShape>& shapes,
                                       const std::vector<const Tensor*>& values) {
  std::optional<Tensor> value = StaticIntValue(node, shapes, values);
  if (!value) return nullptr;
  return std::make_shared<const Tensor>(*std::move(value));
}

const bool kInstalled = (SetStaticValueFn(&Evaluate), true);

}  // namespace
}  // namespace plexus

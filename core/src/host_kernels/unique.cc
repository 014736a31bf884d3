// Host kernels of Unique and UniqueWithCounts (schemas in
// ops/unique_ops.cc): values in order of first appearance. Equality is the
// element type's own, as in TensorFlow: 0.0 and -0.0 are one value, and
// every NaN is a value of its own.
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "ops/training_util.h"
#include "plexus/graph.h"
#include "plexus/status.h"

namespace plexus {
namespace {

using training_util::IndexVector;

// The position of each element's value among the distinct values, and the
// element index of each distinct value's first appearance.
struct Grouping {
  std::vector<int64_t> index;  // per element
  std::vector<int64_t> first;  // per distinct value
  std::vector<int64_t> count;  // per distinct value
};

template <typename Key, typename Get>
Grouping Group(int64_t n, Get get) {
  Grouping g;
  g.index.resize(static_cast<size_t>(n));
  std::unordered_map<Key, int64_t> seen;
  for (int64_t i = 0; i < n; ++i) {
    auto [it, inserted] = seen.emplace(get(i), static_cast<int64_t>(g.first.size()));
    if (inserted) {
      g.first.push_back(i);
      g.count.push_back(0);
    }
    g.index[i] = it->second;
    ++g.count[it->second];
  }
  return g;
}

absl::StatusOr<Grouping> GroupValues(const HostOpContext& ctx, const Tensor& x) {
  const int64_t n = x.num_elements();
  switch (x.dtype()) {
    case DataType::kFloat: return Group<float>(n, [&](int64_t i) { return x.data<float>()[i]; });
    case DataType::kDouble: return Group<double>(n, [&](int64_t i) { return x.data<double>()[i]; });
    case DataType::kInt8: return Group<int8_t>(n, [&](int64_t i) { return x.data<int8_t>()[i]; });
    case DataType::kUInt8: return Group<uint8_t>(n, [&](int64_t i) { return x.data<uint8_t>()[i]; });
    case DataType::kInt16: return Group<int16_t>(n, [&](int64_t i) { return x.data<int16_t>()[i]; });
    case DataType::kUInt16: return Group<uint16_t>(n, [&](int64_t i) { return x.data<uint16_t>()[i]; });
    case DataType::kInt32: return Group<int32_t>(n, [&](int64_t i) { return x.data<int32_t>()[i]; });
    case DataType::kInt64: return Group<int64_t>(n, [&](int64_t i) { return x.data<int64_t>()[i]; });
    case DataType::kBool: return Group<bool>(n, [&](int64_t i) { return x.data<bool>()[i]; });
    case DataType::kString: return Group<std::string>(n, [&](int64_t i) { return x.strings()[i]; });
    default:
      return ctx.InvalidArgument(absl::StrCat("Unique does not support element type ", DataTypeName(x.dtype())));
  }
}

absl::Status Unique(HostOpContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.dims() != 1) {
    return ctx.InvalidArgument(absl::StrCat("unique expects a 1D vector, got shape ", ShapeToString(x.shape())));
  }
  PX_ASSIGN_OR_RETURN(DataType out_idx, GetAttrType(ctx.node(), "out_idx"));
  if (out_idx == DataType::kInt32 && x.num_elements() > INT32_MAX) {
    return ctx.InvalidArgument("the input has more elements than an int32 index can count");
  }
  PX_ASSIGN_OR_RETURN(Grouping g, GroupValues(ctx, x));
  const Shape y_shape{static_cast<int64_t>(g.first.size())};
  if (x.dtype() == DataType::kString) {
    std::vector<std::string> y;
    for (int64_t i : g.first) y.push_back(x.strings()[i]);
    ctx.set_output(0, Tensor::FromStrings(y_shape, std::move(y)));
  } else {
    PX_ASSIGN_OR_RETURN(Tensor y, Tensor::AllocateHost(x.dtype(), y_shape));
    const size_t size = DataTypeSize(x.dtype());
    for (size_t k = 0; k < g.first.size(); ++k) {
      std::memcpy(static_cast<char*>(y.raw_data()) + k * size,
                  static_cast<const char*>(x.raw_data()) + g.first[k] * size, size);
    }
    ctx.set_output(0, std::move(y));
  }
  PX_ASSIGN_OR_RETURN(Tensor idx, IndexVector(out_idx, g.index));
  ctx.set_output(1, std::move(idx));
  if (ctx.node().num_outputs() > 2) {
    PX_ASSIGN_OR_RETURN(Tensor count, IndexVector(out_idx, g.count));
    ctx.set_output(2, std::move(count));
  }
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("Unique", Unique);
PX_REGISTER_HOST_OP("UniqueWithCounts", Unique);

}  // namespace
}  // namespace plexus

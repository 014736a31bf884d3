// Host kernels of Unique and UniqueWithCounts, and of UniqueV2 and
// UniqueWithCountsV2, which find the distinct slices along an axis (schemas
// in ops/unique_ops.cc): values in order of first appearance. Equality is
// the element type's own, as in TensorFlow: 0.0 and -0.0 are one value, and
// every NaN is a value of its own (a slice holding one equals no other).
#include <cstdint>
#include <complex>
#include <cstring>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "host_kernels/host_dispatch.h"
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

// ---- UniqueV2, UniqueWithCountsV2: distinct slices along an axis ----------

// A hash of one element that equal elements share (0.0 and -0.0 alike).
template <typename T>
size_t ElementHash(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return std::hash<std::string>()(v);
  } else if constexpr (host::kIsComplex<T>) {
    return ElementHash(v.real()) * 31 + ElementHash(v.imag());
  } else if constexpr (host::kIsFloat<T>) {
    const double d = static_cast<double>(static_cast<host::Compute<T>>(v));
    return d == 0 ? 0 : std::hash<double>()(d);
  } else {
    return std::hash<int64_t>()(static_cast<int64_t>(v));
  }
}

template <typename T>
bool ElementEqual(const T& a, const T& b) {
  if constexpr (host::kIsHalf<T>) return static_cast<float>(a) == static_cast<float>(b);
  else return a == b;
}

// The elements of slice j of [outer, n, inner] data read through `at`.
template <typename T, typename At>
Grouping GroupSlices(int64_t outer, int64_t n, int64_t inner, At at) {
  auto hash = [&](int64_t j) {
    size_t h = 0;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) h = h * 1000003u ^ ElementHash<T>(at((o * n + j) * inner + i));
    }
    return h;
  };
  auto equal = [&](int64_t a, int64_t b) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        if (!ElementEqual<T>(at((o * n + a) * inner + i), at((o * n + b) * inner + i))) return false;
      }
    }
    return true;
  };
  Grouping g;
  g.index.resize(static_cast<size_t>(n));
  std::unordered_map<int64_t, int64_t, decltype(hash), decltype(equal)> seen(16, hash, equal);
  for (int64_t j = 0; j < n; ++j) {
    auto [it, inserted] = seen.emplace(j, static_cast<int64_t>(g.first.size()));
    if (inserted) {
      g.first.push_back(j);
      g.count.push_back(0);
    }
    g.index[j] = it->second;
    ++g.count[it->second];
  }
  return g;
}

absl::Status UniqueV2(HostOpContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& axis_t = ctx.input(1);
  if (axis_t.num_elements() == 0) {
    if (x.dims() != 1) return ctx.InvalidArgument("unique expects a 1D vector.");
    return Unique(ctx);
  }
  if (axis_t.num_elements() > 1) {
    return ctx.InvalidArgument(absl::StrCat("axis does not support input tensors larger than 1 elements"));
  }
  int64_t axis = host::IntAt(axis_t, 0);
  const int64_t rank = x.dims();
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return ctx.InvalidArgument(absl::StrCat("axis has to be between [0, ", rank, ")"));
  PX_ASSIGN_OR_RETURN(DataType out_idx, GetAttrType(ctx.node(), "out_idx"));
  const Shape& shape = x.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner *= shape[d];
  const int64_t n = shape[axis];
  if (out_idx == DataType::kInt32 && n > INT32_MAX) {
    return ctx.InvalidArgument("the input has more slices than an int32 index can count");
  }
  Grouping g;
  bool ok = true;
  if (x.dtype() == DataType::kString) {
    g = GroupSlices<std::string>(outer, n, inner, [&](int64_t i) -> const std::string& { return x.strings()[i]; });
  } else {
    ok = host::Visit<host::kNumbers | host::kBool>(x.dtype(), [&](auto v) {
      using T = decltype(v);
      g = GroupSlices<T>(outer, n, inner, [&](int64_t i) -> const T& { return x.data<T>()[i]; });
    });
  }
  if (!ok) {
    return ctx.InvalidArgument(absl::StrCat("UniqueV2 does not support element type ", DataTypeName(x.dtype())));
  }
  const int64_t k = static_cast<int64_t>(g.first.size());
  Shape y_shape = shape;
  y_shape[axis] = k;
  if (x.dtype() == DataType::kString) {
    std::vector<std::string> y(static_cast<size_t>(outer * k * inner));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t s = 0; s < k; ++s) {
        for (int64_t i = 0; i < inner; ++i) y[(o * k + s) * inner + i] = x.strings()[(o * n + g.first[s]) * inner + i];
      }
    }
    ctx.set_output(0, Tensor::FromStrings(y_shape, std::move(y)));
  } else {
    PX_ASSIGN_OR_RETURN(Tensor y, Tensor::AllocateHost(x.dtype(), y_shape));
    const size_t bytes = DataTypeSize(x.dtype()) * static_cast<size_t>(inner);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t s = 0; s < k; ++s) {
        std::memcpy(static_cast<char*>(y.raw_data()) + (o * k + s) * bytes,
                    static_cast<const char*>(x.raw_data()) + (o * n + g.first[s]) * bytes, bytes);
      }
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
PX_REGISTER_HOST_OP("UniqueV2", UniqueV2);
PX_REGISTER_HOST_OP("UniqueWithCountsV2", UniqueV2);

}  // namespace
}  // namespace plexus

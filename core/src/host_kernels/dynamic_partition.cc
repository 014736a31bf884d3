// Host kernels of DynamicPartition, DynamicStitch and ParallelDynamicStitch
// (schemas in ops/array_host_ops.cc), behind tf.dynamic_partition and
// tf.dynamic_stitch: slices of data sent to the output their partition
// names, and slices of several tensors put at the rows their indices name
// (a later index of the same row wins; rows nobody names are zero). Any
// element type, strings included.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "devices/host_ops.h"
#include "plexus/graph.h"
#include "plexus/status.h"
#include "devices/host_allocation.h"

namespace plexus {
namespace {

bool StartsWith(const Shape& s, const Shape& prefix) {
  if (prefix.size() > s.size()) return false;
  return std::equal(prefix.begin(), prefix.end(), s.begin());
}

Shape Suffix(const Shape& s, size_t from) { return Shape(s.begin() + static_cast<std::ptrdiff_t>(from), s.end()); }

// "[1,0]": the position of flat element i in `shape`.
std::string Position(const Shape& shape, int64_t i) {
  std::vector<int64_t> pos(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    pos[d] = shape[d] == 0 ? 0 : i % shape[d];
    i = shape[d] == 0 ? 0 : i / shape[d];
  }
  return absl::StrCat("[", absl::StrJoin(pos, ","), "]");
}

// Copies slice `from` of `src` to slice `to` of `dst` (slices of `count`
// elements).
void CopySlice(const Tensor& src, int64_t from, Tensor* dst, std::vector<std::string>* dst_strings, int64_t to,
               int64_t count) {
  if (src.dtype() == DataType::kString) {
    for (int64_t k = 0; k < count; ++k) (*dst_strings)[to * count + k] = src.strings()[from * count + k];
    return;
  }
  const size_t bytes = DataTypeSize(src.dtype()) * static_cast<size_t>(count);
  std::memcpy(static_cast<char*>(dst->raw_data()) + to * bytes, static_cast<const char*>(src.raw_data()) + from * bytes,
              bytes);
}

absl::Status CheckCopyable(const HostOpContext& ctx, DataType t) {
  if (t != DataType::kString && DataTypeSize(t) == 0) {
    return ctx.InvalidArgument(absl::StrCat(ctx.node().op, " does not take ", DataTypeName(t), " data"));
  }
  return absl::OkStatus();
}

absl::Status DynamicPartition(HostOpContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& partitions = ctx.input(1);
  PX_RETURN_IF_ERROR(CheckCopyable(ctx, data.dtype()));
  PX_ASSIGN_OR_RETURN(int64_t num, GetAttrInt(ctx.node(), "num_partitions"));
  if (!StartsWith(data.shape(), partitions.shape())) {
    return ctx.InvalidArgument(absl::StrCat("data.shape must start with partitions.shape, got data.shape = ",
                                            ShapeToString(data.shape()),
                                            ", partitions.shape = ", ShapeToString(partitions.shape())));
  }
  const int64_t n = partitions.num_elements();
  const int32_t* p = partitions.data<int32_t>();
  std::vector<int64_t> counts(static_cast<size_t>(num), 0);
  for (int64_t i = 0; i < n; ++i) {
    if (p[i] < 0 || p[i] >= num) {
      return ctx.InvalidArgument(absl::StrCat("partitions", Position(partitions.shape(), i), " = ", p[i],
                                              " is not in [0, ", num, ")"));
    }
    ++counts[p[i]];
  }
  const Shape inner = Suffix(data.shape(), partitions.shape().size());
  const int64_t slice = NumElements(inner);
  std::vector<Tensor> outs(static_cast<size_t>(num));
  std::vector<std::vector<std::string>> strings(static_cast<size_t>(num));
  for (int64_t k = 0; k < num; ++k) {
    if (data.dtype() == DataType::kString) {
      strings[k].resize(static_cast<size_t>(counts[k] * slice));
    } else {
      Shape s = inner;
      s.insert(s.begin(), counts[k]);
      PX_ASSIGN_OR_RETURN(outs[k], Tensor::AllocateHost(data.dtype(), s));
    }
  }
  std::vector<int64_t> next(static_cast<size_t>(num), 0);
  for (int64_t i = 0; i < n; ++i) CopySlice(data, i, &outs[p[i]], &strings[p[i]], next[p[i]]++, slice);
  for (int64_t k = 0; k < num; ++k) {
    if (data.dtype() == DataType::kString) {
      Shape s = inner;
      s.insert(s.begin(), counts[k]);
      outs[k] = Tensor::FromStrings(s, std::move(strings[k]));
    }
    ctx.set_output(static_cast<int>(k), std::move(outs[k]));
  }
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("DynamicPartition", DynamicPartition);

absl::Status DynamicStitch(HostOpContext& ctx) {
  const int n = ctx.num_inputs() / 2;
  const Tensor& indices0 = ctx.input(0);
  const Tensor& data0 = ctx.input(n);
  PX_RETURN_IF_ERROR(CheckCopyable(ctx, data0.dtype()));
  int64_t max_index = -1;
  for (int i = 0; i < n; ++i) {
    const Tensor& indices = ctx.input(i);
    const Tensor& data = ctx.input(n + i);
    if (!StartsWith(data.shape(), indices.shape())) {
      return ctx.InvalidArgument(absl::StrCat("data[", i, "].shape = ", ShapeToString(data.shape()),
                                              " does not start with indices[", i,
                                              "].shape = ", ShapeToString(indices.shape())));
    }
    if (i > 0 && Suffix(data.shape(), indices.shape().size()) != Suffix(data0.shape(), indices0.shape().size())) {
      return ctx.InvalidArgument(absl::StrCat(
          "Need data[0].shape[", indices0.dims(), ":] = data[", i, "].shape[", indices.dims(),
          ":], got data[0].shape = ", ShapeToString(data0.shape()), ", data[", i, "].shape = ",
          ShapeToString(data.shape()), ", indices[0].shape = ", ShapeToString(indices0.shape()), ", indices[", i,
          "].shape = ", ShapeToString(indices.shape())));
    }
    for (int64_t k = 0; k < indices.num_elements(); ++k) max_index = std::max<int64_t>(max_index, indices.data<int32_t>()[k]);
  }
  const Shape inner = Suffix(data0.shape(), indices0.shape().size());
  const int64_t slice = NumElements(inner);
  const int64_t rows = max_index + 1;
  Shape out_shape = inner;
  out_shape.insert(out_shape.begin(), rows);
  Tensor out;
  std::vector<std::string> strings;
  if (data0.dtype() == DataType::kString) {
    int64_t count = 0;
    if (__builtin_mul_overflow(rows, slice, &count)) {
      return ctx.InvalidArgument(absl::StrCat("the output's ", rows, " rows of ", slice, " overflow int64"));
    }
    PX_RETURN_IF_ERROR(CheckHostAllocation(count, sizeof(std::string)));  // rows come from the indices' values
    strings.resize(static_cast<size_t>(count));
  } else {
    PX_ASSIGN_OR_RETURN(out, Tensor::AllocateHost(data0.dtype(), out_shape));
  }
  for (int i = 0; i < n; ++i) {
    const Tensor& indices = ctx.input(i);
    const Tensor& data = ctx.input(n + i);
    if (data.dtype() != data0.dtype()) return ctx.InvalidArgument("all data inputs must have the same type");
    for (int64_t k = 0; k < indices.num_elements(); ++k) {
      const int32_t row = indices.data<int32_t>()[k];
      if (row < 0 || row >= rows) return ctx.InvalidArgument(absl::StrCat("indices[", k, "] is out of range"));
      CopySlice(data, k, &out, &strings, row, slice);
    }
  }
  if (data0.dtype() == DataType::kString) out = Tensor::FromStrings(out_shape, std::move(strings));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("DynamicStitch", DynamicStitch);
PX_REGISTER_HOST_OP("ParallelDynamicStitch", DynamicStitch);

}  // namespace
}  // namespace plexus

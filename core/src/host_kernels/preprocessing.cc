// Host kernels of Bucketize and SparseToDense (schemas in
// ops/preprocessing_ops.cc), with TensorFlow's semantics and error messages.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "devices/host_ops.h"
#include "ops/training_util.h"
#include "plexus/graph.h"
#include "plexus/status.h"
#include "devices/host_allocation.h"

namespace plexus {
namespace {

using training_util::IntValues;

// ---- Bucketize ------------------------------------------------------------

template <typename T>
void BucketizeValues(const T* in, int64_t n, const std::vector<float>& boundaries, int32_t* out) {
  for (int64_t i = 0; i < n; ++i) {
    // The comparison is TensorFlow's: the value against float boundaries.
    out[i] = static_cast<int32_t>(std::upper_bound(boundaries.begin(), boundaries.end(), in[i]) -
                                  boundaries.begin());
  }
}

absl::Status Bucketize(HostOpContext& ctx) {
  const tf::AttrValue* attr = ctx.node().FindAttr("boundaries");
  if (attr == nullptr || attr->value_case() != tf::AttrValue::kList) {
    return ctx.InvalidArgument("the list(float) attribute 'boundaries' is missing");
  }
  const std::vector<float> boundaries(attr->list().f().begin(), attr->list().f().end());
  if (!std::is_sorted(boundaries.begin(), boundaries.end())) {
    return ctx.InvalidArgument("Expected sorted boundaries");
  }
  const Tensor& in = ctx.input(0);
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(DataType::kInt32, in.shape()));
  const int64_t n = in.num_elements();
  int32_t* dst = out.data<int32_t>();
  switch (in.dtype()) {
    case DataType::kFloat: BucketizeValues(in.data<float>(), n, boundaries, dst); break;
    case DataType::kDouble: BucketizeValues(in.data<double>(), n, boundaries, dst); break;
    case DataType::kInt32: BucketizeValues(in.data<int32_t>(), n, boundaries, dst); break;
    case DataType::kInt64: BucketizeValues(in.data<int64_t>(), n, boundaries, dst); break;
    default:
      return ctx.InvalidArgument(absl::StrCat("input must be int32, int64, float or double, got ",
                                              DataTypeName(in.dtype())));
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("Bucketize", Bucketize);

// ---- SparseToDense --------------------------------------------------------

std::string IndexText(const int64_t* index, int64_t rank) {
  return absl::StrCat("[", absl::StrJoin(index, index + rank, ","), "]");
}

// The flat output offset of each of the n indices (rows of `rank` values),
// checked against the shape and, when `ordered`, for strictly increasing
// lexicographic order as TensorFlow's validate_indices requires.
absl::Status DenseOffsets(const HostOpContext& ctx, const std::vector<int64_t>& indices, int64_t n,
                          const Shape& shape, bool ordered, std::vector<int64_t>* offsets) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  offsets->resize(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    const int64_t* index = indices.data() + k * rank;
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d) {
      if (index[d] < 0 || index[d] >= shape[d]) {
        return ctx.InvalidArgument(absl::StrCat("indices[", k, "] = ", IndexText(index, rank),
                                                " is out of bounds: need 0 <= index < ",
                                                IndexText(shape.data(), rank)));
      }
      offset = offset * shape[d] + index[d];
    }
    if (ordered && k > 0) {
      const int64_t previous = (*offsets)[k - 1];
      if (offset == previous) {
        return ctx.InvalidArgument(absl::StrCat("indices[", k, "] = ", IndexText(index, rank), " is repeated"));
      }
      if (offset < previous) {
        return ctx.InvalidArgument(absl::StrCat("indices[", k, "] = ", IndexText(index, rank), " is out of order. ",
                                                "Many sparse ops require sorted indices. Use "
                                                "`tf.sparse.reorder` to create a correctly ordered copy."));
      }
    }
    (*offsets)[k] = offset;
  }
  return absl::OkStatus();
}

absl::Status SparseToDense(HostOpContext& ctx) {
  const Tensor& indices_t = ctx.input(0);
  const Tensor& shape_t = ctx.input(1);
  const Tensor& values = ctx.input(2);
  const Tensor& fill = ctx.input(3);
  if (indices_t.dims() > 2) {
    return ctx.InvalidArgument(absl::StrCat("sparse_indices should be a scalar, vector, or matrix, got shape ",
                                            ShapeToString(indices_t.shape())));
  }
  if (shape_t.dims() > 1) {
    return ctx.InvalidArgument(absl::StrCat("output_shape should be a scalar or vector, got shape ",
                                            ShapeToString(shape_t.shape())));
  }
  if (fill.dims() != 0) {
    return ctx.InvalidArgument(absl::StrCat("default_value should be a scalar, got shape ",
                                            ShapeToString(fill.shape())));
  }
  const std::vector<int64_t> shape_values = IntValues(shape_t);
  const Shape shape(shape_values.begin(), shape_values.end());
  for (int64_t d : shape) {
    if (d < 0) return ctx.InvalidArgument(absl::StrCat("output_shape has a negative dimension: ", d));
  }
  const int64_t n = indices_t.dims() == 0 ? 1 : indices_t.shape()[0];
  const int64_t index_rank = indices_t.dims() == 2 ? indices_t.shape()[1] : 1;
  if (index_rank != static_cast<int64_t>(shape.size())) {
    return ctx.InvalidArgument(absl::StrCat("sparse_indices has rows of ", index_rank,
                                            " values but output_shape has ", shape.size(), " dimensions"));
  }
  if (values.dims() > 1 || (values.dims() == 1 && values.shape()[0] != n)) {
    return ctx.InvalidArgument(absl::StrCat("sparse_values has incorrect shape ", ShapeToString(values.shape()),
                                            ", should be [] or [", n, "]"));
  }
  const bool validate = GetAttrBool(ctx.node(), "validate_indices").value_or(true);
  std::vector<int64_t> offsets;
  PX_RETURN_IF_ERROR(DenseOffsets(ctx, IntValues(indices_t), n, shape, validate, &offsets));
  const bool scalar_value = values.dims() == 0;
  if (values.dtype() == DataType::kString) {
    PX_RETURN_IF_ERROR(CheckHostAllocation(NumElements(shape), sizeof(std::string)));  // shape is a value
    std::vector<std::string> out(static_cast<size_t>(NumElements(shape)), fill.strings()[0]);
    for (int64_t k = 0; k < n; ++k) out[offsets[k]] = values.strings()[scalar_value ? 0 : k];
    ctx.set_output(0, Tensor::FromStrings(shape, std::move(out)));
    return absl::OkStatus();
  }
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(values.dtype(), shape));
  const size_t size = DataTypeSize(values.dtype());
  char* dst = static_cast<char*>(out.raw_data());
  const char* src = static_cast<const char*>(values.raw_data());
  for (int64_t i = 0; i < out.num_elements(); ++i) std::memcpy(dst + i * size, fill.raw_data(), size);
  for (int64_t k = 0; k < n; ++k) std::memcpy(dst + offsets[k] * size, src + (scalar_value ? 0 : k) * size, size);
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("SparseToDense", SparseToDense);

}  // namespace
}  // namespace plexus

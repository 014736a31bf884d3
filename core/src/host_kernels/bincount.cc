// Host kernels of Bincount, DenseBincount and RaggedBincount (schemas in
// ops/bincount_ops.cc): out[row][v] counts (or sums the weights of) the
// values v of each row; values at or above `size` are dropped, negative
// ones are an error, and binary_output gives 1 for any count.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

absl::StatusOr<std::vector<int64_t>> IntegersOf(HostOpContext& ctx, int input, absl::string_view name) {
  const Tensor& t = ctx.input(input);
  std::vector<int64_t> out(t.num_elements());
  if (t.dtype() == DataType::kInt64) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = t.data<int64_t>()[i];
  } else if (t.dtype() == DataType::kInt32) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = t.data<int32_t>()[i];
  } else {
    return ctx.InvalidArgument(absl::StrCat(name, " must be int32 or int64, got ", DataTypeName(t.dtype())));
  }
  return out;
}

struct Counting {
  std::vector<int64_t> values;  // flattened
  std::vector<int64_t> rows;    // row splits into values: rows + 1 entries
  int64_t size = 0;
  const Tensor* weights = nullptr;  // empty: every value counts 1
  bool binary = false;
};

template <typename T>
void Count(const Counting& c, T* out) {
  const bool weighted = c.weights->num_elements() > 0 && !c.binary;
  for (size_t r = 0; r + 1 < c.rows.size(); ++r) {
    T* row = out + r * c.size;
    for (int64_t i = c.rows[r]; i < c.rows[r + 1]; ++i) {
      const int64_t v = c.values[i];
      if (v >= c.size) continue;
      if (c.binary) row[v] = T(1);
      else row[v] += weighted ? c.weights->data<T>()[i] : T(1);
    }
  }
}

absl::Status Finish(HostOpContext& ctx, const Counting& c, Shape shape, absl::string_view negative_message) {
  for (int64_t v : c.values) {
    if (v < 0) return ctx.InvalidArgument(negative_message);
  }
  const DataType dtype = c.weights->dtype();
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(dtype, std::move(shape)));
  switch (dtype) {
    case DataType::kInt32: Count(c, out.data<int32_t>()); break;
    case DataType::kInt64: Count(c, out.data<int64_t>()); break;
    case DataType::kFloat: Count(c, out.data<float>()); break;
    case DataType::kDouble: Count(c, out.data<double>()); break;
    default:
      return ctx.InvalidArgument(absl::StrCat("weights must be int32, int64, float or double, got ",
                                              DataTypeName(dtype)));
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// Reads `size` (input `size_input`) and the weights (input `weights_input`,
// empty or of the values' shape) into `c`.
absl::Status ReadSizeAndWeights(HostOpContext& ctx, int size_input, int weights_input, const Shape& values_shape,
                                Counting* c) {
  if (ctx.input(size_input).num_elements() != 1) {
    return ctx.InvalidArgument(absl::StrCat("size must be a scalar, got ", ctx.input(size_input).DebugString(0)));
  }
  PX_ASSIGN_OR_RETURN(std::vector<int64_t> size, IntegersOf(ctx, size_input, "size"));
  c->size = size[0];
  if (c->size < 0) return ctx.InvalidArgument(absl::StrCat("size (", c->size, ") must be non-negative"));
  c->weights = &ctx.input(weights_input);
  if (c->weights->num_elements() > 0 && c->weights->shape() != values_shape) {
    return ctx.InvalidArgument(absl::StrCat(
        "`weights` must be the same shape as `arr` or a length-0 `Tensor`, in which case it acts as all weights "
        "equal to 1. Received ", ShapeToString(c->weights->shape())));
  }
  if (ctx.node().FindAttr("binary_output") != nullptr) {
    PX_ASSIGN_OR_RETURN(c->binary, GetAttrBool(ctx.node(), "binary_output"));
  }
  return absl::OkStatus();
}

absl::Status Bincount(HostOpContext& ctx) {
  Counting c;
  PX_ASSIGN_OR_RETURN(c.values, IntegersOf(ctx, 0, "arr"));
  PX_RETURN_IF_ERROR(ReadSizeAndWeights(ctx, 1, 2, ctx.input(0).shape(), &c));
  c.rows = {0, static_cast<int64_t>(c.values.size())};
  return Finish(ctx, c, {c.size}, "Input arr must be non-negative!");
}
PX_REGISTER_HOST_OP("Bincount", Bincount);

absl::Status DenseBincount(HostOpContext& ctx) {
  const Tensor& input = ctx.input(0);
  if (input.dims() > 2) {
    return ctx.InvalidArgument(absl::StrCat("Shape must be at most rank 2 but is rank ", input.dims()));
  }
  Counting c;
  PX_ASSIGN_OR_RETURN(c.values, IntegersOf(ctx, 0, "input"));
  PX_RETURN_IF_ERROR(ReadSizeAndWeights(ctx, 1, 2, input.shape(), &c));
  const int64_t rows = input.dims() == 2 ? input.shape()[0] : 1;
  const int64_t per_row = input.dims() == 2 ? input.shape()[1] : static_cast<int64_t>(c.values.size());
  for (int64_t r = 0; r <= rows; ++r) c.rows.push_back(r * per_row);
  Shape shape = input.dims() == 2 ? Shape{rows, c.size} : Shape{c.size};
  return Finish(ctx, c, std::move(shape), "Input arr must be non-negative!");
}
PX_REGISTER_HOST_OP("DenseBincount", DenseBincount);

absl::Status RaggedBincount(HostOpContext& ctx) {
  Counting c;
  if (ctx.input(0).dims() != 1) {
    return ctx.InvalidArgument(absl::StrCat("splits must be a vector, got ", ctx.input(0).DebugString(0)));
  }
  PX_ASSIGN_OR_RETURN(c.rows, IntegersOf(ctx, 0, "splits"));
  PX_ASSIGN_OR_RETURN(c.values, IntegersOf(ctx, 1, "values"));
  PX_RETURN_IF_ERROR(ReadSizeAndWeights(ctx, 2, 3, ctx.input(1).shape(), &c));
  const int64_t n = static_cast<int64_t>(c.values.size());
  if (c.rows.empty() || c.rows[0] != 0) return ctx.InvalidArgument("Splits must start with 0");
  for (size_t i = 1; i < c.rows.size(); ++i) {
    if (c.rows[i] < c.rows[i - 1]) return ctx.InvalidArgument("Splits must be non-decreasing");
  }
  if (c.rows.back() != n) {
    return ctx.InvalidArgument(absl::StrCat("Splits must end with the number of values, got ", c.rows.back(),
                                            " instead of ", n));
  }
  const int64_t rows = static_cast<int64_t>(c.rows.size()) - 1;
  return Finish(ctx, c, {rows, c.size}, "Input must be non-negative");
}
PX_REGISTER_HOST_OP("RaggedBincount", RaggedBincount);

}  // namespace
}  // namespace plexus

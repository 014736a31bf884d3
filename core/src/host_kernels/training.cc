// Host kernels of the shape arithmetic ops (schemas in ops/training_ops.cc):
// BroadcastGradientArgs, BroadcastArgs, _PlexusReducedShape and
// InvertPermutation, on small integer vectors in host memory.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "devices/host_ops.h"
#include "ops/training_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

using training_util::GradientReductionIndices;
using training_util::IndexVector;
using training_util::IntValues;

std::string ShapeText(const std::vector<int64_t>& dims) { return absl::StrCat("[", absl::StrJoin(dims, ","), "]"); }

// The two shapes of BroadcastGradientArgs and BroadcastArgs: int32 or int64
// vectors of one dtype without negative dimensions.
absl::Status ShapePair(const HostOpContext& ctx, std::vector<int64_t> (&shapes)[2]) {
  const DataType dtype = ctx.input(0).dtype();
  for (int i = 0; i < 2; ++i) {
    const Tensor& in = ctx.input(i);
    if (in.dtype() != DataType::kInt32 && in.dtype() != DataType::kInt64) {
      return ctx.InvalidArgument(absl::StrCat("s", i, " must be int32 or int64, got ", DataTypeName(in.dtype())));
    }
    if (in.dtype() != dtype) {
      return ctx.InvalidArgument(absl::StrCat("s0 and s1 must have the same dtype, got ", DataTypeName(dtype),
                                              " and ", DataTypeName(in.dtype())));
    }
    if (in.dims() != 1) {
      return ctx.InvalidArgument(absl::StrCat("s", i, " must be a vector, got shape ", ShapeToString(in.shape())));
    }
    shapes[i] = IntValues(in);
    for (int64_t d : shapes[i]) {
      if (d < 0) {
        return ctx.InvalidArgument(
            absl::StrCat("s", i, " has a negative dimension: ", ShapeText(shapes[i])));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status BroadcastGradientArgs(HostOpContext& ctx) {
  std::vector<int64_t> shapes[2];
  PX_RETURN_IF_ERROR(ShapePair(ctx, shapes));
  const DataType dtype = ctx.input(0).dtype();
  std::vector<int64_t> r0, r1;
  if (!GradientReductionIndices(shapes[0], shapes[1], &r0, &r1)) {
    return ctx.InvalidArgument(
        absl::StrCat("Incompatible shapes: ", ShapeText(shapes[0]), " vs. ", ShapeText(shapes[1])));
  }
  PX_ASSIGN_OR_RETURN(Tensor out0, IndexVector(dtype, r0));
  PX_ASSIGN_OR_RETURN(Tensor out1, IndexVector(dtype, r1));
  ctx.set_output(0, std::move(out0));
  ctx.set_output(1, std::move(out1));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("BroadcastGradientArgs", BroadcastGradientArgs);

absl::Status BroadcastArgs(HostOpContext& ctx) {
  std::vector<int64_t> shapes[2];
  PX_RETURN_IF_ERROR(ShapePair(ctx, shapes));
  const size_t rank = std::max(shapes[0].size(), shapes[1].size());
  std::vector<int64_t> out(rank);
  for (size_t k = 0; k < rank; ++k) {
    const int64_t d0 = k + shapes[0].size() < rank ? 1 : shapes[0][k + shapes[0].size() - rank];
    const int64_t d1 = k + shapes[1].size() < rank ? 1 : shapes[1][k + shapes[1].size() - rank];
    if (d0 != d1 && d0 != 1 && d1 != 1) {
      return ctx.InvalidArgument(
          absl::StrCat("Incompatible shapes: ", ShapeText(shapes[0]), " vs. ", ShapeText(shapes[1])));
    }
    out[k] = d0 == 1 ? d1 : d0;
  }
  PX_ASSIGN_OR_RETURN(Tensor result, IndexVector(ctx.input(0).dtype(), out));
  ctx.set_output(0, std::move(result));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("BroadcastArgs", BroadcastArgs);

absl::Status ReducedShape(HostOpContext& ctx) {
  const Tensor& shape = ctx.input(0);
  if (shape.dims() != 1) {
    return ctx.InvalidArgument(absl::StrCat("input_shape must be a vector, got shape ", ShapeToString(shape.shape())));
  }
  std::vector<int64_t> dims = IntValues(shape);
  const int64_t rank = static_cast<int64_t>(dims.size());
  for (int64_t axis : IntValues(ctx.input(1))) {
    if (axis < -rank || axis >= rank) {
      return ctx.InvalidArgument(absl::StrCat("axis ", axis, " is out of range for rank ", rank));
    }
    dims[axis < 0 ? axis + rank : axis] = 1;
  }
  PX_ASSIGN_OR_RETURN(Tensor out, IndexVector(DataType::kInt32, dims));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("_PlexusReducedShape", ReducedShape);

absl::Status InvertPermutation(HostOpContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.dims() != 1) return ctx.InvalidArgument(absl::StrCat("x must be a vector, got shape ", ShapeToString(x.shape())));
  std::vector<int64_t> perm = IntValues(x);
  const int64_t n = static_cast<int64_t>(perm.size());
  std::vector<int64_t> inverse(perm.size(), -1);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = perm[i];
    if (d < 0 || d >= n) return ctx.InvalidArgument(absl::StrCat(d, " is not between 0 and ", n));
    if (inverse[d] != -1) return ctx.InvalidArgument(absl::StrCat(d, " is duplicated in the input"));
    inverse[d] = i;
  }
  PX_ASSIGN_OR_RETURN(Tensor out, IndexVector(x.dtype(), inverse));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("InvertPermutation", InvertPermutation);

}  // namespace
}  // namespace plexus

// Host kernels of the checkpoint I/O ops (schemas in ops/io_ops.cc):
// RestoreV2, SaveV2 and MergeV2Checkpoints over the tensor-bundle reader and
// writer (plexus/checkpoint.h), and the shard file-name helpers
// ShardedFilename and ShardedFilespec.
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "devices/host_ops.h"
#include "plexus/checkpoint.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

absl::StatusOr<std::string> ScalarString(HostOpContext& ctx, int i, absl::string_view name) {
  const Tensor& t = ctx.input(i);
  if (t.dtype() != DataType::kString || t.dims() != 0) {
    return ctx.InvalidArgument(absl::StrCat(name, " must be a string scalar, got ", t.DebugString(0)));
  }
  return t.strings()[0];
}

absl::StatusOr<int32_t> ScalarInt32(HostOpContext& ctx, int i, absl::string_view name) {
  const Tensor& t = ctx.input(i);
  if (t.dtype() != DataType::kInt32 || t.dims() != 0) {
    return ctx.InvalidArgument(absl::StrCat(name, " must be an int32 scalar, got ", t.DebugString(0)));
  }
  return *t.data<int32_t>();
}

// tensor_names and shape_and_slices: string vectors of n entries; slices
// must be empty (whole tensors).
absl::Status CheckNamesAndSlices(HostOpContext& ctx, int64_t n) {
  for (int i = 1; i <= 2; ++i) {
    const Tensor& t = ctx.input(i);
    const char* name = i == 1 ? "tensor_names" : "shape_and_slices";
    if (t.dtype() != DataType::kString || t.dims() != 1 || t.shape()[0] != n) {
      return ctx.InvalidArgument(absl::StrCat(name, " must be a string vector of ", n,
                                              " entries (one per dtype), got ", t.DebugString(0)));
    }
  }
  const auto& slices = ctx.input(2).strings();
  for (int64_t k = 0; k < n; ++k) {
    if (!slices[k].empty()) {
      return ctx.Error(absl::StatusCode::kUnimplemented,
                       absl::StrCat("tensor '", ctx.input(1).strings()[k], "' asks for the slice '",
                                    slices[k], "'; partial (sliced) save and restore are not supported"));
    }
  }
  return absl::OkStatus();
}

absl::Status RestoreV2(HostOpContext& ctx) {
  const int64_t n = ctx.node().num_outputs();
  PX_ASSIGN_OR_RETURN(std::string prefix, ScalarString(ctx, 0, "prefix"));
  PX_RETURN_IF_ERROR(CheckNamesAndSlices(ctx, n));
  auto reader = CheckpointReader::Open(prefix);
  if (!reader.ok()) return Annotate(reader.status(), ctx.node().Describe());
  const auto& names = ctx.input(1).strings();
  for (int64_t k = 0; k < n; ++k) {
    auto tensor = (*reader)->Read(names[k]);
    if (!tensor.ok()) return Annotate(tensor.status(), ctx.node().Describe());
    const DataType want = ctx.node().output_types[k];
    if (tensor->dtype() != want) {
      return ctx.InvalidArgument(absl::StrCat("tensor '", names[k], "' of checkpoint '", prefix, "' is ",
                                              DataTypeName(tensor->dtype()), " but dtypes[", k,
                                              "] asks for ", DataTypeName(want)));
    }
    ctx.set_output(static_cast<int>(k), *std::move(tensor));
  }
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("RestoreV2", RestoreV2);

absl::Status SaveV2(HostOpContext& ctx) {
  const int64_t n = ctx.num_inputs() - 3;
  PX_ASSIGN_OR_RETURN(std::string prefix, ScalarString(ctx, 0, "prefix"));
  PX_RETURN_IF_ERROR(CheckNamesAndSlices(ctx, n));
  const auto& names = ctx.input(1).strings();
  auto writer = CheckpointWriter::Create(prefix);
  if (!writer.ok()) return Annotate(writer.status(), ctx.node().Describe());
  for (int64_t k = 0; k < n; ++k) {
    absl::Status s = (*writer)->Add(names[k], ctx.input(static_cast<int>(3 + k)));
    if (!s.ok()) return Annotate(s, ctx.node().Describe());
  }
  absl::Status s = (*writer)->Finish();
  if (!s.ok()) return Annotate(s, ctx.node().Describe());
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("SaveV2", SaveV2);

absl::Status MergeV2Checkpoints(HostOpContext& ctx) {
  const Tensor& sources = ctx.input(0);
  if (sources.dtype() != DataType::kString || sources.dims() != 1) {
    return ctx.InvalidArgument(absl::StrCat("checkpoint_prefixes must be a string vector, got ",
                                            sources.DebugString(0)));
  }
  PX_ASSIGN_OR_RETURN(std::string destination, ScalarString(ctx, 1, "destination_prefix"));
  PX_ASSIGN_OR_RETURN(bool delete_old_dirs, GetAttrBool(ctx.node(), "delete_old_dirs"));
  bool allow_missing = false;
  if (auto v = GetAttrBool(ctx.node(), "allow_missing_files"); v.ok()) allow_missing = *v;
  absl::Status s = MergeCheckpoints(sources.strings(), destination, delete_old_dirs, allow_missing);
  if (!s.ok()) return Annotate(s, ctx.node().Describe());
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("MergeV2Checkpoints", MergeV2Checkpoints);

absl::Status ShardedFilename(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(std::string basename, ScalarString(ctx, 0, "basename"));
  PX_ASSIGN_OR_RETURN(int32_t shard, ScalarInt32(ctx, 1, "shard"));
  PX_ASSIGN_OR_RETURN(int32_t num_shards, ScalarInt32(ctx, 2, "num_shards"));
  if (num_shards < 1 || shard < 0 || shard >= num_shards) {
    return ctx.InvalidArgument(absl::StrCat("shard ", shard, " is not in [0, num_shards = ", num_shards, ")"));
  }
  ctx.set_output(0, Tensor::FromStrings({}, {absl::StrFormat("%s-%05d-of-%05d", basename, shard, num_shards)}));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("ShardedFilename", ShardedFilename);

absl::Status ShardedFilespec(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(std::string basename, ScalarString(ctx, 0, "basename"));
  PX_ASSIGN_OR_RETURN(int32_t num_shards, ScalarInt32(ctx, 1, "num_shards"));
  if (num_shards < 1) return ctx.InvalidArgument(absl::StrCat("num_shards must be positive, got ", num_shards));
  ctx.set_output(0, Tensor::FromStrings({}, {absl::StrFormat("%s-\?\?\?\?\?-of-%05d", basename, num_shards)}));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("ShardedFilespec", ShardedFilespec);

}  // namespace
}  // namespace plexus

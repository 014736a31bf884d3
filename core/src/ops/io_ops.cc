// Checkpoint I/O ops, as TensorFlow 1 Savers and TensorFlow 2 SavedModels
// use them: RestoreV2, SaveV2, MergeV2Checkpoints and the shard file-name
// helpers. Their schemas and shape functions; the host kernels over the
// tensor-bundle reader and writer are in host_kernels/io.cc.
#include "absl/strings/str_cat.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

absl::Status ScalarOutput(InferenceContext& ctx) {
  ctx.set_output(0, PartialShape(Shape{}));
  return absl::OkStatus();
}

// Checks that input `i` has rank `rank` when its rank is known.
absl::Status CheckRank(InferenceContext& ctx, int i, int64_t rank, absl::string_view name) {
  const PartialShape& s = ctx.input(i);
  if (s.rank_known() && s.rank() != rank) {
    return ctx.Error(absl::StrCat(name, " must have rank ", rank, ", got shape ", s.ToString()));
  }
  return absl::OkStatus();
}

// prefix scalar; tensor_names and shape_and_slices vectors of `n` entries.
absl::Status CheckSaveRestoreInputs(InferenceContext& ctx, int64_t n) {
  PX_RETURN_IF_ERROR(CheckRank(ctx, 0, 0, "prefix"));
  PX_RETURN_IF_ERROR(CheckRank(ctx, 1, 1, "tensor_names"));
  PX_RETURN_IF_ERROR(CheckRank(ctx, 2, 1, "shape_and_slices"));
  for (int i = 1; i <= 2; ++i) {
    const PartialShape& s = ctx.input(i);
    if (s.rank_known() && s.dim(0) >= 0 && s.dim(0) != n) {
      return ctx.Error(absl::StrCat(i == 1 ? "tensor_names" : "shape_and_slices", " has ", s.dim(0),
                                    " entries but dtypes lists ", n));
    }
  }
  return absl::OkStatus();
}

int64_t NumDtypes(const Node& node) {
  const tf::AttrValue* dtypes = node.FindAttr("dtypes");
  return dtypes == nullptr ? 0 : dtypes->list().type_size();
}

PX_REGISTER_OP(OpDefBuilder("RestoreV2")
                   .Input("prefix: string")
                   .Input("tensor_names: string")
                   .Input("shape_and_slices: string")
                   .Output("tensors: dtypes")
                   .Attr("dtypes: list(type) >= 1")
                   .SetIsStateful()
                   .SetShapeFn([](InferenceContext& ctx) {
                     PX_RETURN_IF_ERROR(CheckSaveRestoreInputs(ctx, NumDtypes(ctx.node())));
                     for (int i = 0; i < ctx.num_outputs(); ++i) ctx.set_output(i, PartialShape::Unknown());
                     return absl::OkStatus();
                   }));

PX_REGISTER_OP(OpDefBuilder("SaveV2")
                   .Input("prefix: string")
                   .Input("tensor_names: string")
                   .Input("shape_and_slices: string")
                   .Input("tensors: dtypes")
                   .Attr("dtypes: list(type) >= 1")
                   .SetIsStateful()
                   .SetShapeFn([](InferenceContext& ctx) {
                     return CheckSaveRestoreInputs(ctx, NumDtypes(ctx.node()));
                   }));

PX_REGISTER_OP(OpDefBuilder("MergeV2Checkpoints")
                   .Input("checkpoint_prefixes: string")
                   .Input("destination_prefix: string")
                   .Attr("delete_old_dirs: bool = true")
                   .Attr("allow_missing_files: bool = false")
                   .SetIsStateful()
                   .SetShapeFn([](InferenceContext& ctx) {
                     PX_RETURN_IF_ERROR(CheckRank(ctx, 0, 1, "checkpoint_prefixes"));
                     return CheckRank(ctx, 1, 0, "destination_prefix");
                   }));

PX_REGISTER_OP(OpDefBuilder("ShardedFilename")
                   .Input("basename: string")
                   .Input("shard: int32")
                   .Input("num_shards: int32")
                   .Output("filename: string")
                   .SetShapeFn(ScalarOutput));

PX_REGISTER_OP(OpDefBuilder("ShardedFilespec")
                   .Input("basename: string")
                   .Input("num_shards: int32")
                   .Output("filename: string")
                   .SetShapeFn(ScalarOutput));

}  // namespace
}  // namespace plexus

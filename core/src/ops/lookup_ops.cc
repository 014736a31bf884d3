// Lookup tables (tf.lookup): HashTableV2 makes a session resource mapping
// keys to scalar values; initializers fill it once (from tensors, or from a
// text file such as a SavedModel's vocabulary asset); LookupTableFindV2 maps
// keys through it. MutableHashTableV2 makes one that LookupTableInsertV2,
// LookupTableRemoveV2 and LookupTableImportV2 change (Keras's adapt() state,
// which its SavedModels save and restore). Their schemas and shape functions; they are host ops,
// with kernels (and the table resource) in host_kernels/lookup_table*.cc.
#include "absl/strings/str_cat.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

absl::Status ScalarOut(InferenceContext& ctx) {
  ctx.set_output(0, PartialShape(Shape{}));
  return absl::OkStatus();
}
absl::Status NoOutputs(InferenceContext&) { return absl::OkStatus(); }

// Keys and values of an initializer: vectors of one length.
absl::Status InitializerShape(InferenceContext& ctx) {
  const PartialShape& keys = ctx.input(1);
  const PartialShape& values = ctx.input(2);
  if (keys.rank_known() && keys.rank() != 1) {
    return ctx.Error(absl::StrCat("keys must be a vector, got shape ", keys.ToString()));
  }
  if (keys.rank_known() && values.rank_known() && values.rank() == 1 && keys.dim(0) >= 0 &&
      values.dim(0) >= 0 && keys.dim(0) != values.dim(0)) {
    return ctx.Error(absl::StrCat("keys and values must have the same size, got ", keys.ToString(), " and ",
                                  values.ToString()));
  }
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("HashTableV2")
                   .Output("table_handle: resource")
                   .Attr("container: string = \"\"")
                   .Attr("shared_name: string = \"\"")
                   .Attr("use_node_name_sharing: bool = false")
                   .Attr("key_dtype: type")
                   .Attr("value_dtype: type")
                   .SetIsStateful()
                   .SetShapeFn(ScalarOut));

PX_REGISTER_OP(OpDefBuilder("MutableHashTableV2")
                   .Output("table_handle: resource")
                   .Attr("container: string = \"\"")
                   .Attr("shared_name: string = \"\"")
                   .Attr("use_node_name_sharing: bool = false")
                   .Attr("key_dtype: type")
                   .Attr("value_dtype: type")
                   .SetIsStateful()
                   .SetShapeFn(ScalarOut));

PX_REGISTER_OP(OpDefBuilder("LookupTableInsertV2")
                   .Input("table_handle: resource")
                   .Input("keys: Tin")
                   .Input("values: Tout")
                   .Attr("Tin: type")
                   .Attr("Tout: type")
                   .SetIsStateful()
                   .SetShapeFn(NoOutputs));

PX_REGISTER_OP(OpDefBuilder("LookupTableRemoveV2")
                   .Input("table_handle: resource")
                   .Input("keys: Tin")
                   .Attr("Tin: type")
                   .SetIsStateful()
                   .SetShapeFn(NoOutputs));

PX_REGISTER_OP(OpDefBuilder("LookupTableFindV2")
                   .Input("table_handle: resource")
                   .Input("keys: Tin")
                   .Input("default_value: Tout")
                   .Output("values: Tout")
                   .Attr("Tin: type")
                   .Attr("Tout: type")
                   .SetIsStateful()
                   .SetShapeFn([](InferenceContext& ctx) {
                     // Scalar values: one per key.
                     ctx.set_output(0, ctx.input(1));
                     return absl::OkStatus();
                   }));

PX_REGISTER_OP(OpDefBuilder("LookupTableImportV2")
                   .Input("table_handle: resource")
                   .Input("keys: Tin")
                   .Input("values: Tout")
                   .Attr("Tin: type")
                   .Attr("Tout: type")
                   .SetIsStateful()
                   .SetShapeFn(NoOutputs));

PX_REGISTER_OP(OpDefBuilder("InitializeTableV2")
                   .Input("table_handle: resource")
                   .Input("keys: Tkey")
                   .Input("values: Tval")
                   .Attr("Tkey: type")
                   .Attr("Tval: type")
                   .SetIsStateful()
                   .SetShapeFn(InitializerShape));

PX_REGISTER_OP(OpDefBuilder("InitializeTableFromTextFileV2")
                   .Input("table_handle: resource")
                   .Input("filename: string")
                   .Attr("key_index: int >= -2")
                   .Attr("value_index: int >= -2")
                   .Attr("vocab_size: int >= -1 = -1")
                   .Attr("delimiter: string = \"\t\"")  // a tab (the spec parser does not unescape)
                   .Attr("offset: int = 0")
                   .SetIsStateful()
                   .SetShapeFn([](InferenceContext& ctx) {
                     const PartialShape& filename = ctx.input(1);
                     if (filename.rank_known() && filename.rank() != 0) {
                       return ctx.Error(absl::StrCat("filename must be a scalar, got shape ", filename.ToString()));
                     }
                     return absl::OkStatus();
                   }));

PX_REGISTER_OP(OpDefBuilder("LookupTableSizeV2")
                   .Input("table_handle: resource")
                   .Output("size: int64")
                   .SetIsStateful()
                   .SetShapeFn(ScalarOut));

PX_REGISTER_OP(OpDefBuilder("LookupTableExportV2")
                   .Input("table_handle: resource")
                   .Output("keys: Tkeys")
                   .Output("values: Tvalues")
                   .Attr("Tkeys: type")
                   .Attr("Tvalues: type")
                   .SetIsStateful()
                   .SetShapeFn([](InferenceContext& ctx) {
                     ctx.set_output(0, PartialShape(Shape{-1}));
                     ctx.set_output(1, PartialShape(Shape{-1}));
                     return absl::OkStatus();
                   }));

}  // namespace
}  // namespace plexus

// String and parsing ops: ParseExample / ParseExampleV2 (tf.Example protos
// to dense tensors), StringJoin and StaticRegexFullMatch. Their schemas and
// shape functions; they are host ops, with kernels in
// host_kernels/parsing.cc (which also holds the host fallbacks for string
// Const, Pack and Select).
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/parsing_util.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

using parsing_util::LayoutOf;
using parsing_util::ParseLayout;
using parsing_util::ShapeListAttr;

// --- ParseExample / ParseExampleV2 -------------------------------------------

absl::Status ParseExampleShape(InferenceContext& ctx) {
  const Node& node = ctx.node();
  PX_ASSIGN_OR_RETURN(ParseLayout l, LayoutOf(node));
  PX_ASSIGN_OR_RETURN(std::vector<PartialShape> dense_shapes, ShapeListAttr(node, "dense_shapes"));
  if (static_cast<int>(dense_shapes.size()) != l.num_dense) {
    return ctx.Error(absl::StrCat("dense_shapes lists ", dense_shapes.size(), " shapes for ", l.num_dense,
                                  " dense features"));
  }
  const PartialShape& serialized = ctx.input(0);
  if (!l.v2 && serialized.rank_known() && serialized.rank() != 1) {
    return ctx.Error(absl::StrCat("serialized must be a vector, got shape ", serialized.ToString()));
  }
  // Batch dimensions: V1 one, V2 those of `serialized`.
  const int64_t batch_rank = l.v2 ? serialized.rank() : 1;
  for (int i = 0; i < l.num_sparse; ++i) {
    ctx.set_output(i, PartialShape(Shape{-1, batch_rank < 0 ? -1 : batch_rank + 1}));
    ctx.set_output(l.num_sparse + i, PartialShape(Shape{-1}));
    ctx.set_output(2 * l.num_sparse + i, PartialShape(Shape{batch_rank < 0 ? -1 : batch_rank + 1}));
  }
  for (int i = 0; i < l.num_dense; ++i) {
    PartialShape out;
    if (serialized.rank_known() && dense_shapes[i].rank_known()) {
      Shape dims = serialized.dims();
      for (int64_t d : dense_shapes[i].dims()) dims.push_back(d);
      out = PartialShape(dims);
    }
    ctx.set_output(l.dense_output + i, out);
  }
  for (int i = l.dense_output + l.num_dense; i < ctx.num_outputs(); ++i) {
    ctx.set_output(i, PartialShape(Shape{-1}));
  }
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("ParseExample")
                   .Input("serialized: string")
                   .Input("names: string")
                   .Input("sparse_keys: Nsparse * string")
                   .Input("dense_keys: Ndense * string")
                   .Input("dense_defaults: Tdense")
                   .Output("sparse_indices: Nsparse * int64")
                   .Output("sparse_values: sparse_types")
                   .Output("sparse_shapes: Nsparse * int64")
                   .Output("dense_values: Tdense")
                   .Attr("Nsparse: int >= 0")
                   .Attr("Ndense: int >= 0")
                   .Attr("sparse_types: list(type) >= 0")
                   .Attr("Tdense: list(type) >= 0")
                   .Attr("dense_shapes: list(shape) >= 0")
                   .SetShapeFn(ParseExampleShape));

PX_REGISTER_OP(OpDefBuilder("ParseExampleV2")
                   .Input("serialized: string")
                   .Input("names: string")
                   .Input("sparse_keys: string")
                   .Input("dense_keys: string")
                   .Input("ragged_keys: string")
                   .Input("dense_defaults: Tdense")
                   .Output("sparse_indices: num_sparse * int64")
                   .Output("sparse_values: sparse_types")
                   .Output("sparse_shapes: num_sparse * int64")
                   .Output("dense_values: Tdense")
                   .Output("ragged_values: ragged_value_types")
                   .Output("ragged_row_splits: ragged_split_types")
                   .Attr("Tdense: list(type) >= 0")
                   .Attr("num_sparse: int >= 0")
                   .Attr("sparse_types: list(type) >= 0")
                   .Attr("ragged_value_types: list(type) >= 0")
                   .Attr("ragged_split_types: list(type) >= 0")
                   .Attr("dense_shapes: list(shape) >= 0")
                   .SetShapeFn(ParseExampleShape));

// --- StringJoin ----------------------------------------------------------------

PX_REGISTER_OP(OpDefBuilder("StringJoin")
                   .Input("inputs: N * string")
                   .Output("output: string")
                   .Attr("N: int >= 0")
                   .Attr("separator: string = \"\"")
                   .SetShapeFn([](InferenceContext& ctx) {
                     // Scalars broadcast; the other inputs share one shape.
                     PartialShape out(Shape{});
                     for (int i = 0; i < ctx.num_inputs(); ++i) {
                       const PartialShape& s = ctx.input(i);
                       if (!s.rank_known()) {
                         out = PartialShape::Unknown();
                         break;
                       }
                       if (s.rank() == 0) continue;
                       if (out.rank_known() && out.rank() > 0) {
                         if (out.rank() != s.rank()) {
                           return ctx.Error(absl::StrCat("inputs have shapes ", out.ToString(), " and ",
                                                         s.ToString(), "; non-scalar inputs must match"));
                         }
                         Shape dims = out.dims();
                         for (int64_t d = 0; d < s.rank(); ++d) {
                           if (dims[d] < 0) dims[d] = s.dim(d);
                           else if (s.dim(d) >= 0 && s.dim(d) != dims[d]) {
                             return ctx.Error(absl::StrCat("inputs have shapes ", out.ToString(), " and ",
                                                           s.ToString(), "; non-scalar inputs must match"));
                           }
                         }
                         out = PartialShape(dims);
                       } else {
                         out = s;
                       }
                     }
                     ctx.set_output(0, out);
                     return absl::OkStatus();
                   }));

// --- StaticRegexFullMatch --------------------------------------------------------

PX_REGISTER_OP(OpDefBuilder("StaticRegexFullMatch")
                   .Input("input: string")
                   .Output("output: bool")
                   .Attr("pattern: string")
                   .SetShapeFn(UnchangedShape));

}  // namespace
}  // namespace plexus

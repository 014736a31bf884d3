// Math ops that the core runs on the host: InTopK and InTopKV2, Cross,
// EuclideanNorm, CumulativeLogsumexp, ApproximateEqual, Xlogy, Xdivy,
// Xlog1py, Erfinv, Ndtri, and the host fallbacks (used where a device's
// plugin has no kernel) AddN, AccumulateNV2 and ClipByValue. TensorFlow's
// names, attributes, type lists and shape functions; kernels in
// host_kernels/in_top_k.cc, cross.cc, euclidean_norm.cc,
// cumulative_logsumexp.cc, special_math.cc, add_n.cc and clip.cc.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/partial_shapes.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

constexpr char kNumberTypes[] =
    "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, uint32, uint64, int64, complex64, "
    "complex128}";

// predictions [batch, classes], targets [batch]: one bool per row.
absl::Status InTopKShape(InferenceContext& ctx) {
  const PartialShape& p = ctx.input(0);
  const PartialShape& t = ctx.input(1);
  if (p.rank_known() && p.rank() != 2) {
    return ctx.Error(absl::StrCat("predictions must be 2-dimensional, got shape ", p.ToString()));
  }
  if (t.rank_known() && t.rank() != 1) {
    return ctx.Error(absl::StrCat("targets must be 1-dimensional, got shape ", t.ToString()));
  }
  const int64_t a = p.rank_known() ? p.dim(0) : -1;
  const int64_t b = t.rank_known() ? t.dim(0) : -1;
  if (a >= 0 && b >= 0 && a != b) {
    return ctx.Error(absl::StrCat("First dimension of predictions ", a, " must match length of targets ", b));
  }
  ctx.set_output(0, PartialShape(Shape{a >= 0 ? a : b}));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("InTopK")
                   .Input("predictions: float")
                   .Input("targets: T")
                   .Output("precision: bool")
                   .Attr("k: int")
                   .Attr("T: {int32, int64} = DT_INT32")
                   .SetShapeFn(InTopKShape));

PX_REGISTER_OP(OpDefBuilder("InTopKV2")
                   .Input("predictions: float")
                   .Input("targets: T")
                   .Input("k: T")
                   .Output("precision: bool")
                   .Attr("T: {int32, int64} = DT_INT32")
                   .SetShapeFn([](InferenceContext& ctx) {
                     if (ctx.input(2).rank_known() && ctx.input(2).rank() != 0) {
                       return ctx.Error(absl::StrCat("k must be 0-D, got shape ", ctx.input(2).ToString()));
                     }
                     return InTopKShape(ctx);
                   }));

PX_REGISTER_OP(OpDefBuilder("Cross")
                   .Input("a: T")
                   .Input("b: T")
                   .Output("product: T")
                   .Attr(kRealTypes)
                   .SetShapeFn([](InferenceContext& ctx) {
                     auto merged = MergeShapes(ctx.input(0), ctx.input(1));
                     if (!merged.ok()) return ctx.Error(merged.status().message());
                     if (merged->rank_known()) {
                       if (merged->rank() < 1) return ctx.Error("Input must be at least 1D: []");
                       const int64_t last = merged->dim(merged->rank() - 1);
                       if (last >= 0 && last != 3) {
                         return ctx.Error(absl::StrCat("Dimension must be 3 but is ", last));
                       }
                     }
                     ctx.set_output(0, *merged);
                     return absl::OkStatus();
                   }));

PX_REGISTER_OP(OpDefBuilder("EuclideanNorm")
                   .Input("input: T")
                   .Input("reduction_indices: Tidx")
                   .Output("output: T")
                   .Attr("keep_dims: bool = false")
                   .Attr(kNumberTypes)
                   .Attr("Tidx: {int32, int64} = DT_INT32")
                   .SetShapeFn(ReductionShape));

PX_REGISTER_OP(OpDefBuilder("CumulativeLogsumexp")
                   .Input("x: T")
                   .Input("axis: Tidx")
                   .Output("out: T")
                   .Attr("exclusive: bool = false")
                   .Attr("reverse: bool = false")
                   .Attr("T: {bfloat16, half, float, double}")
                   .Attr("Tidx: {int32, int64} = DT_INT32")
                   .SetShapeFn([](InferenceContext& ctx) {
                     const PartialShape& axis = ctx.input(1);
                     if (axis.rank_known() && axis.rank() != 0) {
                       return ctx.Error(absl::StrCat("ScanOp: axis must be a scalar, not ", axis.ToString()));
                     }
                     std::vector<int64_t> a;
                     const PartialShape& in = ctx.input(0);
                     if (in.rank_known() && ReadIntValues(ctx.input_value(1), &a) && a.size() == 1 &&
                         (a[0] < -in.rank() || a[0] >= in.rank())) {
                       return ctx.Error(absl::StrCat("ScanOp: Expected scan axis in the range [", -in.rank(), ", ",
                                                     in.rank(), "), but got ", a[0]));
                     }
                     ctx.set_output(0, in);
                     return absl::OkStatus();
                   }));

PX_REGISTER_OP(OpDefBuilder("ApproximateEqual")
                   .Input("x: T")
                   .Input("y: T")
                   .Output("z: bool")
                   .Attr(kNumberTypes)
                   .Attr("tolerance: float = 0.00001")
                   .SetShapeFn([](InferenceContext& ctx) {
                     auto merged = MergeShapes(ctx.input(0), ctx.input(1));
                     if (!merged.ok()) {
                       return ctx.Error(absl::StrCat("x and y must be of the same shape. x shape: ",
                                                     ctx.input(0).ToString(), ". y shape: ", ctx.input(1).ToString()));
                     }
                     ctx.set_output(0, *merged);
                     return absl::OkStatus();
                   }));

#define PX_X_OP(name)                                                                   \
  PX_REGISTER_OP(OpDefBuilder(name)                                                     \
                     .Input("x: T")                                                     \
                     .Input("y: T")                                                     \
                     .Output("z: T")                                                    \
                     .Attr("T: {half, bfloat16, float, double, complex64, complex128}") \
                     .SetShapeFn(BroadcastShape))
PX_X_OP("Xlogy");
PX_X_OP("Xdivy");
PX_X_OP("Xlog1py");

#define PX_INVERSE_CDF_OP(name)                                 \
  PX_REGISTER_OP(OpDefBuilder(name)                             \
                     .Input("x: T")                             \
                     .Output("y: T")                            \
                     .Attr("T: {bfloat16, half, float, double}") \
                     .SetShapeFn(UnchangedShape))
PX_INVERSE_CDF_OP("Erfinv");
PX_INVERSE_CDF_OP("Ndtri");

// AddN: every input has the one shape; what any knows of it.
absl::Status AddNShape(InferenceContext& ctx) {
  PartialShape out = ctx.input(0);
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    auto merged = MergeShapes(out, ctx.input(i));
    if (!merged.ok()) {
      return ctx.Error(absl::StrCat("Inputs to AddN must have the same shape, got ", ctx.input(0).ToString(),
                                    " and ", ctx.input(i).ToString(), " (input ", i, ")"));
    }
    out = *merged;
  }
  ctx.set_output(0, out);
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("AddN")
                   .Input("inputs: N * T")
                   .Output("sum: T")
                   .Attr("N: int >= 1")
                   .Attr("T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, uint32, uint64, "
                         "int64, complex64, complex128, variant}")
                   .SetShapeFn(AddNShape));

PX_REGISTER_OP(OpDefBuilder("AccumulateNV2")
                   .Input("inputs: N * T")
                   .Output("sum: T")
                   .Attr("N: int >= 1")
                   .Attr(kNumberTypes)
                   .Attr("shape: shape")
                   .SetShapeFn([](InferenceContext& ctx) {
                     PX_RETURN_IF_ERROR(AddNShape(ctx));
                     PX_ASSIGN_OR_RETURN(PartialShape shape, GetAttrShape(ctx.node(), "shape"));
                     auto merged = MergeShapes(ctx.output(0), shape);
                     if (!merged.ok()) return ctx.Error(merged.status().message());
                     ctx.set_output(0, *merged);
                     return absl::OkStatus();
                   }));

PX_REGISTER_OP(OpDefBuilder("ClipByValue")
                   .Input("t: T")
                   .Input("clip_value_min: T")
                   .Input("clip_value_max: T")
                   .Output("output: T")
                   .Attr(kNumberTypes)
                   .SetShapeFn(UnchangedShape));

}  // namespace
}  // namespace plexus

// Gradients of the segment reductions, as TensorFlow's math_grad.py writes
// them. The sorted ops gather each segment's output gradient back to its
// rows: SegmentSum as is, SegmentMean divided by the segment's size, and
// SegmentMax / SegmentMin shared equally between the rows that hold the
// extreme value. UnsortedSegmentSum, UnsortedSegmentMax and
// UnsortedSegmentMin do the same through ids clipped at 0, with rows whose id
// is negative (dropped by the forward op) getting zero. segment_ids and
// num_segments get no gradient. SegmentProd and UnsortedSegmentProd have no
// gradient here yet.
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "passes/gradients/grad_util.h"
#include "plexus/gradients.h"
#include "plexus/status.h"

namespace plexus {
namespace {

using grad::Attrs;
using grad::WithType;

#define PX_G_ASSIGN(lhs, expr) PX_ASSIGN_OR_RETURN(lhs, expr)

// Rows of `params` (axis 0) picked by `ids`.
absl::StatusOr<Endpoint> GatherRows(GradientContext& g, const Endpoint& params, const Endpoint& ids) {
  PX_G_ASSIGN(Endpoint axis, g.Scalar(0, DataType::kInt32));
  return g.Op("GatherV2", {params, ids, axis});
}

// `t` ([num] + ...) reshaped to [num, 1, ..., 1] of rank `rank`, so that it
// broadcasts against a tensor of data's rank.
absl::StatusOr<Endpoint> AsColumn(GradientContext& g, const Endpoint& t, int64_t rank) {
  std::vector<int64_t> dims(static_cast<size_t>(rank), 1);
  dims[0] = -1;
  PX_G_ASSIGN(Endpoint shape, g.IntVector(dims));
  return g.Op("Reshape", {t, shape});
}

// `mask` (bool, ids' shape) broadcast to data's rank.
absl::StatusOr<Endpoint> MaskToRank(GradientContext& g, const Endpoint& mask, int64_t ids_rank, int64_t rank) {
  if (ids_rank == rank) return mask;
  PX_G_ASSIGN(Endpoint ids_shape, g.Op("Shape", {mask}));
  PX_G_ASSIGN(Endpoint ones, g.IntVector(std::vector<int64_t>(static_cast<size_t>(rank - ids_rank), 1)));
  PX_G_ASSIGN(Endpoint axis, g.Scalar(0, DataType::kInt32));
  PX_G_ASSIGN(Endpoint shape, g.Op("ConcatV2", {ids_shape, ones, axis}));
  return g.Op("Reshape", {mask, shape});
}

absl::Status SegmentSumGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], GatherRows(g, *dy[0], op.inputs[1]));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("SegmentSum", SegmentSumGrad);

absl::Status SegmentMeanGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const Endpoint& data = op.inputs[0];
  const Endpoint& ids = op.inputs[1];
  const PartialShape& shape = g.shape(data);
  if (!shape.rank_known()) return absl::UnimplementedError("the gradient of SegmentMean needs data of known rank");
  const DataType t = g.dtype(data);
  PX_G_ASSIGN(Endpoint ids_shape, g.Op("Shape", {ids}));
  PX_G_ASSIGN(Endpoint one, g.Scalar(1, t));
  PX_G_ASSIGN(Endpoint ones, g.Op("Fill", {ids_shape, one}));
  PX_G_ASSIGN(Endpoint counts, g.Op("SegmentSum", {ones, ids}));
  PX_G_ASSIGN(Endpoint counts_column, AsColumn(g, counts, shape.rank()));
  PX_G_ASSIGN(Endpoint scaled, g.Op("Div", {*dy[0], counts_column}));
  PX_G_ASSIGN((*dx)[0], GatherRows(g, scaled, ids));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("SegmentMean", SegmentMeanGrad);

// The rows that hold their segment's extreme value share its gradient.
absl::Status SegmentMinOrMaxGrad(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                 GradientList* dx) {
  const Endpoint& data = op.inputs[0];
  const Endpoint& ids = op.inputs[1];
  const DataType t = g.dtype(data);
  PX_G_ASSIGN(Endpoint gathered, GatherRows(g, op.outputs[0], ids));
  PX_G_ASSIGN(Endpoint selected, g.Op("Equal", {data, gathered}));
  PX_G_ASSIGN(Endpoint selected_t, g.Op("Cast", {selected}, WithType(Attrs(), "DstT", t)));
  PX_G_ASSIGN(Endpoint num_selected, g.Op("SegmentSum", {selected_t, ids}));
  PX_G_ASSIGN(Endpoint weighted, g.Op("Div", {*dy[0], num_selected}));
  PX_G_ASSIGN(Endpoint gathered_grads, GatherRows(g, weighted, ids));
  PX_G_ASSIGN(Endpoint zeros, g.ZerosLike(data));
  PX_G_ASSIGN((*dx)[0], g.Op("SelectV2", {selected, gathered_grads, zeros}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("SegmentMax", SegmentMinOrMaxGrad);
PX_REGISTER_GRADIENT("SegmentMin", SegmentMinOrMaxGrad);

// Rows of `params` picked by `ids` clipped at 0, and where the ids are >= 0
// (TensorFlow's _GatherDropNegatives before its final select).
struct Gathered {
  Endpoint rows;
  Endpoint clipped_ids;
  Endpoint valid;  // bool, ids' shape
};
absl::StatusOr<Gathered> GatherClipped(GradientContext& g, const Endpoint& params, const Endpoint& ids) {
  Gathered out;
  PX_G_ASSIGN(Endpoint zero, g.Scalar(0, g.dtype(ids)));
  PX_G_ASSIGN(out.clipped_ids, g.Op("Maximum", {ids, zero}));
  PX_G_ASSIGN(out.rows, GatherRows(g, params, out.clipped_ids));
  PX_G_ASSIGN(out.valid, g.Op("GreaterEqual", {ids, zero}));
  return out;
}

// UnsortedSegmentSum: dy's rows gathered, zero where the id was negative.
absl::Status UnsortedSegmentSumGrad(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                    GradientList* dx) {
  const Endpoint& data = op.inputs[0];
  const PartialShape& ids_shape = g.shape(op.inputs[1]);
  if (!g.shape(data).rank_known() || !ids_shape.rank_known()) {
    return absl::UnimplementedError("the gradient of UnsortedSegmentSum needs data and segment_ids of known rank");
  }
  PX_G_ASSIGN(Gathered gathered, GatherClipped(g, *dy[0], op.inputs[1]));
  PX_G_ASSIGN(Endpoint valid, MaskToRank(g, gathered.valid, ids_shape.rank(), g.shape(data).rank()));
  PX_G_ASSIGN(Endpoint zeros, g.ZerosLike(gathered.rows));
  PX_G_ASSIGN((*dx)[0], g.Op("SelectV2", {valid, gathered.rows, zeros}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("UnsortedSegmentSum", UnsortedSegmentSumGrad);

absl::Status UnsortedSegmentMinOrMaxGrad(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                         GradientList* dx) {
  const Endpoint& data = op.inputs[0];
  const Endpoint& ids = op.inputs[1];
  const PartialShape& ids_shape = g.shape(ids);
  if (!g.shape(data).rank_known() || !ids_shape.rank_known()) {
    return absl::UnimplementedError(
        absl::StrCat("the gradient of ", op.op, " needs data and segment_ids of known rank"));
  }
  const DataType t = g.dtype(data);
  PX_G_ASSIGN(Gathered outputs, GatherClipped(g, op.outputs[0], ids));
  PX_G_ASSIGN(Endpoint valid, MaskToRank(g, outputs.valid, ids_shape.rank(), g.shape(data).rank()));
  PX_G_ASSIGN(Endpoint equal, g.Op("Equal", {data, outputs.rows}));
  PX_G_ASSIGN(Endpoint selected, g.Op("LogicalAnd", {equal, valid}));
  PX_G_ASSIGN(Endpoint selected_t, g.Op("Cast", {selected}, WithType(Attrs(), "DstT", t)));
  PX_G_ASSIGN(Endpoint num_selected, g.Op("UnsortedSegmentSum", {selected_t, ids, op.inputs[2]}));
  PX_G_ASSIGN(Endpoint weighted, g.Op("Div", {*dy[0], num_selected}));
  PX_G_ASSIGN(Endpoint gathered_grads, GatherRows(g, weighted, outputs.clipped_ids));
  PX_G_ASSIGN(Endpoint zeros, g.ZerosLike(data));
  PX_G_ASSIGN((*dx)[0], g.Op("SelectV2", {selected, gathered_grads, zeros}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("UnsortedSegmentMax", UnsortedSegmentMinOrMaxGrad);
PX_REGISTER_GRADIENT("UnsortedSegmentMin", UnsortedSegmentMinOrMaxGrad);

}  // namespace
}  // namespace plexus

// Gradients of the tensor-scatter family, as TensorFlow's array_grad.py
// writes them. The updates' gradient is dy gathered at the indices (negated
// for Sub); the tensor's is dy itself, except where Update overwrote it
// (zero there). Max and Min share each output's gradient equally between
// the tensor element and the updates that equal the output. indices get no
// gradient.
#include <cstdint>
#include <vector>

#include "passes/gradients/grad_util.h"
#include "plexus/gradients.h"
#include "plexus/status.h"

namespace plexus {
namespace {

using grad::Attrs;
using grad::WithType;

#define PX_G_ASSIGN(lhs, expr) PX_ASSIGN_OR_RETURN(lhs, expr)

// indices as GatherNd and ScatterNd take them (int32 or int64).
absl::StatusOr<Endpoint> GatherableIndices(GradientContext& g, const Endpoint& indices) {
  const DataType t = g.dtype(indices);
  if (t == DataType::kInt32 || t == DataType::kInt64) return indices;
  return g.Op("Cast", {indices}, WithType(Attrs(), "DstT", DataType::kInt32));
}

absl::Status TensorScatterUpdateGrad(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                     GradientList* dx) {
  PX_G_ASSIGN(Endpoint indices, GatherableIndices(g, op.inputs[1]));
  PX_G_ASSIGN(Endpoint zeros, g.ZerosLike(op.inputs[2]));
  PX_G_ASSIGN((*dx)[0], g.Op("TensorScatterUpdate", {*dy[0], indices, zeros}));
  PX_G_ASSIGN((*dx)[2], g.Op("GatherNd", {*dy[0], indices}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("TensorScatterUpdate", TensorScatterUpdateGrad);

absl::Status TensorScatterAddGrad(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                  GradientList* dx) {
  (*dx)[0] = *dy[0];
  PX_G_ASSIGN((*dx)[2], g.Op("GatherNd", {*dy[0], op.inputs[1]}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("TensorScatterAdd", TensorScatterAddGrad);

absl::Status TensorScatterSubGrad(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                  GradientList* dx) {
  (*dx)[0] = *dy[0];
  PX_G_ASSIGN(Endpoint gathered, g.Op("GatherNd", {*dy[0], op.inputs[1]}));
  PX_G_ASSIGN((*dx)[2], g.Op("Neg", {gathered}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("TensorScatterSub", TensorScatterSubGrad);

absl::Status TensorScatterMinOrMaxGrad(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                       GradientList* dx) {
  const Endpoint& x = op.inputs[0];
  const Endpoint& indices = op.inputs[1];
  const Endpoint& y = op.inputs[2];
  const Endpoint& output = op.outputs[0];
  const DataType t = g.dtype(x);
  const AttrMap to_t = WithType(Attrs(), "DstT", t);
  PX_G_ASSIGN(Endpoint x_equal, g.Op("Equal", {x, output}));
  PX_G_ASSIGN(Endpoint x_indicators, g.Op("Cast", {x_equal}, to_t));
  PX_G_ASSIGN(Endpoint y_output, g.Op("GatherNd", {output, indices}));
  PX_G_ASSIGN(Endpoint y_equal, g.Op("Equal", {y, y_output}));
  PX_G_ASSIGN(Endpoint y_indicators, g.Op("Cast", {y_equal}, to_t));
  // How many of the tensor element and the updates equal each output.
  PX_G_ASSIGN(Endpoint y_counts, g.Op("TensorScatterAdd", {x_indicators, indices, y_indicators}));
  PX_G_ASSIGN(Endpoint share, g.Op("Div", {*dy[0], y_counts}));
  PX_G_ASSIGN((*dx)[0], g.Op("Mul", {share, x_indicators}));
  PX_G_ASSIGN(Endpoint y_share, g.Op("GatherNd", {share, indices}));
  PX_G_ASSIGN((*dx)[2], g.Op("Mul", {y_share, y_indicators}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("TensorScatterMax", TensorScatterMinOrMaxGrad);
PX_REGISTER_GRADIENT("TensorScatterMin", TensorScatterMinOrMaxGrad);

}  // namespace
}  // namespace plexus

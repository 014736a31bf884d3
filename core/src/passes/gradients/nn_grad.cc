// Gradients of the neural-network ops: activations, softmax, bias, 2-D and
// 3-D convolutions, pooling, the fused cross-entropy losses, batch
// normalization, L2Loss and LRN. They follow TensorFlow's nn_grad.py and
// math_grad.py, using TensorFlow's own gradient ops (ReluGrad,
// Conv2DBackpropInput, MaxPoolGrad, ...) where TensorFlow does.
//
// _FusedConv2D and _FusedMatMul have no gradient on purpose: the graph
// optimizer creates them after differentiation.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "passes/gradients/grad_util.h"
#include "plexus/gradients.h"
#include "plexus/status.h"

namespace plexus {
namespace {

using grad::AttrBool;
using grad::Attrs;
using grad::AttrString;
using grad::Copy;
using grad::With;

#define PX_G_ASSIGN(lhs, expr) PX_ASSIGN_OR_RETURN(lhs, expr)

// Sum(x, axis=-1, keep_dims=true).
absl::StatusOr<Endpoint> SumLastAxis(GradientContext& g, const Endpoint& x) {
  PX_G_ASSIGN(Endpoint axis, g.IntVector({-1}));
  return g.Op("Sum", {x, axis}, With(Attrs(), "keep_dims", true));
}

// ExpandDims(x, -1): a per-row loss gradient [N] as [N, 1], to broadcast
// against [N, classes].
absl::StatusOr<Endpoint> ExpandLast(GradientContext& g, const Endpoint& x) {
  PX_G_ASSIGN(Endpoint axis, g.Scalar(-1, DataType::kInt32));
  return g.Op("ExpandDims", {x, axis});
}

// ---- Activations -------------------------------------------------------------

// Ops whose gradient is TensorFlow's "*Grad" op of (dy, features or outputs),
// with the forward op's attributes listed in `attrs` copied over.
absl::Status ActivationGradOp(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx,
                              const char* grad_op, bool of_outputs, const std::vector<std::string>& attrs = {}) {
  const Endpoint& arg = of_outputs ? op.outputs[0] : op.inputs[0];
  PX_G_ASSIGN((*dx)[0], g.Op(grad_op, {*dy[0], arg}, Copy(Attrs(), op, attrs)));
  return absl::OkStatus();
}
absl::Status ReluGradFn(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  // TensorFlow passes the output; relu(x) > 0 exactly where x > 0.
  return ActivationGradOp(g, op, dy, dx, "ReluGrad", /*of_outputs=*/true);
}
absl::Status Relu6GradFn(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  return ActivationGradOp(g, op, dy, dx, "Relu6Grad", /*of_outputs=*/false);
}
absl::Status EluGradFn(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  return ActivationGradOp(g, op, dy, dx, "EluGrad", /*of_outputs=*/true);
}
absl::Status SeluGradFn(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  return ActivationGradOp(g, op, dy, dx, "SeluGrad", /*of_outputs=*/true);
}
absl::Status LeakyReluGradFn(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  return ActivationGradOp(g, op, dy, dx, "LeakyReluGrad", /*of_outputs=*/false, {"alpha"});
}
absl::Status SoftplusGradFn(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  return ActivationGradOp(g, op, dy, dx, "SoftplusGrad", /*of_outputs=*/false);
}
PX_REGISTER_GRADIENT("Relu", ReluGradFn);
PX_REGISTER_GRADIENT("Relu6", Relu6GradFn);
PX_REGISTER_GRADIENT("Elu", EluGradFn);
PX_REGISTER_GRADIENT("Selu", SeluGradFn);
PX_REGISTER_GRADIENT("LeakyRelu", LeakyReluGradFn);
PX_REGISTER_GRADIENT("Softplus", SoftplusGradFn);
absl::Status SoftsignGradFn(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  return ActivationGradOp(g, op, dy, dx, "SoftsignGrad", /*of_outputs=*/false);
}
PX_REGISTER_GRADIENT("Softsign", SoftsignGradFn);

// Gelu, composed from elementwise ops.
//   exact:  gelu(x) = x * Phi(x), Phi(x) = 0.5 * (1 + erf(x / sqrt(2)));
//           gelu'(x) = Phi(x) + x * exp(-x^2 / 2) / sqrt(2 pi).
//   tanh:   gelu(x) = 0.5 x (1 + t), t = tanh(c (x + 0.044715 x^3)),
//           c = sqrt(2 / pi);
//           gelu'(x) = 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 * 0.044715 x^2).
absl::Status GeluGradFn(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const Endpoint& x = op.inputs[0];
  const DataType t = g.dtype(x);
  PX_G_ASSIGN(Endpoint half, g.Scalar(0.5, t));
  PX_G_ASSIGN(Endpoint one, g.Scalar(1.0, t));
  PX_G_ASSIGN(Endpoint x2, g.Op("Square", {x}));
  Endpoint derivative;
  if (AttrBool(op, "approximate", true)) {
    const double k = 0.044715;
    PX_G_ASSIGN(Endpoint c, g.Scalar(std::sqrt(2.0 / M_PI), t));
    PX_G_ASSIGN(Endpoint kk, g.Scalar(k, t));
    PX_G_ASSIGN(Endpoint k3, g.Scalar(3 * k, t));
    // u = c * (x + k x^3)
    PX_G_ASSIGN(Endpoint x3, g.Op("Mul", {x2, x}));
    PX_G_ASSIGN(Endpoint kx3, g.Op("Mul", {kk, x3}));
    PX_G_ASSIGN(Endpoint inner, g.Op("AddV2", {x, kx3}));
    PX_G_ASSIGN(Endpoint u, g.Op("Mul", {c, inner}));
    PX_G_ASSIGN(Endpoint th, g.Op("Tanh", {u}));
    // 0.5 (1 + t)
    PX_G_ASSIGN(Endpoint one_t, g.Op("AddV2", {one, th}));
    PX_G_ASSIGN(Endpoint left, g.Op("Mul", {half, one_t}));
    // 0.5 x (1 - t^2) c (1 + 3k x^2)
    PX_G_ASSIGN(Endpoint t2, g.Op("Square", {th}));
    PX_G_ASSIGN(Endpoint sech2, g.Op("Sub", {one, t2}));
    PX_G_ASSIGN(Endpoint k3x2, g.Op("Mul", {k3, x2}));
    PX_G_ASSIGN(Endpoint du, g.Op("AddV2", {one, k3x2}));
    PX_G_ASSIGN(Endpoint cdu, g.Op("Mul", {c, du}));
    PX_G_ASSIGN(Endpoint hx, g.Op("Mul", {half, x}));
    PX_G_ASSIGN(Endpoint hxs, g.Op("Mul", {hx, sech2}));
    PX_G_ASSIGN(Endpoint right, g.Op("Mul", {hxs, cdu}));
    PX_G_ASSIGN(derivative, g.Op("AddV2", {left, right}));
  } else {
    PX_G_ASSIGN(Endpoint rsqrt2, g.Scalar(1.0 / std::sqrt(2.0), t));
    PX_G_ASSIGN(Endpoint norm, g.Scalar(1.0 / std::sqrt(2.0 * M_PI), t));
    PX_G_ASSIGN(Endpoint xs, g.Op("Mul", {x, rsqrt2}));
    PX_G_ASSIGN(Endpoint erf, g.Op("Erf", {xs}));
    PX_G_ASSIGN(Endpoint one_erf, g.Op("AddV2", {one, erf}));
    PX_G_ASSIGN(Endpoint cdf, g.Op("Mul", {half, one_erf}));
    PX_G_ASSIGN(Endpoint hx2, g.Op("Mul", {half, x2}));
    PX_G_ASSIGN(Endpoint nhx2, g.Op("Neg", {hx2}));
    PX_G_ASSIGN(Endpoint e, g.Op("Exp", {nhx2}));
    PX_G_ASSIGN(Endpoint pdf, g.Op("Mul", {norm, e}));
    PX_G_ASSIGN(Endpoint xpdf, g.Op("Mul", {x, pdf}));
    PX_G_ASSIGN(derivative, g.Op("AddV2", {cdf, xpdf}));
  }
  PX_G_ASSIGN((*dx)[0], g.Op("Mul", {*dy[0], derivative}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Gelu", GeluGradFn);

// y = softmax(x): dx = (dy - sum(dy * y, -1)) * y.
absl::Status SoftmaxGradFn(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const Endpoint& y = op.outputs[0];
  PX_G_ASSIGN(Endpoint dyy, g.Op("Mul", {*dy[0], y}));
  PX_G_ASSIGN(Endpoint sum, SumLastAxis(g, dyy));
  PX_G_ASSIGN(Endpoint diff, g.Op("Sub", {*dy[0], sum}));
  PX_G_ASSIGN((*dx)[0], g.Op("Mul", {diff, y}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Softmax", SoftmaxGradFn);

// y = log_softmax(x): dx = dy - exp(y) * sum(dy, -1).
absl::Status LogSoftmaxGradFn(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN(Endpoint softmax, g.Op("Exp", {op.outputs[0]}));
  PX_G_ASSIGN(Endpoint sum, SumLastAxis(g, *dy[0]));
  PX_G_ASSIGN(Endpoint prod, g.Op("Mul", {softmax, sum}));
  PX_G_ASSIGN((*dx)[0], g.Op("Sub", {*dy[0], prod}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("LogSoftmax", LogSoftmaxGradFn);

// ---- Bias ----------------------------------------------------------------------

absl::Status BiasAddGradFn(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  (*dx)[0] = dy[0];
  PX_G_ASSIGN((*dx)[1], g.Op("BiasAddGrad", {*dy[0]}, Copy(Attrs(), op, {"data_format"})));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("BiasAdd", BiasAddGradFn);


// ---- Convolutions -----------------------------------------------------------------

absl::Status ConvGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx,
                      const char* input_op, const char* filter_op, const std::vector<std::string>& attrs) {
  const Endpoint& input = op.inputs[0];
  const Endpoint& filter = op.inputs[1];
  PX_G_ASSIGN(Endpoint input_shape, g.ShapeOf(input));
  PX_G_ASSIGN(Endpoint filter_shape, g.ShapeOf(filter));
  PX_G_ASSIGN((*dx)[0], g.Op(input_op, {input_shape, filter, *dy[0]}, Copy(Attrs(), op, attrs)));
  PX_G_ASSIGN((*dx)[1], g.Op(filter_op, {input, filter_shape, *dy[0]}, Copy(Attrs(), op, attrs)));
  return absl::OkStatus();
}
absl::Status Conv2DGradFn(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  return ConvGrad(g, op, dy, dx, "Conv2DBackpropInput", "Conv2DBackpropFilter",
                  {"strides", "padding", "explicit_paddings", "dilations", "data_format", "use_cudnn_on_gpu"});
}
absl::Status DepthwiseConv2dGradFn(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                   GradientList* dx) {
  return ConvGrad(g, op, dy, dx, "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter",
                  {"strides", "padding", "explicit_paddings", "dilations", "data_format"});
}
PX_REGISTER_GRADIENT("Conv2D", Conv2DGradFn);
PX_REGISTER_GRADIENT("DepthwiseConv2dNative", DepthwiseConv2dGradFn);

const std::vector<std::string> kConv3DAttrs = {"strides", "padding", "data_format", "dilations"};
absl::Status Conv3DGradFn(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  return ConvGrad(g, op, dy, dx, "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2", kConv3DAttrs);
}
PX_REGISTER_GRADIENT("Conv3D", Conv3DGradFn);

// The gradients of Conv3D's gradients (TensorFlow's nn_grad.py): each is
// linear in its two tensor inputs, so its gradient wrt one is the other
// gradient op or Conv3D itself applied to dy.
absl::Status Conv3DBackpropInputGradFn(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                       GradientList* dx) {
  const Endpoint& filter = op.inputs[1];
  const Endpoint& out_backprop = op.inputs[2];
  PX_G_ASSIGN(Endpoint filter_shape, g.ShapeOf(filter));
  PX_G_ASSIGN((*dx)[1], g.Op("Conv3DBackpropFilterV2", {*dy[0], filter_shape, out_backprop},
                             Copy(Attrs(), op, kConv3DAttrs)));
  PX_G_ASSIGN((*dx)[2], g.Op("Conv3D", {*dy[0], filter}, Copy(Attrs(), op, kConv3DAttrs)));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Conv3DBackpropInputV2", Conv3DBackpropInputGradFn);

absl::Status Conv3DBackpropFilterGradFn(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                        GradientList* dx) {
  const Endpoint& input = op.inputs[0];
  const Endpoint& out_backprop = op.inputs[2];
  PX_G_ASSIGN(Endpoint input_shape, g.ShapeOf(input));
  PX_G_ASSIGN((*dx)[0], g.Op("Conv3DBackpropInputV2", {input_shape, *dy[0], out_backprop},
                             Copy(Attrs(), op, kConv3DAttrs)));
  PX_G_ASSIGN((*dx)[2], g.Op("Conv3D", {input, *dy[0]}, Copy(Attrs(), op, kConv3DAttrs)));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Conv3DBackpropFilterV2", Conv3DBackpropFilterGradFn);

// ---- Pooling -------------------------------------------------------------------------

absl::Status MaxPoolGradFn(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], g.Op("MaxPoolGrad", {op.inputs[0], op.outputs[0], *dy[0]},
                             Copy(Attrs(), op, {"ksize", "strides", "padding", "explicit_paddings", "data_format"})));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("MaxPool", MaxPoolGradFn);

absl::Status AvgPoolGradFn(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN(Endpoint shape, g.ShapeOf(op.inputs[0]));
  PX_G_ASSIGN((*dx)[0], g.Op("AvgPoolGrad", {shape, *dy[0]},
                             Copy(Attrs(), op, {"ksize", "strides", "padding", "data_format"})));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("AvgPool", AvgPoolGradFn);

// ---- Losses --------------------------------------------------------------------------

// The gradient of the fused cross entropies wrt the logits:
//   backprop * dloss[..., None]  (backprop = softmax(logits) - labels)
// plus, when the backprop output itself is differentiated (TensorFlow's
// second-order term), the softmax Jacobian applied to its gradient:
//   (dbackprop - sum(dbackprop * softmax, -1)) * softmax.
absl::StatusOr<std::optional<Endpoint>> CrossEntropyLogitsGrad(GradientContext& g, const GradientOp& op,
                                                                 const GradientList& dy) {
  std::optional<Endpoint> result;
  if (dy[0].has_value()) {
    PX_G_ASSIGN(Endpoint dloss, ExpandLast(g, *dy[0]));
    PX_G_ASSIGN(result, g.Op("Mul", {dloss, op.outputs[1]}));
  }
  if (dy[1].has_value()) {
    PX_G_ASSIGN(Endpoint softmax, g.Op("Softmax", {op.inputs[0]}));
    PX_G_ASSIGN(Endpoint prod, g.Op("Mul", {*dy[1], softmax}));
    PX_G_ASSIGN(Endpoint sum, SumLastAxis(g, prod));
    PX_G_ASSIGN(Endpoint diff, g.Op("Sub", {*dy[1], sum}));
    PX_G_ASSIGN(Endpoint second, g.Op("Mul", {diff, softmax}));
    if (result.has_value()) {
      PX_G_ASSIGN(result, g.Add(*result, second));
    } else {
      result = second;
    }
  }
  return result;
}

absl::Status SoftmaxCrossEntropyGradFn(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                       GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], CrossEntropyLogitsGrad(g, op, dy));
  // Labels: loss = -sum(labels * log_softmax(logits)), so dlabels =
  // -log_softmax(logits) * dloss; backprop = softmax - labels adds -dbackprop.
  std::optional<Endpoint> dlabels;
  if (dy[0].has_value()) {
    PX_G_ASSIGN(Endpoint dloss, ExpandLast(g, *dy[0]));
    PX_G_ASSIGN(Endpoint log_softmax, g.Op("LogSoftmax", {op.inputs[0]}));
    PX_G_ASSIGN(Endpoint neg, g.Op("Neg", {log_softmax}));
    PX_G_ASSIGN(dlabels, g.Op("Mul", {dloss, neg}));
  }
  if (dy[1].has_value()) {
    PX_G_ASSIGN(Endpoint neg, g.Op("Neg", {*dy[1]}));
    if (dlabels.has_value()) {
      PX_G_ASSIGN(dlabels, g.Add(*dlabels, neg));
    } else {
      dlabels = neg;
    }
  }
  (*dx)[1] = dlabels;
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("SoftmaxCrossEntropyWithLogits", SoftmaxCrossEntropyGradFn);

absl::Status SparseSoftmaxCrossEntropyGradFn(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                             GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], CrossEntropyLogitsGrad(g, op, dy));
  return absl::OkStatus();  // integer labels: no gradient
}
PX_REGISTER_GRADIENT("SparseSoftmaxCrossEntropyWithLogits", SparseSoftmaxCrossEntropyGradFn);

absl::Status L2LossGradFn(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], g.Op("Mul", {op.inputs[0], *dy[0]}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("L2Loss", L2LossGradFn);

// ---- Batch normalization ---------------------------------------------------------

// The gradient of y wrt x, scale and offset (TensorFlow's
// _BaseFusedBatchNormGrad). Training mode uses the batch statistics the
// forward op saved in its reserve outputs; inference mode uses the
// population mean and variance inputs, and runs the gradient in NHWC
// (transposing NCHW data), as TensorFlow does. The gradients of the
// batch_mean / batch_variance outputs are not propagated (as in TensorFlow).
absl::Status FusedBatchNormGradFn(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                  GradientList* dx) {
  if (!dy[0].has_value()) return absl::OkStatus();
  const char* grad_op = op.op == "FusedBatchNorm"     ? "FusedBatchNormGrad"
                        : op.op == "FusedBatchNormV2" ? "FusedBatchNormGradV2"
                                                      : "FusedBatchNormGradV3";
  const bool v3 = op.op == "FusedBatchNormV3";
  const bool is_training = AttrBool(op, "is_training", true);
  const std::string data_format = AttrString(op, "data_format", "NHWC");
  Endpoint x = op.inputs[0];
  Endpoint grad_y = *dy[0];
  const Endpoint& scale = op.inputs[1];
  AttrMap attrs = Copy(Attrs(), op, {"epsilon", "data_format", "is_training"});
  std::vector<Endpoint> args;
  bool transposed = false;
  if (is_training) {
    args = {grad_y, x, scale, op.outputs[3], op.outputs[4]};
  } else {
    if (data_format == "NCHW" || data_format == "NCDHW") {
      const bool rank5 = data_format == "NCDHW";
      PX_G_ASSIGN(Endpoint to_last, g.IntVector(rank5 ? std::vector<int64_t>{0, 2, 3, 4, 1}
                                                      : std::vector<int64_t>{0, 2, 3, 1}));
      PX_G_ASSIGN(x, g.Op("Transpose", {x, to_last}));
      PX_G_ASSIGN(grad_y, g.Op("Transpose", {grad_y, to_last}));
      attrs["data_format"].set_s(rank5 ? "NDHWC" : "NHWC");
      transposed = true;
    }
    args = {grad_y, x, scale, op.inputs[3], op.inputs[4]};
  }
  if (v3) args.push_back(op.outputs[5]);
  PX_G_ASSIGN(std::vector<Endpoint> grads, g.Ops(grad_op, args, attrs));
  Endpoint gx = grads[0];
  if (transposed) {
    const bool rank5 = data_format == "NCDHW";
    PX_G_ASSIGN(Endpoint to_channels, g.IntVector(rank5 ? std::vector<int64_t>{0, 4, 1, 2, 3}
                                                        : std::vector<int64_t>{0, 3, 1, 2}));
    PX_G_ASSIGN(gx, g.Op("Transpose", {gx, to_channels}));
  }
  (*dx)[0] = gx;
  (*dx)[1] = grads[1];
  (*dx)[2] = grads[2];
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("FusedBatchNorm", FusedBatchNormGradFn);
PX_REGISTER_GRADIENT("FusedBatchNormV2", FusedBatchNormGradFn);
PX_REGISTER_GRADIENT("FusedBatchNormV3", FusedBatchNormGradFn);

// ---- Local response normalization --------------------------------------------

// LRN through LRNGrad(dy, input, output), as TensorFlow's nn_grad.py.
absl::Status LrnGradFn(GradientContext& g, const GradientOp& op, const GradientList& dy,
                       GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], g.Op("LRNGrad", {*dy[0], op.inputs[0], op.outputs[0]},
                             Copy(Attrs(), op, {"T", "depth_radius", "bias", "alpha", "beta"})));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("LRN", LrnGradFn);

}  // namespace
}  // namespace plexus

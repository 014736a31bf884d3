// Gradients of the math ops: elementwise arithmetic (with broadcasting),
// unary functions, matrix products, reductions and casts.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "passes/gradients/grad_util.h"
#include "plexus/gradients.h"
#include "plexus/status.h"

namespace plexus {
namespace {

using grad::Attrs;
using grad::AttrBool;
using grad::AttrType;
using grad::With;
using grad::WithType;

#define PX_G_ASSIGN(lhs, expr) PX_ASSIGN_OR_RETURN(lhs, expr)

// ---- Binary elementwise ops (inputs broadcast against each other) ----------

absl::Status AddGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const Endpoint& x = op.inputs[0];
  const Endpoint& y = op.inputs[1];
  PX_G_ASSIGN((*dx)[0], g.SumToShapeOf(*dy[0], x, y));
  PX_G_ASSIGN((*dx)[1], g.SumToShapeOf(*dy[0], y, x));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Add", AddGrad);
PX_REGISTER_GRADIENT("AddV2", AddGrad);

absl::Status SubGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const Endpoint& x = op.inputs[0];
  const Endpoint& y = op.inputs[1];
  PX_G_ASSIGN((*dx)[0], g.SumToShapeOf(*dy[0], x, y));
  PX_G_ASSIGN(Endpoint neg, g.Op("Neg", {*dy[0]}));
  PX_G_ASSIGN((*dx)[1], g.SumToShapeOf(neg, y, x));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Sub", SubGrad);

absl::Status MulGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const Endpoint& x = op.inputs[0];
  const Endpoint& y = op.inputs[1];
  PX_G_ASSIGN(Endpoint gx, g.Op("Mul", {*dy[0], y}));
  PX_G_ASSIGN((*dx)[0], g.SumToShapeOf(gx, x, y));
  PX_G_ASSIGN(Endpoint gy, g.Op("Mul", {x, *dy[0]}));
  PX_G_ASSIGN((*dx)[1], g.SumToShapeOf(gy, y, x));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Mul", MulGrad);

absl::Status DivGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const Endpoint& x = op.inputs[0];
  const Endpoint& y = op.inputs[1];
  // d/dx = dy / y; d/dy = -dy * x / y^2 = -(dy / y) * (x / y).
  PX_G_ASSIGN(Endpoint gx, g.Op("RealDiv", {*dy[0], y}));
  PX_G_ASSIGN((*dx)[0], g.SumToShapeOf(gx, x, y));
  PX_G_ASSIGN(Endpoint ratio, g.Op("RealDiv", {x, y}));
  PX_G_ASSIGN(Endpoint prod, g.Op("Mul", {gx, ratio}));
  PX_G_ASSIGN(Endpoint gy, g.Op("Neg", {prod}));
  PX_G_ASSIGN((*dx)[1], g.SumToShapeOf(gy, y, x));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("RealDiv", DivGrad);
PX_REGISTER_GRADIENT("Div", DivGrad);

// DivNoNan: the same with every division a DivNoNan, so where y is 0 both
// gradients are 0 (TensorFlow's math_grad.py).
absl::Status DivNoNanGrad(GradientContext& g, const GradientOp& op, const GradientList& dy,
                          GradientList* dx) {
  const Endpoint& x = op.inputs[0];
  const Endpoint& y = op.inputs[1];
  PX_G_ASSIGN(Endpoint gx, g.Op("DivNoNan", {*dy[0], y}));
  PX_G_ASSIGN((*dx)[0], g.SumToShapeOf(gx, x, y));
  PX_G_ASSIGN(Endpoint neg_x, g.Op("Neg", {x}));
  PX_G_ASSIGN(Endpoint ratio, g.Op("DivNoNan", {neg_x, y}));
  PX_G_ASSIGN(Endpoint ratio2, g.Op("DivNoNan", {ratio, y}));
  PX_G_ASSIGN(Endpoint gy, g.Op("Mul", {*dy[0], ratio2}));
  PX_G_ASSIGN((*dx)[1], g.SumToShapeOf(gy, y, x));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("DivNoNan", DivNoNanGrad);

// MulNoNan: MulNoNan(dy, y) and MulNoNan(x, dy), as TensorFlow's math_grad.py.
absl::Status MulNoNanGrad(GradientContext& g, const GradientOp& op, const GradientList& dy,
                          GradientList* dx) {
  const Endpoint& x = op.inputs[0];
  const Endpoint& y = op.inputs[1];
  PX_G_ASSIGN(Endpoint gx, g.Op("MulNoNan", {*dy[0], y}));
  PX_G_ASSIGN((*dx)[0], g.SumToShapeOf(gx, x, y));
  PX_G_ASSIGN(Endpoint gy, g.Op("MulNoNan", {x, *dy[0]}));
  PX_G_ASSIGN((*dx)[1], g.SumToShapeOf(gy, y, x));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("MulNoNan", MulNoNanGrad);

// Maximum / Minimum: the gradient goes to the input that was selected (x on
// ties, as TensorFlow does).
absl::Status SelectByComparison(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                GradientList* dx, const char* comparison) {
  const Endpoint& x = op.inputs[0];
  const Endpoint& y = op.inputs[1];
  PX_G_ASSIGN(Endpoint take_x, g.Op(comparison, {x, y}));
  PX_G_ASSIGN(Endpoint zeros, g.ZerosLike(*dy[0]));
  PX_G_ASSIGN(Endpoint gx, g.Op("SelectV2", {take_x, *dy[0], zeros}));
  PX_G_ASSIGN(Endpoint gy, g.Op("SelectV2", {take_x, zeros, *dy[0]}));
  PX_G_ASSIGN((*dx)[0], g.SumToShapeOf(gx, x, y));
  PX_G_ASSIGN((*dx)[1], g.SumToShapeOf(gy, y, x));
  return absl::OkStatus();
}
absl::Status MaximumGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  return SelectByComparison(g, op, dy, dx, "GreaterEqual");
}
absl::Status MinimumGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  return SelectByComparison(g, op, dy, dx, "LessEqual");
}
PX_REGISTER_GRADIENT("Maximum", MaximumGrad);
PX_REGISTER_GRADIENT("Minimum", MinimumGrad);

absl::Status SquaredDifferenceGrad(GradientContext& g, const GradientOp& op, const GradientList& dy,
                                   GradientList* dx) {
  const Endpoint& x = op.inputs[0];
  const Endpoint& y = op.inputs[1];
  PX_G_ASSIGN(Endpoint two, g.Scalar(2.0, g.dtype(x)));
  PX_G_ASSIGN(Endpoint diff, g.Op("Sub", {x, y}));
  PX_G_ASSIGN(Endpoint scaled, g.Op("Mul", {two, *dy[0]}));
  PX_G_ASSIGN(Endpoint d, g.Op("Mul", {scaled, diff}));
  PX_G_ASSIGN((*dx)[0], g.SumToShapeOf(d, x, y));
  PX_G_ASSIGN(Endpoint neg, g.Op("Neg", {d}));
  PX_G_ASSIGN((*dx)[1], g.SumToShapeOf(neg, y, x));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("SquaredDifference", SquaredDifferenceGrad);

absl::Status PowGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const Endpoint& x = op.inputs[0];
  const Endpoint& y = op.inputs[1];
  const Endpoint& z = op.outputs[0];
  const DataType t = g.dtype(x);
  // d/dx = dy * y * x^(y-1)
  PX_G_ASSIGN(Endpoint one, g.Scalar(1.0, t));
  PX_G_ASSIGN(Endpoint ym1, g.Op("Sub", {y, one}));
  PX_G_ASSIGN(Endpoint pw, g.Op("Pow", {x, ym1}));
  PX_G_ASSIGN(Endpoint yp, g.Op("Mul", {y, pw}));
  PX_G_ASSIGN(Endpoint gx, g.Op("Mul", {*dy[0], yp}));
  PX_G_ASSIGN((*dx)[0], g.SumToShapeOf(gx, x, y));
  // d/dy = dy * z * log(x), taken as 0 where x <= 0 (TensorFlow's choice).
  PX_G_ASSIGN(Endpoint zero, g.Scalar(0.0, t));
  PX_G_ASSIGN(Endpoint positive, g.Op("Greater", {x, zero}));
  PX_G_ASSIGN(Endpoint ones, g.Op("OnesLike", {x}));
  PX_G_ASSIGN(Endpoint safe_x, g.Op("SelectV2", {positive, x, ones}));
  PX_G_ASSIGN(Endpoint log_x, g.Op("Log", {safe_x}));
  PX_G_ASSIGN(Endpoint zeros, g.ZerosLike(x));
  PX_G_ASSIGN(Endpoint log_or_zero, g.Op("SelectV2", {positive, log_x, zeros}));
  PX_G_ASSIGN(Endpoint zl, g.Op("Mul", {z, log_or_zero}));
  PX_G_ASSIGN(Endpoint gy, g.Op("Mul", {*dy[0], zl}));
  PX_G_ASSIGN((*dx)[1], g.SumToShapeOf(gy, y, x));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Pow", PowGrad);

// SelectV2(cond, t, e) broadcasts all three; Select's cond may be a vector
// over the first dimension, which SelectV2 would not broadcast the same
// way, so Select reuses the op itself.
absl::Status SelectGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const Endpoint& c = op.inputs[0];
  PX_G_ASSIGN(Endpoint zeros, g.ZerosLike(*dy[0]));
  PX_G_ASSIGN(Endpoint gt, g.Op(op.op, {c, *dy[0], zeros}));
  PX_G_ASSIGN(Endpoint ge, g.Op(op.op, {c, zeros, *dy[0]}));
  if (op.op == "SelectV2") {
    PX_G_ASSIGN((*dx)[1], g.SumToShapeOf(gt, op.inputs[1], *dy[0]));
    PX_G_ASSIGN((*dx)[2], g.SumToShapeOf(ge, op.inputs[2], *dy[0]));
  } else {
    (*dx)[1] = gt;
    (*dx)[2] = ge;
  }
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Select", SelectGrad);
PX_REGISTER_GRADIENT("SelectV2", SelectGrad);

// ---- Unary functions ------------------------------------------------------

absl::Status NegGrad(GradientContext& g, const GradientOp&, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], g.Op("Neg", {*dy[0]}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Neg", NegGrad);

absl::Status ExpGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], g.Op("Mul", {*dy[0], op.outputs[0]}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Exp", ExpGrad);

absl::Status LogGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], g.Op("RealDiv", {*dy[0], op.inputs[0]}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Log", LogGrad);

absl::Status Log1pGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN(Endpoint one, g.Scalar(1.0, g.dtype(op.inputs[0])));
  PX_G_ASSIGN(Endpoint xp1, g.Op("AddV2", {op.inputs[0], one}));
  PX_G_ASSIGN((*dx)[0], g.Op("RealDiv", {*dy[0], xp1}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Log1p", Log1pGrad);

// Ops whose gradient is a TensorFlow "*Grad" op of (y, dy).
absl::Status OutputGradOp(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx,
                          const char* grad_op) {
  PX_G_ASSIGN((*dx)[0], g.Op(grad_op, {op.outputs[0], *dy[0]}));
  return absl::OkStatus();
}
absl::Status SqrtGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  return OutputGradOp(g, op, dy, dx, "SqrtGrad");
}
absl::Status RsqrtGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  return OutputGradOp(g, op, dy, dx, "RsqrtGrad");
}
absl::Status ReciprocalGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  return OutputGradOp(g, op, dy, dx, "ReciprocalGrad");
}
absl::Status TanhGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  return OutputGradOp(g, op, dy, dx, "TanhGrad");
}
absl::Status SigmoidGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  return OutputGradOp(g, op, dy, dx, "SigmoidGrad");
}
PX_REGISTER_GRADIENT("Sqrt", SqrtGrad);
PX_REGISTER_GRADIENT("Rsqrt", RsqrtGrad);
PX_REGISTER_GRADIENT("Reciprocal", ReciprocalGrad);
PX_REGISTER_GRADIENT("Inv", ReciprocalGrad);
PX_REGISTER_GRADIENT("Tanh", TanhGrad);
PX_REGISTER_GRADIENT("Sigmoid", SigmoidGrad);

absl::Status SquareGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN(Endpoint two, g.Scalar(2.0, g.dtype(op.inputs[0])));
  PX_G_ASSIGN(Endpoint two_x, g.Op("Mul", {two, op.inputs[0]}));
  PX_G_ASSIGN((*dx)[0], g.Op("Mul", {*dy[0], two_x}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Square", SquareGrad);

absl::Status AbsGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN(Endpoint sign, g.Op("Sign", {op.inputs[0]}));
  PX_G_ASSIGN((*dx)[0], g.Op("Mul", {*dy[0], sign}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Abs", AbsGrad);

absl::Status ErfGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const Endpoint& x = op.inputs[0];
  PX_G_ASSIGN(Endpoint k, g.Scalar(2.0 / std::sqrt(M_PI), g.dtype(x)));
  PX_G_ASSIGN(Endpoint x2, g.Op("Square", {x}));
  PX_G_ASSIGN(Endpoint nx2, g.Op("Neg", {x2}));
  PX_G_ASSIGN(Endpoint e, g.Op("Exp", {nx2}));
  PX_G_ASSIGN(Endpoint ke, g.Op("Mul", {k, e}));
  PX_G_ASSIGN((*dx)[0], g.Op("Mul", {*dy[0], ke}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Erf", ErfGrad);

// d/dx erfc(x) = -2/sqrt(pi) exp(-x^2).
absl::Status ErfcGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const Endpoint& x = op.inputs[0];
  PX_G_ASSIGN(Endpoint k, g.Scalar(-2.0 / std::sqrt(M_PI), g.dtype(x)));
  PX_G_ASSIGN(Endpoint x2, g.Op("Square", {x}));
  PX_G_ASSIGN(Endpoint nx2, g.Op("Neg", {x2}));
  PX_G_ASSIGN(Endpoint e, g.Op("Exp", {nx2}));
  PX_G_ASSIGN(Endpoint ke, g.Op("Mul", {k, e}));
  PX_G_ASSIGN((*dx)[0], g.Op("Mul", {*dy[0], ke}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Erfc", ErfcGrad);

absl::Status SinGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN(Endpoint c, g.Op("Cos", {op.inputs[0]}));
  PX_G_ASSIGN((*dx)[0], g.Op("Mul", {*dy[0], c}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Sin", SinGrad);

absl::Status CosGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN(Endpoint s, g.Op("Sin", {op.inputs[0]}));
  PX_G_ASSIGN(Endpoint ns, g.Op("Neg", {s}));
  PX_G_ASSIGN((*dx)[0], g.Op("Mul", {*dy[0], ns}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Cos", CosGrad);

// Piecewise-constant functions: zero gradient almost everywhere.
absl::Status ZeroGrad(GradientContext& g, const GradientOp& op, const GradientList&, GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], g.ZerosLike(op.inputs[0]));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Sign", ZeroGrad);
PX_REGISTER_GRADIENT("Floor", ZeroGrad);
PX_REGISTER_GRADIENT("Ceil", ZeroGrad);
PX_REGISTER_GRADIENT("Round", ZeroGrad);
PX_REGISTER_GRADIENT("Rint", ZeroGrad);

// d/dx lgamma(x) = digamma(x). (Digamma's own gradient, polygamma(1, x),
// needs the Polygamma op, which Plexus does not have.)
absl::Status LgammaGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN(Endpoint psi, g.Op("Digamma", {op.inputs[0]}));
  PX_G_ASSIGN((*dx)[0], g.Op("Mul", {*dy[0], psi}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Lgamma", LgammaGrad);

absl::Status IdentityGrad(GradientContext&, const GradientOp&, const GradientList& dy, GradientList* dx) {
  (*dx)[0] = dy[0];
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Identity", IdentityGrad);
PX_REGISTER_GRADIENT("Snapshot", IdentityGrad);
// The gradient of a variable read flows to the variable (its handle).
PX_REGISTER_GRADIENT("ReadVariableOp", IdentityGrad);

absl::Status IdentityNGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  for (size_t k = 0; k < dx->size(); ++k) {
    if (dy[k].has_value()) {
      (*dx)[k] = dy[k];
    } else {
      PX_G_ASSIGN((*dx)[k], g.ZerosLike(op.inputs[k]));
    }
  }
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("IdentityN", IdentityNGrad);

absl::Status PreventGradientGrad(GradientContext&, const GradientOp& op, const GradientList&, GradientList*) {
  std::string message = grad::AttrString(op, "message");
  return absl::InvalidArgumentError(absl::StrCat("PreventGradient was differentiated",
                                                 message.empty() ? "" : ": ", message));
}
PX_REGISTER_GRADIENT("PreventGradient", PreventGradientGrad);

absl::Status CastGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const DataType src = AttrType(op, "SrcT");
  if (src != DataType::kFloat && src != DataType::kDouble && src != DataType::kHalf &&
      src != DataType::kBFloat16) {
    return absl::OkStatus();
  }
  const DataType dst = AttrType(op, "DstT");
  if (dst != DataType::kFloat && dst != DataType::kDouble && dst != DataType::kHalf &&
      dst != DataType::kBFloat16) {
    return absl::OkStatus();
  }
  PX_G_ASSIGN((*dx)[0], g.Op("Cast", {*dy[0]}, WithType(Attrs(), "DstT", src)));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Cast", CastGrad);

// ---- Matrix products --------------------------------------------------------

absl::Status MatMulGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const bool ta = AttrBool(op, "transpose_a");
  const bool tb = AttrBool(op, "transpose_b");
  const Endpoint& a = op.inputs[0];
  const Endpoint& b = op.inputs[1];
  const Endpoint& d = *dy[0];
  auto mm = [&](const Endpoint& x, const Endpoint& y, bool tx, bool ty) {
    return g.Op("MatMul", {x, y}, With(With(Attrs(), "transpose_a", tx), "transpose_b", ty));
  };
  if (!ta && !tb) {
    PX_G_ASSIGN((*dx)[0], mm(d, b, false, true));
    PX_G_ASSIGN((*dx)[1], mm(a, d, true, false));
  } else if (!ta && tb) {
    PX_G_ASSIGN((*dx)[0], mm(d, b, false, false));
    PX_G_ASSIGN((*dx)[1], mm(d, a, true, false));
  } else if (ta && !tb) {
    PX_G_ASSIGN((*dx)[0], mm(b, d, false, true));
    PX_G_ASSIGN((*dx)[1], mm(a, d, false, false));
  } else {
    PX_G_ASSIGN((*dx)[0], mm(b, d, true, true));
    PX_G_ASSIGN((*dx)[1], mm(d, a, true, true));
  }
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("MatMul", MatMulGrad);

// `grad` (shaped like x but with the batch dimensions broadcast against
// y's) summed back to x's shape: only the batch dimensions (all but the
// last two) broadcast.
absl::StatusOr<Endpoint> SumBatchToShapeOf(GradientContext& g, const Endpoint& grad, const Endpoint& x,
                                           const Endpoint& y) {
  const PartialShape& sx = g.shape(x);
  const PartialShape& sg = g.shape(grad);
  bool same = sx.rank_known() && sg.rank_known() && sx.rank() == sg.rank();
  for (int64_t d = 0; same && d < sx.rank(); ++d) same = sx.dim(d) >= 0 && sx.dim(d) == sg.dim(d);
  if (same) return grad;
  const PartialShape& sy = g.shape(y);
  if (!sx.rank_known() || !sy.rank_known()) {
    return absl::UnimplementedError("the gradient of a batch matrix product needs inputs of known rank");
  }
  PX_G_ASSIGN(Endpoint shape_x, g.Op("Shape", {x}));
  PX_G_ASSIGN(Endpoint shape_y, g.Op("Shape", {y}));
  PX_G_ASSIGN(Endpoint zero, g.IntVector({0}));
  PX_G_ASSIGN(Endpoint nx, g.IntVector({sx.rank() - 2}));
  PX_G_ASSIGN(Endpoint ny, g.IntVector({sy.rank() - 2}));
  PX_G_ASSIGN(Endpoint bx, g.Op("Slice", {shape_x, zero, nx}));
  PX_G_ASSIGN(Endpoint by, g.Op("Slice", {shape_y, zero, ny}));
  PX_G_ASSIGN(std::vector<Endpoint> r, g.Ops("BroadcastGradientArgs", {bx, by}));
  PX_G_ASSIGN(Endpoint sum, g.Op("Sum", {grad, r[0]}));
  return g.Op("Reshape", {sum, shape_x});
}

// Batch matrix products broadcast their batch dimensions (V2, V3): each
// input's gradient is summed back to its own shape.
absl::Status BatchMatMulGrad(GradientContext& g, const GradientOp& op, const GradientList& dy,
                             GradientList* dx) {
  const bool ax = AttrBool(op, "adj_x");
  const bool ay = AttrBool(op, "adj_y");
  const Endpoint& x = op.inputs[0];
  const Endpoint& y = op.inputs[1];
  const Endpoint& d = *dy[0];
  AttrMap base;
  if (op.op == "BatchMatMulV3") base = WithType(Attrs(), "Tout", g.dtype(x));
  auto mm = [&](const Endpoint& p, const Endpoint& q, bool tp, bool tq) {
    return g.Op(op.op == "BatchMatMul" ? "BatchMatMulV2" : op.op, {p, q},
                With(With(base, "adj_x", tp), "adj_y", tq));
  };
  Endpoint gx, gy;
  if (!ax && !ay) {
    PX_G_ASSIGN(gx, mm(d, y, false, true));
    PX_G_ASSIGN(gy, mm(x, d, true, false));
  } else if (!ax && ay) {
    PX_G_ASSIGN(gx, mm(d, y, false, false));
    PX_G_ASSIGN(gy, mm(d, x, true, false));
  } else if (ax && !ay) {
    PX_G_ASSIGN(gx, mm(y, d, false, true));
    PX_G_ASSIGN(gy, mm(x, d, false, false));
  } else {
    PX_G_ASSIGN(gx, mm(y, d, true, true));
    PX_G_ASSIGN(gy, mm(d, x, true, true));
  }
  PX_G_ASSIGN((*dx)[0], SumBatchToShapeOf(g, gx, x, y));
  PX_G_ASSIGN((*dx)[1], SumBatchToShapeOf(g, gy, y, x));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("BatchMatMul", BatchMatMulGrad);
PX_REGISTER_GRADIENT("BatchMatMulV2", BatchMatMulGrad);
PX_REGISTER_GRADIENT("BatchMatMulV3", BatchMatMulGrad);

// ---- Reductions --------------------------------------------------------------

// dy (reduced over `axis` of x, keep_dims or not) broadcast back to x's
// shape: Reshape to the shape with 1s at the reduced axes, then BroadcastTo.
// The shape of x with the reduced axes set to 1: a constant when x's shape
// and the axes are known, else computed at run time.
absl::StatusOr<Endpoint> KeptDims(GradientContext& g, const Endpoint& x, const Endpoint& axis) {
  const Tensor* axes = g.ConstValue(axis);
  const PartialShape& s = g.shape(x);
  bool known = axes != nullptr && s.rank_known();
  for (int64_t d = 0; known && d < s.rank(); ++d) known = s.dim(d) >= 0;
  if (!known) {
    PX_G_ASSIGN(Endpoint shape, g.ShapeOf(x));
    return g.Op("_PlexusReducedShape", {shape, axis});
  }
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < s.rank(); ++d) dims.push_back(s.dim(d));
  for (int64_t i = 0; i < axes->num_elements(); ++i) {
    int64_t a = axes->dtype() == DataType::kInt32 ? axes->data<int32_t>()[i] : axes->data<int64_t>()[i];
    if (a < 0) a += s.rank();
    if (a < 0 || a >= s.rank()) return absl::InvalidArgumentError(absl::StrCat("axis out of range: ", a));
    dims[a] = 1;
  }
  return g.IntVector(dims);
}

absl::StatusOr<Endpoint> BroadcastReduced(GradientContext& g, const Endpoint& d, const Endpoint& x,
                                          const Endpoint& axis) {
  PX_G_ASSIGN(Endpoint shape, g.ShapeOf(x));
  PX_G_ASSIGN(Endpoint kept, KeptDims(g, x, axis));
  PX_G_ASSIGN(Endpoint reshaped, g.Op("Reshape", {d, kept}));
  return g.Op("BroadcastTo", {reshaped, shape});
}

absl::Status SumGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  PX_G_ASSIGN((*dx)[0], BroadcastReduced(g, *dy[0], op.inputs[0], op.inputs[1]));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Sum", SumGrad);

absl::Status MeanGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const Endpoint& x = op.inputs[0];
  PX_G_ASSIGN(Endpoint spread, BroadcastReduced(g, *dy[0], x, op.inputs[1]));
  // The count of elements averaged: size(x) / size(y).
  PX_G_ASSIGN(Endpoint nx, g.Op("Size", {x}));
  PX_G_ASSIGN(Endpoint ny, g.Op("Size", {op.outputs[0]}));
  PX_G_ASSIGN(Endpoint one, g.Scalar(1.0, DataType::kInt32));
  PX_G_ASSIGN(Endpoint ny1, g.Op("Maximum", {ny, one}));
  PX_G_ASSIGN(Endpoint count, g.Op("FloorDiv", {nx, ny1}));
  PX_G_ASSIGN(Endpoint countf, g.Op("Cast", {count}, WithType(Attrs(), "DstT", g.dtype(x))));
  PX_G_ASSIGN((*dx)[0], g.Op("RealDiv", {spread, countf}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Mean", MeanGrad);

// Max / Min: the gradient is shared equally among the elements equal to the
// result (TensorFlow's rule).
absl::Status MaxMinGrad(GradientContext& g, const GradientOp& op, const GradientList& dy, GradientList* dx) {
  const Endpoint& x = op.inputs[0];
  const Endpoint& axis = op.inputs[1];
  PX_G_ASSIGN(Endpoint kept, KeptDims(g, x, axis));
  PX_G_ASSIGN(Endpoint y, g.Op("Reshape", {op.outputs[0], kept}));
  PX_G_ASSIGN(Endpoint equal, g.Op("Equal", {x, y}));
  PX_G_ASSIGN(Endpoint indicators, g.Op("Cast", {equal}, WithType(Attrs(), "DstT", g.dtype(x))));
  PX_G_ASSIGN(Endpoint count, g.Op("Sum", {indicators, axis}, With(Attrs(), "keep_dims", true)));
  PX_G_ASSIGN(Endpoint d, g.Op("Reshape", {*dy[0], kept}));
  PX_G_ASSIGN(Endpoint share, g.Op("RealDiv", {d, count}));
  PX_G_ASSIGN((*dx)[0], g.Op("Mul", {indicators, share}));
  return absl::OkStatus();
}
PX_REGISTER_GRADIENT("Max", MaxMinGrad);
PX_REGISTER_GRADIENT("Min", MaxMinGrad);

// ---- Ops without a gradient ---------------------------------------------------

PX_NO_GRADIENT("Shape");
PX_NO_GRADIENT("ShapeN");
PX_NO_GRADIENT("Size");
PX_NO_GRADIENT("Rank");
PX_NO_GRADIENT("ZerosLike");
PX_NO_GRADIENT("OnesLike");
PX_NO_GRADIENT("Fill");
PX_NO_GRADIENT("Range");
PX_NO_GRADIENT("Const");
PX_NO_GRADIENT("Placeholder");
PX_NO_GRADIENT("StopGradient");
PX_NO_GRADIENT("Equal");
PX_NO_GRADIENT("NotEqual");
PX_NO_GRADIENT("Less");
PX_NO_GRADIENT("LessEqual");
PX_NO_GRADIENT("Greater");
PX_NO_GRADIENT("GreaterEqual");
PX_NO_GRADIENT("LogicalAnd");
PX_NO_GRADIENT("LogicalOr");
PX_NO_GRADIENT("LogicalNot");
PX_NO_GRADIENT("ArgMax");
PX_NO_GRADIENT("ArgMin");
PX_NO_GRADIENT("FloorDiv");
PX_NO_GRADIENT("FloorMod");
PX_NO_GRADIENT("TruncateDiv");
PX_NO_GRADIENT("BitwiseAnd");
PX_NO_GRADIENT("BitwiseOr");
PX_NO_GRADIENT("BitwiseXor");
PX_NO_GRADIENT("Invert");
PX_NO_GRADIENT("LeftShift");
PX_NO_GRADIENT("RightShift");
PX_NO_GRADIENT("PopulationCount");
PX_NO_GRADIENT("All");
PX_NO_GRADIENT("Any");
PX_NO_GRADIENT("OneHot");
PX_NO_GRADIENT("BroadcastGradientArgs");
PX_NO_GRADIENT("VarHandleOp");

}  // namespace
}  // namespace plexus

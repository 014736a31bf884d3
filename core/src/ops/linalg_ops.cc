// Linear algebra: MatMul, BatchMatMul, Einsum, MatrixBandPart, MatrixSolve.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/array_util.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/sdk/array_shapes.h"
#include "plexus/status.h"

namespace plexus {
namespace {

absl::Status MatMulShape(InferenceContext& ctx) {
  const PartialShape& a = ctx.input(0);
  const PartialShape& b = ctx.input(1);
  for (const PartialShape* s : {&a, &b}) {
    if (s->rank_known() && s->rank() != 2) {
      return ctx.Error(absl::StrCat("MatMul needs rank-2 inputs, got ", a.ToString(),
                                    " and ", b.ToString()));
    }
  }
  PX_ASSIGN_OR_RETURN(bool ta, GetAttrBool(ctx.node(), "transpose_a"));
  PX_ASSIGN_OR_RETURN(bool tb, GetAttrBool(ctx.node(), "transpose_b"));
  int64_t m = a.rank_known() ? a.dim(ta ? 1 : 0) : -1;
  int64_t ka = a.rank_known() ? a.dim(ta ? 0 : 1) : -1;
  int64_t kb = b.rank_known() ? b.dim(tb ? 1 : 0) : -1;
  int64_t n = b.rank_known() ? b.dim(tb ? 0 : 1) : -1;
  if (ka >= 0 && kb >= 0 && ka != kb) {
    return ctx.Error(absl::StrCat("Matrix size-incompatible: In[0]: ", a.ToString(),
                                  ", In[1]: ", b.ToString(),
                                  " (transpose_a=", ta, ", transpose_b=", tb, ")"));
  }
  ctx.set_output(0, PartialShape(Shape{m, n}));
  return absl::OkStatus();
}

// Broadcasts two batch dimensions (-1 = unknown); false when incompatible.
bool BroadcastDim(int64_t a, int64_t b, int64_t* out) {
  if (a == 1) { *out = b; return true; }
  if (b == 1) { *out = a; return true; }
  if (a < 0 || b < 0) { *out = a < 0 ? b : a; return true; }
  if (a != b) return false;
  *out = a;
  return true;
}

// BatchMatMul (v1: equal batch dimensions) and V2/V3 (broadcast batch
// dimensions): x [..., r, c] times y [..., r, c], each optionally adjointed.
absl::Status BatchMatMulShape(InferenceContext& ctx, bool broadcast) {
  const PartialShape& x = ctx.input(0);
  const PartialShape& y = ctx.input(1);
  for (const PartialShape* s : {&x, &y}) {
    if (s->rank_known() && s->rank() < 2) {
      return ctx.Error(absl::StrCat("BatchMatMul inputs must be at least rank 2, got ",
                                    x.ToString(), " and ", y.ToString()));
    }
  }
  if (!broadcast && x.rank_known() && y.rank_known() && x.rank() != y.rank()) {
    return ctx.Error(absl::StrCat("BatchMatMul inputs must have the same rank, got ",
                                  x.ToString(), " and ", y.ToString()));
  }
  PX_ASSIGN_OR_RETURN(bool adj_x, GetAttrBool(ctx.node(), "adj_x"));
  PX_ASSIGN_OR_RETURN(bool adj_y, GetAttrBool(ctx.node(), "adj_y"));
  if (!x.rank_known() || !y.rank_known()) {
    ctx.set_output(0, PartialShape::Unknown());
    return absl::OkStatus();
  }
  const int64_t xr = x.rank(), yr = y.rank();
  const int64_t m = x.dim(adj_x ? xr - 1 : xr - 2);
  const int64_t kx = x.dim(adj_x ? xr - 2 : xr - 1);
  const int64_t ky = y.dim(adj_y ? yr - 1 : yr - 2);
  const int64_t n = y.dim(adj_y ? yr - 2 : yr - 1);
  if (kx >= 0 && ky >= 0 && kx != ky) {
    return ctx.Error(absl::StrCat("Matrix size-incompatible: In[0]: ", x.ToString(),
                                  ", In[1]: ", y.ToString(), " (adj_x=", adj_x,
                                  ", adj_y=", adj_y, ")"));
  }
  const int64_t batch_rank = std::max(xr, yr) - 2;
  Shape out(static_cast<size_t>(batch_rank + 2), -1);
  for (int64_t i = 0; i < batch_rank; ++i) {
    const int64_t xi = i - (batch_rank - (xr - 2));
    const int64_t yi = i - (batch_rank - (yr - 2));
    const int64_t xd = xi >= 0 ? x.dim(xi) : 1;
    const int64_t yd = yi >= 0 ? y.dim(yi) : 1;
    bool ok;
    if (broadcast) {
      ok = BroadcastDim(xd, yd, &out[i]);
    } else {
      ok = xd < 0 || yd < 0 || xd == yd;
      out[i] = xd >= 0 ? xd : yd;
    }
    if (!ok) {
      return ctx.Error(absl::StrCat(
          broadcast ? "Incompatible batch dimensions (they do not broadcast): "
                    : "Batch dimensions must be equal: ",
          x.ToString(), " and ", y.ToString()));
    }
  }
  out[batch_rank] = m;
  out[batch_rank + 1] = n;
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

// Einsum: the output shape of the forms the kernels support (one or two
// operands, one letter per dimension, no ellipsis, no label repeated within
// an operand). Other forms get an unknown shape; the kernel then reports
// them as unimplemented.
absl::Status EinsumShape(InferenceContext& ctx) {
  PX_ASSIGN_OR_RETURN(std::string equation, GetAttrString(ctx.node(), "equation"));
  ctx.set_output(0, PartialShape::Unknown());
  std::string lhs = equation, out_labels;
  const size_t arrow = equation.find("->");
  const bool explicit_output = arrow != std::string::npos;
  if (explicit_output) {
    lhs = equation.substr(0, arrow);
    out_labels = equation.substr(arrow + 2);
  }
  std::vector<std::string> operands;
  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    operands.push_back(lhs.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (static_cast<int>(operands.size()) != ctx.num_inputs()) {
    return ctx.Error(absl::StrCat("Einsum equation '", equation, "' names ", operands.size(),
                                  " operands, the node has ", ctx.num_inputs(), " inputs"));
  }
  std::map<char, int64_t> sizes;
  std::map<char, int> counts;
  for (size_t i = 0; i < operands.size(); ++i) {
    const std::string& labels = operands[i];
    for (char c : labels) {
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return absl::OkStatus();
      if (std::count(labels.begin(), labels.end(), c) != 1) return absl::OkStatus();
      ++counts[c];
    }
    const PartialShape& s = ctx.input(static_cast<int>(i));
    if (!s.rank_known()) continue;
    if (s.rank() != static_cast<int64_t>(labels.size())) {
      return ctx.Error(absl::StrCat("Einsum operand ", i, " has shape ", s.ToString(),
                                    " but the equation '", equation, "' gives it ",
                                    labels.size(), " labels"));
    }
    for (size_t d = 0; d < labels.size(); ++d) {
      int64_t dim = s.dim(static_cast<int64_t>(d));
      if (dim < 0) continue;
      auto it = sizes.find(labels[d]);
      if (it != sizes.end() && it->second != dim) {
        return ctx.Error(absl::StrCat("Einsum label '", std::string(1, labels[d]),
                                      "' has sizes ", it->second, " and ", dim,
                                      " in equation '", equation, "'"));
      }
      sizes[labels[d]] = dim;
    }
  }
  if (!explicit_output) {
    for (const auto& [c, n] : counts) {
      if (n == 1) out_labels.push_back(c);
    }
  }
  Shape out;
  for (char c : out_labels) {
    if (counts.find(c) == counts.end()) {
      return ctx.Error(absl::StrCat("Einsum output label '", std::string(1, c),
                                    "' appears in no input of equation '", equation, "'"));
    }
    if (std::count(out_labels.begin(), out_labels.end(), c) != 1) return absl::OkStatus();
    auto it = sizes.find(c);
    out.push_back(it == sizes.end() ? -1 : it->second);
  }
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("MatMul")
                   .Input("a: T")
                   .Input("b: T")
                   .Output("product: T")
                   .Attr("transpose_a: bool = false")
                   .Attr("transpose_b: bool = false")
                   .Attr("grad_a: bool = false")
                   .Attr("grad_b: bool = false")
                   .Attr("T: {bfloat16, half, float, double, int32, int64, complex64, complex128}")
                   .SetShapeFn(MatMulShape));

PX_REGISTER_OP(OpDefBuilder("BatchMatMul")
                   .Input("x: T")
                   .Input("y: T")
                   .Output("output: T")
                   .Attr("T: {bfloat16, half, float, double, int32, int64, complex64, complex128}")
                   .Attr("adj_x: bool = false")
                   .Attr("adj_y: bool = false")
                   .SetShapeFn([](InferenceContext& ctx) { return BatchMatMulShape(ctx, false); }));

PX_REGISTER_OP(OpDefBuilder("BatchMatMulV2")
                   .Input("x: T")
                   .Input("y: T")
                   .Output("output: T")
                   .Attr("T: {bfloat16, half, float, double, int16, int32, int64, complex64, "
                         "complex128}")
                   .Attr("adj_x: bool = false")
                   .Attr("adj_y: bool = false")
                   .Attr("grad_x: bool = false")
                   .Attr("grad_y: bool = false")
                   .SetShapeFn([](InferenceContext& ctx) { return BatchMatMulShape(ctx, true); }));

PX_REGISTER_OP(OpDefBuilder("BatchMatMulV3")
                   .Input("x: Ta")
                   .Input("y: Tb")
                   .Output("output: Tout")
                   .Attr("Ta: {bfloat16, half, float, double, uint8, int8, int16, int32, int64, "
                         "complex64, complex128}")
                   .Attr("Tb: {bfloat16, half, float, double, uint8, int8, int16, int32, int64, "
                         "complex64, complex128}")
                   .Attr("Tout: {bfloat16, half, float, double, int16, int32, int64, complex64, "
                         "complex128}")
                   .Attr("adj_x: bool = false")
                   .Attr("adj_y: bool = false")
                   .Attr("grad_x: bool = false")
                   .Attr("grad_y: bool = false")
                   .SetShapeFn([](InferenceContext& ctx) { return BatchMatMulShape(ctx, true); }));

PX_REGISTER_OP(OpDefBuilder("Einsum")
                   .Input("inputs: N * T")
                   .Output("output: T")
                   .Attr("equation: string")
                   .Attr("N: int >= 1")
                   .Attr("T: type")
                   .SetShapeFn(EinsumShape));

// _FusedMatMul (created by the graph optimizer): MatMul's shape; with
// fused_ops starting with BiasAdd and one argument, the bias must be [n].
// Unsupported fused_ops and a num_args that does not fit them are left to
// the kernels (UNIMPLEMENTED and INVALID_ARGUMENT).
absl::Status FusedMatMulShape(InferenceContext& ctx) {
  PX_RETURN_IF_ERROR(MatMulShape(ctx));
  const tf::AttrValue* fused = ctx.node().FindAttr("fused_ops");
  if (fused == nullptr || fused->list().s_size() == 0 || fused->list().s(0) != "BiasAdd" ||
      ctx.num_inputs() != 3) {
    return absl::OkStatus();
  }
  const PartialShape& bias = ctx.input(2);
  if (!bias.rank_known()) return absl::OkStatus();
  if (bias.rank() != 1) {
    return ctx.Error(absl::StrCat("_FusedMatMul bias must be 1-D, got ", bias.ToString()));
  }
  const int64_t n = ctx.output(0).rank_known() ? ctx.output(0).dim(1) : -1;
  if (n >= 0 && bias.dim(0) >= 0 && bias.dim(0) != n) {
    return ctx.Error(absl::StrCat("_FusedMatMul bias ", bias.ToString(),
                                  " must have the product's ", n, " columns"));
  }
  return absl::OkStatus();
}

// TensorFlow allows T in {bfloat16, half, float}; double is accepted too, so
// that the optimizer can fuse double graphs on plugins with double kernels.
PX_REGISTER_OP(OpDefBuilder("_FusedMatMul")
                   .Input("a: T")
                   .Input("b: T")
                   .Input("args: num_args * T")
                   .Output("product: T")
                   .Attr("transpose_a: bool = false")
                   .Attr("transpose_b: bool = false")
                   .Attr("T: {bfloat16, half, float, double}")
                   .Attr("num_args: int >= 0")
                   .Attr("fused_ops: list(string) = []")
                   .Attr("epsilon: float = 0.0001")
                   .Attr("leakyrelu_alpha: float = 0.2")
                   .SetShapeFn(FusedMatMulShape));

// MatrixBandPart keeps the shape; what is known of the input's rank, the
// widths' shapes and values is checked as the kernels check it.
absl::Status MatrixBandPartShape(InferenceContext& ctx) {
  const PartialShape& in = ctx.input(0);
  const PartialShape& lower_shape = ctx.input(1);
  const PartialShape& upper_shape = ctx.input(2);
  if (in.rank_known() && lower_shape.rank_known() && upper_shape.rank_known()) {
    int64_t lower = 0, upper = 0;
    const bool lower_known = array_util::KnownScalarInt(ctx, 1, &lower);
    const bool upper_known = array_util::KnownScalarInt(ctx, 2, &upper);
    PX_RETURN_IF_ERROR(array_util::Check(
        ctx, array_shapes::MatrixBandPart(in.dim_vector(), lower_shape.dim_vector(),
                                          upper_shape.dim_vector(), lower_known ? &lower : nullptr,
                                          upper_known ? &upper : nullptr)));
  } else if (in.rank_known() && in.rank() < 2) {
    return ctx.Error(absl::StrCat("input must be at least 2-dim, received shape: ", in.ToString()));
  }
  ctx.set_output(0, in);
  return absl::OkStatus();
}

// MatrixSolve: matrix [..., m, m], rhs [..., m, k] with the same batch
// dimensions; the output has rhs's shape. Messages are TensorFlow's.
absl::Status MatrixSolveShape(InferenceContext& ctx) {
  const PartialShape& a = ctx.input(0);
  const PartialShape& b = ctx.input(1);
  if (a.rank_known() && a.rank() < 2) {
    return ctx.Error(absl::StrCat("Input tensor 0 must have rank >= 2, got ", a.ToString()));
  }
  if (a.rank_known() && b.rank_known() && a.rank() != b.rank()) {
    return ctx.Error("All input tensors must have the same rank.");
  }
  if (b.rank_known() && b.rank() < 2) {
    return ctx.Error(absl::StrCat("Input tensor 1 must have rank >= 2, got ", b.ToString()));
  }
  if (!a.rank_known() || !b.rank_known()) {
    ctx.set_output(0, b.rank_known() ? b : PartialShape::Unknown());
    return absl::OkStatus();
  }
  const int64_t r = a.rank();
  Shape out = b.dims();
  for (int64_t i = 0; i < r; ++i) {
    const int64_t da = a.dim(i), db = b.dim(i);
    if (i < r - 2 && da >= 0 && db >= 0 && da != db) {
      return ctx.Error("All input tensors must have the same outer dimensions.");
    }
    if (i < r - 2 && db < 0) out[i] = da;
  }
  const int64_t m0 = a.dim(r - 2), m1 = a.dim(r - 1);
  if (m0 >= 0 && m1 >= 0 && m0 != m1) {
    return ctx.Error("First input (lhs) must be a square matrix.");
  }
  const int64_t m = m0 >= 0 ? m0 : m1;
  if (m >= 0 && out[r - 2] >= 0 && out[r - 2] != m) {
    return ctx.Error("Input matrix and rhs are incompatible.");
  }
  if (out[r - 2] < 0) out[r - 2] = m;
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("MatrixSolve")
                   .Input("matrix: T")
                   .Input("rhs: T")
                   .Output("output: T")
                   .Attr("adjoint: bool = false")
                   .Attr("T: {double, float, half, complex64, complex128}")
                   .SetShapeFn(MatrixSolveShape));

PX_REGISTER_OP(OpDefBuilder("MatrixBandPart")
                   .Input("input: T")
                   .Input("num_lower: Tindex")
                   .Input("num_upper: Tindex")
                   .Output("band: T")
                   .Attr("T: type")
                   .Attr("Tindex: {int32, int64} = DT_INT64")
                   .SetShapeFn(MatrixBandPartShape));

}  // namespace
}  // namespace plexus

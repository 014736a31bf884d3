// Elementwise math: unary and binary arithmetic with NumPy broadcasting,
// comparisons, logical ops, Select/SelectV2 and Cast. Names, arguments,
// attributes and type sets follow TensorFlow's math_ops.cc.
#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

// Type sets of TensorFlow's binary and unary macros.
constexpr char kBinaryMoreTypes[] =
    "T: {bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64, "
    "complex64, complex128, uint32, uint64}";
constexpr char kUnaryTypes[] =
    "T: {bfloat16, half, float, double, int8, int16, int32, int64, complex64, complex128}";
constexpr char kUnaryUnsignedTypes[] =
    "T: {bfloat16, half, float, double, int8, int16, int32, int64, uint8, uint16, uint32, "
    "uint64, complex64, complex128}";
constexpr char kUnaryComplexTypes[] = "T: {bfloat16, half, float, double, complex64, complex128}";
constexpr char kUnaryRealTypes[] = "T: {bfloat16, half, float, double}";

#define PX_BINARY_OP(name, types)               \
  PX_REGISTER_OP(OpDefBuilder(name)             \
                     .Input("x: T")             \
                     .Input("y: T")             \
                     .Output("z: T")            \
                     .Attr(types)               \
                     .SetShapeFn(BroadcastShape))

#define PX_UNARY_OP(name, types)                \
  PX_REGISTER_OP(OpDefBuilder(name)             \
                     .Input("x: T")             \
                     .Output("y: T")            \
                     .Attr(types)               \
                     .SetShapeFn(UnchangedShape))

// Comparisons: T inputs, a bool output of the broadcast shape.
#define PX_COMPARE_OP(name)                     \
  PX_REGISTER_OP(OpDefBuilder(name)             \
                     .Input("x: T")             \
                     .Input("y: T")             \
                     .Output("z: bool")         \
                     .Attr(kRealTypes)          \
                     .SetShapeFn(BroadcastShape))

// Equal and NotEqual: with incompatible_shape_error = false, shapes that do
// not broadcast give a scalar (false for Equal, true for NotEqual) instead of
// an error, so the output shape is then unknown until run time.
absl::Status EqualityShape(InferenceContext& ctx) {
  auto out = BroadcastShapes(ctx.input(0), ctx.input(1));
  if (out.ok()) {
    ctx.set_output(0, *out);
    return absl::OkStatus();
  }
  PX_ASSIGN_OR_RETURN(bool strict, GetAttrBool(ctx.node(), "incompatible_shape_error"));
  if (strict) return ctx.Error(out.status().message());
  ctx.set_output(0, PartialShape(Shape{}));
  return absl::OkStatus();
}

#define PX_EQUALITY_OP(name)                                        \
  PX_REGISTER_OP(OpDefBuilder(name)                                 \
                     .Input("x: T")                                 \
                     .Input("y: T")                                 \
                     .Output("z: bool")                             \
                     .Attr("T: type")                               \
                     .Attr("incompatible_shape_error: bool = true") \
                     .SetShapeFn(EqualityShape))

// Two partial shapes that must be equal; the merge keeps what either knows.
absl::Status MergeShapes(InferenceContext& ctx, const PartialShape& a, const PartialShape& b,
                         PartialShape* out, absl::string_view what) {
  if (!a.rank_known()) {
    *out = b;
    return absl::OkStatus();
  }
  if (!b.rank_known()) {
    *out = a;
    return absl::OkStatus();
  }
  if (a.rank() != b.rank()) {
    return ctx.Error(absl::StrCat(what, ": ", a.ToString(), " vs. ", b.ToString()));
  }
  Shape dims(a.rank());
  for (int64_t i = 0; i < a.rank(); ++i) {
    int64_t da = a.dim(i), db = b.dim(i);
    if (da >= 0 && db >= 0 && da != db) {
      return ctx.Error(absl::StrCat(what, ": ", a.ToString(), " vs. ", b.ToString()));
    }
    dims[i] = da >= 0 ? da : db;
  }
  *out = PartialShape(std::move(dims));
  return absl::OkStatus();
}

// TF1 Select: t and e have the same shape; condition is a scalar, has that
// shape too, or is a vector as long as t's first dimension.
absl::Status SelectShape(InferenceContext& ctx) {
  const PartialShape& cond = ctx.input(0);
  PartialShape out;
  PX_RETURN_IF_ERROR(MergeShapes(ctx, ctx.input(1), ctx.input(2), &out,
                                 "'then' and 'else' must have the same shape"));
  if (cond.rank_known() && out.rank_known() && cond.rank() != 0) {
    if (cond.rank() == 1 && out.rank() > 1) {
      int64_t n = cond.dim(0), first = out.dim(0);
      if (n >= 0 && first >= 0 && n != first) {
        return ctx.Error(absl::StrCat("Number of batches of 'then' must match size of 'cond', "
                                      "but saw: ", first, " vs. ", n));
      }
    } else {
      PartialShape unused;
      PX_RETURN_IF_ERROR(MergeShapes(ctx, cond, out, &unused,
                                     "'condition' must be a scalar, a vector matching the first "
                                     "dimension of 'then', or have the shape of 'then'"));
    }
  } else if (cond.rank_known() && !out.rank_known() && cond.rank() > 1) {
    out = cond;  // condition of rank > 1 has the output's shape
  }
  ctx.set_output(0, out);
  return absl::OkStatus();
}

// SelectV2: the three inputs broadcast together.
absl::Status SelectV2Shape(InferenceContext& ctx) {
  auto te = BroadcastShapes(ctx.input(1), ctx.input(2));
  if (!te.ok()) return ctx.Error(te.status().message());
  auto out = BroadcastShapes(ctx.input(0), *te);
  if (!out.ok()) return ctx.Error(out.status().message());
  ctx.set_output(0, *out);
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Binary arithmetic
// ---------------------------------------------------------------------------

PX_BINARY_OP("Add",
             "T: {bfloat16, half, float, double, uint8, int8, int16, int32, int64, complex64, "
             "complex128, string}");
PX_BINARY_OP("AddV2",
             "T: {bfloat16, half, float, double, uint8, uint16, uint32, uint64, int8, int16, "
             "int32, int64, complex64, complex128}");
PX_BINARY_OP("Sub", kBinaryMoreTypes);
PX_BINARY_OP("Mul", kBinaryMoreTypes);
PX_BINARY_OP("Div", kBinaryMoreTypes);
PX_BINARY_OP("RealDiv", kBinaryMoreTypes);
PX_BINARY_OP("FloorDiv", kBinaryMoreTypes);
PX_BINARY_OP("FloorMod",
             "T: {int8, int16, int32, int64, uint8, uint16, uint32, uint64, bfloat16, half, "
             "float, double}");
PX_BINARY_OP("Maximum",
             "T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, "
             "int64, uint64}");
PX_BINARY_OP("Minimum",
             "T: {bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, "
             "int64, uint64}");
PX_BINARY_OP("Pow",
             "T: {bfloat16, float, half, double, int8, int16, int32, int64, complex64, "
             "complex128}");
PX_BINARY_OP("SquaredDifference",
             "T: {bfloat16, half, float, double, int32, int64, complex64, complex128}");
// x / y, and 0 where y is 0 (whatever x is, NaN included).
PX_BINARY_OP("DivNoNan", "T: {half, float, bfloat16, double, complex64, complex128}");
// x / y rounded toward zero (integers: C's division, which the kernels
// refuse for a zero divisor; floats: trunc(x / y)), and the remainder of that
// division (floats: fmod).
PX_BINARY_OP("TruncateDiv", kBinaryMoreTypes);
PX_BINARY_OP("TruncateMod", "T: {int32, int64, bfloat16, half, float, double}");
// x * y, and 0 where y is 0 (whatever x is, NaN and inf included).
PX_BINARY_OP("MulNoNan", "T: {bfloat16, half, float, double, complex64, complex128}");
// atan(y / x) in the quadrant of (x, y); TensorFlow names the inputs y, x.
PX_REGISTER_OP(OpDefBuilder("Atan2")
                   .Input("y: T")
                   .Input("x: T")
                   .Output("z: T")
                   .Attr(kUnaryRealTypes)
                   .SetShapeFn(BroadcastShape));

// ---------------------------------------------------------------------------
// Unary arithmetic
// ---------------------------------------------------------------------------

PX_UNARY_OP("Neg", kUnaryTypes);
PX_UNARY_OP("Abs", "T: {bfloat16, half, float, double, int8, int16, int32, int64}");
PX_UNARY_OP("Sign", kUnaryTypes);
PX_UNARY_OP("Exp", kUnaryComplexTypes);
PX_UNARY_OP("Log", kUnaryComplexTypes);
PX_UNARY_OP("Log1p", kUnaryComplexTypes);
PX_UNARY_OP("Sqrt", kUnaryComplexTypes);
PX_UNARY_OP("Rsqrt", kUnaryComplexTypes);
PX_UNARY_OP("Square", kUnaryUnsignedTypes);
PX_UNARY_OP("Reciprocal", kUnaryTypes);
PX_UNARY_OP("Inv", kUnaryTypes);
PX_UNARY_OP("Tanh", kUnaryComplexTypes);
PX_UNARY_OP("Sigmoid", kUnaryComplexTypes);
PX_UNARY_OP("Erf", kUnaryRealTypes);
PX_UNARY_OP("Erfc", kUnaryRealTypes);
PX_UNARY_OP("Sin", kUnaryComplexTypes);
PX_UNARY_OP("Cos", kUnaryComplexTypes);
PX_UNARY_OP("Tan", kUnaryComplexTypes);
PX_UNARY_OP("Sinh", kUnaryComplexTypes);
PX_UNARY_OP("Cosh", kUnaryComplexTypes);
PX_UNARY_OP("Asin", kUnaryComplexTypes);
PX_UNARY_OP("Acos", kUnaryComplexTypes);
PX_UNARY_OP("Atan", kUnaryComplexTypes);
PX_UNARY_OP("Asinh", kUnaryComplexTypes);
PX_UNARY_OP("Acosh", kUnaryComplexTypes);
PX_UNARY_OP("Atanh", kUnaryComplexTypes);
PX_UNARY_OP("Expm1", kUnaryComplexTypes);
PX_UNARY_OP("Floor", kUnaryRealTypes);
PX_UNARY_OP("Ceil", kUnaryRealTypes);
PX_UNARY_OP("Round", kUnaryTypes);
// The nearest integer, ties to even (the same as Round for floats).
PX_UNARY_OP("Rint", kUnaryRealTypes);
// The logarithm of the absolute value of the gamma function, and its
// derivative (NaN at 0 and the negative integers).
PX_UNARY_OP("Lgamma", kUnaryRealTypes);
PX_UNARY_OP("Digamma", kUnaryRealTypes);

// ---------------------------------------------------------------------------
// Comparisons and logic
// ---------------------------------------------------------------------------

PX_COMPARE_OP("Less");
PX_COMPARE_OP("LessEqual");
PX_COMPARE_OP("Greater");
PX_COMPARE_OP("GreaterEqual");
PX_EQUALITY_OP("Equal");
PX_EQUALITY_OP("NotEqual");

// IsFinite, IsNan, IsInf: a bool per element of a floating-point tensor.
#define PX_FLOAT_CLASS_OP(name)                 \
  PX_REGISTER_OP(OpDefBuilder(name)             \
                     .Input("x: T")             \
                     .Output("y: bool")         \
                     .Attr(kUnaryRealTypes)     \
                     .SetShapeFn(UnchangedShape))

PX_FLOAT_CLASS_OP("IsFinite");
PX_FLOAT_CLASS_OP("IsNan");
PX_FLOAT_CLASS_OP("IsInf");

PX_REGISTER_OP(OpDefBuilder("LogicalAnd")
                   .Input("x: bool")
                   .Input("y: bool")
                   .Output("z: bool")
                   .SetShapeFn(BroadcastShape));
PX_REGISTER_OP(OpDefBuilder("LogicalOr")
                   .Input("x: bool")
                   .Input("y: bool")
                   .Output("z: bool")
                   .SetShapeFn(BroadcastShape));
PX_REGISTER_OP(OpDefBuilder("LogicalNot")
                   .Input("x: bool")
                   .Output("y: bool")
                   .SetShapeFn(UnchangedShape));

PX_REGISTER_OP(OpDefBuilder("Select")
                   .Input("condition: bool")
                   .Input("t: T")
                   .Input("e: T")
                   .Output("output: T")
                   .Attr("T: type")
                   .SetShapeFn(SelectShape));
PX_REGISTER_OP(OpDefBuilder("SelectV2")
                   .Input("condition: bool")
                   .Input("t: T")
                   .Input("e: T")
                   .Output("output: T")
                   .Attr("T: type")
                   .SetShapeFn(SelectV2Shape));

// ---------------------------------------------------------------------------
// Cast
// ---------------------------------------------------------------------------

PX_REGISTER_OP(OpDefBuilder("Cast")
                   .Input("x: SrcT")
                   .Output("y: DstT")
                   .Attr("SrcT: type")
                   .Attr("DstT: type")
                   .Attr("Truncate: bool = false")
                   .SetShapeFn(UnchangedShape));

// ---------------------------------------------------------------------------
// Fused elementwise trees (made by the optimizer; sdk/fused_elementwise.h)
// ---------------------------------------------------------------------------

// The output shape is the "shape" attribute; every input has that many
// elements or one.
absl::Status FusedElementwiseShape(InferenceContext& ctx) {
  PX_ASSIGN_OR_RETURN(std::vector<int64_t> shape, GetAttrIntList(ctx.node(), "shape"));
  for (int64_t d : shape) {
    if (d < 0) return ctx.Error("the shape attribute has a negative dimension");
  }
  int64_t elements = 1;
  PX_RETURN_IF_ERROR(CheckedNumElements(ctx, Shape(shape.begin(), shape.end()),
                                        "the shape attribute's number of elements", &elements));
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const PartialShape& in = ctx.input(i);
    if (!in.fully_defined()) continue;
    int64_t n = 1;
    PX_RETURN_IF_ERROR(CheckedNumElements(ctx, in.dims(), absl::StrCat("input ", i, "'s number of elements"), &n));
    if (n != 1 && n != elements) {
      return ctx.Error(absl::StrCat("input ", i, " has ", n, " elements; a fused elementwise op takes ",
                                    elements, " or 1"));
    }
  }
  ctx.set_output(0, PartialShape(Shape(shape.begin(), shape.end())));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("_PlexusFusedElementwise")
                   .Input("inputs: N * T")
                   .Output("y: T")
                   .Attr("T: {float, double}")
                   .Attr("N: int >= 1")
                   .Attr("shape: list(int)")
                   .Attr("program: list(string)")
                   .SetShapeFn(FusedElementwiseShape));

}  // namespace
}  // namespace plexus

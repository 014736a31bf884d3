// The matrix-diagonal ops: MatrixDiag (a batch of diagonals to matrices),
// MatrixDiagPart (matrices to their diagonals) and MatrixSetDiag (matrices
// with diagonals replaced), in TensorFlow's three versions: V1 (the main
// diagonal), V2 (a diagonal or a band k, num_rows, num_cols, padding_value;
// short diagonals aligned left) and V3 (V2 with the align attribute). Names,
// arguments, attributes and type sets follow TensorFlow's array_ops.cc; the
// geometry and its checks are plexus/sdk/matrix_diag_shapes.h, shared with
// the kernels.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/array_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/sdk/matrix_diag_shapes.h"
#include "plexus/status.h"

namespace plexus {
namespace {

using array_util::Dims;
using matrix_diag::Band;

// One of LEFT_RIGHT, RIGHT_LEFT, LEFT_LEFT, RIGHT_RIGHT (checked by the shape
// functions).
constexpr char kAlignAttr[] = "align: string = \"RIGHT_LEFT\"";

// Fails unless input i is a scalar (when its rank is known).
absl::Status CheckScalar(InferenceContext& ctx, int i, const char* message) {
  const PartialShape& s = ctx.input(i);
  if (s.rank_known() && s.rank() != 0) {
    return ctx.Error(absl::StrCat(message, ", received shape: ", s.ToString()));
  }
  return absl::OkStatus();
}

// The band of input i (k). False when its value is not known yet.
absl::StatusOr<bool> KnownBand(InferenceContext& ctx, int i, Band* band) {
  const PartialShape& s = ctx.input(i);
  Dims values;
  const bool known = array_util::KnownInts(ctx, i, &values);
  Dims shape;
  if (s.rank_known()) {
    shape = s.dim_vector();
  } else if (known) {
    shape = {static_cast<int64_t>(values.size())};
  }
  PX_RETURN_IF_ERROR(array_util::Check(
      ctx, matrix_diag::ReadBand(shape, known ? &values : nullptr, band)));
  return known;
}

// V3's align attribute (V1 and V2 have none: LEFT_LEFT).
absl::Status CheckAlign(InferenceContext& ctx) {
  if (ctx.node().FindAttr("align") == nullptr) return absl::OkStatus();
  PX_ASSIGN_OR_RETURN(std::string align, GetAttrString(ctx.node(), "align"));
  matrix_diag::Align a;
  return array_util::Check(ctx, matrix_diag::ParseAlign(align, &a));
}

// The shape of input i as dims (-1 unknown); false when its rank is unknown.
bool InputDims(const InferenceContext& ctx, int i, Dims* dims) {
  const PartialShape& s = ctx.input(i);
  if (!s.rank_known()) return false;
  *dims = s.dim_vector();
  return true;
}

absl::Status MatrixDiagShape(InferenceContext& ctx) {
  Band band;
  bool known_values = true;
  if (ctx.num_inputs() > 1) {
    PX_RETURN_IF_ERROR(CheckAlign(ctx));
    PX_ASSIGN_OR_RETURN(known_values, KnownBand(ctx, 1, &band));
    PX_RETURN_IF_ERROR(CheckScalar(ctx, 2, "num_rows must be a scalar"));
    PX_RETURN_IF_ERROR(CheckScalar(ctx, 3, "num_cols must be a scalar"));
    PX_RETURN_IF_ERROR(CheckScalar(ctx, 4, "padding_value must be a scalar"));
  }
  Dims diag;
  if (!known_values || !InputDims(ctx, 0, &diag)) {
    ctx.set_output(0, PartialShape::Unknown());
    return absl::OkStatus();
  }
  int64_t num_rows = -1, num_cols = -1;
  bool sizes_known = true;
  if (ctx.num_inputs() > 1) {
    sizes_known = array_util::KnownScalarInt(ctx, 2, &num_rows) &&
                  array_util::KnownScalarInt(ctx, 3, &num_cols);
    if (!sizes_known) num_rows = num_cols = -1;
  }
  Dims out;
  int64_t rows = -1, cols = -1;
  PX_RETURN_IF_ERROR(array_util::Check(
      ctx, matrix_diag::DiagShape(diag, band, num_rows, num_cols, &out, &rows, &cols)));
  if (!sizes_known) out[out.size() - 1] = out[out.size() - 2] = -1;
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

absl::Status MatrixDiagPartShape(InferenceContext& ctx) {
  Band band;
  bool known_values = true;
  if (ctx.num_inputs() > 1) {
    PX_RETURN_IF_ERROR(CheckAlign(ctx));
    PX_ASSIGN_OR_RETURN(known_values, KnownBand(ctx, 1, &band));
    PX_RETURN_IF_ERROR(CheckScalar(ctx, 2, "Padding must be scalar"));
  }
  Dims in;
  if (!InputDims(ctx, 0, &in)) {
    ctx.set_output(0, PartialShape::Unknown());
    return absl::OkStatus();
  }
  if (in.size() < 2) {
    return ctx.Error(absl::StrCat("input must be at least 2-dim, received shape: ",
                                  ctx.input(0).ToString()));
  }
  if (!known_values) {
    ctx.set_output(0, PartialShape::Unknown());
    return absl::OkStatus();
  }
  Dims out;
  PX_RETURN_IF_ERROR(array_util::Check(ctx, matrix_diag::DiagPartShape(in, band, &out)));
  ctx.set_output(0, PartialShape(out));
  return absl::OkStatus();
}

absl::Status MatrixSetDiagShape(InferenceContext& ctx) {
  Band band;
  bool known_values = true;
  if (ctx.num_inputs() > 2) {
    PX_RETURN_IF_ERROR(CheckAlign(ctx));
    PX_ASSIGN_OR_RETURN(known_values, KnownBand(ctx, 2, &band));
  }
  Dims in, diag;
  if (InputDims(ctx, 0, &in) && InputDims(ctx, 1, &diag) && known_values) {
    PX_RETURN_IF_ERROR(array_util::Check(ctx, matrix_diag::SetDiagCheck(in, diag, band)));
  } else if (InputDims(ctx, 0, &in) && in.size() < 2) {
    return ctx.Error(absl::StrCat("input must be at least 2-dim, received shape: ",
                                  ctx.input(0).ToString()));
  }
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("MatrixDiag")
                   .Input("diagonal: T")
                   .Output("output: T")
                   .Attr("T: type")
                   .SetShapeFn(MatrixDiagShape));
PX_REGISTER_OP(OpDefBuilder("MatrixDiagV2")
                   .Input("diagonal: T")
                   .Input("k: int32")
                   .Input("num_rows: int32")
                   .Input("num_cols: int32")
                   .Input("padding_value: T")
                   .Output("output: T")
                   .Attr("T: type")
                   .SetShapeFn(MatrixDiagShape));
PX_REGISTER_OP(OpDefBuilder("MatrixDiagV3")
                   .Input("diagonal: T")
                   .Input("k: int32")
                   .Input("num_rows: int32")
                   .Input("num_cols: int32")
                   .Input("padding_value: T")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr(kAlignAttr)
                   .SetShapeFn(MatrixDiagShape));

PX_REGISTER_OP(OpDefBuilder("MatrixDiagPart")
                   .Input("input: T")
                   .Output("diagonal: T")
                   .Attr("T: type")
                   .SetShapeFn(MatrixDiagPartShape));
PX_REGISTER_OP(OpDefBuilder("MatrixDiagPartV2")
                   .Input("input: T")
                   .Input("k: int32")
                   .Input("padding_value: T")
                   .Output("diagonal: T")
                   .Attr("T: type")
                   .SetShapeFn(MatrixDiagPartShape));
PX_REGISTER_OP(OpDefBuilder("MatrixDiagPartV3")
                   .Input("input: T")
                   .Input("k: int32")
                   .Input("padding_value: T")
                   .Output("diagonal: T")
                   .Attr("T: type")
                   .Attr(kAlignAttr)
                   .SetShapeFn(MatrixDiagPartShape));

PX_REGISTER_OP(OpDefBuilder("MatrixSetDiag")
                   .Input("input: T")
                   .Input("diagonal: T")
                   .Output("output: T")
                   .Attr("T: type")
                   .SetShapeFn(MatrixSetDiagShape));
PX_REGISTER_OP(OpDefBuilder("MatrixSetDiagV2")
                   .Input("input: T")
                   .Input("diagonal: T")
                   .Input("k: int32")
                   .Output("output: T")
                   .Attr("T: type")
                   .SetShapeFn(MatrixSetDiagShape));
PX_REGISTER_OP(OpDefBuilder("MatrixSetDiagV3")
                   .Input("input: T")
                   .Input("diagonal: T")
                   .Input("k: int32")
                   .Output("output: T")
                   .Attr("T: type")
                   .Attr(kAlignAttr)
                   .SetShapeFn(MatrixSetDiagShape));

}  // namespace
}  // namespace plexus

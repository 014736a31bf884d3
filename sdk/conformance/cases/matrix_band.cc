// Cases for MatrixBandPart: lower and upper triangles, diagonals, bands of
// every width up to the matrix's, negative widths (the whole side), wide and
// tall matrices, batches, zero-size matrices and batches, int32 and int64
// widths, and float special values (kept bit for bit inside the band). Shape
// and width errors are refused by the core's shape function
// (array_shapes::MatrixBandPart) before any kernel runs.
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "cases.h"

namespace plexus::conformance {
namespace {

bool Supported(DataType t) { return IsFloatType(t) || IsIntegerType(t) || t == DataType::kBool; }

PX_CONFORMANCE_CASES("MatrixBandPart")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  auto add = [&](const std::string& label, Tensor x, int64_t lower, int64_t upper,
                 DataType it = DataType::kInt64) {
    cases.push_back(Case(ctx.op, label)
                        .Input(std::move(x))
                        .Input(IntTensor(it, {}, {lower}))
                        .Input(IntTensor(it, {}, {upper}))
                        .Attr("T", ctx.dtype)
                        .Attr("Tindex", it));
  };
  auto data = [&](const Shape& s) { return RandomTensor(ctx.dtype, s, ctx.rng, -100, 100); };
  add("[4,4] lower triangle (-1, 0)", data({4, 4}), -1, 0);
  add("[4,4] upper triangle (0, -1)", data({4, 4}), 0, -1);
  add("[4,4] diagonal (0, 0)", data({4, 4}), 0, 0);
  add("[4,4] everything (-1, -1)", data({4, 4}), -1, -1);
  add("[3,5] band (1, 2), int32 widths", data({3, 5}), 1, 2, DataType::kInt32);
  add("[5,3] band (2, 1)", data({5, 3}), 2, 1);
  add("[3,5] widths at the limits (3, 5)", data({3, 5}), 3, 5);
  add("[2,3,4,4] batch, band (1, 1)", data({2, 3, 4, 4}), 1, 1);
  add("[1,1] (0, 0)", data({1, 1}), 0, 0);
  add("zero-size matrix [2,0,3]", data({2, 0, 3}), 0, 1);
  add("zero-size batch [0,2,2]", data({0, 2, 2}), 1, 0);
  if (IsFloatType(ctx.dtype)) {
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> v = {std::nan(""), inf, -inf, -0.0, 1e30, -1e-30, 6e4, -2.5, 0.5};
    add("NaN, inf, -0.0", MakeTensor(ctx.dtype, {3, 3}, v), 1, 0);
  }
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

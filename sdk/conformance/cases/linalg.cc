// Cases for the linalg family: MatMul, BatchMatMul, BatchMatMulV2,
// BatchMatMulV3, Einsum and MatrixSolve. The source is
// tests/ops/linalg_test.cc.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cases.h"

namespace plexus::conformance {
namespace {

// The element types the matrix products are defined on (among those the
// conformance tool compares): float types, int32 and int64; BatchMatMulV2
// adds int16, BatchMatMulV3's inputs also int8 and uint8.
bool IsMatMulType(DataType t) {
  return IsFloatType(t) || t == DataType::kInt32 || t == DataType::kInt64;
}

// The reference accumulates in double, a plugin may accumulate in the type
// (float sums of up to ~20 products of values in [-3, 3]): float results may
// differ by a few 1e-5 in absolute terms where they cancel towards zero.
Tolerance ProductTolerance(DataType t) {
  Tolerance tol = DefaultTolerance(t);
  if (t == DataType::kFloat) tol.atol = 1e-4;
  return tol;
}

// A [rows, cols] operand holding infinities, NaN and -0.0 among finite values
// of magnitude >= 0.5 (so that no product of an infinity is 0 * inf by chance
// of the other operand; products stay far from overflow in every float type).
Tensor SpecialMatrix(DataType t, int64_t rows, int64_t cols) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> pattern = {1.5, inf, -2, -0.0, 0.5, -inf, 2.5, nan, -1, 3, -0.5, 1};
  std::vector<double> v(rows * cols);
  for (size_t i = 0; i < v.size(); ++i) v[i] = pattern[i % pattern.size()];
  return MakeTensor(t, {rows, cols}, v);
}

// Finite values in [0.5, 3] with random signs.
Tensor NonZeroTensor(DataType t, const Shape& shape, std::mt19937& rng) {
  Tensor x = RandomTensor(t, shape, rng, 0.5, 3);
  std::vector<double> v(x.num_elements());
  std::bernoulli_distribution coin(0.5);
  for (size_t i = 0; i < v.size(); ++i) v[i] = (coin(rng) ? -1 : 1) * ElementAsDouble(x, i);
  return MakeTensor(t, shape, v);
}

// Integer values in [-3, 3] stored in any type.
Tensor SmallIntegers(DataType t, const Shape& shape, std::mt19937& rng) {
  Tensor x = RandomTensor(DataType::kInt32, shape, rng, -3, 3);
  std::vector<double> v(x.num_elements());
  for (size_t i = 0; i < v.size(); ++i) v[i] = ElementAsDouble(x, i);
  return MakeTensor(t, shape, v);
}

// ---------------------------------------------------------------------------
// MatMul
// ---------------------------------------------------------------------------

PX_CONFORMANCE_CASES("MatMul")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsMatMulType(t)) return cases;
  // m, k, n and the transpose flags.
  struct Size {
    int64_t m, k, n;
    bool ta, tb;
    const char* label;
  };
  const std::vector<Size> sizes = {
      {3, 4, 5, false, false, "random [3,4] x [4,5]"},
      {3, 4, 5, true, false, "transpose_a [4,3] x [4,5]"},
      {5, 6, 2, false, true, "transpose_b [5,6] x [2,6]"},
      {1, 7, 1, true, true, "both transposed, vectors [7,1] x [1,7]"},
      {33, 17, 9, false, false, "larger [33,17] x [17,9]"},
      {0, 3, 2, false, false, "zero-size m: [0,3] x [3,2]"},
      {2, 0, 3, false, true, "empty k gives zeros: [2,0] x [3,0]"},
  };
  for (const Size& s : sizes) {
    const Shape as = s.ta ? Shape{s.k, s.m} : Shape{s.m, s.k};
    const Shape bs = s.tb ? Shape{s.n, s.k} : Shape{s.k, s.n};
    cases.push_back(Case(ctx.op, s.label)
                        .Input(RandomTensor(t, as, ctx.rng))
                        .Input(RandomTensor(t, bs, ctx.rng))
                        .Attr("T", t)
                        .Attr("transpose_a", s.ta)
                        .Attr("transpose_b", s.tb)
                        .WithTolerance(ProductTolerance(t)));
  }
  if (IsFloatType(t)) {
    cases.push_back(Case(ctx.op, "NaN, inf and -0.0")
                        .Input(SpecialMatrix(t, 4, 3))
                        .Input(NonZeroTensor(t, {3, 5}, ctx.rng))
                        .Attr("T", t)
                        .Attr("transpose_a", false)
                        .Attr("transpose_b", false)
                        .WithTolerance(ProductTolerance(t)));
  }
  return cases;
}

// ---------------------------------------------------------------------------
// BatchMatMul, BatchMatMulV2, BatchMatMulV3
// ---------------------------------------------------------------------------

// x [batch..., m, k] and y [batch..., k, n] before adjoints.
Shape MatrixShape(Shape batch, int64_t rows, int64_t cols, bool adj) {
  batch.push_back(adj ? cols : rows);
  batch.push_back(adj ? rows : cols);
  return batch;
}

// The output type of BatchMatMulV3 for inputs of type `t`: int8 and uint8
// products accumulate into int32 (Tout cannot be 8-bit).
DataType V3OutputType(DataType t) {
  return t == DataType::kInt8 || t == DataType::kUInt8 ? DataType::kInt32 : t;
}

// Sets the op's type attributes for operands of type `x` and `y`.
Case& SetBatchMatMulTypes(Case& c, DataType x, DataType y, DataType out) {
  if (c.op() == "BatchMatMulV3") return c.Attr("Ta", x).Attr("Tb", y).Attr("Tout", out);
  return c.Attr("T", x);
}

PX_CONFORMANCE_CASES("BatchMatMul", "BatchMatMulV2", "BatchMatMulV3")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  const bool v1 = ctx.op == "BatchMatMul";
  const bool v3 = ctx.op == "BatchMatMulV3";
  bool ok = IsMatMulType(t);
  if (!v1) ok = ok || t == DataType::kInt16;
  if (v3) ok = ok || t == DataType::kInt8 || t == DataType::kUInt8;
  if (!ok) return cases;
  const DataType out = v3 ? V3OutputType(t) : t;
  const Tolerance tol = ProductTolerance(out);

  auto add = [&](const std::string& label, const Shape& bx, const Shape& by, int64_t m, int64_t k,
                 int64_t n, bool ax, bool ay) {
    Case c(ctx.op, label);
    c.Input(RandomTensor(t, MatrixShape(bx, m, k, ax), ctx.rng))
        .Input(RandomTensor(t, MatrixShape(by, k, n, ay), ctx.rng))
        .Attr("adj_x", ax)
        .Attr("adj_y", ay)
        .WithTolerance(tol);
    SetBatchMatMulTypes(c, t, t, out);
    cases.push_back(std::move(c));
  };
  add("random batch [3]: [3,4,5] x [3,5,3]", {3}, {3}, 4, 5, 3, false, false);
  add("adj_x, batch [2,3]", {2, 3}, {2, 3}, 4, 5, 3, true, false);
  add("adj_y, rank 2", {}, {}, 4, 5, 3, false, true);
  add("adj_x and adj_y, batch [3]", {3}, {3}, 1, 6, 2, true, true);
  add("zero-size batch [0]", {0}, {0}, 4, 5, 3, false, false);
  add("empty k gives zeros", {2}, {2}, 3, 0, 4, false, false);
  if (!v1) {
    // V2 and V3 broadcast the batch dimensions, a rank-2 operand included.
    add("broadcast batch [2,1] x [1,3]", {2, 1}, {1, 3}, 3, 4, 2, false, true);
    add("broadcast batch [4] x rank 2", {4}, {}, 3, 4, 2, true, false);
  }
  if (IsFloatType(t)) {
    Case c(ctx.op, "NaN, inf and -0.0");
    // The special matrix's values, as a batch of two [3,4] matrices.
    Tensor x = SpecialMatrix(t, 2 * 3, 4);
    std::vector<double> v(x.num_elements());
    for (int64_t i = 0; i < x.num_elements(); ++i) v[i] = ElementAsDouble(x, i);
    c.Input(MakeTensor(t, {2, 3, 4}, v))
        .Input(NonZeroTensor(t, {2, 4, 2}, ctx.rng))
        .Attr("adj_x", false)
        .Attr("adj_y", false)
        .WithTolerance(tol);
    SetBatchMatMulTypes(c, t, t, out);
    cases.push_back(std::move(c));
  }
  if (v3) {
    // Inputs of another type than the output (and than each other).
    DataType y = t, mixed_out = out;
    if (t == DataType::kHalf) y = mixed_out = DataType::kFloat;
    if (t == DataType::kBFloat16) mixed_out = DataType::kFloat;
    if (t == DataType::kUInt8) y = DataType::kInt8;
    if (t == DataType::kInt16) mixed_out = DataType::kInt64;
    if (y != t || mixed_out != out) {
      Case c(ctx.op, "mixed types, broadcast [2,3,4] x [4,5]");
      c.Input(RandomTensor(t, {2, 3, 4}, ctx.rng))
          .Input(RandomTensor(y, {4, 5}, ctx.rng))
          .Attr("adj_x", false)
          .Attr("adj_y", false)
          .WithTolerance(ProductTolerance(mixed_out));
      SetBatchMatMulTypes(c, t, y, mixed_out);
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

// ---------------------------------------------------------------------------
// Einsum
// ---------------------------------------------------------------------------

PX_CONFORMANCE_CASES("Einsum")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsMatMulType(t)) return cases;
  struct Eq {
    std::string equation;
    std::vector<Shape> shapes;
    const char* label;
  };
  const std::vector<Eq> eqs = {
      {"ij,jk->ik", {{3, 4}, {4, 5}}, "matmul"},
      {"bhqd,bhkd->bhqk", {{2, 3, 4, 5}, {2, 3, 6, 5}}, "attention scores"},
      {"ij->ji", {{3, 4}}, "transpose, one operand"},
      {"i,j->ij", {{3}, {4}}, "outer product"},
      {"ij,jk", {{3, 4}, {4, 5}}, "implicit output"},
      {"ij->", {{3, 4}}, "sum to rank 0"},
      {"ijm,jk->ik", {{2, 3, 4}, {3, 5}}, "label summed in one operand only"},
      {"ij,jk->ik", {{0, 4}, {4, 5}}, "zero-size"},
  };
  for (const Eq& e : eqs) {
    Case c(ctx.op, e.label + std::string(": ") + e.equation);
    // A label summed in one operand only may be reduced first (TensorFlow
    // does), rounding the partial sums to the type: in half and bfloat16 the
    // inputs of that case are small integers, so every partial sum is exact.
    const bool exact = (t == DataType::kHalf || t == DataType::kBFloat16) &&
                       e.equation == "ijm,jk->ik";
    for (const Shape& s : e.shapes) {
      c.Input(exact ? SmallIntegers(t, s, ctx.rng) : RandomTensor(t, s, ctx.rng));
    }
    c.Attr("equation", e.equation)
        .Attr("N", static_cast<int64_t>(e.shapes.size()))
        .Attr("T", t)
        .WithTolerance(ProductTolerance(t));
    cases.push_back(std::move(c));
  }
  return cases;
}

// MatrixSolve: well-conditioned random systems (diagonally dominant, so
// that float solutions stay close to the reference's double ones), the
// adjoint, batches, several and zero right-hand sides, empty matrices, and
// TensorFlow's errors: a singular matrix, a non-square one, rows that do
// not match, batch dimensions that differ.
Tensor DominantMatrices(DataType t, int64_t batch, int64_t m, std::mt19937& rng) {
  Tensor x = RandomTensor(t, {batch, m, m}, rng, -1, 1);
  std::vector<double> v(x.num_elements());
  for (size_t i = 0; i < v.size(); ++i) v[i] = ElementAsDouble(x, i);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < m; ++i) v[(b * m + i) * m + i] += (i % 2 ? -1 : 1) * (m + 1.0);
  }
  return MakeTensor(t, {batch, m, m}, v);
}

PX_CONFORMANCE_CASES("MatrixSolve")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (t != DataType::kFloat && t != DataType::kDouble) return cases;
  auto add = [&](const std::string& label, Tensor a, Tensor b, bool adjoint) {
    Case c(ctx.op, label);
    c.Input(std::move(a)).Input(std::move(b)).Attr("T", t).Attr("adjoint", adjoint);
    Tolerance tol = DefaultTolerance(t);
    if (t == DataType::kFloat) tol = {1e-5, 1e-4};
    c.WithTolerance(tol);
    return c;
  };
  for (bool adjoint : {false, true}) {
    const std::string adj = adjoint ? " adjoint" : "";
    cases.push_back(add("[3,3] x [3,2]" + adj, DominantMatrices(t, 1, 3, ctx.rng),
                        RandomTensor(t, {1, 3, 2}, ctx.rng), adjoint));
    cases.push_back(add("batch [4,5,5] x [4,5,3]" + adj, DominantMatrices(t, 4, 5, ctx.rng),
                        RandomTensor(t, {4, 5, 3}, ctx.rng), adjoint));
  }
  cases.push_back(add("a permutation (pivoting)", MakeTensor(t, {3, 3}, {0, 2, 0, 0, 0, 3, 1, 0, 0}),
                      MakeTensor(t, {3, 1}, {1, 2, 3}), false));
  cases.push_back(add("zero right-hand sides", DominantMatrices(t, 2, 3, ctx.rng),
                      RandomTensor(t, {2, 3, 0}, ctx.rng), false));
  cases.push_back(add("empty matrices", RandomTensor(t, {2, 0, 0}, ctx.rng),
                      RandomTensor(t, {2, 0, 3}, ctx.rng), false));
  cases.push_back(add("error: singular", MakeTensor(t, {2, 2}, {1, 2, 2, 4}),
                      MakeTensor(t, {2, 1}, {1, 1}), false)
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  cases.push_back(add("error: not square", RandomTensor(t, {2, 3}, ctx.rng),
                      RandomTensor(t, {2, 1}, ctx.rng), false)
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  cases.push_back(add("error: rows differ", DominantMatrices(t, 1, 3, ctx.rng),
                      RandomTensor(t, {1, 4, 1}, ctx.rng), false)
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  cases.push_back(add("error: batch dimensions differ", DominantMatrices(t, 2, 3, ctx.rng),
                      RandomTensor(t, {3, 3, 1}, ctx.rng), false)
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

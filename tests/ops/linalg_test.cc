// Per-op tests of the linalg family: cpu kernels against the reference kernels.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "op_test_util.h"

namespace plexus::testing {
namespace {

// Expects the case to succeed on the reference (ExpectCpuMatchesReference
// alone also accepts both devices failing alike), then compares the cpu.
void Check(const OpCase& c) {
  auto r = c.Run("REF:0");
  ASSERT_TRUE(r.ok()) << c.Describe() << ": " << r.status();
  ExpectCpuMatchesReference(c);
}
void Check(const OpCase& c, Tolerance tol) {
  auto r = c.Run("REF:0");
  ASSERT_TRUE(r.ok()) << c.Describe() << ": " << r.status();
  ExpectCpuMatchesReference(c, tol);
}

// The reference accumulates in double, the cpu kernels in the type (float
// sums of up to ~40 products of values in [-3, 3]): float results may differ
// by a few 1e-5 in absolute terms where they cancel towards zero.
Tolerance ProductTolerance(DataType t) {
  Tolerance tol = DefaultTolerance(t);
  if (t == DataType::kFloat) tol.atol = 1e-4;
  return tol;
}

std::vector<DataType> MatMulTypes() {
  return {DataType::kFloat, DataType::kDouble, DataType::kHalf,
          DataType::kBFloat16, DataType::kInt32, DataType::kInt64};
}

std::vector<double> RunCpu(const OpCase& c, Shape* shape = nullptr) {
  auto r = c.Run("CPU:0");
  EXPECT_TRUE(r.ok()) << c.Describe() << ": " << r.status();
  if (!r.ok()) return {};
  if (shape) *shape = (*r)[0].shape();
  std::vector<double> v((*r)[0].num_elements());
  for (int64_t i = 0; i < (*r)[0].num_elements(); ++i) v[i] = ElementAsDouble((*r)[0], i);
  return v;
}

OpCase MatMul(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  OpCase c("MatMul");
  c.Input(a).Input(b).Attr("T", a.dtype()).Attr("transpose_a", ta).Attr("transpose_b", tb);
  return c;
}

TEST(MatMul, MatchesReference) {
  std::mt19937 rng(1);
  // m, k, n: ordinary, vectors, a large-ish one and empty dimensions.
  const std::vector<std::vector<int64_t>> sizes = {
      {3, 4, 5}, {1, 7, 1}, {1, 6, 4}, {5, 6, 1}, {33, 17, 9}, {0, 3, 2}, {2, 0, 3}, {2, 3, 0}};
  for (DataType t : MatMulTypes()) {
    for (const auto& s : sizes) {
      for (bool ta : {false, true}) {
        for (bool tb : {false, true}) {
          Shape as = ta ? Shape{s[1], s[0]} : Shape{s[0], s[1]};
          Shape bs = tb ? Shape{s[2], s[1]} : Shape{s[1], s[2]};
          Check(
              MatMul(RandomTensor(t, as, rng), RandomTensor(t, bs, rng), ta, tb),
              ProductTolerance(t));
        }
      }
    }
  }
}

TEST(MatMul, ExactValues) {
  Tensor a = MakeTensor(DataType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = MakeTensor(DataType::kFloat, {3, 2}, {7, 8, 9, 10, 11, 12});
  EXPECT_EQ(RunCpu(MatMul(a, b, false, false)), (std::vector<double>{58, 64, 139, 154}));
  EXPECT_EQ(RunCpu(MatMul(a, a, false, true)), (std::vector<double>{14, 32, 32, 77}));
  Tensor empty_k = MakeTensor(DataType::kInt32, {2, 0}, {});
  Tensor b0 = MakeTensor(DataType::kInt32, {0, 2}, {});
  EXPECT_EQ(RunCpu(MatMul(empty_k, b0, false, false)), (std::vector<double>{0, 0, 0, 0}));
}

TEST(MatMul, Errors) {
  Tensor a = MakeTensor(DataType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectBothFail(MatMul(a, a, false, false), absl::StatusCode::kInvalidArgument,
                 "Matrix size-incompatible");
  Tensor v = MakeTensor(DataType::kFloat, {3}, {1, 2, 3});
  ExpectBothFail(MatMul(a, v, false, false), absl::StatusCode::kInvalidArgument, "rank-2");
}

OpCase BatchMatMul(const std::string& op, const Tensor& x, const Tensor& y, bool adj_x,
                   bool adj_y) {
  OpCase c(op);
  c.Input(x).Input(y).Attr("adj_x", adj_x).Attr("adj_y", adj_y);
  if (op == "BatchMatMulV3") {
    c.Attr("Ta", x.dtype()).Attr("Tb", y.dtype()).Attr("Tout", x.dtype());
  } else {
    c.Attr("T", x.dtype());
  }
  return c;
}

// x [batch..., m, k] and y [batch..., k, n] (before adjoints).
Shape MatrixShape(Shape batch, int64_t rows, int64_t cols, bool adj) {
  batch.push_back(adj ? cols : rows);
  batch.push_back(adj ? rows : cols);
  return batch;
}

TEST(BatchMatMul, MatchesReference) {
  std::mt19937 rng(2);
  const std::vector<Shape> batches = {{}, {3}, {2, 3}, {0}};
  for (const char* op : {"BatchMatMul", "BatchMatMulV2", "BatchMatMulV3"}) {
    std::vector<DataType> types = MatMulTypes();
    if (std::string(op) != "BatchMatMul") types.push_back(DataType::kInt16);
    for (DataType t : types) {
      for (const Shape& batch : batches) {
        for (bool ax : {false, true}) {
          for (bool ay : {false, true}) {
            Tensor x = RandomTensor(t, MatrixShape(batch, 4, 5, ax), rng);
            Tensor y = RandomTensor(t, MatrixShape(batch, 5, 3, ay), rng);
            Check(BatchMatMul(op, x, y, ax, ay), ProductTolerance(t));
          }
        }
      }
    }
  }
}

// V2 and V3 broadcast batch dimensions, including a rank-2 operand.
TEST(BatchMatMul, Broadcasting) {
  std::mt19937 rng(3);
  const std::vector<std::pair<Shape, Shape>> batches = {
      {{2, 1}, {1, 3}}, {{4}, {}}, {{}, {4}}, {{1}, {3}}, {{2, 3}, {3}}, {{5}, {1}}};
  for (const char* op : {"BatchMatMulV2", "BatchMatMulV3"}) {
    for (DataType t : {DataType::kFloat, DataType::kHalf, DataType::kInt32}) {
      for (const auto& [bx, by] : batches) {
        for (bool ax : {false, true}) {
          for (bool ay : {false, true}) {
            Tensor x = RandomTensor(t, MatrixShape(bx, 3, 4, ax), rng);
            Tensor y = RandomTensor(t, MatrixShape(by, 4, 2, ay), rng);
            Check(BatchMatMul(op, x, y, ax, ay), ProductTolerance(t));
          }
        }
      }
    }
  }
  Tensor x = MakeTensor(DataType::kFloat, {2, 1, 2}, {1, 2, 3, 4});
  Tensor y = MakeTensor(DataType::kFloat, {2, 1}, {10, 100});
  Shape shape;
  EXPECT_EQ(RunCpu(BatchMatMul("BatchMatMulV2", x, y, false, false), &shape),
            (std::vector<double>{210, 430}));
  EXPECT_EQ(shape, (Shape{2, 1, 1}));
}

// V3 with inputs of another dtype than the output.
TEST(BatchMatMul, V3MixedTypes) {
  std::mt19937 rng(4);
  const std::vector<std::vector<DataType>> combos = {
      {DataType::kInt8, DataType::kInt8, DataType::kInt32},
      {DataType::kUInt8, DataType::kInt8, DataType::kInt32},
      {DataType::kHalf, DataType::kFloat, DataType::kFloat},
      {DataType::kBFloat16, DataType::kBFloat16, DataType::kFloat},
      {DataType::kInt16, DataType::kInt16, DataType::kInt64}};
  for (const auto& combo : combos) {
    OpCase c("BatchMatMulV3");
    c.Input(RandomTensor(combo[0], {2, 3, 4}, rng))
        .Input(RandomTensor(combo[1], {4, 5}, rng))
        .Attr("Ta", combo[0])
        .Attr("Tb", combo[1])
        .Attr("Tout", combo[2]);
    Check(c, ProductTolerance(combo[2]));
  }
}

TEST(BatchMatMul, Errors) {
  Tensor x = MakeTensor(DataType::kFloat, {2, 2, 3}, std::vector<double>(12, 1));
  Tensor y = MakeTensor(DataType::kFloat, {3, 3, 2}, std::vector<double>(18, 1));
  ExpectBothFail(BatchMatMul("BatchMatMul", x, y, false, false),
                 absl::StatusCode::kInvalidArgument, "Batch");
  ExpectBothFail(BatchMatMul("BatchMatMulV2", x, y, false, false),
                 absl::StatusCode::kInvalidArgument, "batch dimensions");
  Tensor z = MakeTensor(DataType::kFloat, {2, 2, 2}, std::vector<double>(8, 1));
  ExpectBothFail(BatchMatMul("BatchMatMulV2", x, z, false, false),
                 absl::StatusCode::kInvalidArgument, "Matrix size-incompatible");
  Tensor v = MakeTensor(DataType::kFloat, {3}, {1, 2, 3});
  ExpectBothFail(BatchMatMul("BatchMatMulV2", v, v, false, false),
                 absl::StatusCode::kInvalidArgument, "rank 2");
}

OpCase Einsum(const std::string& equation, const std::vector<Tensor>& inputs) {
  OpCase c("Einsum");
  for (const Tensor& t : inputs) c.Input(t);
  c.Attr("equation", equation)
      .Attr("N", static_cast<int64_t>(inputs.size()))
      .Attr("T", inputs[0].dtype());
  return c;
}

TEST(Einsum, MatchesReference) {
  std::mt19937 rng(5);
  struct Case {
    std::string equation;
    std::vector<Shape> shapes;
  };
  const std::vector<Case> cases = {
      {"ij,jk->ik", {{3, 4}, {4, 5}}},
      {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}},
      {"bhqd,bhkd->bhqk", {{2, 3, 4, 5}, {2, 3, 6, 5}}},
      {"ij->ji", {{3, 4}}},
      {"i,j->ij", {{3}, {4}}},
      {"ij,j->i", {{3, 4}, {4}}},
      {"ij,jk", {{3, 4}, {4, 5}}},  // implicit output: "ik"
      {"ij->i", {{3, 4}}},
      {"ij->", {{3, 4}}},
      {"ji,jk->ki", {{4, 3}, {4, 5}}},
      {"bqd,bkd->bkq", {{2, 3, 4}, {2, 5, 4}}},
      {"ij,kl->ijkl", {{2, 3}, {2, 2}}},
      {"ijm,jk->ik", {{2, 3, 4}, {3, 5}}},  // m summed in the first operand only
      {"i,i->", {{6}, {6}}},
      {"ij,jk->ik", {{0, 4}, {4, 5}}},
      {"ij,jk->ik", {{3, 0}, {0, 5}}},
  };
  for (DataType t : MatMulTypes()) {
    for (const Case& c : cases) {
      std::vector<Tensor> inputs;
      // The cpu kernel sums m away first and rounds that partial sum to the
      // type, as TensorFlow does; in 16-bit floats that rounding alone can
      // exceed the default tolerance. Whole-number inputs keep it exact.
      const bool exact_inputs = c.equation == "ijm,jk->ik" &&
                                (t == DataType::kHalf || t == DataType::kBFloat16);
      for (const Shape& s : c.shapes) {
        Tensor x = RandomTensor(t, s, rng);
        if (exact_inputs) {
          std::vector<double> v(x.num_elements());
          for (int64_t i = 0; i < x.num_elements(); ++i) v[i] = std::round(ElementAsDouble(x, i));
          x = MakeTensor(t, s, v);
        }
        inputs.push_back(x);
      }
      Check(Einsum(c.equation, inputs), ProductTolerance(t));
    }
  }
}

TEST(Einsum, ExactValues) {
  Tensor a = MakeTensor(DataType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor v = MakeTensor(DataType::kFloat, {3}, {1, 0, -1});
  Shape shape;
  EXPECT_EQ(RunCpu(Einsum("ij->ji", {a}), &shape), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(shape, (Shape{3, 2}));
  EXPECT_EQ(RunCpu(Einsum("ij,j->i", {a, v})), (std::vector<double>{-2, -2}));
  EXPECT_EQ(RunCpu(Einsum("ij->", {a})), (std::vector<double>{21}));
}

TEST(Einsum, UnsupportedAndBadShapes) {
  Tensor a = MakeTensor(DataType::kFloat, {3, 3}, std::vector<double>(9, 1));
  ExpectBothFail(Einsum("ii->i", {a}), absl::StatusCode::kUnimplemented, "ii->i");
  ExpectBothFail(Einsum("...ij,...jk->...ik", {a, a}), absl::StatusCode::kUnimplemented,
                 "...ij,...jk->...ik");
  ExpectBothFail(Einsum("ij,jk,kl->il", {a, a, a}), absl::StatusCode::kUnimplemented,
                 "ij,jk,kl->il");
  Tensor b = MakeTensor(DataType::kFloat, {2, 3}, std::vector<double>(6, 1));
  ExpectBothFail(Einsum("ij,jk->ik", {b, b}), absl::StatusCode::kInvalidArgument, "label 'j'");
  ExpectBothFail(Einsum("ijk->i", {b}), absl::StatusCode::kInvalidArgument, "labels");
}

}  // namespace
}  // namespace plexus::testing

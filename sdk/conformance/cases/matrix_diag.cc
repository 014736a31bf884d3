// Cases for the matrix-diagonal ops: MatrixDiag, MatrixDiagPart and
// MatrixSetDiag in their three versions. One diagonal and bands [lower,
// upper] above, below and across the main diagonal, wide and tall matrices,
// batches, every alignment (V3), num_rows / num_cols given or derived and
// padding values (V2, V3), zero-size matrices, and the errors TensorFlow
// reports (a band outside the matrix, lower > upper, a diagonal of the wrong
// shape, too few rows).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cases.h"

namespace plexus::conformance {
namespace {

using Ints = std::vector<int64_t>;

bool Supported(DataType t) { return IsFloatType(t) || IsIntegerType(t) || t == DataType::kBool; }

int Version(const std::string& op) {
  return op.back() == '3' ? 3 : op.back() == '2' ? 2 : 1;
}

Tensor K(const Ints& k) {
  return k.size() == 1 ? IntTensor(DataType::kInt32, {}, k)
                       : IntTensor(DataType::kInt32, {static_cast<int64_t>(k.size())}, k);
}

Tensor Scalar32(int64_t v) { return IntTensor(DataType::kInt32, {}, {v}); }

const char* const kAligns[] = {"RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT"};

struct Band {
  Ints k;
  const char* label;
};

PX_CONFORMANCE_CASES("MatrixDiagPart", "MatrixDiagPartV2",
                     "MatrixDiagPartV3")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!Supported(t)) return cases;
  const int version = Version(ctx.op);
  auto add = [&](const std::string& label, const Shape& shape, const Ints& k, const char* align) {
    Case c(ctx.op, label);
    c.Input(RandomTensor(t, shape, ctx.rng, -50, 50)).Attr("T", t);
    if (version > 1) c.Input(K(k)).Input(MakeTensor(t, {}, {7}));
    if (version == 3) c.Attr("align", align);
    return c;
  };
  for (const Shape& s : {Shape{4, 4}, Shape{3, 5}, Shape{2, 5, 3}, Shape{0, 3, 3}, Shape{2, 0, 3}}) {
    cases.push_back(add("main diagonal " + ShapeToString(s), s, {0}, "RIGHT_LEFT"));
  }
  if (version == 1) return cases;
  const std::vector<Band> bands = {{{1}, "k=1"},         {{-2}, "k=-2"},
                                   {{-1, 2}, "k=[-1,2]"}, {{1, 3}, "k=[1,3]"},
                                   {{-3, -1}, "k=[-3,-1]"}};
  for (const Band& b : bands) {
    for (const char* align : kAligns) {
      if (version == 2 && align != kAligns[2]) continue;
      cases.push_back(add(std::string(b.label) + " " + align + " [2,4,5]", {2, 4, 5}, b.k, align));
      cases.push_back(add(std::string(b.label) + " " + align + " [5,4]", {5, 4}, b.k, align));
    }
  }
  cases.push_back(add("zero rows, k=[0,1]", {2, 0, 3}, {0, 1}, "LEFT_RIGHT"));
  cases.push_back(add("error: k beyond the columns", {3, 4}, {4}, "RIGHT_LEFT")
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  cases.push_back(add("error: k beyond the rows", {3, 4}, {-3, 0}, "RIGHT_LEFT")
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  cases.push_back(add("error: lower > upper", {3, 4}, {1, 0}, "RIGHT_LEFT")
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  return cases;
}

PX_CONFORMANCE_CASES("MatrixDiag", "MatrixDiagV2", "MatrixDiagV3")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!Supported(t)) return cases;
  const int version = Version(ctx.op);
  auto add = [&](const std::string& label, const Shape& shape, const Ints& k, int64_t rows,
                 int64_t cols, const char* align) {
    Case c(ctx.op, label);
    c.Input(RandomTensor(t, shape, ctx.rng, -50, 50)).Attr("T", t);
    if (version > 1) {
      c.Input(K(k)).Input(Scalar32(rows)).Input(Scalar32(cols)).Input(MakeTensor(t, {}, {3}));
    }
    if (version == 3) c.Attr("align", align);
    return c;
  };
  for (const Shape& s : {Shape{4}, Shape{2, 3}, Shape{2, 1, 3}, Shape{0}, Shape{3, 0}}) {
    cases.push_back(add("main diagonal " + ShapeToString(s), s, {0}, -1, -1, "RIGHT_LEFT"));
  }
  if (version == 1) return cases;
  cases.push_back(add("k=1, derived size", {2, 3}, {1}, -1, -1, "RIGHT_LEFT"));
  cases.push_back(add("k=-1, 5 rows", {3}, {-1}, 5, -1, "RIGHT_LEFT"));
  cases.push_back(add("k=-1, 5 columns", {3}, {-1}, -1, 5, "RIGHT_LEFT"));
  cases.push_back(add("k=0, 3x6", {2, 3}, {0}, 3, 6, "RIGHT_LEFT"));
  cases.push_back(add("empty diagonals, k=2", {2, 0}, {2}, -1, -1, "RIGHT_LEFT"));
  for (const char* align : kAligns) {
    if (version == 2 && align != kAligns[2]) continue;
    cases.push_back(add(std::string("k=[-1,1] ") + align, {2, 3, 3}, {-1, 1}, -1, -1, align));
    cases.push_back(add(std::string("k=[1,2] 4x5 ") + align, {3, 2, 4}, {1, 2}, 4, 5, align));
    cases.push_back(add(std::string("k=[-2,0] ") + align, {3, 4}, {-2, 0}, -1, -1, align));
  }
  cases.push_back(add("error: too few rows", {3}, {0}, 2, -1, "RIGHT_LEFT")
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  cases.push_back(add("error: rows and columns both too many", {3}, {0}, 4, 4, "RIGHT_LEFT")
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  cases.push_back(add("error: 2 diagonals for k=[-1,1]", {2, 3}, {-1, 1}, -1, -1, "RIGHT_LEFT")
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  return cases;
}

PX_CONFORMANCE_CASES("MatrixSetDiag", "MatrixSetDiagV2", "MatrixSetDiagV3")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!Supported(t)) return cases;
  const int version = Version(ctx.op);
  auto add = [&](const std::string& label, const Shape& in, const Shape& diag, const Ints& k,
                 const char* align) {
    Case c(ctx.op, label);
    c.Input(RandomTensor(t, in, ctx.rng, -50, 50))
        .Input(RandomTensor(t, diag, ctx.rng, -50, 50))
        .Attr("T", t);
    if (version > 1) c.Input(K(k));
    if (version == 3) c.Attr("align", align);
    return c;
  };
  cases.push_back(add("main diagonal [4,4]", {4, 4}, {4}, {0}, "RIGHT_LEFT"));
  cases.push_back(add("main diagonal [2,3,5]", {2, 3, 5}, {2, 3}, {0}, "RIGHT_LEFT"));
  cases.push_back(add("zero-size batch", {0, 3, 3}, {0, 3}, {0}, "RIGHT_LEFT"));
  cases.push_back(add("error: diagonal too long", {3, 4}, {4}, {0}, "RIGHT_LEFT")
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  if (version == 1) return cases;
  cases.push_back(add("k=1 [3,4]", {3, 4}, {3}, {1}, "RIGHT_LEFT"));
  cases.push_back(add("k=-2 [2,5,4]", {2, 5, 4}, {2, 3}, {-2}, "RIGHT_LEFT"));
  for (const char* align : kAligns) {
    if (version == 2 && align != kAligns[2]) continue;
    cases.push_back(add(std::string("k=[-1,1] [3,4] ") + align, {3, 4}, {3, 3}, {-1, 1}, align));
    cases.push_back(add(std::string("k=[-3,-1] [2,5,4] ") + align, {2, 5, 4}, {2, 3, 4}, {-3, -1},
                        align));
  }
  cases.push_back(add("error: k beyond the columns", {3, 4}, {1}, {4}, "RIGHT_LEFT")
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  cases.push_back(add("error: band of the wrong height", {3, 4}, {2, 3}, {-1, 1}, "RIGHT_LEFT")
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

// Cases for ReverseV2: single, several, negative and no axes, int32 and
// int64 axes, ranks 1 to 8 (8 is the most TensorFlow's kernels take; rank 9
// is a kernel error), size-1 and zero-size dimensions, a scalar (returned as
// it is), and float special values moved bit for bit. Invalid axes are
// refused by the core's shape function (array_shapes::ReverseAxes) before
// any kernel runs, so they are not kernel error cases here.
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "cases.h"

namespace plexus::conformance {
namespace {

using I = std::vector<int64_t>;

bool Supported(DataType t) { return IsFloatType(t) || IsIntegerType(t) || t == DataType::kBool; }

PX_CONFORMANCE_CASES("ReverseV2")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  auto add = [&](const std::string& label, const Shape& shape, const I& axes,
                 DataType it = DataType::kInt32) {
    Case c(ctx.op, label);
    c.Input(RandomTensor(ctx.dtype, shape, ctx.rng, -100, 100))
        .Input(IntTensor(it, {static_cast<int64_t>(axes.size())}, axes))
        .Attr("T", ctx.dtype)
        .Attr("Tidx", it);
    cases.push_back(std::move(c));
    return &cases.back();
  };
  add("[7] axis 0", {7}, {0});
  add("[2,3,4] axis 1", {2, 3, 4}, {1});
  add("[2,3,4] axes 0, 2", {2, 3, 4}, {0, 2});
  add("[2,3,4] axes -1, -2, int64", {2, 3, 4}, {-1, -2}, DataType::kInt64);
  add("[2,3,4] every axis", {2, 3, 4}, {2, 0, 1});
  add("[3,5] no axes", {3, 5}, {});
  add("[37,41] axis 1 (long rows)", {37, 41}, {1});
  add("size-1 dims [1,4,1] axes 0, 1", {1, 4, 1}, {0, 1});
  add("zero-size [0,3] axis 1", {0, 3}, {1});
  add("scalar, no axes", {}, {});
  add("rank 8 [2,1,2,1,2,1,2,3] axes 0, 4, 7", {2, 1, 2, 1, 2, 1, 2, 3}, {0, 4, 7});
  add("error: rank 9", {1, 2, 1, 1, 1, 1, 1, 1, 2}, {0})
      ->ExpectError(absl::StatusCode::kUnimplemented);
  if (IsFloatType(ctx.dtype)) {
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> v = {std::nan(""), inf, -inf, -0.0, 1e30, -1e-30, 6e4, -2.5};
    Case c(ctx.op, "NaN, inf, -0.0");
    c.Input(MakeTensor(ctx.dtype, {2, 4}, v))
        .Input(IntTensor(DataType::kInt32, {1}, {1}))
        .Attr("T", ctx.dtype)
        .Attr("Tidx", DataType::kInt32);
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

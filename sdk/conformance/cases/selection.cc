// Cases for the selection and indexed-update ops: TopKV2, Where, the segment
// reductions (Segment*, UnsortedSegmentMax/Min/Prod) and the tensor-scatter
// family (TensorScatter*).
//
// TopKV2's k and the scatter indices live in host memory: the shape function
// refuses a known bad k, the kernels refuse bad indices. Segment ids live in
// device memory, so unsorted, negative and out-of-range ids are kernel
// errors. Where's output size depends on the values: the host cannot
// preallocate it, so both output modes test the kernel's own allocation.
// TopKV2 runs with ties (small integers) to hold kernels to TensorFlow's
// lower-index-first order.
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "cases.h"

namespace plexus::conformance {
namespace {

using I = std::vector<int64_t>;
using absl::StatusCode;
constexpr DataType kI32 = DataType::kInt32;
constexpr DataType kI64 = DataType::kInt64;

bool Numeric(DataType t) { return IsFloatType(t) || IsIntegerType(t); }

Tensor Data(const CaseContext& ctx, const Shape& shape) { return RandomTensor(ctx.dtype, shape, ctx.rng, -3, 3); }
// Small integers in [0, 4]: many ties.
Tensor Ties(const CaseContext& ctx, const Shape& shape) { return RandomTensor(ctx.dtype, shape, ctx.rng, 0, 4); }
Tensor Scalar(int64_t v, DataType t = kI32) { return IntTensor(t, {}, {v}); }
Tensor Vec(const I& v, DataType t = kI32) { return IntTensor(t, {static_cast<int64_t>(v.size())}, v); }

// NaN, infinities and signed zeros among ordinary values.
Tensor Specials(DataType t, const Shape& shape) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> cycle = {1.5, std::nan(""), -inf, 0.0, -0.0, inf, -2.0, 1.5};
  std::vector<double> v(static_cast<size_t>(NumElements(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = cycle[i % cycle.size()];
  return MakeTensor(t, shape, v);
}

// ---------------------------------------------------------------------------
// TopKV2, Where
// ---------------------------------------------------------------------------

PX_CONFORMANCE_CASES("TopKV2")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Numeric(ctx.dtype)) return cases;
  auto make = [&](const std::string& label, Tensor input, Tensor k, DataType index_type = kI32,
                  bool sorted = true) {
    const DataType tk = k.dtype();
    return Case(ctx.op, label)
        .Input(std::move(input))
        .Input(std::move(k))
        .Attr("T", ctx.dtype)
        .Attr("Tk", tk)
        .Attr("index_type", index_type)
        .Attr("sorted", sorted);
  };
  cases.push_back(make("[4,9] k 3", Data(ctx, {4, 9}), Scalar(3)));
  cases.push_back(make("[2,3,8] ties k 5, int64 indices", Ties(ctx, {2, 3, 8}), Scalar(5, kI64), kI64));
  cases.push_back(make("[17] ties k 17 (full sort), int16 indices", Ties(ctx, {17}), Scalar(17), DataType::kInt16));
  cases.push_back(make("[3,6] ties k 2 unsorted", Ties(ctx, {3, 6}), Scalar(2), kI32, false));
  cases.push_back(make("[5,7] k 0", Data(ctx, {5, 7}), Scalar(0)));
  cases.push_back(make("zero rows [0,4] k 2", Data(ctx, {0, 4}), Scalar(2)));
  cases.push_back(make("[3,200] k 7", Data(ctx, {3, 200}), Scalar(7)));
  if (IsFloatType(ctx.dtype)) {
    cases.push_back(make("NaN, infinities, signed zeros", Specials(ctx.dtype, {2, 8}), Scalar(6)));
  }
  cases.push_back(make("error: k 7 of 6 columns", Data(ctx, {2, 6}), Scalar(7)).ExpectError(StatusCode::kInvalidArgument));
  cases.push_back(make("error: negative k", Data(ctx, {2, 6}), Scalar(-1)).ExpectError(StatusCode::kInvalidArgument));
  cases.push_back(make("error: scalar input", Data(ctx, {}), Scalar(0)).ExpectError(StatusCode::kInvalidArgument));
  return cases;
}

PX_CONFORMANCE_CASES("Where")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Numeric(ctx.dtype) && ctx.dtype != DataType::kBool) return cases;
  auto make = [&](const std::string& label, Tensor input) {
    return Case(ctx.op, label).Input(std::move(input)).Attr("T", ctx.dtype);
  };
  // About half zeros (false).
  auto sparse = [&](const Shape& shape) { return RandomTensor(ctx.dtype, shape, ctx.rng, 0, 1); };
  cases.push_back(make("[7]", sparse({7})));
  cases.push_back(make("[3,4,5]", sparse({3, 4, 5})));
  cases.push_back(make("all zero [2,3]", MakeTensor(ctx.dtype, {2, 3}, std::vector<double>(6, 0.0))));
  cases.push_back(make("all nonzero [2,2]", MakeTensor(ctx.dtype, {2, 2}, {1, 1, 1, 1})));
  cases.push_back(make("zero-size [2,0,3]", sparse({2, 0, 3})));
  if (IsFloatType(ctx.dtype)) cases.push_back(make("NaN and signed zeros", Specials(ctx.dtype, {3, 8})));
  cases.push_back(make("error: scalar", sparse({})).ExpectError(StatusCode::kInvalidArgument));
  return cases;
}

// ---------------------------------------------------------------------------
// Segment reductions
// ---------------------------------------------------------------------------

PX_CONFORMANCE_CASES("SegmentSum", "SegmentMean", "SegmentMax", "SegmentMin", "SegmentProd")
(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Numeric(ctx.dtype)) return cases;
  const bool prod = ctx.op == "SegmentProd";
  auto data = [&](const Shape& shape) {
    return prod ? RandomTensor(ctx.dtype, shape, ctx.rng, 1, 2) : Data(ctx, shape);
  };
  auto make = [&](const std::string& label, Tensor d, Tensor ids) {
    const DataType it = ids.dtype();
    return Case(ctx.op, label).Input(std::move(d)).Input(std::move(ids)).Attr("T", ctx.dtype).Attr("Tindices", it);
  };
  cases.push_back(make("[6,3] ids 0 0 1 1 1 2", data({6, 3}), Vec({0, 0, 1, 1, 1, 2})));
  cases.push_back(make("[5,2,2] gaps, int64 ids", data({5, 2, 2}), Vec({1, 1, 3, 3, 6}, kI64)));
  cases.push_back(make("[4] one segment", data({4}), Vec({0, 0, 0, 0})));
  cases.push_back(make("[40,5] runs", data({40, 5}),
                       Vec({0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 4, 4, 5, 5, 5, 5, 5, 6, 7, 7, 8, 8, 9, 9, 9,
                            10, 10, 11, 11, 11, 12, 13, 13, 13, 14, 14, 15, 15, 15, 15})));
  cases.push_back(make("zero rows [0,3]", data({0, 3}), Vec({})));
  if (IsFloatType(ctx.dtype)) cases.push_back(make("NaN and infinities", Specials(ctx.dtype, {8}), Vec({0, 0, 1, 1, 1, 2, 2, 3})));
  cases.push_back(make("error: ids not increasing", data({3, 2}), Vec({0, 2, 1})).ExpectError(StatusCode::kInvalidArgument));
  cases.push_back(make("error: negative id", data({3}), Vec({-1, 0, 0}, kI64)).ExpectError(StatusCode::kInvalidArgument));
  cases.push_back(make("error: ids shorter than data", data({3, 2}), Vec({0, 1})).ExpectError(StatusCode::kInvalidArgument));
  cases.push_back(make("error: ids not a vector", data({2, 2}), IntTensor(kI32, {2, 1}, {0, 1})).ExpectError(StatusCode::kInvalidArgument));
  return cases;
}

PX_CONFORMANCE_CASES("UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Numeric(ctx.dtype)) return cases;
  const bool prod = ctx.op == "UnsortedSegmentProd";
  auto data = [&](const Shape& shape) {
    return prod ? RandomTensor(ctx.dtype, shape, ctx.rng, 1, 2) : Data(ctx, shape);
  };
  auto make = [&](const std::string& label, Tensor d, Tensor ids, Tensor num) {
    const DataType it = ids.dtype(), nt = num.dtype();
    return Case(ctx.op, label)
        .Input(std::move(d))
        .Input(std::move(ids))
        .Input(std::move(num))
        .Attr("T", ctx.dtype)
        .Attr("Tindices", it)
        .Attr("Tnumsegments", nt);
  };
  cases.push_back(make("[6,3] shuffled ids, an empty segment", data({6, 3}), Vec({2, 0, 2, 3, 0, 2}), Scalar(5)));
  cases.push_back(make("[2,3,4] by [2,3] ids, negatives dropped", data({2, 3, 4}),
                       IntTensor(kI64, {2, 3}, {1, -1, 0, 1, 1, -3}), Scalar(3, kI64)));
  cases.push_back(make("[300,4] wide-ish", data({300, 4}), RandomTensor(kI32, {300}, ctx.rng, -1, 9), Scalar(10)));
  cases.push_back(make("zero segments", data({0, 2}), Vec({}), Scalar(0)));
  if (IsFloatType(ctx.dtype)) {
    cases.push_back(make("NaN and infinities", Specials(ctx.dtype, {8}), Vec({0, 0, 1, 1, 1, 2, 2, 0}), Scalar(4)));
  }
  cases.push_back(make("error: id 7 of 3 segments", data({3}), Vec({0, 7, 1}), Scalar(3)).ExpectError(StatusCode::kInvalidArgument));
  cases.push_back(make("error: negative num_segments", data({3}), Vec({0, 1, 1}), Scalar(-2)).ExpectError(StatusCode::kInvalidArgument));
  cases.push_back(make("error: ids not a prefix of data", data({3, 2}), Vec({0, 1}), Scalar(2)).ExpectError(StatusCode::kInvalidArgument));
  return cases;
}

// ---------------------------------------------------------------------------
// TensorScatterUpdate, Add, Sub, Max, Min
// ---------------------------------------------------------------------------

PX_CONFORMANCE_CASES("TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub", "TensorScatterMax",
                     "TensorScatterMin")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const bool update = ctx.op == "TensorScatterUpdate";
  if (!Numeric(ctx.dtype) && !(update && ctx.dtype == DataType::kBool)) return cases;
  auto make = [&](const std::string& label, Tensor tensor, Tensor indices, Tensor updates) {
    const DataType it = indices.dtype();
    return Case(ctx.op, label)
        .Input(std::move(tensor))
        .Input(std::move(indices))
        .Input(std::move(updates))
        .Attr("T", ctx.dtype)
        .Attr("Tindices", it);
  };
  cases.push_back(make("[5,3] rows, distinct", Data(ctx, {5, 3}), IntTensor(kI32, {2, 1}, {4, 1}), Data(ctx, {2, 3})));
  cases.push_back(make("[4,3] elements, int64", Data(ctx, {4, 3}), IntTensor(kI64, {3, 2}, {0, 2, 3, 0, 1, 1}),
                       Data(ctx, {3})));
  cases.push_back(make("[2,3,2] by [2,2,1] batched, repeated", Data(ctx, {3, 2, 2}),
                       IntTensor(kI32, {2, 2, 1}, {2, 0, 2, 1}), Data(ctx, {2, 2, 2, 2})));
  cases.push_back(make("whole tensor, K = 0", Data(ctx, {2, 2}), IntTensor(kI32, {1, 0}, {}), Data(ctx, {1, 2, 2})));
  cases.push_back(make("no updates [0,1]", Data(ctx, {3}), IntTensor(kI64, {0, 1}, {}), Data(ctx, {0})));
  if (IsFloatType(ctx.dtype)) {
    cases.push_back(make("NaN and infinities", Specials(ctx.dtype, {4, 2}), IntTensor(kI32, {4, 1}, {0, 1, 2, 1}),
                         Specials(ctx.dtype, {4, 2})));
  }
  if (update) {
    cases.push_back(make("int16 indices", Data(ctx, {4}), IntTensor(DataType::kInt16, {2, 1}, {3, 0}), Data(ctx, {2})));
  }
  cases.push_back(make("error: index 4 of 4", Data(ctx, {4, 2}), IntTensor(kI32, {2, 1}, {1, 4}), Data(ctx, {2, 2}))
                      .ExpectError(StatusCode::kInvalidArgument));
  cases.push_back(make("error: negative index", Data(ctx, {2, 2}), IntTensor(kI64, {1, 2}, {-1, 0}), Data(ctx, {1}))
                      .ExpectError(StatusCode::kInvalidArgument));
  cases.push_back(make("error: updates shape", Data(ctx, {4, 2}), IntTensor(kI32, {2, 1}, {1, 2}), Data(ctx, {1, 2}))
                      .ExpectError(StatusCode::kInvalidArgument));
  cases.push_back(make("error: indices deeper than the rank", Data(ctx, {4}), IntTensor(kI32, {1, 2}, {0, 0}),
                       Data(ctx, {1}))
                      .ExpectError(StatusCode::kInvalidArgument));
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

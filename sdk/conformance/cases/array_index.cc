// Cases for the array family's index-driven ops: Gather, GatherV2, GatherNd,
// OneHot and Range (the shape and data-movement ops are in array.cc).
//
// Gather indices live in ordinary (device) memory, so only the kernel can
// check them: out-of-range indices are kernel error cases. OneHot's depth and
// Range's start/limit/delta are host-memory inputs whose values the shape
// function sees; it refuses a negative depth and invalid ranges itself,
// except for half and bfloat16 Ranges, whose values it does not read: those
// errors are the kernel's.
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cases.h"

namespace plexus::conformance {
namespace {

using I = std::vector<int64_t>;
using absl::StatusCode;
constexpr DataType kI32 = DataType::kInt32;
constexpr DataType kI64 = DataType::kInt64;

bool Supported(DataType t) { return IsFloatType(t) || IsIntegerType(t) || t == DataType::kBool; }

Tensor Data(const CaseContext& ctx, const Shape& shape) {
  return RandomTensor(ctx.dtype, shape, ctx.rng, -100, 100);
}

// NaN, infinities, -0.0 and large magnitudes cycled over `shape`.
Tensor Specials(DataType t, const Shape& shape) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> cycle = {std::nan(""), inf, -inf, -0.0, 1e30, -1e-30, 6e4, -2.5};
  std::vector<double> v(static_cast<size_t>(NumElements(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = cycle[i % cycle.size()];
  return MakeTensor(t, shape, v);
}

Tensor Vec(const I& v, DataType t = kI32) {
  return IntTensor(t, {static_cast<int64_t>(v.size())}, v);
}
Tensor Scalar(int64_t v, DataType t = kI32) { return IntTensor(t, {}, {v}); }

// Random valid indices in [0, limit).
Tensor Indices(const CaseContext& ctx, DataType t, const Shape& shape, int64_t limit) {
  return RandomTensor(t, shape, ctx.rng, 0, static_cast<double>(limit - 1));
}

// ---------------------------------------------------------------------------
// Gather, GatherV2, GatherNd
// ---------------------------------------------------------------------------

PX_CONFORMANCE_CASES("Gather")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  auto make = [&](const std::string& label, Tensor params, Tensor indices) {
    const DataType it = indices.dtype();
    return Case(ctx.op, label)
        .Input(std::move(params))
        .Input(std::move(indices))
        .Attr("Tparams", ctx.dtype)
        .Attr("Tindices", it);
  };
  cases.push_back(make("[5,3,4] by [2,3] indices", Data(ctx, {5, 3, 4}), Indices(ctx, kI32, {2, 3}, 5)));
  cases.push_back(make("[5,3,4] by [7] int64 indices", Data(ctx, {5, 3, 4}), Indices(ctx, kI64, {7}, 5)));
  cases.push_back(make("vector params, repeated indices", Data(ctx, {6}), IntTensor(kI32, {2, 2}, {5, 0, 5, 3})));
  cases.push_back(make("scalar index", Data(ctx, {4, 3}), Scalar(3, kI64)));
  cases.push_back(make("zero-size indices [0]", Data(ctx, {5, 2}), Vec({})));
  cases.push_back(make("zero-size params [0,3], no indices", Data(ctx, {0, 3}), Vec({})));
  if (IsFloatType(ctx.dtype)) {
    cases.push_back(make("NaN, inf, -0.0 rows", Specials(ctx.dtype, {4, 2}), Vec({3, 0, 1, 2, 1})));
  }
  cases.push_back(make("error: index 7 of 5", Data(ctx, {5, 2}), Vec({0, 7, 1}))
                      .ExpectError(StatusCode::kInvalidArgument));
  cases.push_back(make("error: negative index", Data(ctx, {5, 2}), Vec({0, -1}, kI64))
                      .ExpectError(StatusCode::kInvalidArgument));
  cases.push_back(make("error: index into an empty dimension", Data(ctx, {0, 2}), Vec({0}))
                      .ExpectError(StatusCode::kInvalidArgument));
  return cases;
}

PX_CONFORMANCE_CASES("GatherV2")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  auto make = [&](const std::string& label, Tensor params, Tensor indices, Tensor axis,
                  int64_t batch_dims = 0) {
    const DataType it = indices.dtype(), at = axis.dtype();
    Case c(ctx.op, label);
    c.Input(std::move(params))
        .Input(std::move(indices))
        .Input(std::move(axis))
        .Attr("Tparams", ctx.dtype)
        .Attr("Tindices", it)
        .Attr("Taxis", at);
    if (batch_dims != 0) c.Attr("batch_dims", batch_dims);
    return c;
  };
  cases.push_back(make("[3,2] axis 0 by [2,2]", Data(ctx, {3, 2}), Indices(ctx, kI32, {2, 2}, 3), Scalar(0)));
  cases.push_back(make("[5,3,4] axis 2 by [6], int64 indices", Data(ctx, {5, 3, 4}),
                       Indices(ctx, kI64, {6}, 4), Scalar(2)));
  cases.push_back(make("[2,3] axis -1, scalar index", Data(ctx, {2, 3}), Scalar(2), Scalar(-1, kI64)));
  cases.push_back(make("batch_dims 1 axis 1", Data(ctx, {5, 3, 4}), Indices(ctx, kI64, {5, 2}, 3),
                       Scalar(1, kI64), 1));
  cases.push_back(make("batch_dims -1 axis 1", Data(ctx, {2, 3}), IntTensor(kI32, {2, 2}, {2, 0, 1, 1}),
                       Scalar(1), -1));
  cases.push_back(make("batch_dims 1 axis 2", Data(ctx, {2, 3, 4}), Indices(ctx, kI32, {2, 5}, 4),
                       Scalar(2), 1));
  cases.push_back(make("zero-size params [2,0] axis 0", Data(ctx, {2, 0}), Vec({1, 0, 1}), Scalar(0)));
  cases.push_back(make("error: negative index on axis 1", Data(ctx, {2, 3}),
                       IntTensor(kI64, {2, 2}, {0, 1, -1, 2}), Scalar(1))
                      .ExpectError(StatusCode::kInvalidArgument));
  cases.push_back(make("error: index equal to the dimension", Data(ctx, {4, 2}), Vec({1, 4}), Scalar(0))
                      .ExpectError(StatusCode::kInvalidArgument));
  return cases;
}

PX_CONFORMANCE_CASES("GatherNd")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  auto make = [&](const std::string& label, Tensor params, Tensor indices) {
    const DataType it = indices.dtype();
    return Case(ctx.op, label)
        .Input(std::move(params))
        .Input(std::move(indices))
        .Attr("Tparams", ctx.dtype)
        .Attr("Tindices", it);
  };
  cases.push_back(make("[5,3,4] by [2,2] (slices)", Data(ctx, {5, 3, 4}),
                       IntTensor(kI32, {2, 2}, {4, 2, 0, 1})));
  cases.push_back(make("[2,3] by [3,2] (elements), int64", Data(ctx, {2, 3}),
                       IntTensor(kI64, {3, 2}, {1, 2, 0, 0, 1, 0})));
  cases.push_back(make("[2,3] by [1,1] (rows)", Data(ctx, {2, 3}), IntTensor(kI32, {1, 1}, {1})));
  cases.push_back(make("batched indices [2,2,1]", Data(ctx, {4, 3}), Indices(ctx, kI64, {2, 2, 1}, 4)));
  cases.push_back(make("[3,4,2] by full [5,3] indices", Data(ctx, {3, 4, 2}),
                       IntTensor(kI32, {5, 3}, {0, 0, 0, 2, 3, 1, 1, 1, 0, 2, 0, 1, 0, 3, 1})));
  cases.push_back(make("empty index tuples [2,0]", Data(ctx, {2, 3}), IntTensor(kI32, {2, 0}, {})));
  cases.push_back(make("zero-size indices [0,2]", Data(ctx, {3, 3}), IntTensor(kI64, {0, 2}, {})));
  cases.push_back(make("error: [1,3] outside [2,3]", Data(ctx, {2, 3}),
                       IntTensor(kI32, {2, 2}, {0, 0, 1, 3}))
                      .ExpectError(StatusCode::kInvalidArgument));
  cases.push_back(make("error: negative index", Data(ctx, {2, 3}), IntTensor(kI64, {1, 2}, {-1, 0}))
                      .ExpectError(StatusCode::kInvalidArgument));
  return cases;
}

// ---------------------------------------------------------------------------
// OneHot
// ---------------------------------------------------------------------------

PX_CONFORMANCE_CASES("OneHot")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (!Supported(ctx.dtype)) return cases;
  const bool is_bool = ctx.dtype == DataType::kBool;
  auto add = [&](const std::string& label, Tensor indices, int64_t depth, int64_t axis,
                 bool swap_on_off = false) {
    const DataType ti = indices.dtype();
    // Bool: on true and off false (or swapped); others: random on and off.
    Tensor on = is_bool ? MakeTensor(ctx.dtype, {}, {swap_on_off ? 0.0 : 1.0}) : Data(ctx, {});
    Tensor off = is_bool ? MakeTensor(ctx.dtype, {}, {swap_on_off ? 1.0 : 0.0}) : Data(ctx, {});
    Case c(ctx.op, label);
    c.Input(std::move(indices))
        .Input(Scalar(depth))
        .Input(std::move(on))
        .Input(std::move(off))
        .Attr("T", ctx.dtype)
        .Attr("TI", ti);
    if (axis != -1) c.Attr("axis", axis);
    cases.push_back(std::move(c));
  };
  // Indices outside [0, depth) give a row of off_value.
  add("int32 indices with -1, depth 3", Vec({0, 2, -1}), 3, -1);
  add("int64 [2,3] axis 1 (middle), depth 4", RandomTensor(kI64, {2, 3}, ctx.rng, -1, 4), 4, 1, true);
  add("uint8 indices axis 0, index past depth", IntTensor(DataType::kUInt8, {4}, {0, 3, 1, 200}), 3, 0);
  add("int8 scalar index", IntTensor(DataType::kInt8, {}, {2}), 5, -1, true);
  add("depth 0", Vec({0, 1}), 0, -1);
  add("zero-size indices [0,2]", IntTensor(kI64, {0, 2}, {}), 3, -1);
  return cases;
}

// ---------------------------------------------------------------------------
// Range
// ---------------------------------------------------------------------------

PX_CONFORMANCE_CASES("Range")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t) && !IsIntegerType(t)) return cases;
  auto make = [&](const std::string& label, double start, double limit, double delta) {
    return Case(ctx.op, label)
        .Input(MakeTensor(t, {}, {start}))
        .Input(MakeTensor(t, {}, {limit}))
        .Input(MakeTensor(t, {}, {delta}))
        .Attr("Tidx", t);
  };
  cases.push_back(make("1 to 10 by 3", 1, 10, 3));
  cases.push_back(make("3 to 100 by 9", 3, 100, 9));
  cases.push_back(make("empty: 2 to 2", 2, 2, 1));
  if (!IsUnsignedType(t)) {
    cases.push_back(make("100 to 3 by -7", 100, 3, -7));
    cases.push_back(make("5 to -1 by -2", 5, -1, -2));
    cases.push_back(make("-100 to 100 by 7", -100, 100, 7));
  }
  if (IsFloatType(t)) {
    cases.push_back(make("0 to 1 by 0.25", 0, 1, 0.25));
    cases.push_back(make("-2.5 to 7.3 by 0.1", -2.5, 7.3, 0.1));
    cases.push_back(make("3 to 0 by -0.3", 3, 0, -0.3));
  }
  if (t == DataType::kHalf || t == DataType::kBFloat16) {
    // The shape function does not read half or bfloat16 values: these
    // errors are the kernel's.
    for (auto [label, start, limit, delta] :
         std::vector<std::tuple<std::string, double, double, double>>{
             {"error: delta 0", 0, 5, 0},
             {"error: start > limit with delta > 0", 5, 0, 1},
             {"error: start < limit with delta < 0", 0, 5, -1},
             {"error: infinite limit", 0, std::numeric_limits<double>::infinity(), 1}}) {
      cases.push_back(make(label, start, limit, delta).ExpectError(StatusCode::kInvalidArgument));
    }
  }
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

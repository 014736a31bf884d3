// Cases for the losses: SoftmaxCrossEntropyWithLogits,
// SparseSoftmaxCrossEntropyWithLogits and L2Loss. The sparse form's labels
// are device values, so a label out of range is an error only its kernel
// can find.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cases.h"

namespace plexus::conformance {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Sums over up to a hundred classes in half or bfloat16.
Tolerance LossTolerance(DataType t) {
  Tolerance tol = DefaultTolerance(t);
  if (t == DataType::kFloat) tol.atol = 1e-5;
  if (t == DataType::kHalf) tol.atol = 1e-2;
  if (t == DataType::kBFloat16) tol.atol = 1e-1;
  return tol;
}

// Rows of random non-negative labels that sum to 1.
Tensor Distribution(DataType t, const Shape& shape, std::mt19937& rng) {
  Tensor raw = RandomTensor(DataType::kDouble, shape, rng, 0, 1);
  const int64_t cols = shape.empty() ? 1 : shape.back();
  std::vector<double> v(raw.num_elements());
  for (size_t i = 0; i < v.size(); ++i) v[i] = ElementAsDouble(raw, i);
  for (size_t r = 0; cols > 0 && r < v.size(); r += cols) {
    double sum = 0;
    for (int64_t k = 0; k < cols; ++k) sum += v[r + k];
    for (int64_t k = 0; k < cols; ++k) v[r + k] /= sum;
  }
  return MakeTensor(t, shape, v);
}

PX_CONFORMANCE_CASES("SoftmaxCrossEntropyWithLogits")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t)) return cases;
  auto xent = [&](const std::string& label, Tensor features, Tensor labels) {
    cases.push_back(Case(ctx.op, label)
                        .Input(std::move(features))
                        .Input(std::move(labels))
                        .Attr("T", t)
                        .WithTolerance(LossTolerance(t)));
  };
  // [64,100] is large enough for the cpu plugin to run rows in parallel.
  for (const Shape& s : {Shape{3, 5}, Shape{1, 1}, Shape{8, 100}, Shape{4, 1}, Shape{64, 100}}) {
    xent("random " + ShapeToString(s), RandomTensor(t, s, ctx.rng, -5, 5), Distribution(t, s, ctx.rng));
  }
  xent("labels that are not a distribution", RandomTensor(t, {3, 4}, ctx.rng, -5, 5),
       RandomTensor(t, {3, 4}, ctx.rng, -1, 2));
  xent("one-hot labels", RandomTensor(t, {2, 3}, ctx.rng, -5, 5),
       MakeTensor(t, {2, 3}, {0, 1, 0, 1, 0, 0}));
  xent("zero-size batch", RandomTensor(t, {0, 4}, ctx.rng), RandomTensor(t, {0, 4}, ctx.rng));
  // Broadcasting: a row of labels for every example, or a vector of logits.
  xent("labels broadcast [1,4] to [3,4]", RandomTensor(t, {3, 4}, ctx.rng, -5, 5),
       Distribution(t, {1, 4}, ctx.rng));
  xent("logits broadcast [4] to [3,4]", RandomTensor(t, {4}, ctx.rng, -5, 5),
       Distribution(t, {3, 4}, ctx.rng));
  // Large logits are shifted by the row maximum; a -inf logit with a 0
  // label adds nothing to the loss but NaN (0 * inf), as in TensorFlow.
  xent("large logits", MakeTensor(t, {2, 3}, {1000, 1001, 1002, -1000, 0, 1000}),
       MakeTensor(t, {2, 3}, {0.25, 0.25, 0.5, 0.5, 0, 0.5}));
  xent("a -inf logit", MakeTensor(t, {2, 3}, {-kInf, 0, 1, 2, -kInf, 3}),
       MakeTensor(t, {2, 3}, {0, 0.5, 0.5, 0.5, 0, 0.5}));
  xent("NaN logit", MakeTensor(t, {2, 2}, {std::nan(""), 1, 2, 3}),
       MakeTensor(t, {2, 2}, {0.5, 0.5, 0.5, 0.5}));
  return cases;
}

PX_CONFORMANCE_CASES("SparseSoftmaxCrossEntropyWithLogits")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t)) return cases;
  auto xent = [&](const std::string& label, Tensor features, DataType tl, const Shape& ls,
                  std::vector<int64_t> labels) {
    Case c(ctx.op, label + (tl == DataType::kInt32 ? ", int32 labels" : ""));
    c.Input(std::move(features)).Input(IntTensor(tl, ls, labels)).Attr("T", t).Attr("Tlabels", tl);
    c.WithTolerance(LossTolerance(t));
    return c;
  };
  for (DataType tl : {DataType::kInt64, DataType::kInt32}) {
    cases.push_back(xent("random [3,5]", RandomTensor(t, {3, 5}, ctx.rng, -5, 5), tl, {3}, {0, 4, 2}));
    cases.push_back(xent("one class", RandomTensor(t, {4, 1}, ctx.rng, -5, 5), tl, {4}, {0, 0, 0, 0}));
  }
  std::vector<int64_t> labels(8);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int64_t>((i * 37) % 100);
  cases.push_back(xent("[8,100]", RandomTensor(t, {8, 100}, ctx.rng, -5, 5), DataType::kInt64, {8}, labels));
  std::vector<int64_t> many(64);
  for (size_t i = 0; i < many.size(); ++i) many[i] = static_cast<int64_t>((i * 53) % 100);
  cases.push_back(xent("[64,100], rows in parallel", RandomTensor(t, {64, 100}, ctx.rng, -5, 5), DataType::kInt64,
                       {64}, many));
  cases.push_back(xent("zero-size batch", RandomTensor(t, {0, 5}, ctx.rng), DataType::kInt64, {0}, {}));
  cases.push_back(xent("large logits", MakeTensor(t, {2, 3}, {1000, 1001, 1002, -1000, 0, 1000}),
                       DataType::kInt64, {2}, {1, 2}));
  // -inf on a class that is not the label: its probability is 0.
  cases.push_back(xent("a -inf logit off the label", MakeTensor(t, {2, 3}, {-kInf, 0, 1, 2, -kInf, 3}),
                       DataType::kInt64, {2}, {2, 0}));
  for (DataType tl : {DataType::kInt64, DataType::kInt32}) {
    cases.push_back(xent("error: a label past the classes", RandomTensor(t, {3, 4}, ctx.rng), tl, {3},
                         {0, 4, 1})
                        .ExpectError(absl::StatusCode::kInvalidArgument));
    cases.push_back(xent("error: a negative label", RandomTensor(t, {3, 4}, ctx.rng), tl, {3},
                         {0, -1, 1})
                        .ExpectError(absl::StatusCode::kInvalidArgument));
  }
  return cases;
}

PX_CONFORMANCE_CASES("L2Loss")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t)) return cases;
  for (const Shape& s : {Shape{2, 3}, Shape{}, Shape{0}, Shape{3, 0, 2}, Shape{1, 1, 5}, Shape{1500},
                         Shape{40000}}) {
    cases.push_back(Case(ctx.op, "random " + ShapeToString(s))
                        .Input(RandomTensor(t, s, ctx.rng, -2, 2))
                        .Attr("T", t)
                        .WithTolerance(LossTolerance(t)));
  }
  cases.push_back(Case(ctx.op, "exact values").Input(MakeTensor(t, {4}, {1, -2, 3, -0.0})).Attr("T", t));
  cases.push_back(Case(ctx.op, "inf").Input(MakeTensor(t, {3}, {1, -kInf, 2})).Attr("T", t));
  cases.push_back(Case(ctx.op, "NaN").Input(MakeTensor(t, {3}, {1, std::nan(""), 2})).Attr("T", t));
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

// Gradients of TopKV2, the segment reductions and the tensor-scatter family
// (core/src/passes/gradients/{selection,segment,scatter}_grad.cc) against
// finite differences in float64. Inputs are drawn without ties where the
// op picks among values (TopKV2, Max, Min), so the function is smooth at the
// point checked; ties are checked separately against the closed form.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gradient_check.h"
#include "plexus/gradients.h"
#include "test_util.h"

namespace plexus::testing {
namespace {

GradientCheck Check(const std::string& op, std::vector<Tensor> inputs) { return GradientCheck{op, std::move(inputs)}; }

// Distinct values (a shuffled ramp scaled into [-1, 1)) of `shape`.
Tensor Distinct(const Shape& shape, std::vector<int64_t> order) {
  std::vector<double> v(order.size());
  for (size_t i = 0; i < order.size(); ++i) v[i] = static_cast<double>(order[i]) / order.size() * 2 - 1;
  return DoubleTensor(shape, v);
}

TEST(SelectionGradientTest, TopKV2) {
  ExpectGradientsMatch(Check("TopKV2", {Distinct({2, 5}, {3, 9, 0, 7, 1, 4, 8, 2, 6, 5}), IntTensor({}, {3})}));
  GradientCheck int64_indices = Check("TopKV2", {Distinct({7}, {5, 1, 6, 0, 3, 2, 4}), Int64Tensor({}, {7})});
  int64_indices.attrs["index_type"].set_type(tf::DT_INT64);
  int64_indices.attrs["Tk"].set_type(tf::DT_INT64);
  ExpectGradientsMatch(int64_indices);
  GradientCheck rank3 = Check("TopKV2", {Distinct({2, 2, 3}, {11, 0, 5, 2, 9, 7, 1, 10, 3, 8, 4, 6}), IntTensor({}, {2})});
  rank3.attrs["sorted"].set_b(false);
  ExpectGradientsMatch(rank3);
}

TEST(SelectionGradientTest, SortedSegments) {
  const Tensor ids = IntTensor({5}, {0, 0, 2, 2, 2});
  ExpectGradientsMatch(Check("SegmentSum", {RandomDouble({5, 3}), ids}));
  ExpectGradientsMatch(Check("SegmentMean", {RandomDouble({5, 3}), ids}));
  ExpectGradientsMatch(Check("SegmentMean", {RandomDouble({4}), Int64Tensor({4}, {1, 1, 1, 3})}));
  ExpectGradientsMatch(Check("SegmentMax", {Distinct({5, 2}, {9, 2, 4, 7, 0, 5, 8, 1, 3, 6}), ids}));
  ExpectGradientsMatch(Check("SegmentMin", {Distinct({5, 2}, {9, 2, 4, 7, 0, 5, 8, 1, 3, 6}), ids}));
}

TEST(SelectionGradientTest, UnsortedSegments) {
  // Negative ids are dropped: their rows get no gradient.
  const Tensor ids = IntTensor({6}, {2, -1, 0, 2, 0, 1});
  const Tensor num = IntTensor({}, {4});
  ExpectGradientsMatch(Check("UnsortedSegmentSum", {RandomDouble({6, 2}), ids, num}));
  ExpectGradientsMatch(
      Check("UnsortedSegmentSum", {RandomDouble({2, 3, 2}), Int64Tensor({2, 3}, {1, -2, 0, 1, 1, 2}), num}));
  // Every segment non-empty: an empty one is the type's lowest (highest)
  // value, too large for finite differences of the loss.
  const Tensor data = Distinct({6, 2}, {11, 0, 5, 2, 9, 7, 1, 10, 3, 8, 4, 6});
  const Tensor three = IntTensor({}, {3});
  ExpectGradientsMatch(Check("UnsortedSegmentMax", {data, ids, three}));
  ExpectGradientsMatch(Check("UnsortedSegmentMin", {data, ids, three}));
}

TEST(SelectionGradientTest, TensorScatter) {
  const Tensor rows = IntTensor({2, 1}, {3, 0});
  for (const char* op : {"TensorScatterUpdate", "TensorScatterAdd", "TensorScatterSub"}) {
    ExpectGradientsMatch(Check(op, {RandomDouble({4, 2}), rows, RandomDouble({2, 2})}));
    ExpectGradientsMatch(
        Check(op, {RandomDouble({3, 3}), Int64Tensor({3, 2}, {0, 1, 2, 2, 1, 0}), RandomDouble({3})}));
  }
  // Max / Min: updates and tensor far apart, so none ties with the output.
  GradientCheck max = Check("TensorScatterMax", {RandomDouble({4, 2}, -1, 0), rows, RandomDouble({2, 2}, 1, 2)});
  ExpectGradientsMatch(max);
  GradientCheck min = Check("TensorScatterMin", {RandomDouble({4, 2}, -1, 0), rows, RandomDouble({2, 2}, 1, 2)});
  ExpectGradientsMatch(min);
}

TEST(SelectionGradientTest, EveryOpHasAGradientOrIsDeclaredNonDifferentiable) {
  for (const char* op : {"TopKV2", "Where", "SegmentSum", "SegmentMean", "SegmentMax", "SegmentMin",
                         "UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin", "TensorScatterUpdate",
                         "TensorScatterAdd", "TensorScatterSub", "TensorScatterMax", "TensorScatterMin"}) {
    GradientFn fn = nullptr;
    EXPECT_TRUE(FindGradient(op, &fn)) << op;
  }
}

}  // namespace
}  // namespace plexus::testing

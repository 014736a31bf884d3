// Gradients of the trigonometric and hyperbolic functions and their
// inverses, Expm1, Atan2, Cumsum, Cumprod, ReverseV2 and MatrixBandPart
// against central finite differences (float64), and the ops without a
// gradient (IsFinite, IsNan, IsInf).
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "gradient_check.h"
#include "plexus/gradients.h"
#include "test_util.h"

namespace plexus::testing {
namespace {

GradientCheck Unary(const std::string& op, double lo, double hi) {
  return GradientCheck{op, {RandomDouble({3, 4}, lo, hi)}};
}

TEST(TrigGradientTest, UnaryOps) {
  for (const char* op : {"Sinh", "Cosh", "Atan", "Asinh", "Expm1"}) {
    ExpectGradientsMatch(Unary(op, -2, 2));
  }
  ExpectGradientsMatch(Unary("Tan", -1.2, 1.2));
  for (const char* op : {"Asin", "Acos", "Atanh"}) ExpectGradientsMatch(Unary(op, -0.9, 0.9));
  ExpectGradientsMatch(Unary("Acosh", 1.2, 4));
}

TEST(TrigGradientTest, Atan2Broadcasts) {
  // Values away from the origin, where atan2 is smooth.
  ExpectGradientsMatch(GradientCheck{"Atan2", {RandomDouble({2, 3}, 0.5, 2), RandomDouble({2, 3}, 0.5, 2)}});
  ExpectGradientsMatch(GradientCheck{"Atan2", {RandomDouble({2, 3}, 0.5, 2), RandomDouble({3}, -2, -0.5)}});
  ExpectGradientsMatch(GradientCheck{"Atan2", {RandomDouble({}, 0.5, 2), RandomDouble({2, 2}, 0.5, 2)}});
}

TEST(TrigGradientTest, FloatClassesHaveNoGradient) {
  for (const char* op : {"IsFinite", "IsNan", "IsInf"}) {
    GradientFn fn = nullptr;
    EXPECT_TRUE(FindGradient(op, &fn)) << op;
    EXPECT_EQ(fn, nullptr) << op;
  }
}

TEST(ScanGradientTest, CumsumAndCumprod) {
  for (const char* op : {"Cumsum", "Cumprod"}) {
    for (bool exclusive : {false, true}) {
      for (bool reverse : {false, true}) {
        for (int axis : {0, 1, -1}) {
          // Cumprod's gradient divides by x: keep x away from zero.
          GradientCheck c{op, {RandomDouble({3, 4}, 0.5, 1.5), IntTensor({}, {axis})}};
          c.attrs["exclusive"].set_b(exclusive);
          c.attrs["reverse"].set_b(reverse);
          ExpectGradientsMatch(c);
        }
      }
    }
  }
  ExpectGradientsMatch(GradientCheck{"Cumsum", {RandomDouble({2, 3, 2}), Int64Tensor({}, {1})}});
}

TEST(ArrayGradientTest, ReverseV2AndMatrixBandPart) {
  ExpectGradientsMatch(GradientCheck{"ReverseV2", {RandomDouble({2, 3, 4}), IntTensor({2}, {0, -1})}});
  ExpectGradientsMatch(GradientCheck{"ReverseV2", {RandomDouble({5}), IntTensor({0}, {})}});
  const std::vector<std::pair<int64_t, int64_t>> bands = {{1, 0}, {-1, 1}, {0, -1}, {2, 2}};
  for (const auto& [lower, upper] : bands) {
    GradientCheck c{"MatrixBandPart",
                    {RandomDouble({2, 3, 4}), Int64Tensor({}, {lower}), Int64Tensor({}, {upper})}};
    ExpectGradientsMatch(c);
  }
}

}  // namespace
}  // namespace plexus::testing

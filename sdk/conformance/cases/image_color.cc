// Cases for the colour family: RGBToHSV, HSVToRGB (greys, pure hues, random
// pixels, rank 1 and 4), AdjustContrastv2, AdjustSaturation and AdjustHue
// (several factors, odd and even pixel counts for the contrast fold). The
// same ops are compared with TensorFlow in python/tests/test_image_color_ops.py.
#include <cstdint>
#include <string>
#include <vector>

#include "cases.h"

namespace plexus::conformance {
namespace {

bool IsAdjustType(DataType t) { return t == DataType::kFloat || t == DataType::kHalf; }

PX_CONFORMANCE_CASES("RGBToHSV", "HSVToRGB")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t)) return cases;
  cases.push_back(Case(ctx.op, "random [2,4,5,3]")
                      .Input(RandomTensor(t, {2, 4, 5, 3}, ctx.rng, 0, 1))
                      .Attr("T", t));
  cases.push_back(Case(ctx.op, "greys, primaries and ties [8,3]")
                      .Input(MakeTensor(t, {8, 3},
                                        {0, 0, 0, 0.5, 0.5, 0.5, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1,
                                         1, 0, 0.25, 0.75, 0.75, 0.9, 0.1, 0.9}))
                      .Attr("T", t));
  cases.push_back(Case(ctx.op, "one pixel [3]")
                      .Input(MakeTensor(t, {3}, {0.2, 0.7, 0.4}))
                      .Attr("T", t));
  cases.push_back(Case(ctx.op, "zero-size [0,3]")
                      .Input(RandomTensor(t, {0, 3}, ctx.rng))
                      .Attr("T", t));
  cases.push_back(Case(ctx.op, "error: 4 channels")
                      .Input(RandomTensor(t, {2, 4}, ctx.rng, 0, 1))
                      .Attr("T", t)
                      .ExpectError(absl::StatusCode::kFailedPrecondition));
  return cases;
}

PX_CONFORMANCE_CASES("AdjustContrastv2", "AdjustSaturation",
                     "AdjustHue")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsAdjustType(t)) return cases;
  const bool contrast = ctx.op == "AdjustContrastv2";
  const std::vector<double> factors =
      ctx.op == "AdjustHue" ? std::vector<double>{0.3, -0.45, 0.9, 0}
                            : std::vector<double>{0.5, 1.7, 0, 3.5};
  for (double f : factors) {
    cases.push_back(Case(ctx.op, "[2,5,7,3] factor " + std::to_string(f))
                        .Input(RandomTensor(t, {2, 5, 7, 3}, ctx.rng, 0, 1))
                        .Input(MakeTensor(DataType::kFloat, {}, {f}))
                        .Attr("T", t));
  }
  if (contrast) {
    cases.push_back(Case(ctx.op, "one pixel, 4 channels")
                        .Input(RandomTensor(t, {1, 1, 4}, ctx.rng, 0, 1))
                        .Input(MakeTensor(DataType::kFloat, {}, {2}))
                        .Attr("T", t));
    cases.push_back(Case(ctx.op, "[3,2,3,1,2] (leading dims folded into images)")
                        .Input(RandomTensor(t, {3, 2, 3, 1, 2}, ctx.rng, -1, 1))
                        .Input(MakeTensor(DataType::kFloat, {}, {0.7}))
                        .Attr("T", t));
  } else {
    cases.push_back(Case(ctx.op, "error: 2 channels")
                        .Input(RandomTensor(t, {1, 2, 2, 2}, ctx.rng, 0, 1))
                        .Input(MakeTensor(DataType::kFloat, {}, {0.5}))
                        .Attr("T", t)
                        .ExpectError(absl::StatusCode::kInvalidArgument));
  }
  cases.push_back(Case(ctx.op, "error: rank 2")
                      .Input(RandomTensor(t, {4, 3}, ctx.rng, 0, 1))
                      .Input(MakeTensor(DataType::kFloat, {}, {0.5}))
                      .Attr("T", t)
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

// Cases for the image transforms and filtered resizes:
// ImageProjectiveTransformV2/V3 (every interpolation and fill mode, shared
// and per-image transforms, projective rows, a zero projection), ResizeArea
// (down, up, align_corners), ScaleAndTranslate (every sampling kernel, with
// and without antialias, translations that leave the source) and
// ScaleAndTranslateGrad. The same ops are compared with TensorFlow in
// python/tests/test_image_transform_ops.py.
#include <cstdint>
#include <string>
#include <vector>

#include "cases.h"

namespace plexus::conformance {
namespace {

using Ints = std::vector<int64_t>;

bool IsProjectiveType(DataType t) {
  return IsFloatType(t) || t == DataType::kUInt8 || t == DataType::kInt32 ||
         t == DataType::kInt64;
}

bool IsResizeType(DataType t) {
  return IsFloatType(t) || t == DataType::kInt8 || t == DataType::kUInt8 ||
         t == DataType::kInt16 || t == DataType::kUInt16 || t == DataType::kInt32 ||
         t == DataType::kInt64;
}

// Rotation by 0.4 rad about the centre of a 6x7 image, a zoom with
// translation, and a projective row (two images).
const std::vector<double> kTransforms = {
    0.921, -0.389, 1.6, 0.389, 0.921, -1.2, 0, 0,
    1.3,   0.1,   -2.5, -0.2,  0.8,  3.1,  0.02, -0.03};

PX_CONFORMANCE_CASES("ImageProjectiveTransformV2",
                     "ImageProjectiveTransformV3")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsProjectiveType(t)) return cases;
  const bool v3 = ctx.op == "ImageProjectiveTransformV3";
  auto make = [&](const std::string& label, const Ints& out, bool shared, const char* interp,
                  const char* mode) {
    Case c(ctx.op, label);
    c.Input(RandomTensor(t, {2, 6, 7, 3}, ctx.rng, 0, 100))
        .Input(shared ? MakeTensor(DataType::kFloat, {1, 8},
                                   std::vector<double>(kTransforms.begin(), kTransforms.begin() + 8))
                      : MakeTensor(DataType::kFloat, {2, 8}, kTransforms))
        .Input(IntTensor(DataType::kInt32, {2}, out));
    if (v3) c.Input(MakeTensor(DataType::kFloat, {}, {7.5}));
    c.Attr("dtype", t).Attr("interpolation", interp).Attr("fill_mode", mode);
    // Bilinear blends in float; integers truncate, so allow one step.
    c.WithTolerance(IsFloatType(t) ? DefaultTolerance(t) : Tolerance{1, 0});
    return c;
  };
  for (const char* interp : {"NEAREST", "BILINEAR"}) {
    for (const char* mode : {"REFLECT", "WRAP", "CONSTANT", "NEAREST"}) {
      cases.push_back(make(std::string(interp) + " " + mode + " per image", {6, 7}, false,
                           interp, mode));
      cases.push_back(make(std::string(interp) + " " + mode + " shared, to 5x9", {5, 9}, true,
                           interp, mode));
    }
  }
  Case zero(ctx.op, "zero projection: the fill value");
  zero.Input(RandomTensor(t, {1, 3, 3, 1}, ctx.rng, 0, 100))
      .Input(MakeTensor(DataType::kFloat, {1, 8}, {1, 0, 0, 0, 1, 0, -1, 0}))
      .Input(IntTensor(DataType::kInt32, {2}, {3, 3}));
  if (v3) zero.Input(MakeTensor(DataType::kFloat, {}, {2}));
  zero.Attr("dtype", t).Attr("interpolation", "NEAREST").Attr("fill_mode", "CONSTANT");
  cases.push_back(std::move(zero));
  Case bad(ctx.op, "error: transforms of 3 rows for 2 images");
  bad.Input(RandomTensor(t, {2, 3, 3, 1}, ctx.rng, 0, 100))
      .Input(MakeTensor(DataType::kFloat, {3, 8}, std::vector<double>(24, 0.5)))
      .Input(IntTensor(DataType::kInt32, {2}, {3, 3}));
  if (v3) bad.Input(MakeTensor(DataType::kFloat, {}, {0}));
  bad.Attr("dtype", t).Attr("interpolation", "BILINEAR").Attr("fill_mode", "CONSTANT")
      .ExpectError(absl::StatusCode::kInvalidArgument);
  cases.push_back(std::move(bad));
  return cases;
}

PX_CONFORMANCE_CASES("ResizeArea")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsResizeType(t)) return cases;
  for (bool align : {false, true}) {
    for (const Ints& size : std::vector<Ints>{{3, 2}, {4, 5}, {9, 11}, {1, 1}}) {
      cases.push_back(Case(ctx.op, std::string(align ? "align_corners" : "legacy") + " to " +
                                       std::to_string(size[0]) + "x" + std::to_string(size[1]))
                          .Input(RandomTensor(t, {2, 7, 5, 3}, ctx.rng, -3, 100))
                          .Input(IntTensor(DataType::kInt32, {2}, size))
                          .Attr("T", t)
                          .Attr("align_corners", align)
                          .WithTolerance(Tolerance{1e-4, 1e-5}));
    }
  }
  cases.push_back(Case(ctx.op, "error: size of 3 elements")
                      .Input(RandomTensor(t, {1, 3, 3, 1}, ctx.rng))
                      .Input(IntTensor(DataType::kInt32, {3}, {2, 2, 2}))
                      .Attr("T", t)
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  return cases;
}

PX_CONFORMANCE_CASES("ScaleAndTranslate")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsResizeType(t)) return cases;
  struct Geo {
    Ints size;
    std::vector<double> scale, translation;
    const char* label;
  };
  const std::vector<Geo> geos = {
      {{3, 4}, {0.5, 0.6}, {0, 0}, "down"},
      {{11, 13}, {11.0 / 6, 13.0 / 7}, {0, 0}, "up"},
      {{6, 7}, {1.2, 0.9}, {-1.5, 2.25}, "translated past the edges"},
  };
  for (const char* kernel : {"lanczos1", "lanczos3", "lanczos5", "gaussian", "box", "triangle",
                             "keyscubic", "mitchellcubic"}) {
    for (const Geo& g : geos) {
      for (bool antialias : {true, false}) {
        cases.push_back(Case(ctx.op, std::string(kernel) + " " + g.label +
                                         (antialias ? " antialiased" : ""))
                            .Input(RandomTensor(t, {2, 6, 7, 2}, ctx.rng, -3, 100))
                            .Input(IntTensor(DataType::kInt32, {2}, g.size))
                            .Input(MakeTensor(DataType::kFloat, {2}, g.scale))
                            .Input(MakeTensor(DataType::kFloat, {2}, g.translation))
                            .Attr("T", t)
                            .Attr("kernel_type", kernel)
                            .Attr("antialias", antialias)
                            .WithTolerance(Tolerance{1e-4, 1e-5}));
      }
    }
  }
  cases.push_back(Case(ctx.op, "error: zero scale")
                      .Input(RandomTensor(t, {1, 3, 3, 1}, ctx.rng))
                      .Input(IntTensor(DataType::kInt32, {2}, {2, 2}))
                      .Input(MakeTensor(DataType::kFloat, {2}, {0, 1}))
                      .Input(MakeTensor(DataType::kFloat, {2}, {0, 0}))
                      .Attr("T", t)
                      .Attr("kernel_type", "triangle")
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  return cases;
}

PX_CONFORMANCE_CASES("ScaleAndTranslateGrad")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (ctx.dtype != DataType::kFloat) return cases;
  for (const char* kernel : {"lanczos3", "triangle", "keyscubic", "box"}) {
    for (bool antialias : {true, false}) {
      cases.push_back(Case(ctx.op, std::string(kernel) + (antialias ? " antialiased" : ""))
                          .Input(RandomTensor(DataType::kFloat, {2, 3, 4, 2}, ctx.rng))
                          .Input(RandomTensor(DataType::kFloat, {2, 6, 7, 2}, ctx.rng))
                          .Input(MakeTensor(DataType::kFloat, {2}, {0.5, 0.6}))
                          .Input(MakeTensor(DataType::kFloat, {2}, {0.25, -0.5}))
                          .Attr("T", DataType::kFloat)
                          .Attr("kernel_type", kernel)
                          .Attr("antialias", antialias)
                          .WithTolerance(Tolerance{1e-5, 1e-5}));
    }
  }
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

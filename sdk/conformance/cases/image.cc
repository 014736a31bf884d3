// Cases for the image family: ResizeBilinear, ResizeNearestNeighbor,
// ResizeBicubic, ResizeBilinearGrad, ResizeNearestNeighborGrad,
// CropAndResize, NonMaxSuppressionV3/V4/V5, and the 3-D window ops Conv3D,
// MaxPool3D, AvgPool3D, Conv3DBackpropInputV2, Conv3DBackpropFilterV2. The same ops are compared with TensorFlow's outputs
// in python/tests/test_image_ops.py and test_boxes_3d_ops.py.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cases.h"

namespace plexus::conformance {
namespace {

using Ints = std::vector<int64_t>;

bool IsResizeType(DataType t) {
  return IsFloatType(t) || t == DataType::kInt8 || t == DataType::kUInt8 ||
         t == DataType::kInt16 || t == DataType::kUInt16 || t == DataType::kInt32 ||
         t == DataType::kInt64;
}

struct Mode {
  bool align, half;
  const char* label;
};
const Mode kModes[] = {{false, false, "legacy"}, {true, false, "align_corners"},
                       {false, true, "half_pixel_centers"}};

// Bicubic and bilinear sums of float products over [-3, 3] values.
Tolerance BlendTolerance() { return Tolerance{1e-5, 1e-5}; }

PX_CONFORMANCE_CASES("ResizeBilinear", "ResizeNearestNeighbor",
                     "ResizeBicubic")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsResizeType(t)) return cases;
  const bool nearest = ctx.op == "ResizeNearestNeighbor";
  const std::vector<Ints> sizes = {{9, 11}, {2, 3}, {1, 7}, {4, 5}};
  for (const Mode& m : kModes) {
    for (const Ints& size : sizes) {
      Case c(ctx.op, std::string(m.label) + " to " + std::to_string(size[0]) + "x" +
                         std::to_string(size[1]));
      c.Input(RandomTensor(t, {2, 4, 5, 3}, ctx.rng, -3, 100))
          .Input(IntTensor(DataType::kInt32, {2}, size))
          .Attr("T", t)
          .Attr("align_corners", m.align)
          .Attr("half_pixel_centers", m.half);
      if (!nearest) c.WithTolerance(BlendTolerance());
      cases.push_back(std::move(c));
    }
  }
  cases.push_back(Case(ctx.op, "one channel, one pixel to 3x2")
                      .Input(RandomTensor(t, {1, 1, 1, 1}, ctx.rng))
                      .Input(IntTensor(DataType::kInt32, {2}, {3, 2}))
                      .Attr("T", t));
  cases.push_back(Case(ctx.op, "zero-size batch")
                      .Input(RandomTensor(t, {0, 3, 3, 2}, ctx.rng))
                      .Input(IntTensor(DataType::kInt32, {2}, {5, 5}))
                      .Attr("T", t));
  cases.push_back(Case(ctx.op, "error: align_corners and half_pixel_centers")
                      .Input(RandomTensor(t, {1, 3, 3, 1}, ctx.rng))
                      .Input(IntTensor(DataType::kInt32, {2}, {5, 5}))
                      .Attr("T", t)
                      .Attr("align_corners", true)
                      .Attr("half_pixel_centers", true)
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  return cases;
}

PX_CONFORMANCE_CASES("ResizeBilinearGrad")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t)) return cases;
  for (const Mode& m : kModes) {
    for (const Ints& size : std::vector<Ints>{{9, 11}, {2, 3}}) {
      Case c(ctx.op, std::string(m.label) + " from " + std::to_string(size[0]) + "x" +
                         std::to_string(size[1]));
      c.Input(RandomTensor(DataType::kFloat, {2, size[0], size[1], 3}, ctx.rng))
          .Input(RandomTensor(t, {2, 4, 5, 3}, ctx.rng))
          .Attr("T", t)
          .Attr("align_corners", m.align)
          .Attr("half_pixel_centers", m.half)
          .WithTolerance(BlendTolerance());
      if (t == DataType::kHalf || t == DataType::kBFloat16) c.WithTolerance(DefaultTolerance(t));
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

PX_CONFORMANCE_CASES("ResizeNearestNeighborGrad")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!(IsFloatType(t) || t == DataType::kInt8 || t == DataType::kUInt8 ||
        t == DataType::kInt32)) {
    return cases;
  }
  for (const Mode& m : kModes) {
    for (const Ints& size : std::vector<Ints>{{9, 11}, {2, 3}}) {
      cases.push_back(Case(ctx.op, std::string(m.label) + " from " + std::to_string(size[0]) +
                                       "x" + std::to_string(size[1]))
                          .Input(RandomTensor(t, {2, size[0], size[1], 3}, ctx.rng, 0, 4))
                          .Input(IntTensor(DataType::kInt32, {2}, {4, 5}))
                          .Attr("T", t)
                          .Attr("align_corners", m.align)
                          .Attr("half_pixel_centers", m.half));
    }
  }
  return cases;
}

PX_CONFORMANCE_CASES("CropAndResize")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsResizeType(t) || t == DataType::kBFloat16) return cases;
  // Boxes inside, partly outside (extrapolated), flipped, and one point.
  const Tensor boxes = MakeTensor(DataType::kFloat, {4, 4},
                                  {0.1, 0.2, 0.8, 0.9, -0.3, 0.5, 0.6, 1.4, 0.9, 0.8, 0.2, 0.1,
                                   0.5, 0.5, 0.5, 0.5});
  const Tensor box_ind = IntTensor(DataType::kInt32, {4}, {0, 1, 1, 0});
  for (const char* method : {"bilinear", "nearest"}) {
    for (const Ints& crop : std::vector<Ints>{{3, 4}, {1, 1}, {5, 2}}) {
      cases.push_back(Case(ctx.op, std::string(method) + " crops " + std::to_string(crop[0]) +
                                       "x" + std::to_string(crop[1]))
                          .Input(RandomTensor(t, {2, 6, 7, 3}, ctx.rng, -3, 100))
                          .Input(boxes)
                          .Input(box_ind)
                          .Input(IntTensor(DataType::kInt32, {2}, crop))
                          .Attr("T", t)
                          .Attr("method", method)
                          .Attr("extrapolation_value", 0.5f)
                          .WithTolerance(BlendTolerance()));
    }
  }
  cases.push_back(Case(ctx.op, "error: box_ind out of range")
                      .Input(RandomTensor(t, {2, 6, 7, 3}, ctx.rng))
                      .Input(boxes)
                      .Input(IntTensor(DataType::kInt32, {4}, {0, 2, 1, 0}))
                      .Input(IntTensor(DataType::kInt32, {2}, {3, 3}))
                      .Attr("T", t)
                      .ExpectError(absl::StatusCode::kOutOfRange));
  return cases;
}

// Boxes with overlaps at several IOUs and ties in score.
Case NmsCase(const CaseContext& ctx, const std::string& label, int version, int64_t max_output,
             double iou, double score, double sigma, bool pad) {
  const DataType t = ctx.dtype;
  const DataType threshold = version == 5 ? t : DataType::kFloat;
  Case c(ctx.op, label);
  c.Input(MakeTensor(t, {8, 4},
                     {0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, -0.1, 1, 0.9, 0, 10, 1, 11, 0, 10.1, 1, 11.1,
                      0, 100, 1, 101, 1, 1, 0, 0, 0.5, 0.5, 0.5, 0.5}))
      .Input(MakeTensor(t, {8}, {0.9, 0.75, 0.6, 0.95, 0.5, 0.3, 0.75, 0.4}))
      .Input(IntTensor(DataType::kInt32, {}, {max_output}))
      .Input(MakeTensor(threshold, {}, {iou}))
      .Input(MakeTensor(threshold, {}, {score}));
  if (version == 5) c.Input(MakeTensor(t, {}, {sigma}));
  c.Attr("T", t);
  if (version != 5) c.Attr("T_threshold", DataType::kFloat);
  if (version >= 4) c.Attr("pad_to_max_output_size", pad);
  return c;
}

PX_CONFORMANCE_CASES("NonMaxSuppressionV3", "NonMaxSuppressionV4",
                     "NonMaxSuppressionV5")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (t != DataType::kFloat && t != DataType::kHalf) return cases;
  const int version = ctx.op.back() - '0';
  const double lowest = -std::numeric_limits<float>::infinity();
  cases.push_back(NmsCase(ctx, "iou 0.5", version, 8, 0.5, lowest, 0, false));
  cases.push_back(NmsCase(ctx, "iou 0.5, score 0.45, at most 3", version, 3, 0.5, 0.45, 0, false));
  cases.push_back(NmsCase(ctx, "iou 0 (any overlap suppresses)", version, 8, 0.0, lowest, 0, false));
  cases.push_back(NmsCase(ctx, "max_output_size 0", version, 0, 0.5, lowest, 0, false));
  if (version >= 4) {
    cases.push_back(NmsCase(ctx, "padded to 10", version, 10, 0.5, 0.45, 0, true));
  }
  if (version == 5) {
    cases.push_back(NmsCase(ctx, "soft-NMS sigma 0.5", version, 8, 1.0, 0.1, 0.5, false));
    cases.push_back(NmsCase(ctx, "soft-NMS sigma 0.2 padded", version, 6, 0.6, 0.0, 0.2, true));
  }
  cases.push_back(NmsCase(ctx, "error: iou_threshold 1.5", version, 8, 1.5, lowest, 0, false)
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  cases.push_back(NmsCase(ctx, "error: max_output_size -1", version, -1, 0.5, lowest, 0, false)
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  return cases;
}

// ---------------------------------------------------------------------------
// Conv3D, MaxPool3D, AvgPool3D
// ---------------------------------------------------------------------------

Ints Spatial3(int64_t d, int64_t h, int64_t w) { return Ints{1, d, h, w, 1}; }

PX_CONFORMANCE_CASES("Conv3D", "MaxPool3D", "AvgPool3D")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t) || (ctx.op == "MaxPool3D" && t == DataType::kDouble)) return cases;
  struct Geo {
    const char* padding;
    Ints x, k, s, dil;
    int64_t out;
    const char* label;
  };
  const std::vector<Geo> geos = {
      {"SAME", {2, 4, 5, 6, 3}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, 4, "SAME 3x3x3"},
      {"VALID", {1, 5, 6, 4, 2}, {2, 3, 2}, {2, 1, 2}, {1, 1, 1}, 3, "VALID 2x3x2 strides 2,1,2"},
      {"SAME", {1, 6, 5, 5, 2}, {2, 2, 2}, {2, 2, 2}, {1, 1, 1}, 2, "SAME stride 2"},
      {"VALID", {1, 6, 6, 6, 2}, {2, 2, 2}, {1, 1, 1}, {2, 1, 2}, 2, "VALID dilations 2,1,2"},
      {"SAME", {0, 3, 3, 3, 2}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, 2, "zero-size batch"},
  };
  const bool conv = ctx.op == "Conv3D";
  for (const Geo& g : geos) {
    if (!conv && g.dil != Ints{1, 1, 1}) continue;
    Case c(ctx.op, g.label);
    c.Input(RandomTensor(t, Shape(g.x.begin(), g.x.end()), ctx.rng, -2, 2))
        .Attr("T", t)
        .Attr("padding", g.padding);
    c.Attr("strides", Spatial3(g.s[0], g.s[1], g.s[2]));
    if (conv) {
      c.Input(RandomTensor(t, {g.k[0], g.k[1], g.k[2], g.x[4], g.out}, ctx.rng, -2, 2))
          .Attr("dilations", Spatial3(g.dil[0], g.dil[1], g.dil[2]));
      Tolerance tol = DefaultTolerance(t);
      if (t == DataType::kFloat) tol.atol = 2e-4;
      c.WithTolerance(tol);
    } else {
      c.Attr("ksize", Spatial3(g.k[0], g.k[1], g.k[2]));
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

// Conv3DBackpropInputV2(input_sizes, filter, dy) and
// Conv3DBackpropFilterV2(input, filter_sizes, dy): the geometries of the
// Conv3D cases, dy shaped as Conv3D's output; int64 input_sizes once; an
// out_backprop of the wrong shape is an error.
PX_CONFORMANCE_CASES("Conv3DBackpropInputV2", "Conv3DBackpropFilterV2")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (!IsFloatType(t)) return cases;
  const bool filter = ctx.op == "Conv3DBackpropFilterV2";
  struct Geo {
    const char* padding;
    Ints x, k, s, dil, dy;
    const char* label;
  };
  const std::vector<Geo> geos = {
      {"SAME", {2, 4, 5, 6, 3}, {3, 3, 3, 3, 4}, {1, 1, 1}, {1, 1, 1}, {2, 4, 5, 6, 4}, "SAME 3x3x3"},
      {"VALID", {1, 5, 6, 4, 2}, {2, 3, 2, 2, 3}, {2, 1, 2}, {1, 1, 1}, {1, 2, 4, 2, 3},
       "VALID 2x3x2 strides 2,1,2"},
      {"SAME", {1, 6, 5, 5, 2}, {2, 2, 2, 2, 2}, {2, 2, 2}, {1, 1, 1}, {1, 3, 3, 3, 2}, "SAME stride 2"},
      {"VALID", {1, 6, 6, 6, 2}, {2, 2, 2, 2, 2}, {1, 1, 1}, {2, 1, 2}, {1, 4, 5, 4, 2},
       "VALID dilations 2,1,2"},
      {"SAME", {0, 3, 3, 3, 2}, {2, 2, 2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 3, 3, 3, 2}, "zero-size batch"},
      {"SAME", {1, 3, 3, 3, 2}, {2, 2, 2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 3, 3, 2, 2},
       "error: out_backprop of the wrong shape"},
  };
  for (const Geo& g : geos) {
    Case c(ctx.op, g.label);
    const Shape x(g.x.begin(), g.x.end()), k(g.k.begin(), g.k.end());
    const bool wide = g.x[0] == 2;  // int64 input_sizes once
    if (filter) {
      c.Input(RandomTensor(t, x, ctx.rng, -2, 2)).Input(IntTensor(DataType::kInt32, {5}, g.k));
    } else {
      c.Input(IntTensor(wide ? DataType::kInt64 : DataType::kInt32, {5}, g.x))
          .Input(RandomTensor(t, k, ctx.rng, -2, 2))
          .Attr("Tshape", wide ? DataType::kInt64 : DataType::kInt32);
    }
    c.Input(RandomTensor(t, Shape(g.dy.begin(), g.dy.end()), ctx.rng, -2, 2))
        .Attr("T", t)
        .Attr("padding", g.padding)
        .Attr("strides", Spatial3(g.s[0], g.s[1], g.s[2]))
        .Attr("dilations", Spatial3(g.dil[0], g.dil[1], g.dil[2]));
    Tolerance tol = DefaultTolerance(t);
    if (t == DataType::kFloat) tol.atol = 2e-4;
    if (t == DataType::kHalf || t == DataType::kBFloat16) tol.atol *= 8;
    c.WithTolerance(tol);
    if (std::string(g.label).rfind("error", 0) == 0) {
      c.ExpectError(absl::StatusCode::kInvalidArgument);
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

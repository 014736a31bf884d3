// Cases for DepthToSpace and SpaceToDepth (NHWC and NCHW, block sizes 2 and
// 3, every dtype) and LRN and LRNGrad (radii 0 to 5 past the depth, beta
// 0.5, 0.75 and 1, a depth over 384). The same ops are compared with
// TensorFlow in python/tests/test_depth_space_lrn.py.
#include <cstdint>
#include <string>
#include <vector>

#include "cases.h"

namespace plexus::conformance {
namespace {

PX_CONFORMANCE_CASES("DepthToSpace", "SpaceToDepth")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (t == DataType::kInvalid || t == DataType::kString) return cases;
  const bool to_space = ctx.op == "DepthToSpace";
  struct Geo {
    int64_t block;
    const char* format;
    Shape shape;
  };
  const std::vector<Geo> geos = to_space
                                    ? std::vector<Geo>{{2, "NHWC", {2, 3, 4, 8}},
                                                       {3, "NHWC", {1, 2, 2, 18}},
                                                       {2, "NCHW", {2, 8, 3, 4}},
                                                       {2, "NHWC", {0, 3, 4, 4}}}
                                    : std::vector<Geo>{{2, "NHWC", {2, 6, 8, 2}},
                                                       {3, "NHWC", {1, 6, 3, 5}},
                                                       {2, "NCHW", {2, 2, 6, 8}},
                                                       {2, "NHWC", {0, 4, 4, 3}}};
  for (const Geo& g : geos) {
    cases.push_back(Case(ctx.op, std::string(g.format) + " block " + std::to_string(g.block) +
                                     " " + std::to_string(g.shape[0]) + " images")
                        .Input(RandomTensor(t, g.shape, ctx.rng, -50, 50))
                        .Attr("T", t)
                        .Attr("block_size", g.block)
                        .Attr("data_format", g.format));
  }
  cases.push_back(Case(ctx.op, to_space ? "error: depth 6 for block 2" : "error: width 5 for block 2")
                      .Input(RandomTensor(t, to_space ? Shape{1, 2, 2, 6} : Shape{1, 4, 5, 1},
                                          ctx.rng))
                      .Attr("T", t)
                      .Attr("block_size", int64_t{2})
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  return cases;
}

PX_CONFORMANCE_CASES("LRN", "LRNGrad")(const CaseContext& ctx) {
  std::vector<Case> cases;
  const DataType t = ctx.dtype;
  if (t != DataType::kFloat && t != DataType::kHalf && t != DataType::kBFloat16) return cases;
  const bool grad = ctx.op == "LRNGrad";
  struct Params {
    int64_t radius;
    float bias, alpha, beta;
    Shape shape;
  };
  const std::vector<Params> params = {{2, 1.0f, 0.5f, 0.75f, {2, 3, 4, 7}},
                                      {5, 2.0f, 1e-2f, 0.5f, {1, 2, 3, 4}},
                                      {0, 1.0f, 1.0f, 1.0f, {1, 2, 2, 3}},
                                      {1, 1.5f, 0.1f, 0.5f, {1, 1, 2, 400}}};
  for (const Params& p : params) {
    Case c(ctx.op, "radius " + std::to_string(p.radius) + " beta " + std::to_string(p.beta) +
                       " depth " + std::to_string(p.shape[3]));
    const Tensor x = RandomTensor(t, p.shape, ctx.rng, -2, 2);
    if (grad) {
      c.Input(RandomTensor(t, p.shape, ctx.rng, -1, 1))
          .Input(x)
          .Input(RandomTensor(t, p.shape, ctx.rng, -1, 1));
    } else {
      c.Input(x);
    }
    c.Attr("T", t)
        .Attr("depth_radius", p.radius)
        .Attr("bias", p.bias)
        .Attr("alpha", p.alpha)
        .Attr("beta", p.beta);
    if (t == DataType::kFloat) c.WithTolerance(Tolerance{1e-5, 1e-5});
    if (t == DataType::kBFloat16) c.WithTolerance(Tolerance{3e-2, 2e-2});
    cases.push_back(std::move(c));
  }
  Case bad(ctx.op, "error: rank 3");
  bad.Input(RandomTensor(t, {2, 3, 4}, ctx.rng));
  if (grad) bad.Input(RandomTensor(t, {2, 3, 4}, ctx.rng)).Input(RandomTensor(t, {2, 3, 4}, ctx.rng));
  bad.Attr("T", t).ExpectError(absl::StatusCode::kInvalidArgument);
  cases.push_back(std::move(bad));
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

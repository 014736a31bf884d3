// Cases for _PlexusLayerNorm, the optimizer's layer normalization over the
// last axis: rows shorter and longer than a vector, a row of one element
// (variance 0: the output is beta), large offsets (a one-pass variance
// would lose them), zero rows, and inputs a kernel must refuse.
#include "cases.h"

namespace plexus::conformance {
namespace {

Case Norm(const CaseContext& ctx, const std::string& label, Tensor x, Tensor gamma, Tensor beta, float epsilon) {
  Case c("_PlexusLayerNorm", label);
  c.Input(std::move(x)).Input(std::move(gamma)).Input(std::move(beta));
  c.Attr("T", ctx.dtype).Attr("epsilon", epsilon);
  return c;
}

PX_CONFORMANCE_CASES("_PlexusLayerNorm")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (ctx.dtype != DataType::kFloat && ctx.dtype != DataType::kDouble) return cases;
  auto rnd = [&](const Shape& s, double lo = -3, double hi = 3) { return RandomTensor(ctx.dtype, s, ctx.rng, lo, hi); };
  cases.push_back(Norm(ctx, "rows of 128", rnd({2, 8, 128}), rnd({128}, 0.5, 2), rnd({128}), 1e-3f));
  cases.push_back(Norm(ctx, "rows of 37 (a tail after whole vectors)", rnd({5, 37}), rnd({37}), rnd({37}), 1e-6f));
  cases.push_back(Norm(ctx, "short rows", rnd({70, 3}), rnd({3}), rnd({3}), 1e-5f));
  cases.push_back(Norm(ctx, "one vector", rnd({300}), rnd({300}), rnd({300}), 1e-3f));
  cases.push_back(Norm(ctx, "rows of one element", rnd({6, 1}), rnd({1}), rnd({1}), 1e-3f));
  cases.push_back(Norm(ctx, "a large offset", rnd({4, 64}, 1000, 1001), rnd({64}), rnd({64}), 1e-5f));
  cases.push_back(Norm(ctx, "zero rows", rnd({0, 16}), rnd({16}), rnd({16}), 1e-3f));
  cases.push_back(Norm(ctx, "error: gamma of the wrong size", rnd({4, 8}), rnd({7}), rnd({8}), 1e-3f)
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

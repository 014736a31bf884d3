// Cases for _PlexusFusedElementwise, the optimizer's fused elementwise trees
// (plexus/sdk/fused_elementwise.h): every op it can hold, inputs of the
// output's shape and of one element, and programs a kernel must refuse.
#include <cmath>

#include "cases.h"

namespace plexus::conformance {
namespace {

tf::AttrValue Strings(const std::vector<std::string>& v) {
  tf::AttrValue a;
  for (const std::string& s : v) a.mutable_list()->add_s(s);
  return a;
}

Case Program(const CaseContext& ctx, const std::string& label, const std::vector<std::string>& program,
             std::vector<Tensor> inputs, const Shape& shape) {
  Case c("_PlexusFusedElementwise", label);
  for (Tensor& t : inputs) c.Input(std::move(t));
  c.Attr("T", ctx.dtype)
      .Attr("N", static_cast<int64_t>(c.inputs().size()))
      .Attr("shape", std::vector<int64_t>(shape.begin(), shape.end()))
      .Attr("program", Strings(program));
  return c;
}

PX_CONFORMANCE_CASES("_PlexusFusedElementwise")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (ctx.dtype != DataType::kFloat && ctx.dtype != DataType::kDouble) return cases;
  auto rnd = [&](const Shape& s, double lo = -3, double hi = 3) { return RandomTensor(ctx.dtype, s, ctx.rng, lo, hi); };
  cases.push_back(Program(ctx, "add then relu", {"AddV2 i0 i1", "Relu r0"}, {rnd({4, 5}), rnd({4, 5})}, {4, 5}));
  cases.push_back(Program(ctx, "a chain with a scalar input",
                          {"Mul i0 i1", "Neg r0", "Add r1 i0", "Maximum r2 i1", "Relu6 r3"},
                          {rnd({3, 7}), rnd({})}, {3, 7}));
  cases.push_back(Program(ctx, "a tree over two inputs",
                          {"Sub i0 i1", "Square r0", "Mul i0 i1", "Tanh r2", "AddV2 r1 r3", "Sigmoid r4"},
                          {rnd({1500}), rnd({1500})}, {1500}));
  cases.push_back(Program(ctx, "positive-domain unary ops", {"Log i0", "Exp r0", "Sqrt r1", "Rsqrt r2", "Reciprocal r3", "Abs r4"},
                          {rnd({2, 3}, 0.1, 4)}, {2, 3}));
  cases.push_back(Program(ctx, "division, minimum, squared difference",
                          {"RealDiv i0 i1", "Div r0 i1", "Minimum r1 i0", "SquaredDifference r2 i1"},
                          {rnd({10}), rnd({10}, 0.5, 3)}, {10}));
  cases.push_back(Program(ctx, "all inputs of one element", {"Mul i0 i1", "Relu r0"}, {rnd({1}), rnd({})}, {1}));
  cases.push_back(Program(ctx, "zero-size", {"AddV2 i0 i1", "Neg r0"}, {rnd({0, 4}), rnd({})}, {0, 4}));
  cases.push_back(Program(ctx, "rank 0", {"Exp i0", "Mul r0 i0"}, {rnd({})}, {}));
  cases.push_back(Program(ctx, "NaN and infinities",
                          {"Relu i0", "AddV2 r0 i0", "Maximum r1 i0"},
                          {MakeTensor(ctx.dtype, {5}, {std::nan(""), INFINITY, -INFINITY, -0.0, 2})}, {5}));
  cases.push_back(Program(ctx, "error: an op that cannot be fused", {"Floor i0"}, {rnd({3})}, {3})
                      .ExpectError(absl::StatusCode::kUnimplemented));
  cases.push_back(Program(ctx, "error: an operand from later", {"Neg r1", "Neg i0"}, {rnd({3})}, {3})
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

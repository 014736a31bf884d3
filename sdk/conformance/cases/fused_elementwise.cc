// Cases for _PlexusFusedElementwise, the optimizer's fused elementwise trees
// (plexus/sdk/fused_elementwise.h): every op it can hold, inputs of the
// output's shape and of one element, immediate constants, long programs
// (where a kernel reuses the storage of dead results), and programs a kernel
// must refuse.
#include <cmath>
#include <cstdio>
#include <string>

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
  cases.push_back(Program(ctx, "immediate constants",
                          {"Mul i0 c0.5", "AddV2 r0 c-0x1.8p+1", "Maximum c0x1p-2 r1", "Sub r2 c1e-3",
                           "RealDiv c3 r3", "SquaredDifference r4 c0.1"},
                          {rnd({3, 7})}, {3, 7}));
  cases.push_back(Program(ctx, "immediates with inputs of one element",
                          {"Mul i0 i1", "AddV2 c2 r0", "Minimum r1 c1.25", "Sub i1 r2"}, {rnd({1500}), rnd({})},
                          {1500}));
  cases.push_back(Program(ctx, "an instruction on two immediates, a unary op on one",
                          {"Mul c2 c-3", "Exp c0.5", "AddV2 r0 r1", "Mul r2 i0"}, {rnd({2, 5})}, {2, 5}));
  cases.push_back(Program(ctx, "infinite and NaN immediates",
                          {"Mul i0 cinf", "Minimum r0 c-inf", "AddV2 i0 cnan", "Maximum r2 i0", "AddV2 r1 r3"},
                          {MakeTensor(ctx.dtype, {4}, {1.5, -2, 0, std::nan("")})}, {4}));
  {
    // A long chain over two tiles of the cpu kernel: 300 instructions that
    // keep the values bounded.
    std::vector<std::string> program = {"Mul i0 c0.5"};
    static const char* const kSteps[] = {"Tanh r%d", "AddV2 r%d i1", "Mul r%d c0.75", "Sub r%d i0", "Relu6 r%d",
                                         "Neg r%d"};
    for (int j = 1; j < 300; ++j) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), kSteps[j % 6], j - 1);
      program.push_back(buf);
    }
    cases.push_back(Program(ctx, "a chain of 300 instructions", program, {rnd({1100}), rnd({1100})}, {1100}));
  }
  {
    // A balanced tree: 32 leaves over four inputs, summed pairwise, so many
    // results are alive at once before they are combined.
    std::vector<std::string> program;
    static const char* const kLeaves[] = {"Neg i%d", "Abs i%d", "Square i%d", "Sigmoid i%d"};
    std::vector<int> level;
    for (int k = 0; k < 32; ++k) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), kLeaves[k % 4], k % 4);
      program.push_back(buf);
      level.push_back(static_cast<int>(program.size()) - 1);
    }
    while (level.size() > 1) {
      std::vector<int> next;
      for (size_t k = 0; k + 1 < level.size(); k += 2) {
        program.push_back("AddV2 r" + std::to_string(level[k]) + " r" + std::to_string(level[k + 1]));
        next.push_back(static_cast<int>(program.size()) - 1);
      }
      level = next;
    }
    cases.push_back(Program(ctx, "a balanced tree of 63 instructions", program,
                            {rnd({3, 40}), rnd({3, 40}), rnd({}), rnd({3, 40})}, {3, 40}));
  }
  cases.push_back(Program(ctx, "error: an op that cannot be fused", {"Floor i0"}, {rnd({3})}, {3})
                      .ExpectError(absl::StatusCode::kUnimplemented));
  cases.push_back(Program(ctx, "error: an operand from later", {"Neg r1", "Neg i0"}, {rnd({3})}, {3})
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  cases.push_back(Program(ctx, "error: a malformed immediate", {"Mul i0 c1.5x"}, {rnd({3})}, {3})
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  cases.push_back(Program(ctx, "error: an empty immediate", {"Mul i0 c"}, {rnd({3})}, {3})
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  return cases;
}

}  // namespace
}  // namespace plexus::conformance

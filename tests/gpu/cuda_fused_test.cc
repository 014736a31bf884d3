// The CUDA plugin's _PlexusFusedElementwise kernel on CUDA:0 against the cpu
// plugin's, for float and double: every op, one-element (broadcast) inputs,
// immediates (inf, nan, negative zero), deep chains, zero-size and rank-0
// outputs, large outputs (the grid-stride loop), and the optimizer's own
// fused nodes. Skipped where no CUDA device exists.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "attr_value.pb.h"
#include "cases.h"
#include "graph.pb.h"
#include "plexus/plexus.h"
#include "test_util.h"

namespace plexus::testing {
namespace {

using conformance::CompareTensors;
using conformance::DefaultTolerance;
using conformance::ElementAsDouble;
using conformance::MakeTensor;
using conformance::RandomTensor;
using conformance::Tolerance;

// The cpu and cuda plugins, loaded once per process.
Runtime& TheRuntime() {
  static Runtime* runtime = [] {
    RuntimeOptions options;
    options.discover_plugins = false;
    options.plugin_paths = {PX_CPU_PLUGIN_PATH, PX_CUDA_PLUGIN_PATH};
    auto r = Runtime::Create(options);
    if (!r.ok()) {
      std::fprintf(stderr, "runtime: %s\n", std::string(r.status().message()).c_str());
      std::abort();
    }
    return r->release();
  }();
  return *runtime;
}

bool CudaPluginLoaded() {
  for (const auto& p : TheRuntime().plugins()) {
    if (p->name() == "cuda") return true;
  }
  return false;
}

std::string LoadReports() {
  std::vector<std::string> lines;
  for (const PluginLoadReport& r : TheRuntime().load_reports()) lines.push_back(r.path + ": " + r.message);
  return absl::StrJoin(lines, "\n");
}

#define SKIP_WITHOUT_CUDA()                                                         \
  do {                                                                              \
    ASSERT_TRUE(CudaPluginLoaded()) << "the cuda plugin did not load:\n" << LoadReports(); \
    if (!TheRuntime().FindDevice("CUDA:0").ok()) GTEST_SKIP() << "no CUDA device";  \
  } while (0)

struct FusedCase {
  std::vector<std::string> program;
  std::vector<Tensor> inputs;
  Shape shape;
};

// Runs one _PlexusFusedElementwise node on `device` (optimizer off, so the
// node runs as written). Fails when it did not run there.
absl::StatusOr<Tensor> RunFused(const FusedCase& c, DataType t, const std::string& device) {
  tf::GraphDef def;
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    tf::NodeDef* p = def.add_node();
    p->set_name(absl::StrCat("in", i));
    p->set_op("Placeholder");
    (*p->mutable_attr())["dtype"].set_type(static_cast<tf::DataType>(t));
    feeds.emplace_back(absl::StrCat("in", i, ":0"), c.inputs[i]);
  }
  tf::NodeDef* node = def.add_node();
  node->set_name("fused");
  node->set_op("_PlexusFusedElementwise");
  for (size_t i = 0; i < c.inputs.size(); ++i) node->add_input(absl::StrCat("in", i));
  auto& attrs = *node->mutable_attr();
  attrs["T"].set_type(static_cast<tf::DataType>(t));
  attrs["N"].set_i(static_cast<int64_t>(c.inputs.size()));
  attrs["shape"].mutable_list();  // present even for a scalar (an empty list)
  for (int64_t d : c.shape) attrs["shape"].mutable_list()->add_i(d);
  for (const std::string& s : c.program) attrs["program"].mutable_list()->add_s(s);
  auto graph = ImportGraphDef(def, "<cuda fused test>");
  if (!graph.ok()) return graph.status();
  SessionOptions options;
  options.device = device;
  options.optimizer.enabled = false;
  auto session = Session::Create(&TheRuntime(), std::shared_ptr<const Graph>(std::move(*graph)), options);
  if (!session.ok()) return session.status();
  auto result = (*session)->Run(feeds, {"fused:0"});
  const std::vector<std::string> notes = (*session)->placement_notes();
  if (!notes.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("did not run on ", device, ": ", absl::StrJoin(notes, "; ")));
  }
  if (!result.ok()) return result.status();
  return (*result)[0];
}

void ExpectCudaMatchesCpu(const FusedCase& c, DataType t, Tolerance tol) {
  SCOPED_TRACE(absl::StrCat(DataTypeName(t), " ", ShapeToString(c.shape), " {", absl::StrJoin(c.program, "; "), "}"));
  auto want = RunFused(c, t, "CPU:0");
  ASSERT_TRUE(want.ok()) << want.status();
  auto got = RunFused(c, t, "CUDA:0");
  ASSERT_TRUE(got.ok()) << got.status();
  const absl::Status s = CompareTensors(*got, *want, tol);
  EXPECT_TRUE(s.ok()) << s;
}

const DataType kTypes[] = {DataType::kFloat, DataType::kDouble};

// Random inputs: full-size unless `one` lists the input (one element).
std::vector<Tensor> Inputs(DataType t, int count, const Shape& shape, std::mt19937& rng,
                           const std::vector<int>& one = {}, double lo = -3, double hi = 3) {
  std::vector<Tensor> v;
  for (int i = 0; i < count; ++i) {
    const bool single = std::find(one.begin(), one.end(), i) != one.end();
    v.push_back(RandomTensor(t, single ? Shape{} : shape, rng, lo, hi));
  }
  return v;
}

TEST(CudaFused, EveryUnaryOp) {
  SKIP_WITHOUT_CUDA();
  std::mt19937 rng(1);
  const char* ops[] = {"Neg", "Abs", "Exp", "Log", "Sqrt", "Rsqrt", "Square", "Reciprocal", "Tanh", "Sigmoid",
                       "Relu", "Relu6"};
  for (DataType t : kTypes) {
    for (const char* op : ops) {
      // Log, Sqrt, Rsqrt see negative values too: NaN must match NaN.
      FusedCase c{{std::string(op) + " i0"}, Inputs(t, 1, {3, 67}, rng, {}, -8, 8), {3, 67}};
      ExpectCudaMatchesCpu(c, t, DefaultTolerance(t));
    }
  }
}

TEST(CudaFused, EveryBinaryOpWithBroadcastInputs) {
  SKIP_WITHOUT_CUDA();
  std::mt19937 rng(2);
  const char* ops[] = {"Add", "AddV2", "Sub", "Mul", "Div", "RealDiv", "Maximum", "Minimum", "SquaredDifference"};
  for (DataType t : kTypes) {
    for (const char* op : ops) {
      for (const std::vector<int>& one : {std::vector<int>{}, {0}, {1}, {0, 1}}) {
        FusedCase c{{std::string(op) + " i0 i1"}, Inputs(t, 2, {5, 1, 9}, rng, one), {5, 1, 9}};
        ExpectCudaMatchesCpu(c, t, DefaultTolerance(t));
      }
    }
  }
}

TEST(CudaFused, ImmediatesAndSpecialValues) {
  SKIP_WITHOUT_CUDA();
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  for (DataType t : kTypes) {
    FusedCase c;
    c.shape = {8};
    c.inputs = {MakeTensor(t, {8}, {1.5, -2, 0, -0.0, inf, -inf, nan, 7}), MakeTensor(t, {}, {0.25})};
    c.program = {"Mul i0 c0x1.8p+1", "Maximum r0 i1", "Minimum r1 cinf", "Relu6 r2", "Add r3 c-0x0p+0",
                 "Sub r4 c0x1.999999999999ap-4"};
    ExpectCudaMatchesCpu(c, t, DefaultTolerance(t));
    // Exact values: 3x, max with 0.25 (NaN passes), min with inf, Relu6, + -0, - 0.1.
    auto got = RunFused(c, t, "CUDA:0");
    ASSERT_TRUE(got.ok()) << got.status();
    const double tenth = t == DataType::kFloat ? static_cast<double>(0.1f) : 0.1;
    const double want[] = {4.5, 0.25, 0.25, 0.25, 6, 0.25, nan, 6};
    for (int i = 0; i < 8; ++i) {
      const double w = t == DataType::kFloat ? static_cast<double>(static_cast<float>(want[i] - tenth))
                                               : want[i] - tenth;
      const double g = ElementAsDouble(*got, i);
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(g)) << i;
      } else {
        EXPECT_EQ(g, w) << i;
      }
    }
    // A program of constants only: every element is Exp(1 + 2).
    FusedCase k{{"Add c1 c2", "Exp r0", "Add r1 i0"}, {MakeTensor(t, {}, {0})}, {2, 3}};
    ExpectCudaMatchesCpu(k, t, DefaultTolerance(t));
    // -0 through Neg and Relu keeps the cpu kernel's sign.
    FusedCase z{{"Neg i0", "Relu r0"}, {MakeTensor(t, {2}, {0.0, -0.0})}, {2}};
    auto zr = RunFused(z, t, "CUDA:0");
    ASSERT_TRUE(zr.ok()) << zr.status();
    EXPECT_TRUE(std::signbit(ElementAsDouble(*zr, 0)));
    EXPECT_FALSE(std::signbit(ElementAsDouble(*zr, 1)));
  }
}

TEST(CudaFused, DeepChainAndWideTree) {
  SKIP_WITHOUT_CUDA();
  std::mt19937 rng(3);
  std::vector<std::string> chain = {"Mul i0 i1"};
  const char* ops[] = {"Add r%d i0", "Mul r%d c0x1.0000000000001p+0", "Tanh r%d", "Sub i1 r%d", "Maximum r%d i2",
                       "Sigmoid r%d"};
  for (int j = 1; j < 300; ++j) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), ops[j % 6], j - 1);
    chain.push_back(buf);
  }
  std::vector<std::string> tree;
  for (int i = 0; i < 16; i += 2) tree.push_back(absl::StrCat("SquaredDifference i", i, " i", i + 1));
  for (int start = 0, size = 8; size > 1; start += size, size /= 2) {
    for (int k = 0; k < size; k += 2) tree.push_back(absl::StrCat("Add r", start + k, " r", start + k + 1));
  }
  for (DataType t : kTypes) {
    // Tanh and Sigmoid keep the chain's values in [-4, 4]; each transcendental
    // may differ by an ulp or two from the cpu's, so a looser float bound.
    const Tolerance tol = t == DataType::kFloat ? Tolerance{1e-5, 1e-4} : DefaultTolerance(t);
    ExpectCudaMatchesCpu({chain, Inputs(t, 3, {1000}, rng, {2}), {1000}}, t, tol);
    ExpectCudaMatchesCpu({tree, Inputs(t, 16, {4, 33}, rng, {3, 8}), {4, 33}}, t, DefaultTolerance(t));
  }
}

TEST(CudaFused, ShapesZeroSizeScalarAndLarge) {
  SKIP_WITHOUT_CUDA();
  std::mt19937 rng(4);
  const std::vector<std::string> program = {"Mul i0 i1", "Add r0 c0x1p-1", "Relu r1"};
  for (DataType t : kTypes) {
    for (const Shape& shape : {Shape{0}, Shape{3, 0, 2}, Shape{}, Shape{1}, Shape{1 << 21 | 5}}) {
      ExpectCudaMatchesCpu({program, Inputs(t, 2, shape, rng, {}), shape}, t, DefaultTolerance(t));
    }
    // Zero-size output with a one-element input.
    ExpectCudaMatchesCpu({program, Inputs(t, 2, {0, 4}, rng, {1}), {0, 4}}, t, DefaultTolerance(t));
  }
}

TEST(CudaFused, RepeatedRunsAndManyPrograms) {
  SKIP_WITHOUT_CUDA();
  // The same program from several nodes and runs (the compile cache), and
  // programs differing only in a constant (distinct kernels).
  std::mt19937 rng(5);
  for (int k = 0; k < 3; ++k) {
    for (DataType t : kTypes) {
      FusedCase c{{absl::StrCat("Add i0 c", k), "Square r0"}, Inputs(t, 1, {17}, rng), {17}};
      ExpectCudaMatchesCpu(c, t, DefaultTolerance(t));
      ExpectCudaMatchesCpu(c, t, DefaultTolerance(t));
    }
  }
}

TEST(CudaFused, BadInputsAreRefused) {
  SKIP_WITHOUT_CUDA();
  std::mt19937 rng(6);
  // Input 1 has 3 elements where the output has 4: refused like the cpu does.
  FusedCase c{{"Add i0 i1"}, {RandomTensor(DataType::kFloat, {4}, rng), RandomTensor(DataType::kFloat, {3}, rng)},
              {4}};
  auto got = RunFused(c, DataType::kFloat, "CUDA:0");
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(Contains(got.status(), "elements")) << got.status();
}

TEST(CudaFused, OptimizerFusesOnCuda) {
  SKIP_WITHOUT_CUDA();
  // x * y + x, Relu6, - 0.5 on CUDA:0 with the optimizer on: the tree
  // becomes one fused node on the GPU.
  for (DataType t : kTypes) {
    const std::string dt = t == DataType::kFloat ? "DT_FLOAT" : "DT_DOUBLE";
    const std::string text = absl::StrCat(
        "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: ", dt,
        " } } attr { key: 'shape' value { shape { dim { size: 6 } dim { size: 50 } } } } }\n",
        "node { name: 'y' op: 'Placeholder' attr { key: 'dtype' value { type: ", dt,
        " } } attr { key: 'shape' value { shape { dim { size: 6 } dim { size: 50 } } } } }\n",
        "node { name: 'm' op: 'Mul' input: 'x' input: 'y' attr { key: 'T' value { type: ", dt, " } } }\n",
        "node { name: 'a' op: 'AddV2' input: 'm' input: 'x' attr { key: 'T' value { type: ", dt, " } } }\n",
        "node { name: 'r' op: 'Relu6' input: 'a' attr { key: 'T' value { type: ", dt, " } } }\n",
        "node { name: 'z' op: 'Tanh' input: 'r' attr { key: 'T' value { type: ", dt, " } } }\n");
    std::shared_ptr<const Graph> graph = GraphFromText(text);
    std::mt19937 rng(7);
    const std::vector<std::pair<std::string, Tensor>> feeds = {{"x", RandomTensor(t, {6, 50}, rng, -4, 4)},
                                                                {"y", RandomTensor(t, {6, 50}, rng, -4, 4)}};
    std::vector<Tensor> results;
    for (const char* device : {"CPU:0", "CUDA:0"}) {
      SessionOptions options;
      options.device = device;
      auto session = Session::Create(&TheRuntime(), graph, options);
      ASSERT_TRUE(session.ok()) << session.status();
      auto r = (*session)->Run(feeds, {"z"});
      ASSERT_TRUE(r.ok()) << r.status();
      results.push_back((*r)[0]);
      if (std::string(device) == "CUDA:0") {
        EXPECT_TRUE((*session)->placement_notes().empty()) << absl::StrJoin((*session)->placement_notes(), "\n");
        int fused = 0;
        for (const auto& n : (*session)->last_run_graph()->nodes()) fused += n->op == "_PlexusFusedElementwise";
        EXPECT_EQ(fused, 1) << absl::StrJoin((*session)->optimizer_log(), "\n");
      }
    }
    const absl::Status s = CompareTensors(results[1], results[0], DefaultTolerance(t));
    EXPECT_TRUE(s.ok()) << s;
  }
}

}  // namespace
}  // namespace plexus::testing

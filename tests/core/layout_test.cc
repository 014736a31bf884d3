// The layout pass (core/src/passes/optimizer/layout.cc): NCHW graphs rewritten to
// the cpu plugin's preferred NHWC with one Transpose at the entry and one at
// the exit, the same results as the graph as written, fusion still working
// afterwards, and nothing done where there is nothing to do (NHWC graphs,
// a device without a preference, nodes pinned to another device).
#include <cmath>
#include <random>

#include "gtest/gtest.h"
#include "plexus/npy.h"
#include "plexus/plexus.h"
#include "test_util.h"

namespace plexus {
namespace {

using ::plexus::testing::CpuAndReferenceRuntime;
using ::plexus::testing::CpuRuntime;
using ::plexus::testing::DataPath;
using ::plexus::testing::GraphFromText;

Tensor Random(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  Tensor t = *Tensor::AllocateHost(DataType::kFloat, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

std::vector<float> Ramp(size_t n, float scale, int period) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % period) - period / 2);
  return v;
}

std::string FloatConst(const std::string& name, const Shape& shape, const std::vector<float>& values) {
  std::string dims, vals;
  for (int64_t d : shape) dims += "dim { size: " + std::to_string(d) + " } ";
  for (float v : values) vals += "float_val: " + std::to_string(v) + " ";
  return "node { name: '" + name + "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } " +
         "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { " + dims + "} " + vals + "} } } }\n";
}

std::string Placeholder(const std::string& name, const Shape& shape) {
  std::string dims;
  for (int64_t d : shape) dims += "dim { size: " + std::to_string(d) + " } ";
  return "node { name: '" + name + "' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } " +
         "attr { key: 'shape' value { shape { " + dims + "} } } }\n";
}

std::string Ints(const std::string& key, const std::vector<int>& values) {
  std::string s = "attr { key: '" + key + "' value { list { ";
  for (int v : values) s += "i: " + std::to_string(v) + " ";
  return s + "} } } ";
}

std::string Str(const std::string& key, const std::string& value) {
  return "attr { key: '" + key + "' value { s: '" + value + "' } } ";
}

const char* kFloat = "attr { key: 'T' value { type: DT_FLOAT } } ";

// A node with inputs and extra attribute text (T is float).
std::string Op(const std::string& name, const std::string& op, const std::vector<std::string>& inputs,
               const std::string& attrs = "", const std::string& device = "") {
  std::string s = "node { name: '" + name + "' op: '" + op + "' ";
  for (const std::string& in : inputs) s += "input: '" + in + "' ";
  if (!device.empty()) s += "device: '" + device + "' ";
  return s + kFloat + attrs + "}\n";
}

struct Outcome {
  std::vector<Tensor> optimized;
  std::vector<Tensor> plain;  // with the layout pass off
  std::shared_ptr<const Graph> run_graph;
  std::vector<std::string> log;
};

Outcome RunWithAndWithoutLayout(Runtime* runtime, std::shared_ptr<const Graph> graph,
                                const std::vector<std::pair<std::string, Tensor>>& feeds,
                                const std::vector<std::string>& fetches, const std::string& device = "") {
  Outcome o;
  SessionOptions on;
  on.device = device;
  auto s1 = Session::Create(runtime, graph, on);
  EXPECT_TRUE(s1.ok()) << s1.status();
  if (!s1.ok()) return o;
  auto r1 = (*s1)->Run(feeds, fetches);
  EXPECT_TRUE(r1.ok()) << r1.status();
  if (r1.ok()) o.optimized = *r1;
  o.run_graph = (*s1)->last_run_graph();
  o.log = (*s1)->optimizer_log();
  SessionOptions off = on;
  off.optimizer.disabled_passes = {"layout"};
  auto s2 = Session::Create(runtime, graph, off);
  EXPECT_TRUE(s2.ok()) << s2.status();
  if (!s2.ok()) return o;
  auto r2 = (*s2)->Run(feeds, fetches);
  EXPECT_TRUE(r2.ok()) << r2.status();
  if (r2.ok()) o.plain = *r2;
  return o;
}

int CountOp(const Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.nodes()) n += node->op == op;
  return n;
}

int CountFormat(const Graph& g, const std::string& format) {
  int n = 0;
  for (const auto& node : g.nodes()) {
    auto f = GetAttrString(*node, "data_format");
    n += f.ok() && *f == format;
  }
  return n;
}

bool LayoutLogged(const std::vector<std::string>& log) {
  for (const std::string& line : log) {
    if (line.rfind("layout:", 0) == 0) return true;
  }
  return false;
}

void ExpectNear(const std::vector<Tensor>& a, const std::vector<Tensor>& b, double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a[k].dtype(), DataType::kFloat);
    ASSERT_EQ(a[k].shape(), b[k].shape());
    for (int64_t i = 0; i < a[k].num_elements(); ++i) {
      const double x = a[k].data<float>()[i], y = b[k].data<float>()[i];
      EXPECT_NEAR(x, y, tol * (1 + std::fabs(y))) << "output " << k << " element " << i;
    }
  }
}

// Placeholder -> Conv2D (stride 2, SAME) -> BiasAdd -> Relu -> MaxPool ->
// Mul by a scalar -> AvgPool -> Conv2D (dilated) -> depthwise -> batch norm
// -> Identity, all NCHW.
std::string NchwChain() {
  return Placeholder("x", {2, 3, 9, 9}) + FloatConst("f1", {3, 3, 3, 4}, Ramp(3 * 3 * 3 * 4, 0.05f, 11)) +
         Op("conv1", "Conv2D", {"x", "f1"},
            Ints("strides", {1, 1, 2, 2}) + Str("padding", "SAME") + Str("data_format", "NCHW")) +
         FloatConst("b1", {4}, {0.1f, -0.2f, 0.3f, 0.05f}) +
         Op("ba1", "BiasAdd", {"conv1", "b1"}, Str("data_format", "NCHW")) + Op("r1", "Relu", {"ba1"}) +
         Op("mp", "MaxPool", {"r1"},
            Ints("ksize", {1, 1, 2, 2}) + Ints("strides", {1, 1, 1, 1}) + Str("padding", "VALID") +
                Str("data_format", "NCHW")) +
         FloatConst("half", {}, {0.5f}) + Op("m", "Mul", {"mp", "half"}) +
         Op("ap", "AvgPool", {"m"},
            Ints("ksize", {1, 1, 2, 3}) + Ints("strides", {1, 1, 1, 1}) + Str("padding", "SAME") +
                Str("data_format", "NCHW")) +
         FloatConst("f2", {3, 3, 4, 4}, Ramp(3 * 3 * 4 * 4, 0.04f, 13)) +
         Op("conv2", "Conv2D", {"ap", "f2"},
            Ints("strides", {1, 1, 1, 1}) + Ints("dilations", {1, 1, 2, 2}) + Str("padding", "SAME") +
                Str("data_format", "NCHW")) +
         FloatConst("f3", {3, 3, 4, 2}, Ramp(3 * 3 * 4 * 2, 0.07f, 7)) +
         Op("dw", "DepthwiseConv2dNative", {"conv2", "f3"},
            Ints("strides", {1, 1, 1, 1}) + Str("padding", "SAME") + Str("data_format", "NCHW")) +
         FloatConst("scale", {8}, {1, 2, 0.5f, 1.5f, 1, 0.25f, 3, 1}) +
         FloatConst("offset", {8}, {0.1f, -0.2f, 0.3f, 0, 0.5f, -0.5f, 0, 0.2f}) +
         FloatConst("mean", {8}, {0.05f, -0.1f, 0, 0.2f, 0.1f, 0, -0.3f, 0.4f}) +
         FloatConst("var", {8}, {1, 0.5f, 2, 0.25f, 1.5f, 1, 0.75f, 2}) +
         "node { name: 'bn' op: 'FusedBatchNormV3' input: 'dw' input: 'scale' input: 'offset' input: 'mean' "
         "input: 'var' attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'U' value { type: DT_FLOAT } } "
         "attr { key: 'is_training' value { b: false } } attr { key: 'epsilon' value { f: 0.001 } } "
         "attr { key: 'data_format' value { s: 'NCHW' } } }\n" +
         Op("y", "Identity", {"bn"});
}

TEST(LayoutPass, RewritesAnNchwChainToNhwcWithOneTransposeAtEachEnd) {
  auto runtime = CpuRuntime();
  auto graph = GraphFromText(NchwChain());
  ASSERT_NE(graph, nullptr);
  Outcome o = RunWithAndWithoutLayout(runtime.get(), graph, {{"x", Random({2, 3, 9, 9}, 1)}}, {"y"});
  ASSERT_NE(o.run_graph, nullptr);
  EXPECT_TRUE(LayoutLogged(o.log));
  EXPECT_EQ(CountOp(*o.run_graph, "Transpose"), 2);
  EXPECT_EQ(CountFormat(*o.run_graph, "NCHW"), 0);
  // Fusion after the rewrite: Conv2D + BiasAdd + Relu into one node, the
  // batch norm folded into the depthwise convolution.
  EXPECT_EQ(CountOp(*o.run_graph, "_FusedConv2D"), 1);
  EXPECT_EQ(CountOp(*o.run_graph, "FusedBatchNormV3"), 0);
  EXPECT_EQ(CountOp(*o.run_graph, "Relu"), 0);
  // The entry Transpose reads x, the exit one feeds y.
  const Node* y = o.run_graph->FindNode("y");
  ASSERT_NE(y, nullptr);
  ASSERT_EQ(y->inputs.size(), 1u);
  EXPECT_EQ(y->inputs[0].node->op, "Transpose");
  for (const auto& node : o.run_graph->nodes()) {
    if (node->op == "Transpose" && node.get() != y->inputs[0].node) {
      EXPECT_EQ(node->inputs[0].node->name, "x");
    }
  }
  // Per-dimension attributes follow the layout.
  const Node* conv2 = o.run_graph->FindNode("conv2");
  ASSERT_NE(conv2, nullptr);
  EXPECT_EQ(*GetAttrIntList(*conv2, "dilations"), (std::vector<int64_t>{1, 2, 2, 1}));
  const Node* ap = o.run_graph->FindNode("ap");
  ASSERT_NE(ap, nullptr);
  EXPECT_EQ(*GetAttrIntList(*ap, "ksize"), (std::vector<int64_t>{1, 2, 3, 1}));
  ASSERT_EQ(o.optimized.size(), 1u);
  EXPECT_EQ(o.optimized[0].shape(), (Shape{2, 8, 4, 4}));
  ExpectNear(o.optimized, o.plain, 1e-5);

  // With every other pass off the result is the same (the transposes alone).
  SessionOptions only;
  only.optimizer.disabled_passes = {"prune", "arithmetic", "constant_fold", "cse", "fuse", "fuse_elementwise"};
  auto s = Session::Create(runtime.get(), graph, only);
  ASSERT_TRUE(s.ok()) << s.status();
  auto r = (*s)->Run({{"x", Random({2, 3, 9, 9}, 1)}}, {"y"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(CountOp(*(*s)->last_run_graph(), "Transpose"), 2);
  EXPECT_EQ(CountFormat(*(*s)->last_run_graph(), "NHWC"), 7);  // every layout op
  ExpectNear(*r, o.plain, 1e-5);
}

TEST(LayoutPass, StridedConvolutionStrideIsPermuted) {
  auto runtime = CpuRuntime();
  auto graph = GraphFromText(NchwChain());
  ASSERT_NE(graph, nullptr);
  SessionOptions only;
  only.optimizer.disabled_passes = {"fuse"};
  auto s = Session::Create(runtime.get(), graph, only);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE((*s)->Run({{"x", Random({2, 3, 9, 9}, 2)}}, {"y"}).ok());
  const Node* conv1 = (*s)->last_run_graph()->FindNode("conv1");
  ASSERT_NE(conv1, nullptr);
  EXPECT_EQ(*GetAttrString(*conv1, "data_format"), "NHWC");
  EXPECT_EQ(*GetAttrIntList(*conv1, "strides"), (std::vector<int64_t>{1, 2, 2, 1}));
}

TEST(LayoutPass, PermutesExplicitPaddings) {
  auto runtime = CpuRuntime();
  // Pairs per dimension in NCHW order: H gets (1, 2), W gets (2, 0).
  std::string g = Placeholder("x", {1, 2, 6, 5}) + FloatConst("f", {3, 2, 2, 3}, Ramp(3 * 2 * 2 * 3, 0.1f, 9)) +
                  Op("conv", "Conv2D", {"x", "f"},
                     Ints("strides", {1, 1, 2, 1}) + Str("padding", "EXPLICIT") +
                         Ints("explicit_paddings", {0, 0, 0, 0, 1, 2, 2, 0}) + Str("data_format", "NCHW")) +
                  Op("y", "Identity", {"conv"});
  Outcome o = RunWithAndWithoutLayout(runtime.get(), GraphFromText(g), {{"x", Random({1, 2, 6, 5}, 3)}}, {"y"});
  ASSERT_NE(o.run_graph, nullptr);
  const Node* conv = o.run_graph->FindNode("conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(*GetAttrString(*conv, "data_format"), "NHWC");
  EXPECT_EQ(*GetAttrIntList(*conv, "explicit_paddings"), (std::vector<int64_t>{0, 0, 1, 2, 2, 0, 0, 0}));
  EXPECT_EQ(*GetAttrIntList(*conv, "strides"), (std::vector<int64_t>{1, 2, 1, 1}));
  ASSERT_EQ(o.optimized.size(), 1u);
  // H: (6 + 3 - 3) / 2 + 1 = 4; W: 5 + 2 - 2 + 1 = 6.
  EXPECT_EQ(o.optimized[0].shape(), (Shape{1, 3, 4, 6}));
  ExpectNear(o.optimized, o.plain, 1e-5);
}

TEST(LayoutPass, MovesTransposesThroughAResidualAddition) {
  auto runtime = CpuRuntime();
  // Two NCHW convolutions of x added, Relu, a third convolution: the
  // transposes cross the AddV2 (both operands transposed alike) and the Relu.
  const std::string conv_attrs = Ints("strides", {1, 1, 1, 1}) + Str("padding", "SAME") + Str("data_format", "NCHW");
  std::string g = Placeholder("x", {1, 4, 5, 5}) + FloatConst("fa", {3, 3, 4, 4}, Ramp(144, 0.05f, 11)) +
                  FloatConst("fb", {1, 1, 4, 4}, Ramp(16, 0.1f, 5)) +
                  FloatConst("fc", {3, 3, 4, 2}, Ramp(72, 0.06f, 7)) + Op("a", "Conv2D", {"x", "fa"}, conv_attrs) +
                  Op("b", "Conv2D", {"x", "fb"}, conv_attrs) + Op("sum", "AddV2", {"a", "b"}) +
                  Op("r", "Relu", {"sum"}) + Op("c", "Conv2D", {"r", "fc"}, conv_attrs) + Op("y", "Identity", {"c"});
  Outcome o = RunWithAndWithoutLayout(runtime.get(), GraphFromText(g), {{"x", Random({1, 4, 5, 5}, 4)}}, {"y"});
  ASSERT_NE(o.run_graph, nullptr);
  EXPECT_EQ(CountOp(*o.run_graph, "Transpose"), 2);
  EXPECT_EQ(CountFormat(*o.run_graph, "NCHW"), 0);
  ExpectNear(o.optimized, o.plain, 1e-5);
}

TEST(LayoutPass, KeepsFetchedAndPinnedNodesAsTheyAre) {
  auto runtime = CpuAndReferenceRuntime();
  ASSERT_NE(runtime, nullptr);
  const std::string pool = Ints("ksize", {1, 1, 2, 2}) + Ints("strides", {1, 1, 2, 2}) + Str("padding", "VALID") +
                           Str("data_format", "NCHW");
  // "pinned" asks for the reference device, which exists here; "fetched"
  // is named by the signature, so its value must stay NCHW.
  std::string g = Placeholder("x", {1, 2, 4, 4}) + Op("pinned", "MaxPool", {"x"}, pool, "/device:REF:0") +
                  Op("fetched", "MaxPool", {"x"}, pool) + Op("converted", "AvgPool", {"x"}, pool) +
                  Op("y", "Identity", {"converted"});
  Outcome o = RunWithAndWithoutLayout(runtime.get(), GraphFromText(g), {{"x", Random({1, 2, 4, 4}, 5)}},
                                      {"pinned", "fetched", "y"}, "CPU:0");
  ASSERT_NE(o.run_graph, nullptr);
  EXPECT_EQ(*GetAttrString(*o.run_graph->FindNode("pinned"), "data_format"), "NCHW");
  EXPECT_EQ(*GetAttrString(*o.run_graph->FindNode("fetched"), "data_format"), "NCHW");
  EXPECT_EQ(*GetAttrString(*o.run_graph->FindNode("converted"), "data_format"), "NHWC");
  ExpectNear(o.optimized, o.plain, 0);
}

TEST(LayoutPass, NothingToDoOnADeviceWithoutAPreference) {
  auto runtime = CpuAndReferenceRuntime();
  ASSERT_NE(runtime, nullptr);
  auto ref = runtime->FindDevice("REF:0");
  ASSERT_TRUE(ref.ok()) << ref.status();
  EXPECT_EQ((*ref)->info().preferred_layout, PX_LAYOUT_ANY);
  auto cpu = runtime->FindDevice("CPU:0");
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_EQ((*cpu)->info().preferred_layout, PX_LAYOUT_NHWC);
  auto graph = GraphFromText(NchwChain());
  ASSERT_NE(graph, nullptr);
  Outcome o = RunWithAndWithoutLayout(runtime.get(), graph, {{"x", Random({2, 3, 9, 9}, 6)}}, {"y"}, "REF:0");
  ASSERT_NE(o.run_graph, nullptr);
  EXPECT_FALSE(LayoutLogged(o.log));
  EXPECT_EQ(CountOp(*o.run_graph, "Transpose"), 0);
  EXPECT_GT(CountFormat(*o.run_graph, "NCHW"), 0);
  ExpectNear(o.optimized, o.plain, 0);
}

TEST(LayoutPass, NothingToDoOnRealNhwcGraphs) {
  auto runtime = CpuRuntime();
  Tensor mfcc = *ReadNpy(DataPath("tf_graphs/kws_cnn/ref_mfcc_input.npy"));
  for (const char* model : {"CNN_S", "DS_CNN_S"}) {
    auto g = ImportGraphDefFile(DataPath(std::string("tf_graphs/kws_cnn/") + model + ".pb"));
    ASSERT_TRUE(g.ok()) << g.status();
    std::shared_ptr<const Graph> graph(*std::move(g));
    Outcome o = RunWithAndWithoutLayout(runtime.get(), graph, {{"Mfcc:0", mfcc}}, {"labels_softmax:0"});
    ASSERT_NE(o.run_graph, nullptr) << model;
    EXPECT_FALSE(LayoutLogged(o.log)) << model;
    EXPECT_EQ(CountOp(*o.run_graph, "Transpose"), CountOp(*graph, "Transpose")) << model;
    EXPECT_EQ(CountFormat(*o.run_graph, "NCHW"), 0) << model;
    Tensor want = *ReadNpy(DataPath(std::string("tf_graphs/kws_cnn/ref_") + model + "_softmax.npy"));
    ASSERT_EQ(o.optimized.size(), 1u);
    ExpectNear(o.optimized, o.plain, 0);
    ExpectNear(o.optimized, {want}, 1e-4);
  }
}

}  // namespace
}  // namespace plexus

// The layer patterns Keras 3 exports, through the optimizer: batch norm as
// Mul and AddV2 of constants after a convolution (with or without its
// bias), ZeroPadding2D before a strided convolution, the weights marked
// constant for the kernels, Dense layers on 3-D inputs, layer norms,
// residual adds into the convolution before them, and
// feed-shape specialization of a graph whose batch is unknown. Each
// optimized graph must give the unoptimized results.
#include <string>
#include <vector>

#include "core/optimizer_graphs.h"
#include "gtest/gtest.h"
#include "plexus/plexus.h"
#include "test_util.h"

namespace plexus {
namespace {

using ::plexus::testing::CpuRuntime;
using namespace ::plexus::optimizer_graphs;  // NOLINT: the test graphs' builders

std::string Conv(const std::string& name, const std::string& op, const std::string& x, const std::string& f,
                 int stride, const std::string& padding) {
  const std::string s = std::to_string(stride);
  return "node { name: '" + name + "' op: '" + op + "' input: '" + x + "' input: '" + f +
         "' attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'strides' value { list { i: 1 i: " + s +
         " i: " + s + " i: 1 } } } attr { key: 'padding' value { s: '" + padding + "' } } }\n";
}

// An int32 [4, 2] paddings constant.
std::string Paddings(const std::string& name, const std::vector<int>& values) {
  std::string vals;
  for (int v : values) vals += "int_val: " + std::to_string(v) + " ";
  return "node { name: '" + name + "' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } " +
         "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 4 } dim { size: 2 } } " +
         vals + "} } } }\n";
}

std::vector<float> Ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % 13) - 6);
  return v;
}

const Node* NodeOf(const Outcome& o, const std::string& name) {
  const Node* n = o.run_graph->FindNode(name);
  EXPECT_NE(n, nullptr) << name;
  return n;
}

TEST(KerasFusion, BatchNormAsMulAndAddFoldsIntoTheConvolution) {
  auto runtime = CpuRuntime();
  std::string g =
      Placeholder("x", {1, 6, 6, 3}) + FloatConst("f", {3, 3, 3, 4}, Ramp(108, 0.05f)) +
      Conv("conv", "Conv2D", "x", "f", 1, "SAME") +
      // Keras writes the factor as [C] or [1, 1, 1, C].
      FloatConst("scale", {1, 1, 1, 4}, {0.5f, 2, -1, 1.5f}) + Binary("mul", "Mul", "conv", "scale") +
      FloatConst("shift", {4}, {0.1f, -0.3f, 0.2f, 0}) + Binary("add", "AddV2", "mul", "shift") +
      Unary("y", "Relu6", "add") +
      // ResNet's layers keep their bias between the convolution and the Mul.
      FloatConst("f2", {1, 1, 4, 2}, Ramp(8, 0.1f)) + Conv("conv2", "Conv2D", "y", "f2", 1, "VALID") +
      FloatConst("b2", {2}, {0.25f, -0.5f}) +
      "node { name: 'bias2' op: 'BiasAdd' input: 'conv2' input: 'b2' attr { key: 'T' value { type: DT_FLOAT } } }\n" +
      FloatConst("scale2", {2}, {3, -0.5f}) + Binary("mul2", "Mul", "bias2", "scale2") +
      FloatConst("shift2", {1, 1, 1, 2}, {0.7f, 0.1f}) + Binary("add2", "AddV2", "mul2", "shift2") +
      Unary("z", "Relu", "add2");
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random({1, 6, 6, 3}, 31)}}, {"y", "z"});
  EXPECT_EQ(NodeOf(o, "y")->op, "_FusedConv2D");
  EXPECT_EQ(NodeOf(o, "z")->op, "_FusedConv2D");
  EXPECT_EQ(CountOp(*o.run_graph, "Mul"), 0);
  EXPECT_EQ(CountOp(*o.run_graph, "AddV2"), 0);
  ExpectNear(o.optimized, o.plain, 1e-5);
}

TEST(KerasFusion, AProductThatIsNotPerChannelStays) {
  auto runtime = CpuRuntime();
  // A factor per row (broadcast over H) and a factor read twice must not fold.
  std::string g = Placeholder("x", {1, 4, 4, 2}) + FloatConst("f", {1, 1, 2, 4}, Ramp(8, 0.2f)) +
                  Conv("conv", "Conv2D", "x", "f", 1, "VALID") +
                  FloatConst("rows", {4, 1, 1}, {1, 2, 3, 4}) + Binary("y", "Mul", "conv", "rows") +
                  Conv("conv2", "Conv2D", "x", "f", 1, "VALID") + FloatConst("c", {4}, {1, 2, 3, 4}) +
                  Binary("y2", "Mul", "conv2", "c") + Unary("y3", "Neg", "conv2");
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random({1, 4, 4, 2}, 32)}}, {"y", "y2", "y3"});
  EXPECT_EQ(NodeOf(o, "y")->op, "Mul");
  EXPECT_EQ(NodeOf(o, "y2")->op, "Mul");
  ExpectNear(o.optimized, o.plain, 1e-5);
}

TEST(KerasFusion, ZeroPaddingFoldsIntoTheStridedConvolution) {
  auto runtime = CpuRuntime();
  std::string g =
      Placeholder("x", {2, 7, 7, 3}) + Paddings("pads", {0, 0, 0, 1, 1, 2, 0, 0}) +
      "node { name: 'pad' op: 'Pad' input: 'x' input: 'pads' attr { key: 'T' value { type: DT_FLOAT } } }\n" +
      FloatConst("f", {3, 3, 3, 4}, Ramp(108, 0.05f)) + Conv("y", "Conv2D", "pad", "f", 2, "VALID") +
      Paddings("pads2", {0, 0, 1, 1, 1, 1, 0, 0}) +
      "node { name: 'pad2' op: 'Pad' input: 'x' input: 'pads2' attr { key: 'T' value { type: DT_FLOAT } } }\n" +
      FloatConst("dw", {3, 3, 3, 1}, Ramp(27, 0.1f)) + Conv("y2", "DepthwiseConv2dNative", "pad2", "dw", 2, "VALID") +
      // Padding over the channels is not a convolution's padding.
      Paddings("cpads", {0, 0, 1, 1, 1, 1, 0, 1}) +
      "node { name: 'pad3' op: 'Pad' input: 'x' input: 'cpads' attr { key: 'T' value { type: DT_FLOAT } } }\n" +
      FloatConst("f3", {3, 3, 4, 2}, Ramp(72, 0.05f)) + Conv("y3", "Conv2D", "pad3", "f3", 1, "VALID");
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random({2, 7, 7, 3}, 33)}}, {"y", "y2", "y3"});
  EXPECT_EQ(CountOp(*o.run_graph, "Pad"), 1);
  ASSERT_NE(NodeOf(o, "y"), nullptr);
  EXPECT_EQ(NodeOf(o, "y")->inputs[0].node->name, "x");
  ExpectNear(o.optimized, o.plain, 1e-5);
}

TEST(KerasFusion, ConstantWeightsAreMarkedForTheKernels) {
  auto runtime = CpuRuntime();
  std::string g = Placeholder("x", {1, 4, 4, 2}) + FloatConst("f", {1, 1, 2, 3}, Ramp(6, 0.3f)) +
                  Conv("y", "Conv2D", "x", "f", 1, "VALID") + Placeholder("w", {1, 1, 2, 3}) +
                  Conv("y2", "Conv2D", "x", "w", 1, "VALID");
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random({1, 4, 4, 2}, 34)}, {"w", Random({1, 1, 2, 3}, 35)}},
                      {"y", "y2"});
  const tf::AttrValue* marked = NodeOf(o, "y")->FindAttr("_plexus_const_inputs");
  ASSERT_NE(marked, nullptr);
  ASSERT_EQ(marked->list().i_size(), 1);
  EXPECT_EQ(marked->list().i(0), 1);
  EXPECT_EQ(NodeOf(o, "y2")->FindAttr("_plexus_const_inputs"), nullptr);
  ExpectNear(o.optimized, o.plain, 1e-6);
}

TEST(KerasFusion, AConstantFilterFedWithNewValuesIsNotKept) {
  // Feeding the filter's Const replaces it: that signature's kernels must
  // see the fed values, not a filter prepared for the constant.
  auto runtime = CpuRuntime();
  std::string g = Placeholder("x", {1, 3, 3, 2}) + FloatConst("f", {2, 2, 2, 2}, Ramp(16, 0.2f)) +
                  Conv("y", "Conv2D", "x", "f", 1, "VALID");
  auto session = Session::Create(runtime.get(), Parse(g), SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status();
  Tensor x = Random({1, 3, 3, 2}, 36);
  auto constant = (*session)->Run({{"x", x}}, {"y"});
  ASSERT_TRUE(constant.ok()) << constant.status();
  Tensor zero = *Tensor::AllocateHost(DataType::kFloat, {2, 2, 2, 2});
  for (int64_t i = 0; i < zero.num_elements(); ++i) zero.data<float>()[i] = 0;
  auto fed = (*session)->Run({{"x", x}, {"f", zero}}, {"y"});
  ASSERT_TRUE(fed.ok()) << fed.status();
  for (int64_t i = 0; i < (*fed)[0].num_elements(); ++i) EXPECT_EQ((*fed)[0].data<float>()[i], 0.0f);
  auto again = (*session)->Run({{"x", x}}, {"y"});
  ASSERT_TRUE(again.ok()) << again.status();
  ExpectNear(*again, *constant, 0);
}

TEST(KerasFusion, APromiseOfAConstantThatDoesNotHoldIsNotPassedOn) {
  // A graph that arrives with `_plexus_const_inputs` on inputs that are not
  // constants (an optimized graph dumped and imported again, run with the
  // optimizer off): the executor checks the promise and drops it, so the
  // kernels never keep a converted copy of a weight that changes.
  auto runtime = CpuRuntime();
  const std::string promise = "attr { key: '_plexus_const_inputs' value { list { i: 1 } } } }\n";
  std::string conv = Conv("y", "Conv2D", "x", "w", 1, "SAME");
  conv = conv.substr(0, conv.rfind('}')) + promise;
  std::string g = Placeholder("x", {1, 8, 8, 16}) + Placeholder("w", {3, 3, 16, 32}) + conv +
                  Placeholder("a", {8, 64}) + Placeholder("b", {64, 64}) +
                  "node { name: 'p' op: 'MatMul' input: 'a' input: 'b' attr { key: 'T' value { type: DT_FLOAT } } " +
                  promise;
  SessionOptions options;
  options.optimizer.enabled = false;
  auto session = Session::Create(runtime.get(), Parse(g), options);
  ASSERT_TRUE(session.ok()) << session.status();
  SessionOptions plain_options;
  plain_options.optimizer.enabled = false;
  std::string unmarked = g;
  for (size_t at; (at = unmarked.find("attr { key: '_plexus_const_inputs'")) != std::string::npos;) {
    unmarked.erase(at, unmarked.find("} } } ", at) + 6 - at);
  }
  ASSERT_EQ(unmarked.find("_plexus_const_inputs"), std::string::npos);
  auto plain = Session::Create(runtime.get(), Parse(unmarked), plain_options);
  ASSERT_TRUE(plain.ok()) << plain.status();
  Tensor x = Random({1, 8, 8, 16}, 40), a = Random({8, 64}, 41);
  for (int seed : {42, 43, 44}) {
    std::vector<std::pair<std::string, Tensor>> feeds = {
        {"x", x}, {"w", Random({3, 3, 16, 32}, seed)}, {"a", a}, {"b", Random({64, 64}, seed + 10)}};
    auto marked = (*session)->Run(feeds, {"y", "p"});
    auto expected = (*plain)->Run(feeds, {"y", "p"});
    ASSERT_TRUE(marked.ok()) << marked.status();
    ASSERT_TRUE(expected.ok()) << expected.status();
    ExpectNear(*marked, *expected, 1e-5);
  }
}

TEST(KerasFusion, SmallPowersBecomeProductsThatFuse) {
  auto runtime = CpuRuntime();
  // The tanh GELU: 0.5 * x * (1 + tanh(0.7978845608 * (x + 0.044715 * x^3))).
  std::string g = Placeholder("x", {2, 8}) + FloatConst("three", {}, {3}) + Binary("cube", "Pow", "x", "three") +
                  FloatConst("k", {}, {0.044715f}) + Binary("kc", "Mul", "cube", "k") +
                  Binary("inner", "AddV2", "x", "kc") + FloatConst("s", {}, {0.7978845608f}) +
                  Binary("scaled", "Mul", "inner", "s") + Unary("t", "Tanh", "scaled") +
                  FloatConst("one", {}, {1}) + Binary("onep", "AddV2", "t", "one") +
                  Binary("xo", "Mul", "x", "onep") + FloatConst("half", {}, {0.5f}) +
                  Binary("y", "Mul", "xo", "half") +
                  FloatConst("two", {}, {2}) + Binary("sq", "Pow", "x", "two") +
                  Unary("nsq", "Relu", "sq") + FloatConst("other", {}, {2.5f}) +
                  Binary("p25", "Pow", "x", "other") + Unary("np25", "Relu", "p25");
  Tensor x = Random({2, 8}, 50);
  for (int64_t i = 0; i < x.num_elements(); ++i) x.data<float>()[i] = std::fabs(x.data<float>()[i]) + 0.1f;
  Outcome o = RunBoth(runtime.get(), g, {{"x", x}}, {"y", "nsq", "np25"}, {"fuse_elementwise"});
  EXPECT_EQ(CountOp(*o.run_graph, "Pow"), 1);  // only x^2.5 stays a Pow
  EXPECT_GE(CountOp(*o.run_graph, "Square"), 1);  // x^2 and x^3 share one after cse
  ExpectNear(o.optimized, o.plain, 1e-6);
  // With elementwise fusion, the whole GELU is one node.
  Outcome fused = RunBoth(runtime.get(), g, {{"x", x}}, {"y", "nsq", "np25"});
  EXPECT_EQ(NodeOf(fused, "y")->op, "_PlexusFusedElementwise");
  EXPECT_EQ(CountOp(*fused.run_graph, "Tanh"), 0);
  ExpectNear(o.optimized, o.plain, 1e-6);
}

TEST(KerasFusion, AnUnknownBatchIsSpecializedToTheFedShapes) {
  auto runtime = CpuRuntime();
  std::string g = Placeholder("x", {-1, 4, 4, 2}) + FloatConst("f", {3, 3, 2, 3}, Ramp(54, 0.1f)) +
                  Conv("conv", "Conv2D", "x", "f", 1, "SAME") + Unary("s", "Sigmoid", "conv") +
                  Binary("y", "Mul", "conv", "s");
  auto graph = Parse(g);
  SessionOptions options;
  options.max_shape_specializations = 2;
  auto session = Session::Create(runtime.get(), graph, options);
  ASSERT_TRUE(session.ok()) << session.status();
  SessionOptions plain_options;
  plain_options.optimizer.enabled = false;
  plain_options.max_shape_specializations = 0;
  auto plain = Session::Create(runtime.get(), graph, plain_options);
  ASSERT_TRUE(plain.ok()) << plain.status();
  for (int64_t batch : {1, 3, 2, 1, 5}) {
    Tensor x = Random({batch, 4, 4, 2}, 40 + static_cast<uint32_t>(batch));
    auto got = (*session)->Run({{"x", x}}, {"y"});
    ASSERT_TRUE(got.ok()) << got.status();
    auto want = (*plain)->Run({{"x", x}}, {"y"});
    ASSERT_TRUE(want.ok()) << want.status();
    ExpectNear(*got, *want, 1e-5);
    const Node* x_node = (*session)->last_run_graph()->FindNode("x");
    ASSERT_NE(x_node, nullptr);
    // Batches 1 and 3 got executors of their own; 2 and 5 the general one.
    const bool specialized = batch == 1 || batch == 3;
    EXPECT_EQ(x_node->output_shapes[0].fully_defined(), specialized) << "batch " << batch;
  }
}

// Dense and EinsumDense on a 3-D input as Keras exports them: the identity
// transpose of Tensordot, a reshape to rows, MatMul, a reshape back, then
// BiasAdd; and a BatchMatMulV2 by a matrix, a reshape to [.., heads, size]
// and an AddV2 of a [heads, size] bias. Each becomes one _FusedMatMul
// between reshapes. A bias that broadcasts inside a row must stay.
TEST(KerasFusion, DenseLayersOnThreeDimensionalInputsFuse) {
  auto runtime = CpuRuntime();
  auto typed = [](const std::string& node, const std::string& extra) {
    return node.substr(0, node.size() - 3) + extra + " }\n";
  };
  std::string g =
      Placeholder("x", {2, 5, 8}) + IntConst("perm", {0, 1, 2}) +
      typed(Binary("t", "Transpose", "x", "perm"), " attr { key: 'Tperm' value { type: DT_INT32 } }") +
      IntConst("rows", {10, 8}) +
      typed(Binary("r", "Reshape", "t", "rows"), " attr { key: 'Tshape' value { type: DT_INT32 } }") +
      FloatConst("w", {8, 6}, Ramp(48, 0.1f)) + Binary("mm", "MatMul", "r", "w") + IntConst("back", {2, 5, 6}) +
      typed(Binary("r2", "Reshape", "mm", "back"), " attr { key: 'Tshape' value { type: DT_INT32 } }") +
      FloatConst("b", {6}, {0.5f, -1, 0.25f, 2, 0, -0.5f}) + Binary("dense", "BiasAdd", "r2", "b") +
      // EinsumDense "abc,cde->abde" with 2 heads of 3.
      Binary("bmm", "BatchMatMulV2", "x", "w") + IntConst("heads", {2, 5, 2, 3}) +
      typed(Binary("r3", "Reshape", "bmm", "heads"), " attr { key: 'Tshape' value { type: DT_INT32 } }") +
      FloatConst("hb", {2, 3}, {1, 2, 3, -1, -2, -3}) + Binary("einsum_dense", "AddV2", "r3", "hb") +
      // A [3] bias over [2, 5, 2, 3] repeats inside each row of 6: it stays.
      FloatConst("w2", {8, 6}, Ramp(48, -0.05f)) + Binary("bmm2", "BatchMatMulV2", "x", "w2") +
      typed(Binary("r4", "Reshape", "bmm2", "heads"), " attr { key: 'Tshape' value { type: DT_INT32 } }") +
      FloatConst("sb", {3}, {1, 2, 3}) + Binary("small_bias", "AddV2", "r4", "sb");
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random({2, 5, 8}, 51)}}, {"dense", "einsum_dense", "small_bias"});
  EXPECT_EQ(CountOp(*o.run_graph, "Transpose"), 0);
  EXPECT_EQ(CountOp(*o.run_graph, "BatchMatMulV2"), 0);
  EXPECT_EQ(CountOp(*o.run_graph, "_FusedMatMul"), 2);
  EXPECT_EQ(CountOp(*o.run_graph, "MatMul"), 1);  // the small bias's product
  EXPECT_EQ(NodeOf(o, "dense")->op, "Reshape");
  EXPECT_EQ(NodeOf(o, "einsum_dense")->op, "Reshape");
  ExpectNear(o.optimized, o.plain, 1e-5);
}

// Layer normalization over the last axis as Keras 3 writes it (with and
// without gamma and beta, tf.nn.moments' StopGradient included) and in the
// textbook form becomes one _PlexusLayerNorm; a mean over another axis
// stays as it is.
TEST(KerasFusion, LayerNormsBecomeOneNode) {
  auto runtime = CpuRuntime();
  auto mean = [](const std::string& name, const std::string& x, const std::string& axes) {
    return "node { name: '" + name + "' op: 'Mean' input: '" + x + "' input: '" + axes +
           "' attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'keep_dims' value { b: true } }"
           " attr { key: 'Tidx' value { type: DT_INT32 } } }\n";
  };
  // Keras 3: x * inv + (-mean * inv + beta), inv = rsqrt(var + eps) * gamma.
  auto keras = [&](const std::string& p, const std::string& x, bool gamma, bool beta) {
    std::string g = mean(p + "mean", x, "last") + Unary(p + "sg", "StopGradient", p + "mean") +
                    Binary(p + "sq", "SquaredDifference", x, p + "sg") + mean(p + "var", p + "sq", "last") +
                    Binary(p + "ve", "AddV2", p + "var", "eps") + Unary(p + "rs", "Rsqrt", p + "ve");
    std::string inv = p + "rs";
    if (gamma) {
      g += Binary(p + "inv", "Mul", p + "rs", "gamma");
      inv = p + "inv";
    }
    g += Binary(p + "xi", "Mul", x, inv) + Unary(p + "neg", "Neg", p + "mean") + Binary(p + "mi", "Mul", p + "neg", inv);
    std::string rest = p + "mi";
    if (beta) {
      g += Binary(p + "rest", "AddV2", p + "mi", "beta");
      rest = p + "rest";
    }
    return g + Binary(p + "y", "AddV2", p + "xi", rest);
  };
  std::string g = Placeholder("x", {3, 5, 24}) + Placeholder("x2", {3, 5, 24}) + Placeholder("x3", {3, 5, 24}) +
                  Placeholder("x4", {3, 5, 24}) + IntConst("last", {-1}) + IntConst("first", {1}) +
                  FloatConst("eps", {}, {1e-3f}) + FloatConst("gamma", {24}, Ramp(24, 0.2f)) +
                  FloatConst("beta", {1, 1, 24}, Ramp(24, -0.1f)) + keras("a/", "x", true, true) +
                  keras("b/", "x2", false, false) +
                  // Textbook: (x - mean) * rsqrt(var + eps) * gamma + beta.
                  mean("c/mean", "x3", "last") + Binary("c/d", "Sub", "x3", "c/mean") +
                  Binary("c/sq", "SquaredDifference", "x3", "c/mean") + mean("c/var", "c/sq", "last") +
                  Binary("c/ve", "AddV2", "eps", "c/var") + Unary("c/rs", "Rsqrt", "c/ve") +
                  Binary("c/n", "Mul", "c/d", "c/rs") + Binary("c/ng", "Mul", "gamma", "c/n") +
                  Binary("c/y", "AddV2", "c/ng", "beta") +
                  // Over axis 1: not a layer norm of the last axis.
                  mean("d/mean", "x4", "first") + Binary("d/d", "Sub", "x4", "d/mean") +
                  Binary("d/sq", "SquaredDifference", "x4", "d/mean") + mean("d/var", "d/sq", "first") +
                  Binary("d/ve", "AddV2", "d/var", "eps") + Unary("d/rs", "Rsqrt", "d/ve") +
                  Binary("d/y", "Mul", "d/d", "d/rs");
  Tensor x = Random({3, 5, 24}, 61);
  // One row far from zero (the unfused float graph loses some digits there,
  // so the tolerance is looser than elsewhere).
  for (int64_t i = 0; i < 24; ++i) x.data<float>()[i] += 100.0f;
  Outcome o = RunBoth(runtime.get(), g,
                      {{"x", x}, {"x2", Random({3, 5, 24}, 62)}, {"x3", Random({3, 5, 24}, 63)}, {"x4", Random({3, 5, 24}, 64)}},
                      {"a/y", "b/y", "c/y", "d/y"});
  EXPECT_EQ(NodeOf(o, "a/y")->op, "_PlexusLayerNorm");
  EXPECT_EQ(NodeOf(o, "b/y")->op, "_PlexusLayerNorm");
  EXPECT_EQ(NodeOf(o, "c/y")->op, "_PlexusLayerNorm");
  EXPECT_NE(NodeOf(o, "d/y")->op, "_PlexusLayerNorm");
  EXPECT_EQ(CountOp(*o.run_graph, "_PlexusLayerNorm"), 3);
  ExpectNear(o.optimized, o.plain, 5e-5);
}

// ResNet's and MobileNetV2's residual blocks: the Add after a convolution's
// bias or batch norm (and the Relu after the Add) join the convolution as
// one _PlexusFusedConv2DAdd, whichever operand of the Add it is; an Add
// that broadcasts stays.
TEST(KerasFusion, ResidualAddsJoinTheConvolution) {
  auto runtime = CpuRuntime();
  auto bias_add = [](const std::string& name, const std::string& x, const std::string& b) {
    return "node { name: '" + name + "' op: 'BiasAdd' input: '" + x + "' input: '" + b +
           "' attr { key: 'T' value { type: DT_FLOAT } } }\n";
  };
  std::string g =
      Placeholder("x", {2, 6, 6, 4}) + Placeholder("r", {2, 6, 1, 4}) +
      // Identity block end: conv + bias, + x, Relu.
      FloatConst("f", {3, 3, 4, 4}, Ramp(144, 0.03f)) + Conv("conv", "Conv2D", "x", "f", 1, "SAME") +
      FloatConst("b", {4}, {0.1f, -0.2f, 0.3f, 0}) + bias_add("bias", "conv", "b") +
      Binary("add", "AddV2", "x", "bias") + Unary("y", "Relu", "add") +
      // Keras' batch norm as Mul and AddV2, then the Add, fetched, no activation.
      FloatConst("f2", {1, 1, 4, 4}, Ramp(16, 0.1f)) + Conv("conv2", "Conv2D", "y", "f2", 1, "VALID") +
      FloatConst("scale2", {4}, {0.5f, 2, -1, 1.5f}) + Binary("mul2", "Mul", "conv2", "scale2") +
      FloatConst("shift2", {4}, {0.1f, -0.3f, 0.2f, 0}) + Binary("bn2", "AddV2", "mul2", "shift2") +
      Binary("z", "AddV2", "bn2", "y") +
      // A broadcasting Add: not fused.
      FloatConst("f3", {1, 1, 4, 4}, Ramp(16, -0.1f)) + Conv("conv3", "Conv2D", "z", "f3", 1, "VALID") +
      FloatConst("b3", {4}, {0, 0.5f, 0, -0.5f}) + bias_add("bias3", "conv3", "b3") +
      Binary("add3", "AddV2", "bias3", "r") + Unary("w", "Relu", "add3");
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random({2, 6, 6, 4}, 71)}, {"r", Random({2, 6, 1, 4}, 72)}},
                      {"y", "z", "w"});
  EXPECT_EQ(NodeOf(o, "y")->op, "_PlexusFusedConv2DAdd");
  EXPECT_EQ(NodeOf(o, "z")->op, "_PlexusFusedConv2DAdd");
  EXPECT_NE(NodeOf(o, "w")->op, "_PlexusFusedConv2DAdd");
  EXPECT_EQ(CountOp(*o.run_graph, "_PlexusFusedConv2DAdd"), 2);
  EXPECT_EQ(CountOp(*o.run_graph, "_FusedConv2D"), 1);
  ExpectNear(o.optimized, o.plain, 1e-5);
}

}  // namespace
}  // namespace plexus

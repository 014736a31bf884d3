// The graph optimizer through the public API: each pass alone (every other
// pass switched off) and all of them in sequence, on small graphs whose
// optimized form is checked node by node and whose results must equal the
// unoptimized run.
#include <cmath>
#include <filesystem>
#include <random>

#include "gtest/gtest.h"
#include "plexus/plexus.h"
#include "core/optimizer_graphs.h"
#include "test_util.h"

namespace plexus {
namespace {

using ::plexus::testing::CpuRuntime;

using namespace ::plexus::optimizer_graphs;  // NOLINT: the test graphs' builders


TEST(Optimizer, PruneDropsWhatTheFetchesDoNotNeed) {
  auto runtime = CpuRuntime();
  std::string g = Placeholder("x", {4}) + Unary("a", "Exp", "x") + Unary("unused", "Tanh", "x") +
                  Unary("unused2", "Neg", "unused");
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random({4}, 1)}}, {"a"}, AllBut("prune"));
  EXPECT_EQ(o.run_graph->FindNode("unused"), nullptr);
  EXPECT_EQ(o.run_graph->FindNode("unused2"), nullptr);
  ExpectNear(o.optimized, o.plain, 0);
}

TEST(Optimizer, ArithmeticBypassesNodesThatChangeNothing) {
  auto runtime = CpuRuntime();
  std::string g = Placeholder("x", {2, 3}) + FloatConst("one", {}, {1}) + FloatConst("zero", {1}, {-0.0f}) +
                  Binary("m", "Mul", "x", "one") + Binary("a", "AddV2", "zero", "m") +
                  IntConst("p", {1, 0}) +
                  "node { name: 't1' op: 'Transpose' input: 'a' input: 'p' attr { key: 'T' value { type: DT_FLOAT } } }\n"
                  "node { name: 't2' op: 'Transpose' input: 't1' input: 'p' attr { key: 'T' value { type: DT_FLOAT } } }\n"
                  "node { name: 'c' op: 'Cast' input: 't2' attr { key: 'SrcT' value { type: DT_FLOAT } } attr { key: 'DstT' value { type: DT_FLOAT } } }\n"
                  "node { name: 'i' op: 'Identity' input: 'c' attr { key: 'T' value { type: DT_FLOAT } } }\n" +
                  Unary("y", "Exp", "i");
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random({2, 3}, 2)}}, {"y"}, AllBut("arithmetic"));
  // y reads x directly; everything between is gone.
  const Node* y = o.run_graph->FindNode("y");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->inputs[0].node->name, "x");
  for (const char* gone : {"m", "a", "t1", "t2", "c", "i"}) EXPECT_EQ(o.run_graph->FindNode(gone), nullptr) << gone;
  ExpectNear(o.optimized, o.plain, 0);
}

TEST(Optimizer, ArithmeticKeepsABroadcastingMultiply) {
  auto runtime = CpuRuntime();
  // ones of shape [2,3] broadcast x of shape [3]: not an identity.
  std::string g = Placeholder("x", {3}) + FloatConst("ones", {2, 3}, {1, 1, 1, 1, 1, 1}) +
                  Binary("m", "Mul", "x", "ones");
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random({3}, 3)}}, {"m"}, AllBut("arithmetic"));
  ASSERT_EQ(o.optimized[0].shape(), (Shape{2, 3}));
  ExpectNear(o.optimized, o.plain, 0);
}

TEST(Optimizer, ArithmeticLeavesFedConstantsAndPositiveZeroAdditionsAlone) {
  auto runtime = CpuRuntime();
  std::string g = Placeholder("x", {3}) + FloatConst("one", {}, {1}) + Binary("m", "Mul", "x", "one") +
                  FloatConst("zero", {}, {0}) + Binary("a", "AddV2", "m", "zero");
  Tensor two = *Tensor::AllocateHost(DataType::kFloat, {});
  two.data<float>()[0] = 2;
  Tensor x = Random({3}, 16);
  x.data<float>()[0] = -0.0f;
  // "one" is fed 2, so m is 2x; and m + (+0.0) keeps turning -0.0 into +0.0.
  Outcome o = RunBoth(runtime.get(), g, {{"x", x}, {"one", two}}, {"a"}, AllBut("arithmetic"));
  EXPECT_EQ(CountOp(*o.run_graph, "Mul"), 1);
  EXPECT_EQ(CountOp(*o.run_graph, "AddV2"), 1);
  ExpectNear(o.optimized, o.plain, 0);
  EXPECT_FALSE(std::signbit(o.optimized[0].data<float>()[0]));
  EXPECT_FLOAT_EQ(o.optimized[0].data<float>()[1], 2 * x.data<float>()[1]);
}

TEST(Optimizer, ConstantFoldingEvaluatesConstantsAndStaticShapes) {
  auto runtime = CpuRuntime();
  std::string g = Placeholder("x", {2, 3}) + FloatConst("a", {3}, {1, 2, 3}) + FloatConst("b", {3}, {4, 5, 6}) +
                  Binary("ab", "Mul", "a", "b") + Unary("e", "Exp", "ab") + Binary("y", "AddV2", "x", "e") +
                  "node { name: 'shape' op: 'Shape' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } "
                  "attr { key: 'out_type' value { type: DT_INT32 } } }\n";
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random({2, 3}, 4)}}, {"y", "shape"}, AllBut("constant_fold"));
  EXPECT_EQ(CountOp(*o.run_graph, "Exp"), 0);
  EXPECT_EQ(CountOp(*o.run_graph, "Mul"), 0);
  EXPECT_EQ(o.run_graph->FindNode("y")->inputs[1].node->op, "Const");
  ExpectNear(o.optimized, o.plain, 1e-6);
  ASSERT_EQ(o.optimized[1].data<int32_t>()[1], 3);
}

TEST(Optimizer, ConstantFoldingLeavesFedConstantsAlone) {
  auto runtime = CpuRuntime();
  std::string g = Placeholder("x", {3}) + FloatConst("a", {3}, {1, 2, 3}) + Unary("e", "Exp", "a") +
                  Binary("y", "AddV2", "x", "e");
  // Feeding the constant overrides it: the fold must not bake its value in.
  Tensor fed = Random({3}, 5);
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random({3}, 6)}, {"a", fed}}, {"y"}, AllBut("constant_fold"));
  EXPECT_EQ(CountOp(*o.run_graph, "Exp"), 1);
  ExpectNear(o.optimized, o.plain, 0);
}

TEST(Optimizer, CseMergesDuplicates) {
  auto runtime = CpuRuntime();
  std::string g = Placeholder("x", {4}) + Placeholder("z", {4}) + Binary("s1", "AddV2", "x", "z") +
                  Binary("s2", "AddV2", "z", "x") + Unary("e1", "Exp", "s1") + Unary("e2", "Exp", "s2") +
                  Binary("y", "Mul", "e1", "e2");
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random({4}, 7)}, {"z", Random({4}, 8)}}, {"y"}, AllBut("cse"));
  EXPECT_EQ(CountOp(*o.run_graph, "AddV2"), 1);  // commutative: x+z is z+x
  EXPECT_EQ(CountOp(*o.run_graph, "Exp"), 1);
  ExpectNear(o.optimized, o.plain, 0);
}

TEST(Optimizer, FusesMatMulBiasAddRelu) {
  auto runtime = CpuRuntime();
  std::string w, b;
  std::vector<float> wv(12), bv(4);
  for (int i = 0; i < 12; ++i) wv[i] = 0.1f * (i - 6);
  for (int i = 0; i < 4; ++i) bv[i] = 0.2f * (i - 2);
  std::string g = Placeholder("x", {2, 3}) + FloatConst("w", {3, 4}, wv) + FloatConst("b", {4}, bv) +
                  Binary("mm", "MatMul", "x", "w") + Binary("ba", "BiasAdd", "mm", "b") + Unary("y", "Relu", "ba");
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random({2, 3}, 9)}}, {"y"}, AllBut("fuse"));
  if (CountOp(*o.run_graph, "_FusedMatMul") == 0) {
    GTEST_SKIP() << "the cpu plugin has no _FusedMatMul kernel in this build";
  }
  const Node* y = o.run_graph->FindNode("y");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->op, "_FusedMatMul");
  EXPECT_EQ(o.run_graph->FindNode("mm"), nullptr);
  ExpectNear(o.optimized, o.plain, 1e-5);
}

// TensorFlow graphs often add the bias with Add: a constant vector of the
// output channels after a MatMul or NHWC convolution is a BiasAdd, so the
// fusions apply (and a batch norm after it folds); any other Add stays.
TEST(Optimizer, AnAddOfAChannelBiasFusesLikeBiasAdd) {
  auto runtime = CpuRuntime();
  std::vector<float> wv(12), f(3 * 3 * 2 * 4);
  for (int i = 0; i < 12; ++i) wv[i] = 0.1f * (i - 6);
  for (size_t i = 0; i < f.size(); ++i) f[i] = 0.05f * static_cast<float>(static_cast<int>(i % 11) - 5);
  std::string g =
      Placeholder("x", {2, 3}) + FloatConst("w", {3, 4}, wv) + FloatConst("b", {4}, {0.1f, -0.2f, 0.3f, -0.4f}) +
      Binary("mm", "MatMul", "x", "w") + Binary("add", "AddV2", "b", "mm") + Unary("y", "Relu", "add") +
      // A scalar bias broadcasts differently: it stays an Add.
      FloatConst("s", {1}, {0.5f}) + Binary("mm2", "MatMul", "x", "w") + Binary("y2", "Add", "mm2", "s") +
      Placeholder("img", {1, 5, 5, 2}) + FloatConst("f", {3, 3, 2, 4}, f) +
      "node { name: 'conv' op: 'Conv2D' input: 'img' input: 'f' attr { key: 'T' value { type: DT_FLOAT } } "
      "attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } attr { key: 'padding' value { s: 'SAME' } } }\n" +
      FloatConst("cb", {4}, {0.3f, 0.1f, -0.1f, 0.2f}) + Binary("cadd", "Add", "conv", "cb") +
      FloatConst("scale", {4}, {1, 2, 0.5, 1.5}) + FloatConst("offset", {4}, {0.1f, -0.2f, 0.3f, 0}) +
      FloatConst("mean", {4}, {0.05f, -0.1f, 0, 0.2f}) + FloatConst("var", {4}, {1, 0.5f, 2, 0.25f}) +
      "node { name: 'bn' op: 'FusedBatchNorm' input: 'cadd' input: 'scale' input: 'offset' input: 'mean' "
      "input: 'var' attr { key: 'T' value { type: DT_FLOAT } } "
      "attr { key: 'is_training' value { b: false } } attr { key: 'epsilon' value { f: 0.001 } } }\n" +
      Unary("z", "Relu", "bn");
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random({2, 3}, 21)}, {"img", Random({1, 5, 5, 2}, 22)}},
                      {"y", "y2", "z"}, AllBut("fuse"));
  ASSERT_NE(o.run_graph->FindNode("y"), nullptr);
  EXPECT_EQ(o.run_graph->FindNode("y")->op, "_FusedMatMul");
  EXPECT_EQ(o.run_graph->FindNode("y2")->op, "Add");
  ASSERT_NE(o.run_graph->FindNode("z"), nullptr);
  EXPECT_EQ(o.run_graph->FindNode("z")->op, "_FusedConv2D");
  EXPECT_EQ(CountOp(*o.run_graph, "FusedBatchNorm"), 0);
  ExpectNear(o.optimized, o.plain, 1e-5);
}

TEST(Optimizer, FoldsInferenceBatchNormIntoTheConvolution) {
  auto runtime = CpuRuntime();
  std::vector<float> f(3 * 3 * 2 * 4);
  for (size_t i = 0; i < f.size(); ++i) f[i] = 0.05f * static_cast<float>(static_cast<int>(i % 11) - 5);
  std::string g =
      Placeholder("x", {1, 5, 5, 2}) + FloatConst("f", {3, 3, 2, 4}, f) +
      "node { name: 'conv' op: 'Conv2D' input: 'x' input: 'f' attr { key: 'T' value { type: DT_FLOAT } } "
      "attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } attr { key: 'padding' value { s: 'SAME' } } }\n" +
      FloatConst("scale", {4}, {1, 2, 0.5, 1.5}) + FloatConst("offset", {4}, {0.1f, -0.2f, 0.3f, 0}) +
      FloatConst("mean", {4}, {0.05f, -0.1f, 0, 0.2f}) + FloatConst("var", {4}, {1, 0.5f, 2, 0.25f}) +
      "node { name: 'bn' op: 'FusedBatchNormV3' input: 'conv' input: 'scale' input: 'offset' input: 'mean' "
      "input: 'var' attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'U' value { type: DT_FLOAT } } "
      "attr { key: 'is_training' value { b: false } } attr { key: 'epsilon' value { f: 0.001 } } }\n" +
      Unary("y", "Relu", "bn");
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random({1, 5, 5, 2}, 10)}}, {"y"}, AllBut("fuse"));
  EXPECT_EQ(CountOp(*o.run_graph, "FusedBatchNormV3"), 0);
  ExpectNear(o.optimized, o.plain, 1e-5);
}

TEST(Optimizer, FusesElementwiseTrees) {
  auto runtime = CpuRuntime();
  std::string g = Placeholder("x", {4, 5}) + Placeholder("z", {4, 5}) + FloatConst("half", {}, {0.5f}) +
                  Binary("a", "AddV2", "x", "z") + Unary("r", "Relu", "a") + Binary("m", "Mul", "r", "half") +
                  Unary("t", "Tanh", "x") + Binary("y", "Sub", "m", "t") + Unary("side", "Exp", "a");
  // "a" also feeds "side", so it stays a separate node; the rest is one tree.
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random({4, 5}, 13)}, {"z", Random({4, 5}, 14)}}, {"y", "side"},
                      AllBut("fuse_elementwise"));
  const Node* y = o.run_graph->FindNode("y");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->op, "_PlexusFusedElementwise");
  EXPECT_EQ(CountOp(*o.run_graph, "Relu"), 0);
  EXPECT_EQ(CountOp(*o.run_graph, "Tanh"), 0);
  EXPECT_EQ(CountOp(*o.run_graph, "AddV2"), 1);
  ExpectNear(o.optimized, o.plain, 1e-6);
}

TEST(Optimizer, FusesLongChainsWithScalarConstantsAsImmediates) {
  auto runtime = CpuRuntime();
  // 400 nodes: AddV2, Mul, Neg, Mul repeating, each binary node with its own
  // scalar Const (one Const is shared by two nodes), plus one vector Const,
  // which stays an input of the fused node.
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = 0.25f * static_cast<float>(i - 8);
  std::string g = Placeholder("x", {16}) + FloatConst("vec", {16}, v) + FloatConst("shared", {}, {0.75f});
  std::string prev = "x";
  for (int i = 0; i < 400; ++i) {
    const std::string name = i == 399 ? "y" : "n" + std::to_string(i);
    const std::string k = "k" + std::to_string(i);
    switch (i % 4) {
      case 0:
        g += FloatConst(k, {}, {0.001f * static_cast<float>(i % 97)}) + Binary(name, "AddV2", prev, k);
        break;
      case 1:
        g += FloatConst(k, {}, {i % 2 ? 0.999f : 1.001f}) + Binary(name, "Mul", prev, k);
        break;
      case 2: g += Unary(name, "Neg", prev); break;
      default: g += Binary(name, "Mul", prev, i == 3 || i == 7 ? "shared" : i == 11 ? "vec" : "x"); break;
    }
    prev = name;
  }
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random({16}, 21)}}, {"y"}, AllBut("fuse_elementwise"));
  const Node* y = o.run_graph->FindNode("y");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->op, "_PlexusFusedElementwise");
  EXPECT_EQ(CountOp(*o.run_graph, "_PlexusFusedElementwise"), 1);
  // The scalar Consts are immediates of the program; only x and vec remain.
  EXPECT_EQ(y->inputs.size(), 2u);
  EXPECT_EQ(CountOp(*o.run_graph, "Const"), 1);
  const auto& program = y->attrs.at("program").list().s();
  ASSERT_EQ(program.size(), 400);
  int immediates = 0;
  for (const std::string& ins : program) immediates += ins.find(" c") != std::string::npos;
  EXPECT_EQ(immediates, 200 + 2);  // AddV2 and the first Mul of each group of four; shared twice
  // The same operations in the same order: exactly the unfused results.
  ExpectNear(o.optimized, o.plain, 0);
}

TEST(Optimizer, AFusedTreeOfOnlyConstantsKeepsOneInput) {
  auto runtime = CpuRuntime();
  // Constant folding is off here, so the tree over two scalar Consts fuses;
  // the fused node needs an input, so the constants stay inputs.
  std::string g = FloatConst("a", {}, {1.5f}) + FloatConst("b", {}, {-2.25f}) + Binary("m", "Mul", "a", "b") +
                  Unary("y", "Neg", "m");
  Outcome o = RunBoth(runtime.get(), g, {}, {"y"}, AllBut("fuse_elementwise"));
  const Node* y = o.run_graph->FindNode("y");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->op, "_PlexusFusedElementwise");
  EXPECT_EQ(y->inputs.size(), 2u);
  ASSERT_EQ(o.optimized.size(), 1u);
  EXPECT_EQ(o.optimized[0].data<float>()[0], 3.375f);
  ExpectNear(o.optimized, o.plain, 0);
}

TEST(Optimizer, FoldsBatchNormAfterADepthwiseConvolutionAndItsBias) {
  auto runtime = CpuRuntime();
  std::vector<float> f(3 * 3 * 2 * 2);  // [kh, kw, in 2, multiplier 2]: 4 output channels
  for (size_t i = 0; i < f.size(); ++i) f[i] = 0.07f * static_cast<float>(static_cast<int>(i % 7) - 3);
  std::string g =
      Placeholder("x", {1, 5, 5, 2}) + FloatConst("f", {3, 3, 2, 2}, f) +
      "node { name: 'dw' op: 'DepthwiseConv2dNative' input: 'x' input: 'f' attr { key: 'T' value { type: DT_FLOAT } } "
      "attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } attr { key: 'padding' value { s: 'VALID' } } }\n" +
      FloatConst("b", {4}, {0.3f, -0.1f, 0.2f, 0.05f}) + Binary("ba", "BiasAdd", "dw", "b") +
      FloatConst("scale", {4}, {1, 2, 0.5, 1.5}) + FloatConst("offset", {4}, {0.1f, -0.2f, 0.3f, 0}) +
      FloatConst("mean", {4}, {0.05f, -0.1f, 0, 0.2f}) + FloatConst("var", {4}, {1, 0.5f, 2, 0.25f}) +
      "node { name: 'bn' op: 'FusedBatchNorm' input: 'ba' input: 'scale' input: 'offset' input: 'mean' "
      "input: 'var' attr { key: 'T' value { type: DT_FLOAT } } "
      "attr { key: 'is_training' value { b: false } } attr { key: 'epsilon' value { f: 0.001 } } }\n" +
      Unary("y", "Relu", "bn");
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random({1, 5, 5, 2}, 15)}}, {"y"}, AllBut("fuse"));
  EXPECT_EQ(CountOp(*o.run_graph, "FusedBatchNorm"), 0);
  // The old bias and the batch norm became one bias, which the fuse pass
  // then takes into the depthwise convolution.
  EXPECT_EQ(CountOp(*o.run_graph, "BiasAdd"), 0);
  EXPECT_EQ(CountOp(*o.run_graph, "_FusedDepthwiseConv2dNative"), 1);
  ExpectNear(o.optimized, o.plain, 1e-5);
}

TEST(Optimizer, AllPassesInSequenceKeepResults) {
  auto runtime = CpuRuntime();
  std::vector<float> wv(12);
  for (int i = 0; i < 12; ++i) wv[i] = 0.1f * (i - 6);
  std::string g = Placeholder("x", {2, 3}) + FloatConst("w", {3, 4}, wv) + FloatConst("b0", {4}, {1, 2, 3, 4}) +
                  FloatConst("two", {}, {2}) + Binary("b", "Mul", "b0", "two") + FloatConst("one", {}, {1}) +
                  Binary("x1", "Mul", "x", "one") + Binary("mm", "MatMul", "x1", "w") +
                  Binary("mm2", "MatMul", "x1", "w") + Binary("ba", "BiasAdd", "mm", "b") + Unary("r", "Relu", "ba") +
                  Binary("y", "AddV2", "r", "mm2") + Unary("unused", "Exp", "x");
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random({2, 3}, 11)}}, {"y"});
  EXPECT_EQ(o.run_graph->FindNode("unused"), nullptr);
  EXPECT_EQ(CountOp(*o.run_graph, "Mul"), 0);  // x*1 bypassed, b0*2 folded
  EXPECT_FALSE(o.log.empty());
  ExpectNear(o.optimized, o.plain, 1e-5);
}

TEST(Optimizer, UnknownPassNamesAreRefused) {
  auto runtime = CpuRuntime();
  SessionOptions options;
  options.optimizer.disabled_passes = {"constant_folding"};
  auto s = Session::Create(runtime.get(), Parse(Placeholder("x", {1})), options);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(::plexus::testing::Contains(s.status(), "constant_fold")) << s.status();
}

TEST(Optimizer, DumpsTheGraphBeforeAndAfterEachPass) {
  auto runtime = CpuRuntime();
  std::string dir = ::testing::TempDir() + "/plexus_dump_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  SessionOptions options;
  options.optimizer.dump_dir = dir;
  std::string g = Placeholder("x", {2}) + FloatConst("one", {}, {1}) + Binary("y", "Mul", "x", "one") +
                  Unary("z", "Exp", "y");
  auto s = Session::Create(runtime.get(), Parse(g), options);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->Run({{"x", Random({2}, 12)}}, {"z"}).ok());
  EXPECT_TRUE(std::filesystem::exists(dir + "/00_before.pbtxt"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/00_before.dot"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/01_after_arithmetic.pbtxt"));
}

// Large graphs: the passes are linear (no whole-graph scan per rewrite) and
// walk graphs with explicit stacks, so a very deep chain cannot overflow the
// call stack.

TEST(Optimizer, AChainFiftyThousandNodesDeepRunsThroughEveryPass) {
  auto runtime = CpuRuntime();
  constexpr int kDepth = 50000;
  std::string g = Placeholder("x", {4});
  g.reserve(kDepth * 100);
  std::string prev = "x";
  for (int i = 0; i < kDepth; ++i) {
    std::string name = "n" + std::to_string(i);
    g += Unary(name, i % 2 == 0 ? "Identity" : "Neg", prev);
    prev = name;
  }
  // 25,000 negations: the result is x itself.
  g += Unary("y", "Neg", prev);  // and one more: -x
  auto s = Session::Create(runtime.get(), Parse(g), SessionOptions());
  ASSERT_TRUE(s.ok()) << s.status();
  Tensor x = Tensor::FromVector<float>(DataType::kFloat, {4}, {1.5f, -2.0f, 0.0f, 3.25f});
  auto r = (*s)->Run({{"x", x}}, {"y"});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ((*r)[0].num_elements(), 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ((*r)[0].data<float>()[i], -x.data<float>()[i]) << i;
  // The identities were bypassed and the negations fused.
  auto run_graph = (*s)->last_run_graph();
  ASSERT_NE(run_graph, nullptr);
  EXPECT_EQ(CountOp(*run_graph, "Identity"), 0);
  EXPECT_LT(run_graph->nodes().size(), 200u);
}

TEST(Optimizer, AFanTwentyThousandWideRunsThroughEveryPass) {
  auto runtime = CpuRuntime();
  constexpr int kWidth = 20000;
  // x * c_i for c_i = i (distinct constants, so nothing merges), summed by a
  // tree of additions: x * (0 + 1 + ... + 19999).
  std::string g = Placeholder("x", {4});
  g.reserve(kWidth * 400);
  std::vector<std::string> level;
  for (int i = 0; i < kWidth; ++i) {
    std::string c = "c" + std::to_string(i), m = "m" + std::to_string(i);
    g += FloatConst(c, {}, {static_cast<float>(i)}) + Binary(m, "Mul", "x", c);
    level.push_back(m);
  }
  int k = 0;
  while (level.size() > 1) {
    std::vector<std::string> next;
    for (size_t j = 0; j + 1 < level.size(); j += 2) {
      std::string name = "s" + std::to_string(k++);
      g += Binary(name, "AddV2", level[j], level[j + 1]);
      next.push_back(name);
    }
    if (level.size() % 2 == 1) next.push_back(level.back());
    level = std::move(next);
  }
  Tensor x = Tensor::FromVector<float>(DataType::kFloat, {4}, {1.0f, -0.5f, 0.25f, 2.0f});
  Outcome o = RunBoth(runtime.get(), g, {{"x", x}}, {level[0]});
  ASSERT_EQ(o.optimized.size(), 1u);
  const double sum = static_cast<double>(kWidth - 1) * kWidth / 2;
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(o.optimized[0].data<float>()[i], x.data<float>()[i] * sum, 1e-5 * sum) << i;
  }
  ExpectNear(o.optimized, o.plain, 1e-5);
}

TEST(Optimizer, CseMergesEqualLargeConstantsOnly) {
  auto runtime = CpuRuntime();
  // 4,096 floats each (far larger than a signature's text would want):
  // a and b are equal, c differs from them in its last element only.
  constexpr int kSize = 4096;
  std::vector<float> values(kSize);
  for (int i = 0; i < kSize; ++i) values[i] = static_cast<float>(i % 97) * 0.25f;
  std::vector<float> other = values;
  other.back() += 1.0f;
  std::string g = Placeholder("x", {kSize}) + FloatConst("a", {kSize}, values) + FloatConst("b", {kSize}, values) +
                  FloatConst("c", {kSize}, other) + Binary("ya", "AddV2", "x", "a") + Binary("yb", "AddV2", "x", "b") +
                  Binary("yc", "AddV2", "x", "c");
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random({kSize}, 21)}}, {"ya", "yb", "yc"}, AllBut("cse"));
  EXPECT_EQ(CountOp(*o.run_graph, "Const"), 2);  // a (b merged into it) and c
  EXPECT_NE(o.run_graph->FindNode("c"), nullptr);
  // yb reads a's value; yc keeps its own constant.
  EXPECT_EQ(o.run_graph->FindNode("yb")->inputs[1].node->name, "a");
  EXPECT_EQ(o.run_graph->FindNode("yc")->inputs[1].node->name, "c");
  ExpectNear(o.optimized, o.plain, 0);
  ASSERT_EQ(o.optimized.size(), 3u);
  EXPECT_EQ(o.optimized[2].data<float>()[kSize - 1] - o.optimized[0].data<float>()[kSize - 1], 1.0f);
}

TEST(Optimizer, ConstantFoldingDoesNotEvaluateValuesTooLargeToKeep) {
  auto runtime = CpuRuntime();
  // Fill's output is 512 x 1024 x 1024 floats, 2 GiB, far above
  // constant_fold_max_bytes. It is read by a Reshape to a shape fed at run
  // time (so not foldable), and the run feeds the Reshape itself, so
  // nothing ever needs the Fill's value. Its static shape says it is too
  // large to keep, so folding must not evaluate it (which would allocate
  // and fill 2 GiB).
  std::string g =
      IntConst("dims", {512, 1024, 1024}) + FloatConst("one", {}, {1}) +
      "node { name: 'big' op: 'Fill' input: 'dims' input: 'one' attr { key: 'T' value { type: DT_FLOAT } } "
      "attr { key: 'index_type' value { type: DT_INT32 } } }\n"
      "node { name: 'to' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } } "
      "attr { key: 'shape' value { shape { dim { size: 3 } } } } }\n"
      "node { name: 'r' op: 'Reshape' input: 'big' input: 'to' attr { key: 'T' value { type: DT_FLOAT } } "
      "attr { key: 'Tshape' value { type: DT_INT32 } } }\n" +
      Unary("y", "Neg", "r");
  SessionOptions options;
  auto s = Session::Create(runtime.get(), Parse(g), options);
  ASSERT_TRUE(s.ok()) << s.status();
  Tensor fed = Tensor::FromVector<float>(DataType::kFloat, {1, 1, 2}, {2.0f, -3.0f});
  auto r = (*s)->Run({{"r", fed}}, {"y"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].data<float>()[0], -2.0f);
  EXPECT_EQ((*r)[0].data<float>()[1], 3.0f);
  bool skipped = false;
  for (const std::string& line : (*s)->optimizer_log()) {
    EXPECT_EQ(line.find("evaluation failed"), std::string::npos) << line;
    skipped |= line.find("larger than") != std::string::npos;
  }
  EXPECT_TRUE(skipped) << "the log does not say the value was left computed";
  EXPECT_EQ(CountOp(*(*s)->last_run_graph(), "Fill"), 1);
}


// ---------------------------------------------------------------------------
// Atrous convolutions: SpaceToBatchND -> Conv2D/DepthwiseConv2dNative ->
// BatchToSpaceND, as TensorFlow 1 writes a dilated convolution, becomes one
// dilated convolution, which then fuses with its BiasAdd and Relu.
// ---------------------------------------------------------------------------

// A [rows, 2] int32 constant (paddings or crops).
std::string IntMatrix(const std::string& name, const std::vector<int>& values) {
  std::string vals;
  for (int v : values) vals += "int_val: " + std::to_string(v) + " ";
  return "node { name: '" + name + "' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } " +
         "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: " +
         std::to_string(values.size() / 2) + " } dim { size: 2 } } " + vals + "} } } }\n";
}

std::vector<float> Ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % 13) - 6);
  return v;
}

std::string Ints4(int a, int b, int c, int d) {
  return "list { i: " + std::to_string(a) + " i: " + std::to_string(b) + " i: " + std::to_string(c) +
         " i: " + std::to_string(d) + " }";
}

struct AtrousSpec {
  Shape x;                  // NHWC input
  Shape filter;             // [kh, kw, in, out] (or [kh, kw, in, multiplier])
  std::string op = "Conv2D";
  std::string block;        // names of the block shape, paddings and crops inputs
  std::string paddings;
  std::string crops;
  int stride = 1;
};

// x -> SpaceToBatchND -> conv 'conv' -> BatchToSpaceND 'b2s' -> BiasAdd ->
// Relu 'y'. The block, paddings and crops nodes are the caller's.
std::string AtrousGraph(const AtrousSpec& s) {
  const int64_t out = s.op == "Conv2D" ? s.filter[3] : s.filter[2] * s.filter[3];
  return Placeholder("x", s.x) + FloatConst("f", s.filter, Ramp(NumElements(s.filter), 0.03f)) +
         FloatConst("bias", {out}, Ramp(out, 0.05f)) +
         "node { name: 's2b' op: 'SpaceToBatchND' input: 'x' input: '" + s.block + "' input: '" + s.paddings +
         "' attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'Tblock_shape' value { type: DT_INT32 } } "
         "attr { key: 'Tpaddings' value { type: DT_INT32 } } }\n"
         "node { name: 'conv' op: '" + s.op + "' input: 's2b' input: 'f' attr { key: 'T' value { type: DT_FLOAT } } "
         "attr { key: 'strides' value { " + Ints4(1, s.stride, s.stride, 1) + " } } "
         "attr { key: 'padding' value { s: 'VALID' } } }\n"
         "node { name: 'b2s' op: 'BatchToSpaceND' input: 'conv' input: '" + s.block + "' input: '" + s.crops +
         "' attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'Tblock_shape' value { type: DT_INT32 } } "
         "attr { key: 'Tcrops' value { type: DT_INT32 } } }\n" +
         Binary("ba", "BiasAdd", "b2s", "bias") + Unary("y", "Relu", "ba");
}

// The pattern became one fused dilated convolution named like the Relu,
// with the given dilations, padding and explicit paddings.
void ExpectDilated(const Outcome& o, const std::string& fused_op, const std::vector<int64_t>& dilations,
                   const std::string& padding, const std::vector<int64_t>& explicit_paddings) {
  EXPECT_EQ(CountOp(*o.run_graph, "SpaceToBatchND"), 0);
  EXPECT_EQ(CountOp(*o.run_graph, "BatchToSpaceND"), 0);
  EXPECT_EQ(CountOp(*o.run_graph, "BiasAdd"), 0);
  EXPECT_EQ(CountOp(*o.run_graph, fused_op), 1);
  const Node* y = o.run_graph->FindNode("y");
  ASSERT_NE(y, nullptr);
  ASSERT_EQ(y->op, fused_op);
  EXPECT_EQ(y->inputs[0].node->name, "x");
  EXPECT_EQ(*GetAttrIntList(*y, "dilations"), dilations);
  EXPECT_EQ(*GetAttrString(*y, "padding"), padding);
  EXPECT_EQ(*GetAttrIntList(*y, "explicit_paddings"), explicit_paddings);
}

// tf.nn.atrous_conv2d(padding SAME), rate 2, on a 7 x 9 image with a 3 x 3
// filter: the effective filter is 5 x 5, so the base paddings are 2 on each
// side, and odd sizes add 1 at the end of each dimension, cropped after.
TEST(Optimizer, AtrousConvolutionWithBlock2x2BecomesOneDilatedConv) {
  auto runtime = CpuRuntime();
  AtrousSpec s{{2, 7, 9, 3}, {3, 3, 3, 4}};
  s.block = "block";
  s.paddings = "pads";
  s.crops = "crops";
  std::string g = IntConst("block", {2, 2}) + IntMatrix("pads", {2, 3, 2, 3}) + IntMatrix("crops", {0, 1, 0, 1}) +
                  AtrousGraph(s);
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random(s.x, 31)}}, {"y"}, AllBut("fuse"));
  ExpectDilated(o, "_FusedConv2D", {1, 2, 2, 1}, "EXPLICIT", {0, 0, 2, 2, 2, 2, 0, 0});
  ASSERT_EQ(o.optimized[0].shape(), (Shape{2, 7, 9, 4}));
  ExpectNear(o.optimized, o.plain, 1e-5);
}

// tf.nn.conv1d with dilations 4 (ExpandDims makes H = 1, the block is
// [1, 4]): VALID, 11 steps, padded by 1 at the end and cropped back.
TEST(Optimizer, AtrousConv1dWithDilation4BecomesOneValidDilatedConv) {
  auto runtime = CpuRuntime();
  AtrousSpec s{{1, 1, 11, 3}, {1, 3, 3, 5}};
  s.block = "block";
  s.paddings = "pads";
  s.crops = "crops";
  std::string g = IntConst("block", {1, 4}) + IntMatrix("pads", {0, 0, 0, 1}) + IntMatrix("crops", {0, 0, 0, 1}) +
                  AtrousGraph(s);
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random(s.x, 32)}}, {"y"}, AllBut("fuse"));
  ExpectDilated(o, "_FusedConv2D", {1, 1, 4, 1}, "VALID", {});
  ASSERT_EQ(o.optimized[0].shape(), (Shape{1, 1, 3, 5}));
  ExpectNear(o.optimized, o.plain, 1e-5);
}

// A block shape of one entry blocks H only; W is convolved undilated.
TEST(Optimizer, AtrousConvolutionWithABlockOverHOnly) {
  auto runtime = CpuRuntime();
  AtrousSpec s{{2, 13, 4, 3}, {3, 2, 3, 4}};
  s.block = "block";
  s.paddings = "pads";
  s.crops = "crops";
  // 13 + 1 + 2 = 16, a multiple of 4; one row is cropped at the end.
  std::string g = IntConst("block", {4}) + IntMatrix("pads", {1, 2}) + IntMatrix("crops", {0, 1}) + AtrousGraph(s);
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random(s.x, 33)}}, {"y"}, AllBut("fuse"));
  ExpectDilated(o, "_FusedConv2D", {1, 4, 1, 1}, "EXPLICIT", {0, 0, 1, 1, 0, 0, 0, 0});
  ASSERT_EQ(o.optimized[0].shape(), (Shape{2, 7, 3, 4}));
  ExpectNear(o.optimized, o.plain, 1e-5);
}

TEST(Optimizer, AtrousDepthwiseConvolutionBecomesOneDilatedDepthwiseConv) {
  auto runtime = CpuRuntime();
  AtrousSpec s{{1, 9, 10, 2}, {3, 2, 2, 2}, "DepthwiseConv2dNative"};
  s.block = "block";
  s.paddings = "pads";
  s.crops = "crops";
  // H: SAME for an effective 9-tap filter pads 4 + 4, and 17 -> 20 adds 3
  // more at the end; W: 10 is a multiple of 2, padded 1 before and after.
  std::string g = IntConst("block", {4, 2}) + IntMatrix("pads", {4, 7, 1, 1}) + IntMatrix("crops", {0, 3, 0, 0}) +
                  AtrousGraph(s);
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random(s.x, 34)}}, {"y"}, AllBut("fuse"));
  ExpectDilated(o, "_FusedDepthwiseConv2dNative", {1, 4, 2, 1}, "EXPLICIT", {0, 0, 4, 4, 1, 1, 0, 0});
  ASSERT_EQ(o.optimized[0].shape(), (Shape{1, 9, 10, 4}));
  ExpectNear(o.optimized, o.plain, 1e-5);
}

// As tf.nn.convolution builds it when the input's size is known only at run
// time: paddings and crops computed from Shape(x), so never constants, but
// their differences are (the rewrite evaluates them symbolically). Every
// size of H then gives the same results as the original.
TEST(Optimizer, AtrousConvolutionWithPaddingsComputedAtRunTime) {
  auto runtime = CpuRuntime();
  AtrousSpec s{{1, -1, 1, 6}, {3, 1, 6, 4}};
  s.block = "rate";
  s.paddings = "pads";
  s.crops = "crops";
  auto slice = [](const std::string& name, const std::string& input, const std::string& b, const std::string& e,
                  int shrink) {
    return "node { name: '" + name + "' op: 'StridedSlice' input: '" + input + "' input: '" + b + "' input: '" + e +
           "' input: 'one' attr { key: 'T' value { type: DT_INT32 } } attr { key: 'Index' value { type: DT_INT32 } } "
           "attr { key: 'shrink_axis_mask' value { i: " + std::to_string(shrink) + " } } }\n";
  };
  auto int_op = [](const std::string& name, const std::string& op, const std::vector<std::string>& in,
                   const std::string& extra = "") {
    std::string n = "node { name: '" + name + "' op: '" + op + "'";
    for (const std::string& i : in) n += " input: '" + i + "'";
    return n + " attr { key: 'T' value { type: DT_INT32 } } " + extra + "}\n";
  };
  std::string g =
      IntConst("rate", {3, 1}) + IntConst("base_end", {2, 0}) + IntConst("zero", {0}) + IntConst("one", {1}) +
      IntConst("two", {2}) + IntConst("three", {3}) +
      "node { name: 'zero_s' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } "
      "attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n" +
      "node { name: 'shape' op: 'Shape' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } "
      "attr { key: 'out_type' value { type: DT_INT32 } } }\n" +
      slice("hw", "shape", "one", "three", 0) +
      int_op("padded", "AddV2", {"hw", "base_end"}) +             // base paddings [[0, 2], [0, 0]]
      int_op("mod", "FloorMod", {"padded", "rate"}) +
      int_op("sub", "Sub", {"rate", "mod"}) +
      int_op("extra", "FloorMod", {"sub", "rate"}) +              // (-(size + base)) mod rate
      int_op("pad_end", "AddV2", {"base_end", "extra"}) +
      slice("pe0", "pad_end", "zero", "one", 1) + slice("pe1", "pad_end", "one", "two", 1) +
      slice("ex0", "extra", "zero", "one", 1) + slice("ex1", "extra", "one", "two", 1) +
      int_op("p0", "Pack", {"zero_s", "pe0"}, "attr { key: 'N' value { i: 2 } } ") +
      int_op("p1", "Pack", {"zero_s", "pe1"}, "attr { key: 'N' value { i: 2 } } ") +
      int_op("pads", "Pack", {"p0", "p1"}, "attr { key: 'N' value { i: 2 } } ") +
      int_op("c0", "Pack", {"zero_s", "ex0"}, "attr { key: 'N' value { i: 2 } } ") +
      int_op("c1", "Pack", {"zero_s", "ex1"}, "attr { key: 'N' value { i: 2 } } ") +
      int_op("crops", "Pack", {"c0", "c1"}, "attr { key: 'N' value { i: 2 } } ") + AtrousGraph(s);
  for (int64_t h : {5, 10, 16}) {
    Outcome o = RunBoth(runtime.get(), g, {{"x", Random({1, h, 1, 6}, 35 + h)}}, {"y"}, AllBut("fuse"));
    ExpectDilated(o, "_FusedConv2D", {1, 3, 1, 1}, "EXPLICIT", {0, 0, 0, 2, 0, 0, 0, 0});
    ASSERT_EQ(o.optimized[0].shape(), (Shape{1, h - 4, 1, 4}));
    ExpectNear(o.optimized, o.plain, 1e-5);
  }
  // With every pass, too.
  Outcome o = RunBoth(runtime.get(), g, {{"x", Random({1, 11, 1, 6}, 40)}}, {"y"});
  EXPECT_EQ(CountOp(*o.run_graph, "SpaceToBatchND"), 0);
  ExpectNear(o.optimized, o.plain, 1e-5);
}

// Patterns that must stay: the convolution read by another node too, a
// strided convolution, and crops larger than the paddings on one side.
TEST(Optimizer, AtrousPatternsThatMustStayAreKept) {
  auto runtime = CpuRuntime();
  const std::string consts = IntConst("block", {2, 2}) + IntMatrix("pads", {2, 3, 2, 3}) +
                             IntMatrix("crops", {0, 1, 0, 1}) + IntMatrix("no_pads", {0, 0, 0, 0}) +
                             IntMatrix("crop_start", {1, 0, 0, 0});
  AtrousSpec s{{1, 7, 9, 3}, {3, 3, 3, 4}};
  s.block = "block";
  s.paddings = "pads";
  s.crops = "crops";
  {
    std::string g = consts + AtrousGraph(s) + Unary("side", "Neg", "conv");
    Outcome o = RunBoth(runtime.get(), g, {{"x", Random(s.x, 41)}}, {"y", "side"}, AllBut("fuse"));
    EXPECT_EQ(CountOp(*o.run_graph, "SpaceToBatchND"), 1);
    EXPECT_EQ(CountOp(*o.run_graph, "BatchToSpaceND"), 1);
    ExpectNear(o.optimized, o.plain, 1e-5);
  }
  {
    AtrousSpec strided = s;
    strided.x = {1, 8, 8, 3};
    strided.paddings = "no_pads";
    strided.crops = "no_pads";
    strided.filter = {1, 1, 3, 4};
    strided.stride = 2;
    Outcome o = RunBoth(runtime.get(), consts + AtrousGraph(strided), {{"x", Random(strided.x, 42)}}, {"y"},
                        AllBut("fuse"));
    EXPECT_EQ(CountOp(*o.run_graph, "SpaceToBatchND"), 1);
    ExpectNear(o.optimized, o.plain, 1e-5);
  }
  {
    AtrousSpec cropped = s;
    cropped.x = {1, 8, 8, 3};
    cropped.paddings = "no_pads";
    cropped.crops = "crop_start";
    Outcome o = RunBoth(runtime.get(), consts + AtrousGraph(cropped), {{"x", Random(cropped.x, 43)}}, {"y"},
                        AllBut("fuse"));
    EXPECT_EQ(CountOp(*o.run_graph, "SpaceToBatchND"), 1);
    ExpectNear(o.optimized, o.plain, 1e-5);
  }
}

}  // namespace
}  // namespace plexus

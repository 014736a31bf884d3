// Control flow, functions and state on the cpu plugin: TensorFlow 1 loops and
// conditionals (dead tensors, frames), functional If/While and calls into a
// FunctionDefLibrary, variables that persist across runs, and the graphs of
// TensorFlow's own test data that use them (tests/data/tf_graphs/pbtxt_graphs,
// expected values from the MANIFEST).
#include "gtest/gtest.h"
#include "plexus/plexus.h"
#include "test_util.h"

namespace plexus {
namespace {

using ::plexus::testing::Contains;
using ::plexus::testing::CpuRuntime;
using ::plexus::testing::DataPath;
using ::plexus::testing::GraphFromText;

std::shared_ptr<const Graph> Load(const std::string& relative) {
  auto g = ImportGraphDefFile(DataPath(relative));
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return nullptr;
  return std::shared_ptr<const Graph>(*std::move(g));
}

Tensor Floats(Shape shape, std::vector<float> v) { return Tensor::FromVector<float>(DataType::kFloat, shape, v); }
Tensor Bool(bool b) {
  Tensor t = *Tensor::AllocateHost(DataType::kBool, {});
  t.data<uint8_t>()[0] = b;
  return t;
}

TEST(ControlFlow, CondV1TakesEachBranch) {
  auto runtime = CpuRuntime();
  auto graph = Load("tf_graphs/pbtxt_graphs/cond_v1.pbtxt");
  ASSERT_NE(graph, nullptr);
  auto session = *Session::Create(runtime.get(), graph);
  Tensor x = Floats({2, 2}, {1, 2, 3, 4});
  for (bool pred : {true, false}) {
    auto out = session->Run({{"Placeholder", x}, {"Placeholder_1", Bool(pred)}},
                            {"cond/Merge:0", "cond/Merge:1"});
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<float> want = pred ? std::vector<float>{0.7f, 1.0f, 1.5f, 2.2f}
                                   : std::vector<float>{1.1f, 2.2f, 3.3f, 4.4f};
    ASSERT_EQ((*out)[0].shape(), (Shape{2, 2}));
    for (int i = 0; i < 4; ++i) EXPECT_NEAR((*out)[0].data<float>()[i], want[i], 1e-6) << i;
    EXPECT_EQ((*out)[1].data<int32_t>()[0], pred ? 1 : 0);
  }
}

TEST(ControlFlow, FetchingTheUntakenBranchIsAClearError) {
  auto runtime = CpuRuntime();
  auto graph = GraphFromText(R"(
    node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }
    node { name: 'p' op: 'Placeholder' attr { key: 'dtype' value { type: DT_BOOL } } }
    node { name: 's' op: 'Switch' input: 'x' input: 'p' attr { key: 'T' value { type: DT_FLOAT } } }
    node { name: 't' op: 'Identity' input: 's:1' attr { key: 'T' value { type: DT_FLOAT } } }
  )");
  auto session = *Session::Create(runtime.get(), graph);
  auto live = session->Run({{"x", Floats({1}, {3})}, {"p", Bool(true)}}, {"t"});
  ASSERT_TRUE(live.ok()) << live.status();
  EXPECT_EQ(live->at(0).data<float>()[0], 3);
  auto dead = session->Run({{"x", Floats({1}, {3})}, {"p", Bool(false)}}, {"t"});
  ASSERT_FALSE(dead.ok());
  EXPECT_TRUE(Contains(dead.status(), "fetch 't:0' is dead")) << dead.status();
}

TEST(ControlFlow, CycleOutsideALoopFrameIsRefused) {
  auto graph = ImportGraphDefBytes(R"(
    node { name: 'a' op: 'Identity' input: 'b' attr { key: 'T' value { type: DT_FLOAT } } }
    node { name: 'b' op: 'Identity' input: 'a' attr { key: 'T' value { type: DT_FLOAT } } }
  )", "<cycle>", GraphFormat::kText);
  ASSERT_FALSE(graph.ok());
  EXPECT_TRUE(Contains(graph.status(), "cycle that does not pass through a NextIteration")) << graph.status();
}

TEST(ControlFlow, WhileLoopV1) {
  auto runtime = CpuRuntime();
  auto graph = Load("tf_graphs/pbtxt_graphs/while_loop_v1.pbtxt");
  ASSERT_NE(graph, nullptr);
  auto session = *Session::Create(runtime.get(), graph);
  auto out = session->Run({}, {"while/Exit:0", "while/Exit_1:0"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<int32_t>()[0], 10);  // exact
  ASSERT_EQ((*out)[1].shape(), (Shape{2048, 2}));
  for (int64_t i = 0; i < (*out)[1].num_elements(); ++i) ASSERT_EQ((*out)[1].data<float>()[i], 1.0f) << i;
  // Runs again identically (frames are per run).
  auto again = session->Run({}, {"while/Exit:0"});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)[0].data<int32_t>()[0], 10);
}

TEST(ControlFlow, FunctionalWhile) {
  auto runtime = CpuRuntime();
  auto graph = Load("tf_graphs/pbtxt_graphs/functional_while.pbtxt");
  ASSERT_NE(graph, nullptr);
  auto session = *Session::Create(runtime.get(), graph);
  // The placeholder's name comes from the file.
  const Node* input = nullptr;
  for (const auto& n : graph->nodes()) {
    if (n->op == "Placeholder") input = n.get();
  }
  ASSERT_NE(input, nullptr);
  DataType t = input->output_types[0];
  for (auto [x, iterations, last] : std::vector<std::tuple<int, int, int>>{{3, 7, 10}, {12, 0, 12}}) {
    Tensor feed = t == DataType::kInt32 ? Tensor::FromVector<int32_t>(t, {}, {x})
                                        : Tensor::FromVector<float>(t, {}, {static_cast<float>(x)});
    auto out = session->Run({{input->name, feed}}, {"while:0", "while:1", "while:2"});
    ASSERT_TRUE(out.ok()) << out.status();
    auto value = [&](int k) {
      const Tensor& v = (*out)[k];
      return v.dtype() == DataType::kInt32 ? static_cast<double>(v.data<int32_t>()[0]) : v.data<float>()[0];
    };
    EXPECT_EQ(value(0), iterations);
    EXPECT_EQ(value(1), -1);
    EXPECT_EQ(value(2), last);
  }
}

TEST(ControlFlow, FunctionalIf) {
  auto runtime = CpuRuntime();
  auto graph = Load("tf_graphs/pbtxt_graphs/functional_if.pbtxt");
  ASSERT_NE(graph, nullptr);
  auto session = *Session::Create(runtime.get(), graph);
  std::vector<std::string> placeholders;
  for (const auto& n : graph->nodes()) {
    if (n->op == "Placeholder") placeholders.push_back(n->name);
  }
  ASSERT_EQ(placeholders.size(), 2u);
  Tensor a = Floats({4}, {10, 20, 30, 40});
  Tensor b = Floats({4}, {1, 2, 3, 4});
  auto out = session->Run({{placeholders[0], a}, {placeholders[1], b}}, {"StatefulIf:0", "StatelessIf:0"});
  ASSERT_TRUE(out.ok()) << out.status();
  const float stateful[] = {6, 8, 10, 12};
  for (int i = 0; i < 4; ++i) EXPECT_EQ((*out)[0].data<float>()[i], stateful[i]) << i;
  // a - b, with the placeholders in file order (a first).
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ((*out)[1].data<float>()[i], a.data<float>()[i] - b.data<float>()[i]) << i;
  }
}

TEST(State, VariablesPersistAcrossRuns) {
  auto runtime = CpuRuntime();
  auto graph = GraphFromText(R"(
    node { name: 'v' op: 'VariableV2' attr { key: 'dtype' value { type: DT_FLOAT } }
           attr { key: 'shape' value { shape { } } } }
    node { name: 'zero' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }
           attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 0 } } } }
    node { name: 'one' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }
           attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }
    node { name: 'init' op: 'Assign' input: 'v' input: 'zero' attr { key: 'T' value { type: DT_FLOAT } } }
    node { name: 'incr' op: 'AssignAdd' input: 'v' input: 'one' attr { key: 'T' value { type: DT_FLOAT } } }
    node { name: 'read' op: 'Identity' input: 'v' attr { key: 'T' value { type: DT_FLOAT } } }
    node { name: 'h' op: 'VarHandleOp' attr { key: 'dtype' value { type: DT_FLOAT } }
           attr { key: 'shape' value { shape { } } } attr { key: 'shared_name' value { s: 'w' } } }
    node { name: 'h_init' op: 'AssignVariableOp' input: 'h' input: 'one' attr { key: 'dtype' value { type: DT_FLOAT } } }
    node { name: 'h_add' op: 'AssignAddVariableOp' input: 'h' input: 'one' attr { key: 'dtype' value { type: DT_FLOAT } } }
    node { name: 'h_read' op: 'ReadVariableOp' input: 'h' input: '^h_add' attr { key: 'dtype' value { type: DT_FLOAT } } }
  )");
  auto session = *Session::Create(runtime.get(), graph);
  auto uninit = session->Run({}, {"read"});
  ASSERT_FALSE(uninit.ok());
  EXPECT_TRUE(Contains(uninit.status(), "uninitialized variable 'v'")) << uninit.status();
  ASSERT_TRUE(session->Run({}, {}, {"init"}).ok());
  for (int i = 1; i <= 3; ++i) {
    auto out = session->Run({}, {"incr"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].data<float>()[0], i);  // a ref fetch yields the value
  }
  auto read = session->Run({}, {"read"});
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ((*read)[0].data<float>()[0], 3);
  ASSERT_TRUE(session->Run({}, {}, {"h_init"}).ok());
  auto h = session->Run({}, {"h_read"});
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ((*h)[0].data<float>()[0], 2);
  // Writing into a fetched value (made writable by ShareForWriting, the
  // contract for writing a tensor one did not allocate) must not change the
  // variable.
  auto writable = (*h)[0].ShareForWriting();
  ASSERT_TRUE(writable.ok()) << writable.status();
  writable->data<float>()[0] = 100;
  h = session->Run({}, {"h_read"});
  EXPECT_EQ((*h)[0].data<float>()[0], 3);
  read = session->Run({}, {"read"});
  writable = (*read)[0].ShareForWriting();
  ASSERT_TRUE(writable.ok()) << writable.status();
  writable->data<float>()[0] = 100;
  read = session->Run({}, {"read"});
  EXPECT_EQ((*read)[0].data<float>()[0], 3);
}

TEST(Functions, PartitionedCallRunsALibraryFunction) {
  auto runtime = CpuRuntime();
  auto graph = GraphFromText(R"(
    library {
      function {
        signature { name: 'double_plus' input_arg { name: 'a' type: DT_FLOAT }
                    input_arg { name: 'b' type: DT_FLOAT } output_arg { name: 'out' type: DT_FLOAT } }
        node_def { name: 'twice' op: 'Add' input: 'a' input: 'a' attr { key: 'T' value { type: DT_FLOAT } } }
        node_def { name: 'sum' op: 'AddV2' input: 'twice:z:0' input: 'b' attr { key: 'T' value { type: DT_FLOAT } } }
        ret { key: 'out' value: 'sum:z:0' }
      }
    }
    node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }
    node { name: 'y' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }
    node { name: 'call' op: 'StatefulPartitionedCall' input: 'x' input: 'y'
           attr { key: 'Tin' value { list { type: DT_FLOAT type: DT_FLOAT } } }
           attr { key: 'Tout' value { list { type: DT_FLOAT } } }
           attr { key: 'f' value { func { name: 'double_plus' } } } }
    node { name: 'direct' op: 'double_plus' input: 'x' input: 'y' }
  )");
  ASSERT_NE(graph, nullptr);
  auto session = *Session::Create(runtime.get(), graph);
  auto out = session->Run({{"x", Floats({2}, {1, 2})}, {"y", Floats({2}, {10, 20})}}, {"call:0"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<float>()[0], 12);
  EXPECT_EQ((*out)[0].data<float>()[1], 24);
}

TEST(Import, VersionsAreCheckedTheWayTensorFlowDoes) {
  auto newer = ImportGraphDefBytes("versions { producer: 99999 min_consumer: 0 }",
                                   "<newer>", GraphFormat::kText);
  EXPECT_TRUE(newer.ok()) << newer.status();  // a newer producer is fine
  auto negative = ImportGraphDefBytes("versions { producer: -1 }", "<neg>", GraphFormat::kText);
  ASSERT_FALSE(negative.ok());
  EXPECT_TRUE(Contains(negative.status(), "below the oldest producer")) << negative.status();
  auto min_consumer = ImportGraphDefBytes("versions { producer: 10 min_consumer: 100000 }",
                                          "<min>", GraphFormat::kText);
  ASSERT_FALSE(min_consumer.ok());
  EXPECT_TRUE(Contains(min_consumer.status(), "needs a consumer of version 100000")) << min_consumer.status();
  auto bad = ImportGraphDefBytes("versions { producer: 10 bad_consumers: 2000 }", "<bad>",
                                 GraphFormat::kText);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Contains(bad.status(), "disallows consumer version 2000")) << bad.status();
}

TEST(Import, AttributeOfTheWrongTypeNamesTheNode) {
  auto graph = ImportGraphDefBytes(R"(
    node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }
    node { name: 'm' op: 'MatMul' input: 'x' input: 'x' attr { key: 'T' value { type: DT_FLOAT } }
           attr { key: 'transpose_a' value { i: 3 } } }
  )", "<attr>", GraphFormat::kText);
  ASSERT_FALSE(graph.ok());
  EXPECT_TRUE(Contains(graph.status(), "node 'm' (op MatMul)")) << graph.status();
  EXPECT_TRUE(Contains(graph.status(), "transpose_a")) << graph.status();
}

TEST(Import, DanglingInputNamesTheNode) {
  auto graph = ImportGraphDefBytes(R"(
    node { name: 'i' op: 'Identity' input: 'nowhere:0' attr { key: 'T' value { type: DT_FLOAT } } }
  )", "<dangling>", GraphFormat::kText);
  ASSERT_FALSE(graph.ok());
  EXPECT_TRUE(Contains(graph.status(), "node 'i' (op Identity)")) << graph.status();
  EXPECT_TRUE(Contains(graph.status(), "names no node")) << graph.status();
}

TEST(Import, AFunctionNamedLikeACallOpIsNotRewrittenIntoItself) {
  // A hostile library: a function named PartitionedCall. The registered op
  // wins; the import finishes (here with an attribute error) instead of
  // rewriting the call forever.
  auto graph = ImportGraphDefBytes(R"(
    library { function { signature { name: 'PartitionedCall' } } }
    node { name: 'c' op: 'PartitionedCall' }
  )", "<hostile>", GraphFormat::kText);
  ASSERT_FALSE(graph.ok());
  EXPECT_TRUE(Contains(graph.status(), "node 'c' (op PartitionedCall)")) << graph.status();
}

TEST(Import, EveryMissingOpIsNamedAtOnce) {
  auto graph = ImportGraphDefBytes(R"(
    node { name: 'a' op: 'NoSuchOpA' }
    node { name: 'b' op: 'NoSuchOpB' }
    node { name: 'c' op: 'NoSuchOpA' }
  )", "<missing>", GraphFormat::kText);
  ASSERT_FALSE(graph.ok());
  EXPECT_TRUE(Contains(graph.status(), "2 op(s)")) << graph.status();
  EXPECT_TRUE(Contains(graph.status(), "NoSuchOpA (node 'a', 'c')")) << graph.status();
  EXPECT_TRUE(Contains(graph.status(), "NoSuchOpB (node 'b')")) << graph.status();
}

}  // namespace
}  // namespace plexus

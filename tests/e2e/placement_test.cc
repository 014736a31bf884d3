// Placement across two devices without a GPU: the cpu plugin and the test
// plugin (device TESTDEV:0, an int32 AddV2 kernel only). Requests in
// TensorFlow's and Plexus's spellings are honoured where the device has a
// kernel, colocation follows the node a node is colocated with, and soft
// placement falls back with a note that says why.
#include "gtest/gtest.h"
#include "plexus/plexus.h"
#include "test_util.h"

namespace plexus {
namespace {

using ::plexus::testing::TestPluginPath;

TEST(DeviceSpec, ParsesTensorFlowAndPlexusNames) {
  struct Case {
    const char* name;
    const char* type;
    int ordinal;
  };
  for (const Case& c : std::vector<Case>{{"/device:CPU:0", "CPU", 0},
                                         {"/job:localhost/replica:0/task:0/device:GPU:1", "GPU", 1},
                                         {"/job:worker/task:3/device:gpu:*", "GPU", -1},
                                         {"/cpu:0", "CPU", 0},
                                         {"/gpu:2", "GPU", 2},
                                         {"cpu:0", "CPU", 0},
                                         {"testdev", "TESTDEV", -1},
                                         {"/job:worker", "", -1},
                                         {"", "", -1}}) {
    auto spec = ParseDeviceSpec(c.name);
    ASSERT_TRUE(spec.ok()) << c.name << ": " << spec.status();
    EXPECT_EQ(spec->type, c.type) << c.name;
    EXPECT_EQ(spec->ordinal, c.ordinal) << c.name;
  }
  for (const char* bad : {"/device:CPU:x", "/device:", "/plane:3", "a:b:c", "/cpu:0:1"}) {
    EXPECT_FALSE(ParseDeviceSpec(bad).ok()) << bad;
  }
}

TEST(Placement, RequestsColocationAndSoftPlacement) {
  RuntimeOptions options;
  options.discover_plugins = false;
  options.plugin_paths = {PX_CPU_PLUGIN_PATH, TestPluginPath("good")};
  auto runtime = Runtime::Create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  const char* text = R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
    node { name: "y" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
    node { name: "on_test" op: "AddV2" input: "x" input: "y"
           device: "/job:localhost/replica:0/task:0/device:TESTDEV:0"
           attr { key: "T" value { type: DT_INT32 } } }
    node { name: "colocated" op: "AddV2" input: "on_test" input: "x"
           attr { key: "T" value { type: DT_INT32 } }
           attr { key: "_class" value { list { s: "loc:@on_test" } } } }
    node { name: "no_kernel_there" op: "Mul" input: "colocated" input: "y" device: "/device:TESTDEV:0"
           attr { key: "T" value { type: DT_INT32 } } }
    node { name: "missing_device" op: "Sub" input: "no_kernel_there" input: "x" device: "/device:GPU:3"
           attr { key: "T" value { type: DT_INT32 } } }
  )pb";
  auto graph = ImportGraphDefBytes(text, "<placement test>", GraphFormat::kText);
  ASSERT_TRUE(graph.ok()) << graph.status();
  SessionOptions session_options;
  session_options.device = "CPU:0";
  auto session = Session::Create(runtime->get(), std::shared_ptr<const Graph>(*std::move(graph)), session_options);
  ASSERT_TRUE(session.ok()) << session.status();
  auto out = (*session)->Run({{"x", Tensor::FromVector<int32_t>(DataType::kInt32, {2}, {1, 2})},
                              {"y", Tensor::FromVector<int32_t>(DataType::kInt32, {2}, {10, 20})}},
                             {"missing_device"});
  ASSERT_TRUE(out.ok()) << out.status();
  // ((x + y) + x) * y - x
  EXPECT_EQ((*out)[0].data<int32_t>()[0], (1 + 10 + 1) * 10 - 1);
  EXPECT_EQ((*out)[0].data<int32_t>()[1], (2 + 20 + 2) * 20 - 2);
  std::string notes;
  for (const std::string& n : (*session)->placement_notes()) notes += n + "\n";
  EXPECT_NE(notes.find("'on_test' (op AddV2): placed on TESTDEV:0 as requested"), std::string::npos) << notes;
  EXPECT_NE(notes.find("'colocated' (op AddV2): placed on TESTDEV:0 as requested"), std::string::npos) << notes;
  EXPECT_NE(notes.find("'no_kernel_there' (op Mul): requested '/device:TESTDEV:0' (no kernel on TESTDEV:0), "
                       "placed on CPU:0"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("'missing_device' (op Sub): requested '/device:GPU:3' (no such device here), placed on CPU:0"),
            std::string::npos)
      << notes;
}

// The placement report (plexus/placement.h): one entry per node that ran,
// in order, saying how and where, with the reason for each fallback.
TEST(Placement, ReportSaysWhereEachNodeRanAndWhy) {
  RuntimeOptions options;
  options.discover_plugins = false;
  options.plugin_paths = {PX_CPU_PLUGIN_PATH, TestPluginPath("good")};
  auto runtime = Runtime::Create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  const char* text = R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
    node { name: "y" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
    node { name: "sum" op: "AddV2" input: "x" input: "y" attr { key: "T" value { type: DT_INT32 } } }
    node { name: "product" op: "Mul" input: "sum" input: "y" attr { key: "T" value { type: DT_INT32 } } }
    node { name: "out" op: "Identity" input: "product" attr { key: "T" value { type: DT_INT32 } } }
  )pb";
  auto graph = ImportGraphDefBytes(text, "<placement report test>", GraphFormat::kText);
  ASSERT_TRUE(graph.ok()) << graph.status();
  SessionOptions session_options;
  session_options.device = "TESTDEV:0";
  auto session = Session::Create(runtime->get(), std::shared_ptr<const Graph>(*std::move(graph)), session_options);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_TRUE((*session)->placement().nodes.empty());  // nothing ran yet
  auto out = (*session)->Run({{"x", Tensor::FromVector<int32_t>(DataType::kInt32, {2}, {1, 2})},
                              {"y", Tensor::FromVector<int32_t>(DataType::kInt32, {2}, {10, 20})}},
                             {"out"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<int32_t>()[1], (2 + 20) * 20);

  const PlacementReport report = (*session)->placement();
  EXPECT_EQ(report.device, "TESTDEV:0");
  ASSERT_EQ(report.nodes.size(), 3u) << report.ToString();  // the fed placeholders do not run
  const NodePlacement& sum = report.nodes[0];
  EXPECT_EQ(sum.node, "sum");
  EXPECT_EQ(sum.how, PlacedBy::kKernel);
  EXPECT_EQ(sum.device, "TESTDEV:0");
  EXPECT_FALSE(sum.plugin.empty());
  EXPECT_NE(sum.plugin, "cpu");
  EXPECT_EQ(sum.reason, "");
  const NodePlacement& product = report.nodes[1];
  EXPECT_EQ(product.node, "product");
  EXPECT_EQ(product.how, PlacedBy::kKernel);
  EXPECT_EQ(product.device, "CPU:0");
  EXPECT_EQ(product.plugin, "cpu");
  EXPECT_EQ(product.reason, "no kernel on TESTDEV:0, placed on CPU:0");
  const NodePlacement& identity = report.nodes[2];
  EXPECT_EQ(identity.how, PlacedBy::kCore);
  EXPECT_EQ(identity.device, "");
  const auto per_device = report.NodesPerDevice();
  EXPECT_EQ(per_device.at("TESTDEV:0"), 1);
  EXPECT_EQ(per_device.at("CPU:0"), 1);
  EXPECT_EQ(per_device.at("core"), 1);
  const std::string printed = report.ToString();
  EXPECT_NE(printed.find("node 'product' (op Mul): CPU:0, kernel of plugin 'cpu'; no kernel on TESTDEV:0, "
                         "placed on CPU:0\n"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("summary: 3 nodes (CPU:0: 1, TESTDEV:0: 1, core: 1), "), std::string::npos) << printed;
}

// Metadata ops are the core's own work in the report, and their outputs
// are right whatever device the run is on.
TEST(Placement, MetadataOpsRunInTheCore) {
  RuntimeOptions options;
  options.discover_plugins = false;
  options.plugin_paths = {PX_CPU_PLUGIN_PATH};
  auto runtime = Runtime::Create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  const char* text = R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "shape" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } }
                                                int_val: 3 int_val: 2 } } } }
    node { name: "r" op: "Reshape" input: "x" input: "shape"
           attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tshape" value { type: DT_INT32 } } }
    node { name: "twice" op: "AddV2" input: "r" input: "r" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "dims" op: "Shape" input: "twice" attr { key: "T" value { type: DT_FLOAT } }
           attr { key: "out_type" value { type: DT_INT32 } } }
  )pb";
  auto graph = ImportGraphDefBytes(text, "<metadata ops test>", GraphFormat::kText);
  ASSERT_TRUE(graph.ok()) << graph.status();
  SessionOptions session_options;
  session_options.device = "CPU:0";
  session_options.optimizer.enabled = false;  // keep Reshape and Shape as they are
  auto session = Session::Create(runtime->get(), std::shared_ptr<const Graph>(*std::move(graph)), session_options);
  ASSERT_TRUE(session.ok()) << session.status();
  auto out = (*session)->Run({{"x", Tensor::FromVector<float>(DataType::kFloat, {6}, {1, 2, 3, 4, 5, 6})}},
                             {"twice", "dims"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{3, 2}));
  EXPECT_EQ((*out)[0].data<float>()[5], 12.0f);
  EXPECT_EQ((*out)[1].data<int32_t>()[0], 3);
  EXPECT_EQ((*out)[1].data<int32_t>()[1], 2);
  const PlacementReport report = (*session)->placement();
  for (const NodePlacement& n : report.nodes) {
    if (n.op == "Reshape" || n.op == "Shape") {
      EXPECT_EQ(n.how, PlacedBy::kCore) << report.ToString();
    }
    if (n.op == "AddV2") EXPECT_EQ(n.how, PlacedBy::kKernel) << report.ToString();
  }
}

// Copies at device boundaries: a constant's copy to the device runs once,
// when the executor is built; the copy of a value the device computes, for
// an op it has no kernel for (Mul, on the CPU), runs at every run. The
// device's memory is not the host's (the separate_memory test plugin), so
// both need one. (A feed reaches its device before the run, not as a copy
// of the plan.)
TEST(Placement, AConstantIsCopiedToItsDeviceOnceAndAComputedValueEveryRun) {
  auto runtime = ::plexus::testing::CpuAndTestPluginRuntime("separate_memory");
  ASSERT_NE(runtime, nullptr);
  const char* text = R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
    node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } }
                                                int_val: 100 int_val: 200 } } } }
    node { name: "sum" op: "AddV2" input: "x" input: "c" attr { key: "T" value { type: DT_INT32 } } }
    node { name: "square" op: "Mul" input: "sum" input: "sum" attr { key: "T" value { type: DT_INT32 } } }
  )pb";
  SessionOptions session_options;
  session_options.device = "TESTDEV:0";
  session_options.optimizer.enabled = false;  // keep the Const a node of its own
  auto session = Session::Create(runtime.get(), ::plexus::testing::GraphFromText(text), session_options);
  ASSERT_TRUE(session.ok()) << session.status();
  for (int run = 0; run < 2; ++run) {
    auto out = (*session)->Run({{"x", Tensor::FromVector<int32_t>(DataType::kInt32, {2}, {1, 2})}}, {"square"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].data<int32_t>()[0], 101 * 101);
    EXPECT_EQ((*out)[0].data<int32_t>()[1], 202 * 202);
  }
  const ExecutionInfo info = (*session)->last_execution_info();
  EXPECT_EQ(info.copy_items, 2);
  EXPECT_EQ(info.copies_per_run, 1);
  // The report says which nodes were computed once, when the executor was
  // built: the Const, wherever it went, and nothing the runs compute.
  const PlacementReport report = (*session)->placement();
  int once = 0;
  for (const NodePlacement& n : report.nodes) {
    EXPECT_EQ(n.once, n.op == "Const") << report.ToString();
    once += n.once;
  }
  EXPECT_EQ(once, 1) << report.ToString();
  EXPECT_NE(report.ToString().find("node 'c' (op Const): "), std::string::npos) << report.ToString();
  EXPECT_NE(report.ToString().find("computed once, when the executor was built"), std::string::npos)
      << report.ToString();
}

}  // namespace
}  // namespace plexus

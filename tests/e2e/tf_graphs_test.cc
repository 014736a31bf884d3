// End-to-end runs of real TensorFlow graphs (from tests/data/tf_graphs, copied
// from shared/testdata with their MANIFEST values) on the cpu plugin.
#include <atomic>
#include <cmath>
#include <fstream>
#include <iterator>
#include <thread>

#include "gtest/gtest.h"
#include "plexus/plexus.h"
#include "test_util.h"

namespace plexus {
namespace {

using ::plexus::testing::CpuRuntime;
using ::plexus::testing::DataPath;

std::shared_ptr<const Graph> Load(const std::string& relative) {
  auto g = ImportGraphDefFile(DataPath(relative));
  EXPECT_TRUE(g.ok()) << g.status();
  return std::shared_ptr<const Graph>(*std::move(g));
}

using ::plexus::testing::Contains;

TEST(TfGraphs, AdditionTf2) {
  auto runtime = CpuRuntime();
  auto session = *Session::Create(runtime.get(), Load("tf_graphs/addition_tf2/model.pb"));
  auto out = session->Run({{"x", Tensor::FromVector<int32_t>(DataType::kInt32, {}, {2})},
                           {"y", Tensor::FromVector<int32_t>(DataType::kInt32, {}, {3})}},
                          {"z"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), DataType::kInt32);
  EXPECT_EQ((*out)[0].dims(), 0);
  EXPECT_EQ((*out)[0].data<int32_t>()[0], 5);  // exact
}

TEST(TfGraphs, RegressionFrozen) {
  auto runtime = CpuRuntime();
  auto session = *Session::Create(runtime.get(), Load("tf_graphs/regression_frozen/frozen.pb"));
  auto out = session->Run({{"X", Tensor::FromVector<float>(DataType::kFloat, {3}, {1, 2, 3})}},
                          {"pred:0"});
  ASSERT_TRUE(out.ok()) << out.status();
  const float expected[] = {1.2634872f, 1.4774489f, 1.6914107f};
  ASSERT_EQ((*out)[0].shape(), (Shape{3}));
  for (int i = 0; i < 3; ++i) EXPECT_NEAR((*out)[0].data<float>()[i], expected[i], 1e-6);
}

void CheckMlp(Session* session, const std::string& input, const std::string& expected,
              double abs_tol, double rel_tol) {
  Tensor x = *ReadNpy(DataPath("tf_graphs/mlp_fc_layers/" + input));
  Tensor ref = *ReadNpy(DataPath("tf_graphs/mlp_fc_layers/" + expected));
  auto out = session->Run({{"X:0", x}}, {"output:0"});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].shape(), (Shape{1, 10}));
  for (int i = 0; i < 10; ++i) {
    double want = ref.dtype() == DataType::kDouble ? ref.data<double>()[i] : ref.data<float>()[i];
    double got = (*out)[0].data<float>()[i];
    EXPECT_NEAR(got, want, abs_tol + rel_tol * std::fabs(want)) << "element " << i;
  }
}

TEST(TfGraphs, MlpFcLayers) {
  auto runtime = CpuRuntime();
  auto session = *Session::Create(runtime.get(), Load("tf_graphs/mlp_fc_layers/frozen.pb"));
  // MANIFEST: float32 differs by ~4e-3 absolute from the float64 reference
  // at magnitudes ~1e4.
  CheckMlp(session.get(), "ref_input_ramp.npy", "ref_output_ramp.npy", 1e-2, 1e-6);
  CheckMlp(session.get(), "ref_input_ramp_div784.npy", "ref_output_ramp_div784.npy", 1e-4, 1e-5);
}

TEST(TfGraphs, MlpBatchOfRowsMatchesRowByRow) {
  auto runtime = CpuRuntime();
  auto session = *Session::Create(runtime.get(), Load("tf_graphs/mlp_fc_layers/frozen.pb"));
  Tensor a = *ReadNpy(DataPath("tf_graphs/mlp_fc_layers/ref_input_ramp.npy"));
  Tensor b = *ReadNpy(DataPath("tf_graphs/mlp_fc_layers/ref_input_ramp_div784.npy"));
  Tensor batch = *Tensor::AllocateHost(DataType::kFloat, {2, 784});
  std::copy(a.data<float>(), a.data<float>() + 784, batch.data<float>());
  std::copy(b.data<float>(), b.data<float>() + 784, batch.data<float>() + 784);
  auto both = session->Run({{"X", batch}}, {"output"});
  auto first = session->Run({{"X", a}}, {"output"});
  auto second = session->Run({{"X", b}}, {"output"});
  ASSERT_TRUE(both.ok() && first.ok() && second.ok());
  for (int i = 0; i < 10; ++i) {
    EXPECT_NEAR((*both)[0].data<float>()[i], (*first)[0].data<float>()[i], 1e-2);
    EXPECT_NEAR((*both)[0].data<float>()[10 + i], (*second)[0].data<float>()[i], 1e-4);
  }
}

TEST(TfGraphs, FeedsOverrideAnyTensor) {
  auto runtime = CpuRuntime();
  auto session = *Session::Create(runtime.get(), Load("tf_graphs/regression_frozen/frozen.pb"));
  // W/read is an Identity, not a Placeholder: feeding it replaces the weight.
  auto out = session->Run({{"X", Tensor::FromVector<float>(DataType::kFloat, {2}, {1, 2})},
                           {"W/read", Tensor::FromVector<float>(DataType::kFloat, {}, {10})}},
                          {"pred"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR((*out)[0].data<float>()[0], 10 + 1.04952538f, 1e-5);
  EXPECT_NEAR((*out)[0].data<float>()[1], 20 + 1.04952538f, 1e-5);
  // Fetching a constant needs no feed at all; fetching a fed tensor returns it.
  auto w = session->Run({}, {"W", "b/read"});
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_NEAR((*w)[0].data<float>()[0], 0.21396178f, 1e-7);
  // Constants are computed once per executor; writing into a fetched one
  // must not change what later runs see.
  (*w)[0].data<float>()[0] = 99.0f;
  auto w2 = session->Run({}, {"W", "b/read"});
  ASSERT_TRUE(w2.ok()) << w2.status();
  EXPECT_NEAR((*w2)[0].data<float>()[0], 0.21396178f, 1e-7);
  auto echo = session->Run({{"X", Tensor::FromVector<float>(DataType::kFloat, {1}, {4})}}, {"X"});
  ASSERT_TRUE(echo.ok()) << echo.status();
  EXPECT_EQ((*echo)[0].data<float>()[0], 4.0f);
}

TEST(TfGraphs, TargetsRunForTheirEffectsOnly) {
  auto runtime = CpuRuntime();
  auto session = *Session::Create(runtime.get(), Load("tf_graphs/regression_frozen/frozen.pb"));
  auto out = session->Run({{"X", Tensor::FromVector<float>(DataType::kFloat, {1}, {1})}}, {},
                          {"pred"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->empty());
}

TEST(TfGraphs, ClearErrors) {
  auto runtime = CpuRuntime();
  auto session = *Session::Create(runtime.get(), Load("tf_graphs/mlp_fc_layers/frozen.pb"));
  auto unfed = session->Run({}, {"output"});
  ASSERT_FALSE(unfed.ok());
  EXPECT_TRUE(Contains(unfed.status(), "node 'X' (op Placeholder) on CPU:0")) << unfed.status();
  EXPECT_TRUE(Contains(unfed.status(), "not fed")) << unfed.status();

  auto wrong_dtype = session->Run({{"X", Tensor::FromVector<int32_t>(DataType::kInt32, {1, 784}, {})}},
                                  {"output"});
  ASSERT_FALSE(wrong_dtype.ok());
  EXPECT_TRUE(Contains(wrong_dtype.status(), "feed 'X:0' has dtype int32")) << wrong_dtype.status();

  auto wrong_shape = session->Run({{"X", *Tensor::AllocateHost(DataType::kFloat, {1, 783})}},
                                  {"output"});
  ASSERT_FALSE(wrong_shape.ok());
  EXPECT_TRUE(Contains(wrong_shape.status(), "[1,783]")) << wrong_shape.status();
  EXPECT_TRUE(Contains(wrong_shape.status(), "[?,784]")) << wrong_shape.status();

  auto unknown = session->Run({}, {"no_such_node:0"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(Contains(unknown.status(), "no_such_node")) << unknown.status();

  auto bad_index = session->Run({}, {"output:3"});
  ASSERT_FALSE(bad_index.ok());
  EXPECT_TRUE(Contains(bad_index.status(), "output:3")) << bad_index.status();

  auto no_device = Session::Create(runtime.get(), Load("tf_graphs/mlp_fc_layers/frozen.pb"),
                                   SessionOptions{"CUDA:0"});
  ASSERT_FALSE(no_device.ok());
  EXPECT_TRUE(Contains(no_device.status(), "CUDA:0")) << no_device.status();

  // After all of that the session still works.
  CheckMlp(session.get(), "ref_input_ramp_div784.npy", "ref_output_ramp_div784.npy", 1e-4, 1e-5);
}

TEST(TfGraphs, ShapeErrorAtRunTimeNamesTheNode) {
  auto runtime = CpuRuntime();
  // Placeholders of unknown shape: the mismatch can only be caught at run time.
  auto session = *Session::Create(runtime.get(), testing::GraphFromText(R"pb(
    node { name: 'a' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }
    node { name: 'b' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }
    node { name: 'sum' op: 'Add' input: 'a' input: 'b' attr { key: 'T' value { type: DT_FLOAT } } })pb"));
  auto out = session->Run({{"a", *Tensor::AllocateHost(DataType::kFloat, {2, 3})},
                           {"b", *Tensor::AllocateHost(DataType::kFloat, {4})}},
                          {"sum"});
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(Contains(out.status(), "node 'sum' (op Add)")) << out.status();
  EXPECT_TRUE(Contains(out.status(), "Incompatible shapes: [2,3] vs. [4]")) << out.status();
}

TEST(TfGraphs, ConcurrentRunsOnOneSession) {
  auto runtime = CpuRuntime();
  auto session = *Session::Create(runtime.get(), Load("tf_graphs/regression_frozen/frozen.pb"));
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        float x = static_cast<float>(t * 100 + i);
        auto out = session->Run({{"X", Tensor::FromVector<float>(DataType::kFloat, {1}, {x})}},
                                {"pred"});
        if (!out.ok() ||
            std::fabs((*out)[0].data<float>()[0] - (0.21396178f * x + 1.04952538f)) > 1e-3f) {
          ++failures;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace plexus

namespace plexus {
namespace {

TEST(TfGraphs, TraceRecordsEveryNodeOfEveryRun) {
  auto runtime = ::plexus::testing::CpuRuntime();
  SessionOptions options;
  options.trace = true;
  auto session = *Session::Create(runtime.get(), Load("tf_graphs/mlp_fc_layers/frozen.pb"), options);
  Tensor x = *ReadNpy(::plexus::testing::DataPath("tf_graphs/mlp_fc_layers/ref_input_ramp.npy"));
  ASSERT_TRUE(session->Run({{"X:0", x}}, {"output:0"}).ok());
  ASSERT_TRUE(session->Run({{"X:0", x}}, {"output:0"}).ok());
  std::string path = ::testing::TempDir() + "/plexus_trace_test.json";
  ASSERT_TRUE(session->WriteTrace(path).ok());
  std::ifstream f(path);
  std::string json((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  // Complete events, one per node run, on the CPU:0 track, with the output node.
  size_t spans = 0;
  for (size_t at = json.find("\"ph\": \"X\""); at != std::string::npos; at = json.find("\"ph\": \"X\"", at + 1)) ++spans;
  EXPECT_GE(spans, 4u);
  EXPECT_EQ(spans % 2, 0u) << "two identical runs record the same nodes";
  EXPECT_NE(json.find("\"name\": \"CPU:0\""), std::string::npos);
  EXPECT_NE(json.find("\"name\": \"output\""), std::string::npos);

  auto untraced = *Session::Create(runtime.get(), Load("tf_graphs/mlp_fc_layers/frozen.pb"));
  EXPECT_FALSE(untraced->WriteTrace(path).ok());
}

}  // namespace
}  // namespace plexus

namespace plexus {
namespace {

TEST(TfGraphs, SteadyStateRunsReuseDeviceMemoryPool) {
  auto runtime = ::plexus::testing::CpuRuntime();
  auto session = *Session::Create(runtime.get(), Load("tf_graphs/mlp_fc_layers/frozen.pb"));
  if (!session->device().pool_enabled()) GTEST_SKIP() << "PLEXUS_DEVICE_POOL=off";
  Tensor x = *ReadNpy(::plexus::testing::DataPath("tf_graphs/mlp_fc_layers/ref_input_ramp.npy"));
  ASSERT_TRUE(session->Run({{"X:0", x}}, {"output:0"}).ok());
  ASSERT_TRUE(session->Run({{"X:0", x}}, {"output:0"}).ok());
  Device::MemoryStats before = session->device().memory_stats();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(session->Run({{"X:0", x}}, {"output:0"}).ok());
  Device::MemoryStats after = session->device().memory_stats();
  EXPECT_EQ(after.region_allocations, before.region_allocations)
      << "steady state calls the plugin's allocate: " << after.ToString();
  EXPECT_GT(after.num_allocations, before.num_allocations);
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use) << "a run leaks device memory";
  EXPECT_EQ(after.bytes_reserved, before.bytes_reserved);
  EXPECT_EQ(after.free_bytes, after.bytes_reserved - after.bytes_in_use);
}

}  // namespace
}  // namespace plexus

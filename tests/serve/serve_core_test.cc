// The parts of plexus-serve under the protocols: the batcher, the version
// manager on real SavedModels (TensorFlow Serving's half_plus_two), the
// model config file and the metrics exposition.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "batcher.h"
#include "metrics.h"
#include "model_manager.h"
#include "plexus/runtime.h"
#include "test_util.h"

namespace plexus::serve {
namespace {
namespace fs = std::filesystem;

std::string TestData() {
  const char* d = std::getenv("PLEXUS_TEST_DATA");
  return d ? d : "tests/data";
}

Tensor Rows(std::vector<float> v, int64_t cols = 1) {
  int64_t n = static_cast<int64_t>(v.size()) / cols;
  return Tensor::FromVector<float>(DataType::kFloat, {n, cols}, v);
}

// A run that doubles x and records the batch sizes it saw.
struct Doubler {
  std::atomic<int> runs{0};
  std::atomic<int64_t> max_rows{0};
  absl::Duration delay = absl::ZeroDuration();
  absl::StatusOr<Batcher::Outputs> operator()(const std::string&, const std::map<std::string, Tensor>& in,
                                              const std::vector<std::string>&, absl::Time) {
    absl::SleepFor(delay);
    const Tensor& x = in.at("x");
    ++runs;
    int64_t r = x.shape()[0];
    int64_t seen = max_rows.load();
    while (r > seen && !max_rows.compare_exchange_weak(seen, r)) {
    }
    Tensor y = Tensor::AllocateHost(DataType::kFloat, x.shape()).value();
    for (int64_t i = 0; i < x.num_elements(); ++i) y.data<float>()[i] = 2 * x.data<float>()[i];
    return Batcher::Outputs{{"y", y}};
  }
};

TEST(BatcherTest, ConcurrentRequestsShareRunsAndGetTheirOwnRows) {
  Doubler d;
  d.delay = absl::Milliseconds(5);
  BatchingOptions o;
  o.enabled = true;
  o.max_batch_size = 16;
  o.batch_timeout = absl::Milliseconds(20);
  o.num_batch_threads = 1;
  Metrics metrics;
  Batcher b("m", o, [&](auto&&... a) { return d(a...); }, &metrics);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int i = 0; i < 12; ++i) {
    threads.emplace_back([&, i] {
      auto out = b.Run("serving_default", {{"x", Rows({float(i), float(i) + 0.5f})}}, {},
                       absl::Now() + absl::Seconds(10));
      if (!out.ok() || out->at("y").shape()[0] != 2 || out->at("y").data<float>()[0] != 2 * i ||
          out->at("y").data<float>()[1] != 2 * i + 1) {
        ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LT(d.runs.load(), 12);  // some requests shared a run
  EXPECT_LE(d.max_rows.load(), 16);
  EXPECT_NE(metrics.Render({}).find("plexus_serve_batch_size_count{model=\"m\"}"), std::string::npos);
}

TEST(BatcherTest, AFullQueueRefusesAtOnce) {
  Doubler d;
  d.delay = absl::Milliseconds(200);
  BatchingOptions o;
  o.enabled = true;
  o.max_batch_size = 1;
  o.max_enqueued_batches = 2;
  o.batch_timeout = absl::ZeroDuration();
  o.num_batch_threads = 1;
  Metrics metrics;
  Batcher b("m", o, [&](auto&&... a) { return d(a...); }, &metrics);
  std::vector<std::thread> threads;
  std::atomic<int> refused{0}, ok{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      absl::Time start = absl::Now();
      auto out = b.Run("s", {{"x", Rows({1})}}, {}, absl::Now() + absl::Seconds(30));
      if (out.ok()) {
        ++ok;
      } else if (out.status().code() == absl::StatusCode::kResourceExhausted &&
                 absl::Now() - start < absl::Milliseconds(100)) {
        ++refused;
        EXPECT_NE(out.status().message().find("overloaded"), std::string::npos);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_GT(refused.load(), 0);
  EXPECT_GT(ok.load(), 0);
  EXPECT_EQ(refused.load() + ok.load(), 8);
}

TEST(BatcherTest, ADeadlinePassingInTheQueueIsAnError) {
  Doubler d;
  d.delay = absl::Milliseconds(300);
  BatchingOptions o;
  o.enabled = true;
  o.max_batch_size = 1;
  o.batch_timeout = absl::ZeroDuration();
  o.num_batch_threads = 1;
  Batcher b("m", o, [&](auto&&... a) { return d(a...); }, nullptr);
  std::thread first([&] { (void)b.Run("s", {{"x", Rows({1})}}, {}, absl::Now() + absl::Seconds(5)); });
  absl::SleepFor(absl::Milliseconds(50));
  auto late = b.Run("s", {{"x", Rows({1})}}, {}, absl::Now() + absl::Milliseconds(50));
  first.join();
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.status().code(), absl::StatusCode::kDeadlineExceeded);
}

class ManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() / ("px_serve_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(base_);
    fs::create_directories(base_ / "half");
    runtime_ = plexus::testing::CpuRuntime();
    ASSERT_NE(runtime_, nullptr);
  }
  void TearDown() override { fs::remove_all(base_); }
  void AddVersion(int v) {
    fs::path tmp = base_ / "half" / ".incoming";
    fs::copy(fs::path(TestData()) / "tf_graphs/half_plus_two_tf1/00000123", tmp,
             fs::copy_options::recursive);
    fs::rename(tmp, base_ / "half" / std::to_string(v));
  }
  ModelConfig Config() {
    ModelConfig c;
    c.name = "half";
    c.base_path = (base_ / "half").string();
    return c;
  }
  float Predict(ModelManager& m, std::optional<int64_t> version, int64_t* served) {
    auto s = m.Find("half", version);
    EXPECT_TRUE(s.ok()) << s.status();
    if (!s.ok()) return -1;
    *served = (*s)->version();
    RunRequest r;
    r.inputs["x"] = Rows({3});
    auto out = (*s)->Run(r);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? out->at("y").data<float>()[0] : -1;
  }
  fs::path base_;
  std::unique_ptr<Runtime> runtime_;
};

TEST_F(ManagerTest, ServesTheLatestVersionAndSwapsInANewOne) {
  AddVersion(1);
  Metrics metrics;
  ModelManager m(runtime_.get(), {}, &metrics, absl::Seconds(60));
  ASSERT_TRUE(m.SetModels({Config()}).ok());
  int64_t served = 0;
  EXPECT_FLOAT_EQ(Predict(m, std::nullopt, &served), 3.5f);  // 0.5 * 3 + 2
  EXPECT_EQ(served, 1);
  auto held = m.Find("half").value();  // a request in flight on version 1
  AddVersion(2);
  m.PollOnce();
  Predict(m, std::nullopt, &served);
  EXPECT_EQ(served, 2);
  auto status = m.Status("half").value();
  ASSERT_EQ(status.size(), 2u);
  EXPECT_EQ(status[0].version, 2);
  EXPECT_EQ(status[0].state, "AVAILABLE");
  EXPECT_EQ(status[1].state, "UNLOADING");  // still held
  held.reset();
  m.PollOnce();
  EXPECT_EQ(m.Status("half").value()[1].state, "END");
  auto gone = m.Find("half", 1);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(gone.status().message().find("versions serving: 2"), std::string::npos) << gone.status();
}

TEST_F(ManagerTest, AVersionThatFailsToLoadLeavesThePreviousOneServing) {
  AddVersion(1);
  ModelManager m(runtime_.get(), {}, nullptr, absl::Seconds(60));
  ASSERT_TRUE(m.SetModels({Config()}).ok());
  fs::create_directories(base_ / "half" / "2");
  std::ofstream(base_ / "half" / "2" / "saved_model.pb") << "not a SavedModel";
  m.PollOnce();
  int64_t served = 0;
  EXPECT_FLOAT_EQ(Predict(m, std::nullopt, &served), 3.5f);
  EXPECT_EQ(served, 1);
  auto status = m.Status("half").value();
  ASSERT_EQ(status.size(), 2u);
  EXPECT_EQ(status[0].version, 2);
  EXPECT_EQ(status[0].state, "END");
  EXPECT_FALSE(status[0].status.ok());
  EXPECT_NE(status[0].status.message().find("version 2"), std::string::npos) << status[0].status;
}

TEST_F(ManagerTest, ChecksInputsAgainstTheSignature) {
  AddVersion(1);
  ModelManager m(runtime_.get(), {}, nullptr, absl::Seconds(60));
  ASSERT_TRUE(m.SetModels({Config()}).ok());
  auto s = m.Find("half").value();
  RunRequest r;
  r.inputs["x"] = Rows({1, 2}, 2);  // [1, 2]; the signature wants [?, 1]
  auto out = s->Run(r);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("input 'x' has shape [1,2]"), std::string::npos) << out.status();
  r.inputs.clear();
  r.inputs["z"] = Rows({1});
  out = s->Run(r);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("unknown input 'z'"), std::string::npos) << out.status();
  r.inputs.clear();
  r.inputs["x"] = Tensor::FromVector<int32_t>(DataType::kInt32, {1, 1}, {1});
  out = s->Run(r);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("expects float"), std::string::npos) << out.status();
  r.signature = "nope";
  out = s->Run(r);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(out.status().message().find("'serving_default'"), std::string::npos) << out.status();
}

TEST_F(ManagerTest, ReadsTensorFlowServingConfigFiles) {
  AddVersion(1);
  AddVersion(2);
  AddVersion(3);
  fs::path file = base_ / "models.config";
  std::ofstream(file) << "model_config_list {\n"
                         "  config { name: 'half' base_path: 'half' model_platform: 'tensorflow'\n"
                         "    model_version_policy { specific { versions: 1 versions: 3 } }\n"
                         "    version_labels { key: 'stable' value: 1 }\n"
                         "    logging_config { sampling_config { sampling_rate: 0.5 } } }\n"
                         "}\n";
  auto configs = ReadModelConfigFile(file.string());
  ASSERT_TRUE(configs.ok()) << configs.status();
  ASSERT_EQ(configs->size(), 1u);
  EXPECT_EQ((*configs)[0].base_path, (base_ / "half").string());
  ModelManager m(runtime_.get(), {}, nullptr, absl::Seconds(60));
  ASSERT_TRUE(m.SetModels(*configs).ok());
  EXPECT_EQ(m.Serving()["half"], (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(m.Find("half", std::nullopt, "stable").value()->version(), 1);
  EXPECT_EQ(m.Find("half").value()->version(), 3);

  std::ofstream(file) << "model_config_list { config { name: 'a' base_path: 'x' model_platform: 'onnx' } }";
  auto bad = ReadModelConfigFile(file.string());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'onnx'"), std::string::npos) << bad.status();
  std::ofstream(file) << "model_config_list { config { name: 'a' base_path: ";
  bad = ReadModelConfigFile(file.string());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 1"), std::string::npos) << bad.status();
}

}  // namespace
}  // namespace plexus::serve

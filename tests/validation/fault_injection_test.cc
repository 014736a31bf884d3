// Fault injection through the validation layer (sdk/validation/faults.cc):
// each knob, set around one session run on the cpu plugin, makes that run
// fail with an error that names what failed (node, op, device, call), and
// the same session's next run without the knob succeeds.
#include <chrono>
#include <cstdlib>

#include "gtest/gtest.h"
#include "plexus/plexus.h"
#include "test_util.h"

namespace plexus {
namespace {

using ::plexus::testing::Contains;

// y = x @ x + x @ x over a 2x2 float input, unoptimized so that every node
// runs; the two products are independent, so the parallel scheduler (with
// its events) runs them.
constexpr char kGraph[] = R"pb(
  node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }
  node { name: 'a' op: 'MatMul' input: 'x' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }
  node { name: 'b' op: 'MatMul' input: 'x' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }
  node { name: 'y' op: 'AddV2' input: 'a' input: 'b' attr { key: 'T' value { type: DT_FLOAT } } })pb";

const char* const kKnobs[] = {"PLEXUS_FAULT_ALLOC_FAIL_AT",   "PLEXUS_FAULT_ALLOC_BUDGET",
                              "PLEXUS_FAULT_STREAM_FAIL",     "PLEXUS_FAULT_EVENT_FAIL",
                              "PLEXUS_FAULT_KERNEL_FAIL",     "PLEXUS_FAULT_KERNEL_DELAY_MS",
                              "PLEXUS_FAULT_PLUGIN"};

class FaultInjection : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    for (const char* knob : kKnobs) unsetenv(knob);
    // Without the device pool every tensor is one allocation of the plugin.
    setenv("PLEXUS_DEVICE_POOL", "off", 1);
    RuntimeOptions options;
    options.discover_plugins = false;
    options.plugin_paths = {PX_CPU_PLUGIN_PATH};
    options.validation = ValidationMode::kError;
    auto runtime = Runtime::Create(options);
    ASSERT_TRUE(runtime.ok()) << runtime.status();
    runtime_ = *std::move(runtime);
    ASSERT_EQ(runtime_->devices().size(), 1u);
    SessionOptions session_options;
    session_options.optimizer.enabled = false;
    session_options.memory_plan = false;
    session_options.inter_op_parallelism = GetParam();
    session_options.intra_op_threads = 1;
    auto session = Session::Create(runtime_.get(), testing::GraphFromText(kGraph), session_options);
    ASSERT_TRUE(session.ok()) << session.status();
    session_ = *std::move(session);
  }
  void TearDown() override {
    for (const char* knob : kKnobs) unsetenv(knob);
    unsetenv("PLEXUS_DEVICE_POOL");
    session_.reset();
    runtime_.reset();
  }
  absl::Status Run() {
    auto out = session_->Run({{"x", Tensor::FromVector<float>(DataType::kFloat, {2, 2}, {0, 1, 2, 0.5f})}}, {"y"});
    if (!out.ok()) return out.status();
    EXPECT_NEAR((*out)[0].data<float>()[1], 1.0f, 1e-6);
    return absl::OkStatus();
  }
  // Runs once with `knob`=`value` (expecting an error containing each of
  // `expected`), then again without it (expecting success).
  void FailsThenRecovers(const char* knob, const char* value, std::vector<std::string> expected,
                         bool warm = true) {
    if (warm) ASSERT_TRUE(Run().ok());  // the device is open, its streams and events made
    setenv(knob, value, 1);
    absl::Status failed = Run();
    unsetenv(knob);
    ASSERT_FALSE(failed.ok()) << knob << "=" << value << " did not make the run fail";
    for (const std::string& text : expected) EXPECT_TRUE(Contains(failed, text)) << failed;
    absl::Status again = Run();
    EXPECT_TRUE(again.ok()) << "the session is not usable after " << knob << ": " << again;
  }

  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<Session> session_;
};

TEST_P(FaultInjection, KernelFailOnANode) {
  FailsThenRecovers("PLEXUS_FAULT_KERNEL_FAIL", "a",
                    {"node 'a' (op MatMul) on CPU:0", "fault injection (PLEXUS_FAULT_KERNEL_FAIL=a)"});
}

TEST_P(FaultInjection, KernelFailOnAnOp) {
  FailsThenRecovers("PLEXUS_FAULT_KERNEL_FAIL", "AddV2", {"node 'y' (op AddV2) on CPU:0", "fault injection"});
}

TEST_P(FaultInjection, AllocationFailsAtTheNthCall) {
  FailsThenRecovers("PLEXUS_FAULT_ALLOC_FAIL_AT", "1",
                    {"CPU:0", "fault injection (PLEXUS_FAULT_ALLOC_FAIL_AT=1)", "out of memory"});
}

TEST_P(FaultInjection, AllocationBudget) {
  FailsThenRecovers("PLEXUS_FAULT_ALLOC_BUDGET", "8",
                    {"CPU:0", "fault injection (PLEXUS_FAULT_ALLOC_BUDGET=8)", "cannot allocate"});
}

TEST_P(FaultInjection, StreamSynchronizeFails) {
  FailsThenRecovers("PLEXUS_FAULT_STREAM_FAIL", "synchronize",
                    {"CPU:0", "fault injection (PLEXUS_FAULT_STREAM_FAIL=synchronize)"});
}

TEST_P(FaultInjection, EventCreateFails) {
  if (!GetParam()) GTEST_SKIP() << "events are made by the parallel scheduler only";
  // Events are pooled: only the first run makes them.
  FailsThenRecovers("PLEXUS_FAULT_EVENT_FAIL", "create", {"CPU:0", "fault injection (PLEXUS_FAULT_EVENT_FAIL=create)"},
                    /*warm=*/false);
}

TEST_P(FaultInjection, EventRecordFails) {
  if (!GetParam()) GTEST_SKIP() << "events are made by the parallel scheduler only";
  FailsThenRecovers("PLEXUS_FAULT_EVENT_FAIL", "record", {"CPU:0", "fault injection (PLEXUS_FAULT_EVENT_FAIL=record)"});
}

// (The knob's "synchronize" entry is not driven here: the core calls
// event_synchronize only for inputs made on another device or read in host
// memory, which one host-accessible device never needs.)
TEST_P(FaultInjection, StreamWaitEventFails) {
  if (!GetParam()) GTEST_SKIP() << "events are made by the parallel scheduler only";
  FailsThenRecovers("PLEXUS_FAULT_EVENT_FAIL", "wait", {"CPU:0", "fault injection (PLEXUS_FAULT_EVENT_FAIL=wait)"});
}

// Streams are made when the device opens, at the first run: a fresh session
// on a fresh runtime sees the fault there, and its next run opens the device.
TEST_P(FaultInjection, StreamCreateFailsWhenTheDeviceOpens) {
  session_.reset();
  runtime_.reset();
  RuntimeOptions options;
  options.discover_plugins = false;
  options.plugin_paths = {PX_CPU_PLUGIN_PATH};
  options.validation = ValidationMode::kError;
  runtime_ = *Runtime::Create(options);
  SessionOptions session_options;
  session_options.inter_op_parallelism = GetParam();
  session_options.intra_op_threads = 1;
  setenv("PLEXUS_FAULT_STREAM_FAIL", "create", 1);
  auto session = Session::Create(runtime_.get(), testing::GraphFromText(kGraph), session_options);
  absl::Status failed = session.ok() ? absl::OkStatus() : session.status();
  if (session.ok()) {
    session_ = *std::move(session);
    failed = Run();
  }
  unsetenv("PLEXUS_FAULT_STREAM_FAIL");
  ASSERT_FALSE(failed.ok());
  EXPECT_TRUE(Contains(failed, "CPU:0")) << failed;
  EXPECT_TRUE(Contains(failed, "fault injection (PLEXUS_FAULT_STREAM_FAIL=create)")) << failed;
  if (session_ == nullptr) {
    auto again = Session::Create(runtime_.get(), testing::GraphFromText(kGraph), session_options);
    ASSERT_TRUE(again.ok()) << again.status();
    session_ = *std::move(again);
  }
  absl::Status again = Run();
  EXPECT_TRUE(again.ok()) << again;
}

TEST_P(FaultInjection, KernelDelaySlowsTheRunDown) {
  ASSERT_TRUE(Run().ok());
  setenv("PLEXUS_FAULT_KERNEL_DELAY_MS", "AddV2:150", 1);
  const auto start = std::chrono::steady_clock::now();
  absl::Status slow = Run();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  unsetenv("PLEXUS_FAULT_KERNEL_DELAY_MS");
  EXPECT_TRUE(slow.ok()) << slow;
  EXPECT_GE(elapsed, std::chrono::milliseconds(150));
}

TEST_P(FaultInjection, KnobsApplyOnlyToThePluginsNamed) {
  ASSERT_TRUE(Run().ok());
  setenv("PLEXUS_FAULT_PLUGIN", "reference", 1);
  setenv("PLEXUS_FAULT_KERNEL_FAIL", "a", 1);
  EXPECT_TRUE(Run().ok());
}

INSTANTIATE_TEST_SUITE_P(Executors, FaultInjection, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Parallel" : "Sequential"; });

}  // namespace
}  // namespace plexus

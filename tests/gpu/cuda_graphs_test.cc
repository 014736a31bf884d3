// Device graphs (SessionOptions::device_graphs, stream capture of ABI 0.5)
// on CUDA:0: a graph runs normally once, is recorded on its second run and
// replayed afterwards. Every run's results are compared with the cpu
// plugin's on fresh inputs, so a replay that read stale feeds or wrote
// somewhere else would fail. Label gpu: skipped without a CUDA device.
#include <random>
#include <string>
#include <vector>

#include "cuda_test_util.h"
#include "gtest/gtest.h"

namespace plexus::cuda_test {
namespace {

using conformance::CompareTensors;
using conformance::RandomTensor;
using conformance::Tolerance;

// x [?, 16] -> MatMul(w [16, 32]) + b -> Relu -> MatMul(v [32, 8]) ->
// Softmax, with the weights as constants.
std::string MlpGraph(std::mt19937& rng) {
  auto values = [&](int n) {
    std::uniform_real_distribution<float> d(-0.5f, 0.5f);
    std::string s;
    for (int i = 0; i < n; ++i) s += " float_val: " + std::to_string(d(rng));
    return s;
  };
  auto konst = [&](const std::string& name, std::vector<int> dims) {
    int n = 1;
    std::string shape;
    for (int d : dims) {
      n *= d;
      shape += " dim { size: " + std::to_string(d) + " }";
    }
    return "node { name: '" + name + "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } "
           "attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {" + shape + " }" +
           values(n) + " } } } }\n";
  };
  std::string g;
  g += "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } "
       "attr { key: 'shape' value { shape { dim { size: -1 } dim { size: 16 } } } } }\n";
  g += konst("w", {16, 32}) + konst("b", {32}) + konst("v", {32, 8});
  g += "node { name: 'mm' op: 'MatMul' input: 'x' input: 'w' attr { key: 'T' value { type: DT_FLOAT } } }\n";
  g += "node { name: 'ba' op: 'BiasAdd' input: 'mm' input: 'b' attr { key: 'T' value { type: DT_FLOAT } } }\n";
  g += "node { name: 'relu' op: 'Relu' input: 'ba' attr { key: 'T' value { type: DT_FLOAT } } }\n";
  g += "node { name: 'mm2' op: 'MatMul' input: 'relu' input: 'v' attr { key: 'T' value { type: DT_FLOAT } } }\n";
  g += "node { name: 'y' op: 'Softmax' input: 'mm2' attr { key: 'T' value { type: DT_FLOAT } } }\n";
  return g;
}

std::unique_ptr<Session> MakeSession(const std::string& text, const std::string& device, bool graphs,
                                     bool fetch_to_host = true) {
  auto graph = ImportGraphDefBytes(text, "<device graph test>", GraphFormat::kText);
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return nullptr;
  SessionOptions options;
  options.device = device;
  options.device_graphs = graphs;
  options.fetch_to_host = fetch_to_host;
  auto session = Session::Create(&TheRuntime(), std::shared_ptr<const Graph>(*std::move(graph)), options);
  EXPECT_TRUE(session.ok()) << session.status();
  return session.ok() ? *std::move(session) : nullptr;
}

Tensor RunOne(Session& s, const Tensor& x, const std::string& fetch = "y") {
  auto r = s.Run({{"x", x}}, {fetch});
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? (*r)[0] : Tensor();
}

const Tolerance kTol{1e-5, 1e-4};

TEST(CudaDeviceGraphs, RecordedOnTheSecondRunAndReplayedWithFreshInputs) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(11);
  const std::string text = MlpGraph(rng);
  auto gpu = MakeSession(text, "CUDA:0", true);
  auto cpu = MakeSession(text, "CPU:0", false);
  ASSERT_TRUE(gpu && cpu);
  for (int run = 0; run < 6; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    const Tensor x = RandomTensor(DataType::kFloat, {4, 16}, rng);
    const Tensor got = RunOne(*gpu, x), want = RunOne(*cpu, x);
    ASSERT_TRUE(got.valid() && want.valid());
    EXPECT_TRUE(CompareTensors(got, want, kTol).ok()) << CompareTensors(got, want, kTol);
    // (The constants have no CUDA kernel: they are made on the CPU and copied
    // to CUDA:0 once, when the executor is built.)
    for (const std::string& note : gpu->placement_notes()) {
      EXPECT_TRUE(note.find("(op Const)") != std::string::npos || note.rfind("copy of '", 0) == 0) << note;
    }
    const ExecutionInfo info = gpu->last_execution_info();
    EXPECT_TRUE(info.device_graph_eligible) << info.device_graph_note;
    EXPECT_EQ(info.device_graph_recorded, run >= 1) << info.device_graph_note;
    EXPECT_EQ(info.device_graph_replays, run >= 1 ? run : 0);
  }
}

TEST(CudaDeviceGraphs, OtherFeedShapesRunNormallyAndCorrectly) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(12);
  const std::string text = MlpGraph(rng);
  auto gpu = MakeSession(text, "CUDA:0", true);
  auto cpu = MakeSession(text, "CPU:0", false);
  ASSERT_TRUE(gpu && cpu);
  const int64_t batches[] = {4, 4, 4, 7, 4, 1, 4};
  int64_t replays = 0;
  for (int64_t batch : batches) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    const Tensor x = RandomTensor(DataType::kFloat, {batch, 16}, rng);
    const Tensor got = RunOne(*gpu, x), want = RunOne(*cpu, x);
    ASSERT_TRUE(got.valid() && want.valid());
    EXPECT_TRUE(CompareTensors(got, want, kTol).ok()) << CompareTensors(got, want, kTol);
    // Each feed shape has an executor of its own (its memory plan), and the
    // info is of the executor the run used: batch 4's recording keeps its
    // replays across the runs of other shapes, which record nothing on
    // their first run.
    const ExecutionInfo info = gpu->last_execution_info();
    if (info.device_graph_recorded && batch == 4) ++replays;
    EXPECT_EQ(info.device_graph_replays, batch == 4 ? replays : 0);
    if (batch != 4) EXPECT_FALSE(info.device_graph_recorded) << info.device_graph_note;
  }
  EXPECT_EQ(replays, 4);  // the 2nd, 3rd, 5th and 7th runs
}

TEST(CudaDeviceGraphs, DeviceResidentFetchesAreNotOverwrittenByTheNextReplay) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(13);
  const std::string text = MlpGraph(rng);
  auto gpu = MakeSession(text, "CUDA:0", true, /*fetch_to_host=*/false);
  auto cpu = MakeSession(text, "CPU:0", false);
  ASSERT_TRUE(gpu && cpu);
  std::vector<Tensor> inputs, outputs;
  for (int run = 0; run < 5; ++run) {
    inputs.push_back(RandomTensor(DataType::kFloat, {4, 16}, rng));
    outputs.push_back(RunOne(*gpu, inputs.back()));
    ASSERT_TRUE(outputs.back().valid());
    ASSERT_NE(outputs.back().device(), nullptr) << "the fetch should stay on CUDA:0";
    EXPECT_EQ(outputs.back().device()->name(), "CUDA:0");
  }
  EXPECT_GE(gpu->last_execution_info().device_graph_replays, 3);
  for (size_t i = 0; i < inputs.size(); ++i) {
    SCOPED_TRACE("run " + std::to_string(i));
    auto host = CopyTensorTo(outputs[i], nullptr);
    ASSERT_TRUE(host.ok()) << host.status();
    const Tensor want = RunOne(*cpu, inputs[i]);
    EXPECT_TRUE(CompareTensors(*host, want, kTol).ok()) << CompareTensors(*host, want, kTol);
  }
}

TEST(CudaDeviceGraphs, FeedsAlreadyOnTheDeviceAreCopiedIn) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(14);
  const std::string text = MlpGraph(rng);
  auto gpu = MakeSession(text, "CUDA:0", true);
  auto cpu = MakeSession(text, "CPU:0", false);
  ASSERT_TRUE(gpu && cpu);
  auto device = TheRuntime().FindDevice("CUDA:0");
  ASSERT_TRUE(device.ok()) << device.status();
  for (int run = 0; run < 4; ++run) {
    const Tensor x = RandomTensor(DataType::kFloat, {4, 16}, rng);
    auto on_device = CopyTensorTo(x, device->get());
    ASSERT_TRUE(on_device.ok()) << on_device.status();
    const Tensor got = RunOne(*gpu, *on_device), want = RunOne(*cpu, x);
    EXPECT_TRUE(CompareTensors(got, want, kTol).ok()) << CompareTensors(got, want, kTol);
  }
  EXPECT_EQ(gpu->last_execution_info().device_graph_replays, 3);
}

TEST(CudaDeviceGraphs, AKernelThatWaitsForTheDeviceKeepsRunsNormal) {
  PX_SKIP_WITHOUT_CUDA();
  // GatherV2 checks its indices by reading them back, which a recording
  // cannot do: recording fails, the note says why, and every run is right.
  const std::string text =
      "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
      "node { name: 'i' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' "
      "value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 3 } } int_val: 2 int_val: 0 int_val: 1 } } } }\n"
      "node { name: 'a' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' "
      "value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n"
      "node { name: 'g' op: 'GatherV2' input: 'x' input: 'i' input: 'a' attr { key: 'Tparams' value { type: DT_FLOAT } } "
      "attr { key: 'Tindices' value { type: DT_INT32 } } attr { key: 'Taxis' value { type: DT_INT32 } } }\n"
      "node { name: 'y' op: 'Relu' input: 'g' attr { key: 'T' value { type: DT_FLOAT } } }\n";
  auto gpu = MakeSession(text, "CUDA:0", true);
  auto cpu = MakeSession(text, "CPU:0", false);
  ASSERT_TRUE(gpu && cpu);
  std::mt19937 rng(15);
  for (int run = 0; run < 4; ++run) {
    const Tensor x = RandomTensor(DataType::kFloat, {3, 5}, rng);
    const Tensor got = RunOne(*gpu, x), want = RunOne(*cpu, x);
    ASSERT_TRUE(got.valid());
    EXPECT_TRUE(CompareTensors(got, want, Exact()).ok()) << CompareTensors(got, want, Exact());
  }
  const ExecutionInfo info = gpu->last_execution_info();
  EXPECT_FALSE(info.device_graph_recorded);
  EXPECT_EQ(info.device_graph_replays, 0);
  // Eligible (every kernel on CUDA:0, indices a constant), and then refused
  // when recording.
  EXPECT_TRUE(info.device_graph_eligible) << info.device_graph_note;
  EXPECT_NE(info.device_graph_note.find("recording failed"), std::string::npos) << info.device_graph_note;
  // A later session still records (the failure spoiled nothing).
  std::mt19937 rng2(16);
  const std::string mlp = MlpGraph(rng2);
  auto again = MakeSession(mlp, "CUDA:0", true);
  ASSERT_TRUE(again);
  for (int run = 0; run < 3; ++run) RunOne(*again, RandomTensor(DataType::kFloat, {2, 16}, rng2));
  EXPECT_EQ(again->last_execution_info().device_graph_replays, 2) << again->last_execution_info().device_graph_note;
}

TEST(CudaDeviceGraphs, OffByDefaultAndSaysSo) {
  PX_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(17);
  auto gpu = MakeSession(MlpGraph(rng), "CUDA:0", false);
  ASSERT_TRUE(gpu);
  for (int run = 0; run < 3; ++run) RunOne(*gpu, RandomTensor(DataType::kFloat, {4, 16}, rng));
  const ExecutionInfo info = gpu->last_execution_info();
  EXPECT_FALSE(info.device_graph_eligible);
  EXPECT_EQ(info.device_graph_note, "off");
  EXPECT_EQ(info.device_graph_replays, 0);
}

}  // namespace
}  // namespace plexus::cuda_test

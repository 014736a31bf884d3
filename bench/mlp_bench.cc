// The real mlp_fc_layers graph (784 -> 256 -> 256 -> 10, MatMul + BiasAdd +
// Relu) run through Plexus on the cpu plugin, against the same forward pass
// written directly in Eigen with the same weights. The ratio shows what the
// runtime (graph execution, the ABI, allocation) costs over the bare kernels.
//
//   cmake -S . -B build -G Ninja -DPX_BUILD_BENCH=ON && ninja -C build plexus_mlp_bench
//   build/bin/plexus_mlp_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <Eigen/Core>
#include <cstdlib>
#include <string>

#include "benchmark/benchmark.h"
#include "plexus/plexus.h"
#include "plexus/tensor_proto.h"

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

std::string GraphPath() {
  return std::string(PX_BENCH_DATA_DIR) + "/tf_graphs/mlp_fc_layers/frozen.pb";
}

struct Fixture {
  std::unique_ptr<plexus::Runtime> runtime;
  std::shared_ptr<const plexus::Graph> graph;
  std::unique_ptr<plexus::Session> session;
  std::vector<RowMatrix> weights;
  std::vector<Eigen::RowVectorXf> biases;

  Fixture() {
    plexus::RuntimeOptions options;
    options.discover_plugins = false;
    options.plugin_paths = {PX_BENCH_CPU_PLUGIN};
    runtime = *plexus::Runtime::Create(options);
    graph = std::shared_ptr<const plexus::Graph>(*plexus::ImportGraphDefFile(GraphPath()));
    session = *plexus::Session::Create(runtime.get(), graph, {"CPU:0"});
    // The weights are the graph's Const nodes, in order: kernel, bias, ...
    for (const auto& node : graph->nodes()) {
      if (node->op != "Const") continue;
      plexus::Tensor t = *plexus::TensorFromProto(**plexus::GetAttrTensorProto(*node, "value"));
      if (t.dims() == 2) {
        weights.emplace_back(Eigen::Map<RowMatrix>(t.data<float>(), t.shape()[0], t.shape()[1]));
      } else {
        biases.emplace_back(Eigen::Map<Eigen::RowVectorXf>(t.data<float>(), t.shape()[0]));
      }
    }
  }
};

Fixture& Shared() {
  static Fixture* fixture = new Fixture();
  return *fixture;
}

plexus::Tensor Input(int64_t batch) {
  plexus::Tensor x = *plexus::Tensor::AllocateHost(plexus::DataType::kFloat, {batch, 784});
  for (int64_t i = 0; i < x.num_elements(); ++i) x.data<float>()[i] = (i % 784 + 1) / 784.0f;
  return x;
}

void BM_Plexus(benchmark::State& state) {
  Fixture& f = Shared();
  plexus::Tensor x = Input(state.range(0));
  for (auto _ : state) {
    auto out = f.session->Run({{"X", x}}, {"output"});
    if (!out.ok()) state.SkipWithError(std::string(out.status().message()).c_str());
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_Eigen(benchmark::State& state) {
  Fixture& f = Shared();
  plexus::Tensor x = Input(state.range(0));
  Eigen::Map<RowMatrix> in(x.data<float>(), state.range(0), 784);
  for (auto _ : state) {
    RowMatrix h = in;
    for (size_t layer = 0; layer < f.weights.size(); ++layer) {
      RowMatrix next(h.rows(), f.weights[layer].cols());
      next.noalias() = h * f.weights[layer];
      next.rowwise() += f.biases[layer];
      if (layer + 1 < f.weights.size()) next = next.cwiseMax(0.0f);
      h.swap(next);
    }
    benchmark::DoNotOptimize(h.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

BENCHMARK(BM_Plexus)->Arg(1)->Arg(64);
BENCHMARK(BM_Eigen)->Arg(1)->Arg(64);

}  // namespace

BENCHMARK_MAIN();

// Dense matrix products C = A * B (row-major, no transposes) on every GEMM
// this machine has: Eigen (OpenMP-parallel), OpenBLAS's cblas_?gemm,
// oneDNN's dnnl_sgemm (float only), and the cpu plugin's own MatMul kernel
// through a Plexus session on a one-node graph, which is what users get
// (its timing includes the session's run overhead and the output
// allocation). The counter GFLOPS is 2*m*n*k per second, in 1e9.
//
// Every library runs on PX_BENCH_THREADS threads (default 2). The plugin's
// GEMM threads are its library's own (see plugins/cpu/README.md).
//
//   cmake -S . -B build -G Ninja -DPX_BUILD_BENCH=ON && ninja -C build plexus_gemm_bench
//   build/bin/plexus_gemm_bench --benchmark_repetitions=3 --benchmark_report_aggregates_only
//
// OpenBLAS reads OPENBLAS_CORETYPE when it is loaded: a preset value (say
// Haswell on an AVX-512 machine) forces slower kernels. The bench names the
// kernels OpenBLAS picked in its context; unset the variable to measure
// the library at its best.
#include <Eigen/Core>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "graph.pb.h"
#include "plexus/graph_import.h"
#include "plexus/plexus.h"

#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef PX_BENCH_HAVE_OPENBLAS
#include <cblas.h>
#endif
#ifdef PX_BENCH_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

namespace {

int Threads() {
  const char* env = std::getenv("PX_BENCH_THREADS");
  const int n = env ? std::atoi(env) : 2;
  return n > 0 ? n : 2;
}

struct Shape {
  int64_t m, k, n;
};

// Square sizes, two MLP layers (a single example and a batch of 64 through
// 784 -> 512), and the im2col product of a 3x3, 64 -> 64 convolution on a
// 56x56 map (rows = 56*56 output pixels, depth = 3*3*64).
const std::vector<Shape> kFloatShapes = {{256, 256, 256},    {512, 512, 512},
                                         {1024, 1024, 1024}, {2048, 2048, 2048},
                                         {1, 784, 512},      {64, 784, 512},
                                         {3136, 576, 64}};
const std::vector<Shape> kDoubleShapes = {{256, 256, 256}, {512, 512, 512},
                                          {1024, 1024, 1024}, {2048, 2048, 2048}};

template <typename T>
std::vector<T> Random(int64_t size, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<T> dist(-1, 1);
  std::vector<T> v(static_cast<size_t>(size));
  for (T& x : v) x = dist(gen);
  return v;
}

void SetGflops(benchmark::State& state, const Shape& s) {
  state.counters["GFLOPS"] = benchmark::Counter(
      2e-9 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) *
          static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}

// The operands of one product, shared by the library backends.
template <typename T>
struct Operands {
  explicit Operands(const Shape& s)
      : a(Random<T>(s.m * s.k, 1)), b(Random<T>(s.k * s.n, 2)),
        c(static_cast<size_t>(s.m * s.n)) {}
  std::vector<T> a, b, c;
};

template <typename T>
void BM_Eigen(benchmark::State& state, Shape s) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Operands<T> o(s);
  Eigen::Map<const Matrix> a(o.a.data(), s.m, s.k), b(o.b.data(), s.k, s.n);
  Eigen::Map<Matrix> c(o.c.data(), s.m, s.n);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(o.c.data());
  }
  SetGflops(state, s);
}

#ifdef PX_BENCH_HAVE_OPENBLAS
template <typename T>
void BM_OpenBlas(benchmark::State& state, Shape s) {
  Operands<T> o(s);
  const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
  for (auto _ : state) {
    if constexpr (std::is_same_v<T, float>) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, o.a.data(), k,
                  o.b.data(), n, 0.0f, o.c.data(), n);
    } else {
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, o.a.data(), k,
                  o.b.data(), n, 0.0, o.c.data(), n);
    }
    benchmark::DoNotOptimize(o.c.data());
  }
  SetGflops(state, s);
}
#endif

#ifdef PX_BENCH_HAVE_DNNL
void BM_OneDnn(benchmark::State& state, Shape s) {
  Operands<float> o(s);
  for (auto _ : state) {
    if (dnnl_sgemm('N', 'N', s.m, s.n, s.k, 1.0f, o.a.data(), s.k, o.b.data(), s.n, 0.0f,
                   o.c.data(), s.n) != dnnl_success) {
      state.SkipWithError("dnnl_sgemm failed");
      break;
    }
    benchmark::DoNotOptimize(o.c.data());
  }
  SetGflops(state, s);
}
#endif

plexus::Runtime& Runtime() {
  static plexus::Runtime* runtime = [] {
    plexus::RuntimeOptions options;
    options.discover_plugins = false;
    options.plugin_paths = {PX_BENCH_CPU_PLUGIN};
    return plexus::Runtime::Create(options).value().release();
  }();
  return *runtime;
}

// MatMul(a, b) on CPU:0, both operands fed.
template <typename T>
void BM_Plexus(benchmark::State& state, Shape s) {
  const plexus::DataType dtype =
      std::is_same_v<T, float> ? plexus::DataType::kFloat : plexus::DataType::kDouble;
  plexus::tf::GraphDef def;
  for (const char* name : {"a", "b"}) {
    plexus::tf::NodeDef* p = def.add_node();
    p->set_name(name);
    p->set_op("Placeholder");
    (*p->mutable_attr())["dtype"].set_type(static_cast<plexus::tf::DataType>(dtype));
  }
  plexus::tf::NodeDef* mm = def.add_node();
  mm->set_name("c");
  mm->set_op("MatMul");
  mm->add_input("a");
  mm->add_input("b");
  (*mm->mutable_attr())["T"].set_type(static_cast<plexus::tf::DataType>(dtype));
  auto graph = plexus::ImportGraphDef(def, "<gemm bench>");
  if (!graph.ok()) {
    state.SkipWithError(std::string(graph.status().message()).c_str());
    return;
  }
  auto session = plexus::Session::Create(
      &Runtime(), std::shared_ptr<const plexus::Graph>(std::move(*graph)), {"CPU:0"});
  if (!session.ok()) {
    state.SkipWithError(std::string(session.status().message()).c_str());
    return;
  }
  plexus::Tensor a = plexus::Tensor::AllocateHost(dtype, {s.m, s.k}).value();
  plexus::Tensor b = plexus::Tensor::AllocateHost(dtype, {s.k, s.n}).value();
  const std::vector<T> av = Random<T>(s.m * s.k, 1), bv = Random<T>(s.k * s.n, 2);
  std::copy(av.begin(), av.end(), a.data<T>());
  std::copy(bv.begin(), bv.end(), b.data<T>());
  for (auto _ : state) {
    auto out = (*session)->Run({{"a", a}, {"b", b}}, {"c"});
    if (!out.ok()) {
      state.SkipWithError(std::string(out.status().message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(out);
  }
  SetGflops(state, s);
}

std::string Name(const char* type, const char* backend, const Shape& s) {
  char buf[128];
  std::snprintf(buf, sizeof(buf), "%s/%s/%lldx%lldx%lld", type, backend,
                static_cast<long long>(s.m), static_cast<long long>(s.k),
                static_cast<long long>(s.n));
  return buf;
}

void Register(const std::string& name, std::function<void(benchmark::State&)> fn) {
  benchmark::RegisterBenchmark(name.c_str(), [fn](benchmark::State& st) { fn(st); })
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = Threads();
  Eigen::setNbThreads(threads);
#ifdef _OPENMP
  omp_set_num_threads(threads);  // Eigen's and oneDNN's (Debian's is OpenMP-threaded)
#endif
  benchmark::AddCustomContext("threads", std::to_string(threads));
  benchmark::AddCustomContext("eigen_threads", std::to_string(Eigen::nbThreads()));
#ifdef PX_BENCH_HAVE_OPENBLAS
  openblas_set_num_threads(threads);
  benchmark::AddCustomContext("openblas", openblas_get_config());
  benchmark::AddCustomContext("openblas_core", openblas_get_corename());
#endif
  if (const char* core = std::getenv("OPENBLAS_CORETYPE")) {
    benchmark::AddCustomContext("OPENBLAS_CORETYPE", core);
    std::fprintf(stderr,
                 "warning: OPENBLAS_CORETYPE=%s forces OpenBLAS's kernels for that core; "
                 "unset it to measure the best ones\n",
                 core);
  }

  for (const Shape& s : kFloatShapes) {
    Register(Name("sgemm", "eigen", s), [s](benchmark::State& st) { BM_Eigen<float>(st, s); });
#ifdef PX_BENCH_HAVE_OPENBLAS
    Register(Name("sgemm", "openblas", s),
             [s](benchmark::State& st) { BM_OpenBlas<float>(st, s); });
#endif
#ifdef PX_BENCH_HAVE_DNNL
    Register(Name("sgemm", "onednn", s), [s](benchmark::State& st) { BM_OneDnn(st, s); });
#endif
    Register(Name("sgemm", "plexus", s), [s](benchmark::State& st) { BM_Plexus<float>(st, s); });
  }
  for (const Shape& s : kDoubleShapes) {
    Register(Name("dgemm", "eigen", s), [s](benchmark::State& st) { BM_Eigen<double>(st, s); });
#ifdef PX_BENCH_HAVE_OPENBLAS
    Register(Name("dgemm", "openblas", s),
             [s](benchmark::State& st) { BM_OpenBlas<double>(st, s); });
#endif
    Register(Name("dgemm", "plexus", s),
             [s](benchmark::State& st) { BM_Plexus<double>(st, s); });
  }

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

// The executor. The parallel scheduler: independent expensive branches run on the
// inter-op pool (with their own streams, joined by events) and give the
// same results as the serial order; concurrent runs of one session stay
// correct; an error in one branch fails the run cleanly; branches on two
// devices wait for each other through events. The memory plan: arena
// slots are reused along a chain and never while a value is still read.
// Bound launches give the usual path's results.
#include <atomic>
#include <cmath>
#include <new>
#include <cstdlib>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <thread>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "plexus/plexus.h"
#include "test_util.h"

// Heap allocations through operator new, counted while g_counting is set
// (the replacement serves the whole process, plugins included).
namespace {
std::atomic<bool> g_counting{false};
std::atomic<int64_t> g_allocations{0};
}  // namespace

void* operator new(size_t bytes) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(bytes ? bytes : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t bytes) { return operator new(bytes); }
// The nothrow forms too, so that every new of the program pairs with the
// delete below (the standard library's temporary buffers use them).
void* operator new(size_t bytes, const std::nothrow_t&) noexcept {
  try {
    return operator new(bytes);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](size_t bytes, const std::nothrow_t& tag) noexcept { return operator new(bytes, tag); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace plexus {
namespace {

using ::plexus::testing::CpuRuntime;
using ::plexus::testing::TestPluginPath;

// The pool is made on first use: give it four threads whatever the
// machine, so the test means the same on one core as on many.
const bool kPoolSized = [] { return setenv("PLEXUS_INTER_OP_THREADS", "4", 1) == 0; }();

constexpr int kN = 96;

// Three independent MatMuls of two fed matrices, summed.
const char* kThreeBranches = R"pb(
  node { name: "a" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "b" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "mm_ab" op: "MatMul" input: "a" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "mm_ba" op: "MatMul" input: "b" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "mm_aa" op: "MatMul" input: "a" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "s1" op: "AddV2" input: "mm_ab" input: "mm_ba" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "out" op: "AddV2" input: "s1" input: "mm_aa" attr { key: "T" value { type: DT_FLOAT } } }
)pb";

Tensor Random(int rows, int cols, uint32_t seed) {
  Tensor t = *Tensor::AllocateHost(DataType::kFloat, {rows, cols});
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

// a*b + b*a + a*a in double.
std::vector<double> Expected(const Tensor& a, const Tensor& b) {
  const float* A = a.data<float>();
  const float* B = b.data<float>();
  std::vector<double> out(kN * kN, 0.0);
  for (int i = 0; i < kN; ++i) {
    for (int j = 0; j < kN; ++j) {
      double s = 0;
      for (int k = 0; k < kN; ++k) {
        s += double(A[i * kN + k]) * B[k * kN + j] + double(B[i * kN + k]) * A[k * kN + j] +
             double(A[i * kN + k]) * A[k * kN + j];
      }
      out[i * kN + j] = s;
    }
  }
  return out;
}

void ExpectClose(const Tensor& got, const std::vector<double>& want) {
  ASSERT_EQ(got.num_elements(), static_cast<int64_t>(want.size()));
  // float32 sums of 3*96 products of values in [-1, 1].
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got.data<float>()[i], want[i], 1e-3) << "element " << i;
  }
}

// A parallel session gets an intra-op budget of one thread (`intra_threads`
// 0), the only budget at which the scheduler runs branches side by side.
std::unique_ptr<Session> MakeSession(Runtime* runtime, const char* text, bool parallel, bool trace = false,
                                     const std::string& device = "", int intra_threads = 0) {
  auto graph = ImportGraphDefBytes(text, "<parallel test>", GraphFormat::kText);
  EXPECT_TRUE(graph.ok()) << graph.status();
  SessionOptions options;
  options.inter_op_parallelism = parallel;
  options.intra_op_threads = intra_threads > 0 ? intra_threads : (parallel ? 1 : 0);
  if (intra_threads > 0) options.adapt_threads_to_load = false;
  options.trace = trace;
  options.device = device;
  auto session = Session::Create(runtime, std::shared_ptr<const Graph>(*std::move(graph)), options);
  EXPECT_TRUE(session.ok()) << session.status();
  return *std::move(session);
}

// Thread ids of the trace's events for each node name.
std::map<std::string, std::set<std::string>> ThreadsByNode(const std::string& json) {
  std::map<std::string, std::set<std::string>> out;
  std::regex event(R"re("ph": "X", "name": "([^"]+)".*?"tid": (\d+))re");
  for (auto it = std::sregex_iterator(json.begin(), json.end(), event); it != std::sregex_iterator(); ++it) {
    out[(*it)[1]].insert((*it)[2]);
  }
  return out;
}

TEST(ParallelExecutor, IndependentBranchesRunOnSeveralThreadsWithSerialResults) {
  ASSERT_TRUE(kPoolSized);
  auto runtime = CpuRuntime();
  Tensor a = Random(kN, kN, 1), b = Random(kN, kN, 2);
  std::vector<double> want = Expected(a, b);
  auto parallel = MakeSession(runtime.get(), kThreeBranches, true, /*trace=*/true);
  auto serial = MakeSession(runtime.get(), kThreeBranches, false);
  for (int run = 0; run < 3; ++run) {
    auto p = parallel->Run({{"a", a}, {"b", b}}, {"out"});
    ASSERT_TRUE(p.ok()) << p.status();
    ExpectClose((*p)[0], want);
    auto s = serial->Run({{"a", a}, {"b", b}}, {"out"});
    ASSERT_TRUE(s.ok()) << s.status();
    ExpectClose((*s)[0], want);
  }
  std::string path = ::testing::TempDir() + "/plexus_parallel_trace.json";
  ASSERT_TRUE(parallel->WriteTrace(path).ok());
  std::ifstream f(path);
  std::string json((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto threads = ThreadsByNode(json);
  std::set<std::string> used;
  for (const char* node : {"mm_ab", "mm_ba", "mm_aa"}) {
    ASSERT_EQ(threads.count(node), 1u) << node << " is missing from the trace";
    used.insert(threads[node].begin(), threads[node].end());
  }
  // The caller keeps one MatMul and hands the other two to the pool.
  EXPECT_GE(used.size(), 2u) << json;
}

// With a budget of several threads each kernel uses them all itself, so the
// branches run one after another on the calling thread.
TEST(ParallelExecutor, ABudgetOfSeveralThreadsRunsBranchesInOrder) {
  ASSERT_TRUE(kPoolSized);
  auto runtime = CpuRuntime();
  Tensor a = Random(kN, kN, 1), b = Random(kN, kN, 2);
  auto session = MakeSession(runtime.get(), kThreeBranches, true, /*trace=*/true, "", /*intra_threads=*/2);
  auto p = session->Run({{"a", a}, {"b", b}}, {"out"});
  ASSERT_TRUE(p.ok()) << p.status();
  ExpectClose((*p)[0], Expected(a, b));
  std::string path = ::testing::TempDir() + "/plexus_in_order_trace.json";
  ASSERT_TRUE(session->WriteTrace(path).ok());
  std::ifstream f(path);
  std::string json((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto threads = ThreadsByNode(json);
  std::set<std::string> used;
  for (const char* node : {"mm_ab", "mm_ba", "mm_aa"}) used.insert(threads[node].begin(), threads[node].end());
  EXPECT_EQ(used.size(), 1u) << json;
}

TEST(ParallelExecutor, ConcurrentRunsOfOneSessionStayCorrect) {
  auto runtime = CpuRuntime();
  auto session = MakeSession(runtime.get(), kThreeBranches, true);
  constexpr int kThreads = 4;
  std::vector<Tensor> as, bs;
  std::vector<std::vector<double>> wants;
  for (int t = 0; t < kThreads; ++t) {
    as.push_back(Random(kN, kN, 10 + t));
    bs.push_back(Random(kN, kN, 20 + t));
    wants.push_back(Expected(as[t], bs[t]));
  }
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int run = 0; run < 10; ++run) {
        auto r = session->Run({{"a", as[t]}, {"b", bs[t]}}, {"out"});
        if (!r.ok()) {
          failures[t] = std::string(r.status().message());
          return;
        }
        for (size_t i = 0; i < wants[t].size(); ++i) {
          if (std::abs((*r)[0].data<float>()[i] - wants[t][i]) > 1e-3) {
            failures[t] = "wrong value at element " + std::to_string(i);
            return;
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

TEST(ParallelExecutor, AnErrorInOneBranchFailsTheRunAndTheNextRunWorks) {
  auto runtime = CpuRuntime();
  auto session = MakeSession(runtime.get(), kThreeBranches, true);
  // b is 96x95: mm_ab works, mm_ba and mm_aa... mm_ba = b*a fails (95 != 96).
  auto bad = session->Run({{"a", Random(kN, kN, 3)}, {"b", Random(kN, kN - 1, 4)}}, {"out"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
  EXPECT_TRUE(::plexus::testing::Contains(bad.status(), "MatMul")) << bad.status();
  Tensor a = Random(kN, kN, 5), b = Random(kN, kN, 6);
  auto good = session->Run({{"a", a}, {"b", b}}, {"out"});
  ASSERT_TRUE(good.ok()) << good.status();
  ExpectClose((*good)[0], Expected(a, b));
}

// Two large int32 additions side by side, one on the test plugin's device,
// joined on the cpu: the join waits for the other device's event.
TEST(ParallelExecutor, BranchesOnTwoDevicesJoinThroughEvents) {
  RuntimeOptions options;
  options.discover_plugins = false;
  options.plugin_paths = {PX_CPU_PLUGIN_PATH, TestPluginPath("good")};
  auto runtime = Runtime::Create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  const char* text = R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "shape" value { shape { dim { size: 256 } dim { size: 256 } } } } }
    node { name: "y" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "shape" value { shape { dim { size: 256 } dim { size: 256 } } } } }
    node { name: "on_test" op: "AddV2" input: "x" input: "y" device: "/device:TESTDEV:0"
           attr { key: "T" value { type: DT_INT32 } } }
    node { name: "on_cpu" op: "AddV2" input: "x" input: "x" device: "/device:CPU:0"
           attr { key: "T" value { type: DT_INT32 } } }
    node { name: "join" op: "AddV2" input: "on_test" input: "on_cpu" device: "/device:CPU:0"
           attr { key: "T" value { type: DT_INT32 } } }
  )pb";
  auto session = MakeSession(runtime->get(), text, true, false, "CPU:0");
  Tensor x = *Tensor::AllocateHost(DataType::kInt32, {256, 256});
  Tensor y = *Tensor::AllocateHost(DataType::kInt32, {256, 256});
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    x.data<int32_t>()[i] = static_cast<int32_t>(i % 1000);
    y.data<int32_t>()[i] = static_cast<int32_t>(7 * i % 333);
  }
  for (int run = 0; run < 3; ++run) {
    auto r = session->Run({{"x", x}, {"y", y}}, {"join"});
    ASSERT_TRUE(r.ok()) << r.status();
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      ASSERT_EQ((*r)[0].data<int32_t>()[i], 3 * x.data<int32_t>()[i] + y.data<int32_t>()[i]) << i;
    }
  }
  bool on_test = false;
  for (const std::string& note : session->placement_notes()) on_test |= note.find("on_test") != std::string::npos;
  EXPECT_TRUE(on_test) << "the test device was not used; optimizer log:\n" << absl::StrJoin(session->optimizer_log(), "\n") << "\nnotes:\n" << absl::StrJoin(session->placement_notes(), "\n");
}

// A device whose memory the host cannot read (the test plugin's
// separate_memory flavour, standing in for a GPU): a value made there and
// read by two cpu nodes crosses once, through one copy item, which the
// placement notes and the trace show; the results are right with the
// serial and the parallel scheduler.
TEST(CopyItems, OneCopyPerValueAndDestinationAtDeviceBoundaries) {
  RuntimeOptions options;
  options.discover_plugins = false;
  options.plugin_paths = {PX_CPU_PLUGIN_PATH, TestPluginPath("separate_memory")};
  auto runtime = Runtime::Create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  const char* text = R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "shape" value { shape { dim { size: 256 } dim { size: 256 } } } } }
    node { name: "y" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "shape" value { shape { dim { size: 256 } dim { size: 256 } } } } }
    node { name: "on_test" op: "AddV2" input: "x" input: "y" device: "/device:TESTDEV:0"
           attr { key: "T" value { type: DT_INT32 } } }
    node { name: "b" op: "AddV2" input: "on_test" input: "x" attr { key: "T" value { type: DT_INT32 } } }
    node { name: "c" op: "Mul" input: "on_test" input: "y" attr { key: "T" value { type: DT_INT32 } } }
    node { name: "d" op: "Sub" input: "b" input: "c" attr { key: "T" value { type: DT_INT32 } } }
  )pb";
  Tensor x = *Tensor::AllocateHost(DataType::kInt32, {256, 256});
  Tensor y = *Tensor::AllocateHost(DataType::kInt32, {256, 256});
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    x.data<int32_t>()[i] = static_cast<int32_t>(i % 100);
    y.data<int32_t>()[i] = static_cast<int32_t>(3 * i % 7);
  }
  for (bool parallel : {false, true}) {
    auto session = MakeSession(runtime->get(), text, parallel, /*trace=*/true, "CPU:0");
    for (int run = 0; run < 2; ++run) {
      auto r = session->Run({{"x", x}, {"y", y}}, {"d"});
      ASSERT_TRUE(r.ok()) << r.status();
      for (int64_t i = 0; i < x.num_elements(); ++i) {
        const int32_t a = x.data<int32_t>()[i] + y.data<int32_t>()[i];
        ASSERT_EQ((*r)[0].data<int32_t>()[i], (a + x.data<int32_t>()[i]) - a * y.data<int32_t>()[i]) << i;
      }
    }
    int copies = 0;
    for (const std::string& note : session->placement_notes()) {
      if (note.rfind("copy of 'on_test:0' from TESTDEV:0 to CPU:0", 0) == 0) ++copies;
    }
    EXPECT_EQ(copies, 1) << absl::StrJoin(session->placement_notes(), "\n");
    std::string path = ::testing::TempDir() + "/plexus_copy_trace.json";
    ASSERT_TRUE(session->WriteTrace(path).ok());
    std::ifstream f(path);
    std::string json((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_NE(json.find("\"name\": \"on_test:0/copy_to_CPU:0\""), std::string::npos) << json.substr(0, 2000);
  }
}

// Steady state: a run of a static-shaped graph allocates nothing per node
// (its tensors are planned, its scratch reused), so a chain of 400 nodes
// makes as many heap allocations per run as a chain of 20.
int64_t AllocationsPerRun(int length) {
  auto runtime = CpuRuntime();
  std::string text = R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: 64 } } } } }
  )pb";
  std::string prev = "x";
  for (int i = 0; i < length; ++i) {
    std::string name = "t" + std::to_string(i);
    text += "node { name: \"" + name + "\" op: \"" + (i % 2 ? "Abs" : "Neg") + "\" input: \"" + prev +
            "\" attr { key: \"T\" value { type: DT_FLOAT } } }\n";
    prev = name;
  }
  auto graph = ImportGraphDefBytes(text, "<chain>", GraphFormat::kText);
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return -1;
  SessionOptions options;
  options.optimizer.enabled = false;  // keep every node
  auto session = Session::Create(runtime.get(), std::shared_ptr<const Graph>(*std::move(graph)), options);
  EXPECT_TRUE(session.ok()) << session.status();
  if (!session.ok()) return -1;
  Tensor x = Random(1, 64, 3);
  x = Tensor(x.dtype(), {64}, x.buffer());
  std::vector<std::pair<std::string, Tensor>> feeds = {{"x", x}};
  std::vector<std::string> fetches = {prev};
  for (int i = 0; i < 3; ++i) EXPECT_TRUE((*session)->Run(feeds, fetches).ok());
  constexpr int kRuns = 5;
  g_allocations = 0;
  g_counting = true;
  for (int i = 0; i < kRuns; ++i) {
    auto r = (*session)->Run(feeds, fetches);
    EXPECT_TRUE(r.ok());
  }
  g_counting = false;
  return g_allocations / kRuns;
}

TEST(Executor, SteadyStateRunsAllocateNothingPerNode) {
  const int64_t short_chain = AllocationsPerRun(20);
  const int64_t long_chain = AllocationsPerRun(400);
  ASSERT_GE(short_chain, 0);
  ASSERT_GE(long_chain, 0);
  EXPECT_EQ(long_chain, short_chain) << "heap allocations per run: " << short_chain << " for 20 nodes, "
                                     << long_chain << " for 400 nodes";
}

// A chain of elementwise ops on 1 MiB tensors with static shapes: with the
// memory plan two arena slots serve the whole chain; without it every
// intermediate stays allocated until the run ends.
std::string Chain(int length) {
  std::string text = R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: 256 } dim { size: 1024 } } } } }
  )pb";
  std::string prev = "x";
  for (int i = 0; i < length; ++i) {
    std::string name = "t" + std::to_string(i);
    text += "node { name: \"" + name + "\" op: \"" + (i % 2 ? "Abs" : "Neg") + "\" input: \"" + prev +
            "\" attr { key: \"T\" value { type: DT_FLOAT } } }\n";
    prev = name;
  }
  return text;
}

// The result is copied out: a fetched cpu tensor keeps the device (and its
// plugin) alive, and the next runtime needs the plugin unloaded.
uint64_t PeakBytesOfOneRun(bool plan, const Tensor& x, std::vector<float>* result) {
  auto runtime = CpuRuntime();  // fresh, so the peak is this run's
  auto graph = ImportGraphDefBytes(Chain(12), "<chain>", GraphFormat::kText);
  EXPECT_TRUE(graph.ok()) << graph.status();
  SessionOptions options;
  options.optimizer.enabled = false;  // keep the chain unfused
  options.memory_plan = plan;
  auto session = Session::Create(runtime.get(), std::shared_ptr<const Graph>(*std::move(graph)), options);
  EXPECT_TRUE(session.ok()) << session.status();
  auto r = (*session)->Run({{"x", x}}, {"t11"});
  EXPECT_TRUE(r.ok()) << r.status();
  if (r.ok()) result->assign((*r)[0].data<float>(), (*r)[0].data<float>() + (*r)[0].num_elements());
  return runtime->DefaultDevice()->memory_stats().peak_bytes_in_use;
}

TEST(MemoryPlan, ReusesArenaSlotsAlongAChain) {
  Tensor x = Random(256, 1024, 7);
  std::vector<float> planned, unplanned;
  const uint64_t with_plan = PeakBytesOfOneRun(true, x, &planned);
  const uint64_t without_plan = PeakBytesOfOneRun(false, x, &unplanned);
  const uint64_t mib = 1 << 20;
  // Planned: a 2 MiB arena (two tensors alive at a time) and the fetched
  // output. Unplanned: the eleven intermediates and the output.
  EXPECT_LE(with_plan, 3 * mib + mib / 4) << "peak with the plan";
  EXPECT_GE(without_plan, 12 * mib) << "peak without the plan";
  ASSERT_EQ(static_cast<int64_t>(planned.size()), x.num_elements());
  ASSERT_EQ(static_cast<int64_t>(unplanned.size()), x.num_elements());
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    ASSERT_EQ(planned[i], std::fabs(x.data<float>()[i])) << i;
    ASSERT_EQ(unplanned[i], std::fabs(x.data<float>()[i])) << i;
  }
}

// Fan-out, a fetched intermediate that is read again later, and concurrent
// runs (each run has its own arena).
TEST(MemoryPlan, KeepsValuesThatAreStillReadOrFetched) {
  auto runtime = CpuRuntime();
  const char* text = R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: 64 } dim { size: 64 } } } } }
    node { name: "a" op: "Neg" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "b" op: "Abs" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "c" op: "Mul" input: "a" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "d" op: "Square" input: "c" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "e" op: "AddV2" input: "d" input: "a" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "f" op: "Identity" input: "e" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "g" op: "Sub" input: "f" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
  )pb";
  auto graph = ImportGraphDefBytes(text, "<plan>", GraphFormat::kText);
  ASSERT_TRUE(graph.ok()) << graph.status();
  SessionOptions options;
  options.optimizer.enabled = false;
  auto session = Session::Create(runtime.get(), std::shared_ptr<const Graph>(*std::move(graph)), options);
  ASSERT_TRUE(session.ok()) << session.status();
  auto check = [&](uint32_t seed) -> std::string {
    Tensor x = Random(64, 64, seed);
    auto r = (*session)->Run({{"x", x}}, {"a", "g"});
    if (!r.ok()) return std::string(r.status().message());
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      float a = -x.data<float>()[i], b = std::fabs(a), c = a * b, e = c * c + a;
      if ((*r)[0].data<float>()[i] != a) return "a differs at " + std::to_string(i);
      if (std::fabs((*r)[1].data<float>()[i] - (e - b)) > 1e-6f) return "g differs at " + std::to_string(i);
    }
    return "";
  };
  EXPECT_EQ(check(1), "");
  EXPECT_EQ(check(2), "");
  std::vector<std::string> failures(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int run = 0; run < 20 && failures[t].empty(); ++run) failures[t] = check(100 + 10 * t + run);
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

// Bound launches (exec/bound_launches.cc): a constant input, a feed read by
// two kernels, a multi-output kernel with one output fetched (allocated per
// run) and one planned, and a kernel reading the fetched one (the usual
// path). Every run, with new feed values each time and with the trace on
// (which takes the usual path throughout), gives the same exact results.
TEST(BoundLaunches, RunsMatchTheUsualPathWithNewFeedsEachRun) {
  auto runtime = CpuRuntime();
  const char* text = R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: 4 } dim { size: 6 } } } } }
    node { name: "two" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }
    node { name: "axis" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 0 } } } }
    node { name: "m" op: "Mul" input: "x" input: "two" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "s" op: "Split" input: "axis" input: "m" attr { key: "T" value { type: DT_FLOAT } }
           attr { key: "num_split" value { i: 2 } } }
    node { name: "a" op: "Neg" input: "s:1" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "b" op: "Sub" input: "a" input: "s" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "q" op: "Square" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
  )pb";
  for (bool trace : {false, true}) {
    auto graph = ImportGraphDefBytes(text, "<bound>", GraphFormat::kText);
    ASSERT_TRUE(graph.ok()) << graph.status();
    SessionOptions options;
    options.optimizer.enabled = false;  // keep every node
    options.trace = trace;
    auto session = Session::Create(runtime.get(), std::shared_ptr<const Graph>(*std::move(graph)), options);
    ASSERT_TRUE(session.ok()) << session.status();
    for (uint32_t seed = 1; seed <= 5; ++seed) {
      Tensor x = Random(4, 6, seed);
      auto r = (*session)->Run({{"x", x}}, {"s:0", "b", "q"});
      ASSERT_TRUE(r.ok()) << r.status();
      const float* in = x.data<float>();
      for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 6; ++j) {
          const float top = in[i * 6 + j] * 2, bottom = in[(i + 2) * 6 + j] * 2;
          ASSERT_EQ((*r)[0].data<float>()[i * 6 + j], top) << "trace " << trace << " seed " << seed;
          ASSERT_EQ((*r)[1].data<float>()[i * 6 + j], -bottom - top) << "trace " << trace << " seed " << seed;
        }
      }
      for (int k = 0; k < 24; ++k) ASSERT_EQ((*r)[2].data<float>()[k], in[k] * in[k]) << k;
    }
  }
}

}  // namespace
}  // namespace plexus

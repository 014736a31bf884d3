// The intra-op thread budget end to end: settings and their resolution,
// the per-thread budget the host service reports (ABI 0.6), and the cpu
// plugin following it: a session with intra_op_threads = 1 runs a
// convolution right and leaves the calling thread's OpenMP team at 1 (the
// plugin's ApplyThreadBudget ran there), another count sets another team,
// and independent branches on the inter-op pool still compute right.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "../../core/src/base/kernel_threads.h"
#include "../../core/src/devices/host_services.h"
#include "gtest/gtest.h"
#include "plexus/plexus.h"
#include "plexus/sdk/kernel.h"
#include "test_util.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace plexus {
namespace {

using ::plexus::testing::CpuRuntime;
using ::plexus::testing::GraphFromText;

constexpr int kH = 9, kW = 11, kC = 6, kF = 10, kK = 3;

// Conv2D (NHWC, 3x3, SAME) of fed x and filter; a second, independent one
// on the same inputs with stride 2, for the parallel scheduler.
const char* kConvs = R"pb(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "f" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "conv" op: "Conv2D" input: "x" input: "f"
         attr { key: "T" value { type: DT_FLOAT } }
         attr { key: "padding" value { s: "SAME" } }
         attr { key: "strides" value { list { i: 1 i: 1 i: 1 i: 1 } } } }
  node { name: "conv2" op: "Conv2D" input: "x" input: "f"
         attr { key: "T" value { type: DT_FLOAT } }
         attr { key: "padding" value { s: "VALID" } }
         attr { key: "strides" value { list { i: 1 i: 2 i: 2 i: 1 } } } }
)pb";

Tensor Random(const Shape& shape, uint32_t seed) {
  Tensor t = *Tensor::AllocateHost(DataType::kFloat, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

// The convolution in double: stride s, SAME (pad (k-1)/2 before) or VALID.
std::vector<double> Conv(const Tensor& x, const Tensor& f, int stride, bool same, int* oh, int* ow) {
  const int pad = same ? (kK - 1) / 2 : 0;
  *oh = same ? (kH + stride - 1) / stride : (kH - kK) / stride + 1;
  *ow = same ? (kW + stride - 1) / stride : (kW - kK) / stride + 1;
  const float* X = x.data<float>();
  const float* F = f.data<float>();
  std::vector<double> out(static_cast<size_t>(*oh) * *ow * kF, 0.0);
  for (int i = 0; i < *oh; ++i) {
    for (int j = 0; j < *ow; ++j) {
      for (int o = 0; o < kF; ++o) {
        double s = 0;
        for (int di = 0; di < kK; ++di) {
          for (int dj = 0; dj < kK; ++dj) {
            const int y = i * stride + di - pad, z = j * stride + dj - pad;
            if (y < 0 || y >= kH || z < 0 || z >= kW) continue;
            for (int c = 0; c < kC; ++c) {
              s += double(X[(y * kW + z) * kC + c]) * F[((di * kK + dj) * kC + c) * kF + o];
            }
          }
        }
        out[(static_cast<size_t>(i) * *ow + j) * kF + o] = s;
      }
    }
  }
  return out;
}

void ExpectConv(const Tensor& got, const Tensor& x, const Tensor& f, int stride, bool same) {
  int oh = 0, ow = 0;
  const std::vector<double> want = Conv(x, f, stride, same, &oh, &ow);
  ASSERT_EQ(got.shape(), (Shape{1, oh, ow, kF}));
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got.data<float>()[i], want[i], 1e-4 + 1e-5 * std::fabs(want[i])) << "at " << i;
  }
}

// This thread's OpenMP team size (the ICV the plugin sets), -1 without
// OpenMP.
int TeamSize() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return -1;
#endif
}

class ThreadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    runtime_ = CpuRuntime();
    graph_ = GraphFromText(kConvs);
    x_ = Random({1, kH, kW, kC}, 1);
    f_ = Random({kK, kK, kC, kF}, 2);
  }

  // Runs `fetches` in a session with these thread settings (kernels on the
  // calling thread unless `parallel`).
  std::vector<Tensor> RunWith(int threads, bool adapt, bool parallel,
                              const std::vector<std::string>& fetches, int* used = nullptr) {
    SessionOptions options;
    options.device = "CPU:0";
    options.intra_op_threads = threads;
    options.adapt_threads_to_load = adapt;
    options.inter_op_parallelism = parallel;
    auto session = Session::Create(runtime_.get(), graph_, options);
    EXPECT_TRUE(session.ok()) << session.status();
    if (!session.ok()) return {};
    auto out = (*session)->Run({{"x", x_}, {"f", f_}}, fetches);
    EXPECT_TRUE(out.ok()) << out.status();
    if (used != nullptr) *used = (*session)->last_execution_info().intra_op_threads;
    return out.ok() ? *out : std::vector<Tensor>{};
  }

  std::unique_ptr<Runtime> runtime_;
  std::shared_ptr<const Graph> graph_;
  Tensor x_, f_;
};

TEST_F(ThreadsTest, OneThreadRunsTheConvolutionOnOneThread) {
  int used = 0;
  std::vector<Tensor> out = RunWith(1, /*adapt=*/true, /*parallel=*/false, {"conv"}, &used);
  ASSERT_EQ(out.size(), 1u);
  ExpectConv(out[0], x_, f_, 1, true);
  EXPECT_EQ(used, 1);
  // The plugin set this thread's team to the budget before the kernel ran.
  if (TeamSize() < 0) GTEST_SKIP() << "the test is built without OpenMP";
  EXPECT_EQ(TeamSize(), 1);
}

TEST_F(ThreadsTest, TheTeamFollowsEachRunsBudget) {
  if (TeamSize() < 0) GTEST_SKIP() << "the test is built without OpenMP";
  if (std::getenv("OMP_NUM_THREADS") != nullptr) {
    GTEST_SKIP() << "OMP_NUM_THREADS is set, and the plugin keeps it as a cap";
  }
  // Without adaptation the count is used as set, even above the CPUs.
  int used = 0;
  std::vector<Tensor> out = RunWith(3, /*adapt=*/false, /*parallel=*/false, {"conv"}, &used);
  ASSERT_EQ(out.size(), 1u);
  ExpectConv(out[0], x_, f_, 1, true);
  EXPECT_EQ(used, 3);
  EXPECT_EQ(TeamSize(), 3);
  // Back to one: the plugin's cached primitive for 3 threads is not reused.
  out = RunWith(1, /*adapt=*/false, /*parallel=*/false, {"conv"});
  ASSERT_EQ(out.size(), 1u);
  ExpectConv(out[0], x_, f_, 1, true);
  EXPECT_EQ(TeamSize(), 1);
}

TEST_F(ThreadsTest, ParallelBranchesShareTheBudgetAndStayRight) {
  for (int threads : {1, 2, 4}) {
    std::vector<Tensor> out = RunWith(threads, /*adapt=*/true, /*parallel=*/true, {"conv", "conv2"});
    ASSERT_EQ(out.size(), 2u);
    ExpectConv(out[0], x_, f_, 1, true);
    ExpectConv(out[1], x_, f_, 2, false);
  }
}

TEST_F(ThreadsTest, NegativeCountIsRefused) {
  SessionOptions options;
  options.intra_op_threads = -1;
  auto session = Session::Create(runtime_.get(), graph_, options);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(::plexus::testing::Contains(session.status(), "intra_op_threads"));
}

TEST(ThreadSettingsTest, ProcessDefault) {
  const int automatic = DefaultIntraOpThreads();
  EXPECT_GE(automatic, 1);
  SetDefaultIntraOpThreads(5);
  EXPECT_EQ(DefaultIntraOpThreadsSetting(), 5);
  EXPECT_EQ(DefaultIntraOpThreads(), 5);
  EXPECT_EQ(ResolveIntraOpThreads(0, /*adapt=*/false), 5);
  EXPECT_EQ(ResolveIntraOpThreads(2, /*adapt=*/false), 2);
  // Adapted: never more than the usable CPUs, never less than 1.
  const int adapted = ResolveIntraOpThreads(0, /*adapt=*/true);
  EXPECT_GE(adapted, 1);
  if (AdaptiveThreadsAllowed()) EXPECT_LE(adapted, UsableCpuCount());
  SetDefaultIntraOpThreads(0);
  EXPECT_EQ(DefaultIntraOpThreads(), automatic);
}

TEST(ThreadSettingsTest, ScopesNestWithoutRaisingTheBudget) {
  EXPECT_EQ(CurrentRunThreads(), 0);
  {
    ScopedKernelThreads outer(4);
    EXPECT_EQ(KernelThreads(), 4);
    {
      ScopedKernelThreads inner(8);  // a nested run asks for more: keeps 4
      EXPECT_EQ(KernelThreads(), 4);
      inner.Set(2);
      EXPECT_EQ(KernelThreads(), 2);
    }
    EXPECT_EQ(KernelThreads(), 4);
  }
  EXPECT_EQ(CurrentRunThreads(), 0);
  EXPECT_GE(KernelThreads(), 1);  // eager: the process default, adapted
}

TEST(ThreadSettingsTest, HostServiceReportsThisThreadsBudget) {
  PX_HostServices services;
  FillHostServices(&services, nullptr);
  ASSERT_TRUE(PX_STRUCT_HAS(&services, PX_HostServices, intra_op_threads));
  ASSERT_NE(services.intra_op_threads, nullptr);
  {
    ScopedKernelThreads scope(3);
    EXPECT_EQ(services.intra_op_threads(), 3);
    EXPECT_EQ(sdk::IntraOpThreads(&services), 3);
  }
  EXPECT_GE(services.intra_op_threads(), 1);
  // A host of ABI 0.5 has a shorter struct: the SDK reports no budget.
  PX_HostServices older = services;
  older.struct_size = offsetof(PX_HostServices, intra_op_threads);
  EXPECT_EQ(sdk::IntraOpThreads(&older), 0);
  older.struct_size = sizeof(PX_HostServices);
  older.intra_op_threads = nullptr;
  EXPECT_EQ(sdk::IntraOpThreads(&older), 0);
}

}  // namespace
}  // namespace plexus

// The CPU budget's pure functions (core/src/base/cpu_budget.h) on fake
// cgroup files and /proc/stat contents: quota parsing, the cgroup walk (v1
// and v2, parents included), the usable count, and the load arithmetic
// between two snapshots with its hysteresis. The live readings only get
// range checks (no timing assertions).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "../../core/src/base/cpu_budget.h"
#include "gtest/gtest.h"

namespace plexus {
namespace {

namespace fs = std::filesystem;

// A fresh folder standing for /sys/fs/cgroup, removed afterwards.
class FakeCgroupRoot {
 public:
  FakeCgroupRoot() {
    root_ = fs::temp_directory_path() /
            ("px_cgroup_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  ~FakeCgroupRoot() { fs::remove_all(root_); }
  void Write(const std::string& relative, const std::string& contents) const {
    const fs::path path = root_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << contents;
  }
  std::string path() const { return root_.string(); }

 private:
  fs::path root_;
};

TEST(CpuBudgetTest, ParsesCgroupV2CpuMax) {
  EXPECT_EQ(ParseCgroupV2CpuMax("max 100000\n"), 0);
  EXPECT_DOUBLE_EQ(ParseCgroupV2CpuMax("150000 100000\n"), 1.5);
  EXPECT_DOUBLE_EQ(ParseCgroupV2CpuMax("50000"), 0.5);  // period defaults to 100000
  EXPECT_DOUBLE_EQ(ParseCgroupV2CpuMax("200000 50000"), 4.0);
  EXPECT_EQ(ParseCgroupV2CpuMax(""), 0);
  EXPECT_EQ(ParseCgroupV2CpuMax("lots 100000"), 0);
  EXPECT_EQ(ParseCgroupV2CpuMax("100000 0"), 0);
  EXPECT_EQ(ParseCgroupV2CpuMax("-5 100000"), 0);
}

TEST(CpuBudgetTest, ParsesCgroupV1Quota) {
  EXPECT_EQ(ParseCgroupV1Quota("-1\n", "100000\n"), 0);
  EXPECT_DOUBLE_EQ(ParseCgroupV1Quota("200000\n", "100000\n"), 2.0);
  EXPECT_DOUBLE_EQ(ParseCgroupV1Quota("25000", "100000"), 0.25);
  EXPECT_EQ(ParseCgroupV1Quota("100000", "0"), 0);
  EXPECT_EQ(ParseCgroupV1Quota("x", "100000"), 0);
}

TEST(CpuBudgetTest, CgroupV2TakesTheTightestQuotaUpTheTree) {
  FakeCgroupRoot root;
  root.Write("a/b/cpu.max", "max 100000\n");
  root.Write("a/cpu.max", "250000 100000\n");
  root.Write("cpu.max", "400000 100000\n");
  EXPECT_DOUBLE_EQ(CgroupCpuQuota("0::/a/b\n", root.path()), 2.5);
  // A tighter limit below wins.
  root.Write("a/b/cpu.max", "120000 100000\n");
  EXPECT_DOUBLE_EQ(CgroupCpuQuota("0::/a/b\n", root.path()), 1.2);
}

TEST(CpuBudgetTest, CgroupV2InANamespacedContainer) {
  // With a cgroup namespace the path is "/" and the mount is the
  // container's own cgroup.
  FakeCgroupRoot root;
  root.Write("cpu.max", "200000 100000\n");
  EXPECT_DOUBLE_EQ(CgroupCpuQuota("0::/\n", root.path()), 2.0);
  // A host path that the container's mount does not show: its parents are
  // tried up to the mount's own file.
  EXPECT_DOUBLE_EQ(CgroupCpuQuota("0::/docker/abc\n", root.path()), 2.0);
}

TEST(CpuBudgetTest, CgroupV1CpuController) {
  FakeCgroupRoot root;
  root.Write("cpu,cpuacct/docker/x/cpu.cfs_quota_us", "150000\n");
  root.Write("cpu,cpuacct/docker/x/cpu.cfs_period_us", "100000\n");
  root.Write("cpu,cpuacct/docker/cpu.cfs_quota_us", "-1\n");
  root.Write("cpu,cpuacct/docker/cpu.cfs_period_us", "100000\n");
  const std::string cgroup =
      "12:memory:/docker/x\n"
      "4:cpu,cpuacct:/docker/x\n"
      "1:name=systemd:/docker/x\n";
  EXPECT_DOUBLE_EQ(CgroupCpuQuota(cgroup, root.path()), 1.5);
  // Only a memory controller: no CPU quota.
  EXPECT_EQ(CgroupCpuQuota("12:memory:/docker/x\n", root.path()), 0);
}

TEST(CpuBudgetTest, NoCgroupFilesMeansNoQuota) {
  FakeCgroupRoot root;
  EXPECT_EQ(CgroupCpuQuota("0::/user.slice/session-1.scope\n", root.path()), 0);
  EXPECT_EQ(CgroupCpuQuota("", root.path()), 0);
  EXPECT_EQ(CgroupCpuQuota("garbage without colons\n", root.path()), 0);
}

TEST(CpuBudgetTest, UsableIsTheAffinityCappedByTheQuotaRoundedUp) {
  EXPECT_EQ(UsableFrom(8, 0), 8);
  EXPECT_EQ(UsableFrom(8, 2.5), 3);
  EXPECT_EQ(UsableFrom(8, 2.0), 2);
  EXPECT_EQ(UsableFrom(2, 4.0), 2);
  EXPECT_EQ(UsableFrom(8, 0.2), 1);
  EXPECT_EQ(UsableFrom(0, 0), 1);
}

constexpr char kProcStat[] =
    "cpu  300 0 100 1000 20 0 0 0 0 0\n"
    "cpu0 100 0 50 300 10 0 0 0 0 0\n"
    "cpu1 150 0 30 400 5 0 0 0 0 0\n"
    "cpu2 50 0 20 300 5 5 5 10 0 0\n"
    "intr 12345\n"
    "ctxt 999\n";

TEST(CpuBudgetTest, ParsesProcStatForTheAffinitySet) {
  // cpu0 + cpu2: totals 460 + 395, idle (idle + iowait) 310 + 305.
  CpuSnapshot s = ParseProcStat(kProcStat, {0, 2});
  EXPECT_EQ(s.cpus, 2);
  EXPECT_EQ(s.total_jiffies, 460u + 395u);
  EXPECT_EQ(s.busy_jiffies, (460u - 310u) + (395u - 305u));
  // Every cpuN line when the set is empty; the "cpu" total line never.
  CpuSnapshot all = ParseProcStat(kProcStat, {});
  EXPECT_EQ(all.cpus, 3);
  EXPECT_EQ(all.total_jiffies, 460u + 585u + 395u);
}

// Two snapshots of a 2-CPU set one second apart at 100 jiffies a second.
CpuSnapshot Snapshot(uint64_t busy, uint64_t total, double own_seconds) {
  CpuSnapshot s;
  s.busy_jiffies = busy;
  s.total_jiffies = total;
  s.own_cpu_ns = static_cast<int64_t>(own_seconds * 1e9);
  s.cpus = 2;
  return s;
}

TEST(CpuBudgetTest, OthersLoadLeavesOutOurOwnTime) {
  const CpuSnapshot a = Snapshot(1000, 10000, 3.0);
  // 150 busy jiffies of 200, 50 of them ours: others kept one core busy.
  EXPECT_DOUBLE_EQ(OthersLoad(a, Snapshot(1150, 10200, 3.5), 100), 1.0);
  // All busy time ours: nobody else.
  EXPECT_DOUBLE_EQ(OthersLoad(a, Snapshot(1150, 10200, 4.5), 100), 0.0);
  // Our time measured a little over the jiffies: clamped at 0.
  EXPECT_DOUBLE_EQ(OthersLoad(a, Snapshot(1150, 10200, 5.0), 100), 0.0);
  // An empty window says nothing.
  EXPECT_DOUBLE_EQ(OthersLoad(a, a, 100), 0.0);
}

TEST(CpuBudgetTest, TakenCoresHasHysteresis) {
  EXPECT_EQ(TakenCores(0.0, 0), 0);
  EXPECT_EQ(TakenCores(0.4, 0), 0);
  EXPECT_EQ(TakenCores(0.5, 0), 1);   // half a core counts as taken
  EXPECT_EQ(TakenCores(0.4, 1), 1);   // and stays taken until clearly free
  EXPECT_EQ(TakenCores(0.31, 1), 1);
  EXPECT_EQ(TakenCores(0.25, 1), 0);
  EXPECT_EQ(TakenCores(1.6, 1), 2);
  EXPECT_EQ(TakenCores(1.4, 2), 2);
  EXPECT_EQ(TakenCores(1.2, 2), 1);
  EXPECT_EQ(TakenCores(-3, 0), 0);
}

TEST(CpuBudgetTest, AvailableFromSnapshots) {
  const CpuSnapshot a = Snapshot(1000, 10000, 3.0);
  int taken = 0;
  // Another process on one core: one CPU left.
  EXPECT_EQ(AvailableFrom(a, Snapshot(1150, 10200, 3.5), 2, 100, &taken), 1);
  EXPECT_EQ(taken, 1);
  // It goes quiet: both again.
  EXPECT_EQ(AvailableFrom(a, Snapshot(1050, 10200, 3.5), 2, 100, &taken), 2);
  EXPECT_EQ(taken, 0);
  // Others on both cores: never fewer than 1.
  EXPECT_EQ(AvailableFrom(a, Snapshot(1200, 10200, 3.0), 2, 100, &taken), 1);
  EXPECT_EQ(taken, 2);
  // A quota below the set: the quota bounds it.
  taken = 0;
  EXPECT_EQ(AvailableFrom(a, Snapshot(1000, 10200, 3.0), 1, 100, &taken), 1);
}

TEST(CpuBudgetTest, LiveReadingsAreInRange) {
  const int usable = UsableCpus();
  EXPECT_GE(usable, 1);
  const unsigned hardware = std::thread::hardware_concurrency();
  if (hardware > 0) EXPECT_LE(usable, static_cast<int>(hardware));
  for (int i = 0; i < 3; ++i) {
    const int available = AvailableCpus(usable);
    EXPECT_GE(available, 1);
    EXPECT_LE(available, usable);
  }
  EXPECT_EQ(AvailableCpus(1), 1);
}

}  // namespace
}  // namespace plexus

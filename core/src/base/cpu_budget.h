// How many CPUs this process may use now: the CPUs its affinity mask allows,
// capped by its cgroup's CPU quota (UsableCpus), less what other processes
// are taking on those CPUs (AvailableCpus). The thread settings
// (plexus/threads.h) size the intra-op budget and the inter-op pool from it.
//
// The live functions read /proc and /sys on Linux (elsewhere they report the
// hardware threads and no load). Everything they compute goes through the
// pure functions below, which take file contents or a root folder so that
// tests can feed fake ones. Internal to the core.
#ifndef PLEXUS_SRC_BASE_CPU_BUDGET_H_
#define PLEXUS_SRC_BASE_CPU_BUDGET_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace plexus {

// min(CPUs in sched_getaffinity, ceil(cgroup CPU quota)), at least 1.
// Cached; looked at again at most once a second.
int UsableCpus();

// `usable` less the cores other processes keep busy on our CPUs, measured
// from /proc/stat over the last ~100 ms window less this process's own CPU
// time, rounded with hysteresis (a core is taken once others use half of
// it). Never more than `usable`, never less than 1. The call is a relaxed
// atomic load; the caller that finds the sample older than ~100 ms takes a
// new one (try-lock: nobody waits for it).
int AvailableCpus(int usable);

// ---- Pure functions (unit-tested with fake contents) -----------------------

// cgroup v2 `cpu.max` ("QUOTA PERIOD", "max PERIOD"): the quota in CPUs,
// 0 for none or unreadable contents.
double ParseCgroupV2CpuMax(std::string_view contents);
// cgroup v1 `cpu.cfs_quota_us` and `cpu.cfs_period_us`: the quota in CPUs,
// 0 for none (-1) or unreadable contents.
double ParseCgroupV1Quota(std::string_view quota_us, std::string_view period_us);

// The tightest CPU quota, in CPUs, of the cgroups that `proc_self_cgroup`
// (the contents of /proc/self/cgroup) puts this process in, and of their
// parents, reading the files under `cgroup_root` (/sys/fs/cgroup): v2's
// "0::/path" line gives ROOT/path/cpu.max; v1's "N:...cpu...:/path" line
// gives ROOT/cpu,cpuacct/path (or ROOT/cpu/path) cpu.cfs_quota_us and
// cpu.cfs_period_us. 0 when no quota applies.
double CgroupCpuQuota(std::string_view proc_self_cgroup, const std::string& cgroup_root);

// min(affinity_cpus, ceil(quota)) (quota 0: no limit), at least 1.
int UsableFrom(int affinity_cpus, double quota);

// A reading of the CPUs in the affinity set: /proc/stat's jiffies summed
// over them (busy = total - idle - iowait) and this process's CPU time.
struct CpuSnapshot {
  uint64_t busy_jiffies = 0;
  uint64_t total_jiffies = 0;
  int64_t own_cpu_ns = 0;  // CLOCK_PROCESS_CPUTIME_ID
  int cpus = 0;            // CPUs whose lines were found
};

// Sums the "cpuN ..." lines of /proc/stat's `contents` for N in `cpus`
// (every "cpuN" line when `cpus` is empty). own_cpu_ns is left 0.
CpuSnapshot ParseProcStat(std::string_view contents, const std::vector<int>& cpus);

// The cores other processes kept busy between two snapshots of the same CPU
// set: their busy jiffies less this process's own CPU time, over the
// window's jiffies per CPU. 0 when the window is empty; at most b.cpus.
double OthersLoad(const CpuSnapshot& a, const CpuSnapshot& b, int64_t jiffies_per_second);

// Whole cores counted as taken by others, with hysteresis around the
// `previous` count: a load of n + 0.5 or more takes n + 1 cores; the count
// goes down only when the load drops below previous - 0.7.
int TakenCores(double others_load, int previous);

// The pure core of AvailableCpus: min(usable, cpus in the set - taken), at
// least 1, with `*taken` updated (in: the previous count, out: the new one).
int AvailableFrom(const CpuSnapshot& a, const CpuSnapshot& b, int usable,
                  int64_t jiffies_per_second, int* taken);

}  // namespace plexus

#endif  // PLEXUS_SRC_BASE_CPU_BUDGET_H_

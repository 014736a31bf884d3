// UsableCpus and AvailableCpus (cpu_budget.h): the live readings of the
// affinity mask, the cgroup quota and /proc/stat, cached in atomics, and the
// pure arithmetic they go through.
#include "base/cpu_budget.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#include <time.h>
#include <unistd.h>
#endif

namespace plexus {
namespace {

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// A decimal integer filling all of `s` (after trimming); false otherwise.
bool ParseInt(std::string_view s, int64_t* out) {
  s = Trim(s);
  if (s.empty() || s.size() > 19) return false;
  bool negative = false;
  if (s.front() == '-') {
    negative = true;
    s.remove_prefix(1);
    if (s.empty()) return false;
  }
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = negative ? -v : v;
  return true;
}

// The parent of a cgroup path ("/a/b" -> "/a", "/a" -> "/"); "" after "/".
std::string ParentPath(const std::string& path) {
  if (path.empty() || path == "/") return "";
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return path.substr(0, slash);
}

std::string Join(const std::string& dir, const std::string& path) {
  if (path.empty() || path == "/") return dir;
  return path.front() == '/' ? dir + path : dir + "/" + path;
}

// The smallest positive quota of `path` and its parents under `mount`, as
// `read` (quota in CPUs, 0 for none) finds it.
template <typename Read>
double TightestUpwards(const std::string& mount, std::string path, Read read) {
  double best = 0;
  for (; !path.empty(); path = ParentPath(path)) {
    const double q = read(Join(mount, path));
    if (q > 0 && (best == 0 || q < best)) best = q;
  }
  return best;
}

double MinPositive(double a, double b) {
  if (a <= 0) return b;
  if (b <= 0) return a;
  return std::min(a, b);
}

int64_t CoarseNowNs() {
#if defined(__linux__)
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
#else
  return 0;
#endif
}

int64_t OwnCpuNs() {
#if defined(__linux__)
  timespec ts;
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
#else
  return 0;
#endif
}

// The CPUs of this process's affinity mask (empty when unknown).
std::vector<int> AffinityCpus() {
  std::vector<int> cpus;
#if defined(__linux__)
  for (int n = 1024; n <= (1 << 16); n *= 2) {
    cpu_set_t* set = CPU_ALLOC(n);
    if (set == nullptr) break;
    const size_t size = CPU_ALLOC_SIZE(n);
    CPU_ZERO_S(size, set);
    if (sched_getaffinity(0, size, set) == 0) {
      for (int c = 0; c < n; ++c) {
        if (CPU_ISSET_S(c, size, set)) cpus.push_back(c);
      }
      CPU_FREE(set);
      break;
    }
    CPU_FREE(set);
    if (errno != EINVAL) break;  // EINVAL: the kernel's mask is larger
  }
#endif
  return cpus;
}

constexpr int64_t kUsableRefreshNs = 1000000000;  // 1 s
constexpr int64_t kSampleNs = 100000000;          // 100 ms: ten jiffies per CPU

// The process's readings. Refreshes happen under `mu`, taken with try_lock
// except for the very first UsableCpus call.
struct Readings {
  std::atomic<int> usable{0};        // 0: not read yet
  std::atomic<int64_t> usable_at{0};
  std::atomic<int> free_cpus{0};     // the set's CPUs less taken; 0: no sample yet
  std::atomic<int64_t> sampled_at{0};

  std::mutex mu;
  std::vector<int> cpus;  // the affinity set
  CpuSnapshot last;
  bool have_last = false;
  int taken = 0;

  // Under mu.
  void RefreshUsable(int64_t now) {
    cpus = AffinityCpus();
    int affinity = static_cast<int>(cpus.size());
    if (affinity == 0) affinity = std::max(1u, std::thread::hardware_concurrency());
    double quota = 0;
#if defined(__linux__)
    std::string cgroup;
    if (ReadFile("/proc/self/cgroup", &cgroup)) quota = CgroupCpuQuota(cgroup, "/sys/fs/cgroup");
#endif
    usable.store(UsableFrom(affinity, quota), std::memory_order_relaxed);
    usable_at.store(now, std::memory_order_relaxed);
  }

  // Under mu.
  void Sample(int64_t now) {
    sampled_at.store(now, std::memory_order_relaxed);
#if defined(__linux__)
    std::string stat;
    if (!ReadFile("/proc/stat", &stat)) return;
    CpuSnapshot snap = ParseProcStat(stat, cpus);
    snap.own_cpu_ns = OwnCpuNs();
    if (snap.cpus == 0) return;
    if (have_last && last.cpus == snap.cpus) {
      static const int64_t jiffies_per_second = [] {
        const long v = sysconf(_SC_CLK_TCK);
        return v > 0 ? static_cast<int64_t>(v) : 100;
      }();
      free_cpus.store(AvailableFrom(last, snap, INT_MAX, jiffies_per_second, &taken),
                      std::memory_order_relaxed);
    }
    last = snap;
    have_last = true;
#endif
  }
};

Readings& TheReadings() {
  static auto* readings = new Readings();  // never destroyed: read from any thread
  return *readings;
}

}  // namespace

double ParseCgroupV2CpuMax(std::string_view contents) {
  contents = Trim(contents);
  const size_t space = contents.find(' ');
  const std::string_view quota = contents.substr(0, space);
  int64_t q = 0, period = 100000;
  if (quota == "max" || !ParseInt(quota, &q) || q <= 0) return 0;
  if (space != std::string_view::npos && (!ParseInt(contents.substr(space + 1), &period) || period <= 0)) {
    return 0;
  }
  return static_cast<double>(q) / static_cast<double>(period);
}

double ParseCgroupV1Quota(std::string_view quota_us, std::string_view period_us) {
  int64_t q = 0, period = 0;
  if (!ParseInt(quota_us, &q) || q <= 0) return 0;  // -1: no quota
  if (!ParseInt(period_us, &period) || period <= 0) return 0;
  return static_cast<double>(q) / static_cast<double>(period);
}

double CgroupCpuQuota(std::string_view proc_self_cgroup, const std::string& cgroup_root) {
  double best = 0;
  std::istringstream lines{std::string(proc_self_cgroup)};
  std::string line;
  while (std::getline(lines, line)) {
    // "hierarchy-ID:controller-list:cgroup-path"
    const size_t a = line.find(':');
    if (a == std::string::npos) continue;
    const size_t b = line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string id = line.substr(0, a);
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const std::string path(Trim(std::string_view(line).substr(b + 1)));
    if (path.empty() || path.front() != '/') continue;
    if (id == "0" && controllers.empty()) {
      best = MinPositive(best, TightestUpwards(cgroup_root, path, [](const std::string& dir) {
                           std::string max;
                           return ReadFile(dir + "/cpu.max", &max) ? ParseCgroupV2CpuMax(max) : 0.0;
                         }));
      continue;
    }
    bool cpu = false;
    std::istringstream names(controllers);
    for (std::string name; std::getline(names, name, ',');) cpu = cpu || name == "cpu";
    if (!cpu) continue;
    auto v1 = [](const std::string& dir) {
      std::string quota, period;
      if (!ReadFile(dir + "/cpu.cfs_quota_us", &quota) || !ReadFile(dir + "/cpu.cfs_period_us", &period)) {
        return 0.0;
      }
      return ParseCgroupV1Quota(quota, period);
    };
    // The controller's mount, named after its controllers.
    for (const char* mount : {"/cpu,cpuacct", "/cpu", "/cpuacct,cpu"}) {
      best = MinPositive(best, TightestUpwards(cgroup_root + mount, path, v1));
    }
  }
  return best;
}

int UsableFrom(int affinity_cpus, double quota) {
  int n = std::max(1, affinity_cpus);
  if (quota > 0) n = std::min(n, static_cast<int>(std::ceil(quota - 1e-9)));
  return std::max(1, n);
}

CpuSnapshot ParseProcStat(std::string_view contents, const std::vector<int>& cpus) {
  CpuSnapshot snap;
  std::istringstream lines{std::string(contents)};
  std::string line;
  while (std::getline(lines, line)) {
    // "cpuN user nice system idle iowait irq softirq steal guest guest_nice";
    // guest time is already counted in user and nice.
    if (line.size() < 4 || line.compare(0, 3, "cpu") != 0 || line[3] < '0' || line[3] > '9') continue;
    std::istringstream fields(line.substr(3));
    int cpu = -1;
    fields >> cpu;
    if (!fields || (!cpus.empty() && !std::binary_search(cpus.begin(), cpus.end(), cpu))) continue;
    uint64_t v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int n = 0;
    while (n < 8 && fields >> v[n]) ++n;
    if (n < 4) continue;
    uint64_t total = 0;
    for (int k = 0; k < n; ++k) total += v[k];
    const uint64_t idle = v[3] + (n > 4 ? v[4] : 0);
    snap.total_jiffies += total;
    snap.busy_jiffies += total - idle;
    ++snap.cpus;
  }
  return snap;
}

double OthersLoad(const CpuSnapshot& a, const CpuSnapshot& b, int64_t jiffies_per_second) {
  if (b.total_jiffies <= a.total_jiffies || b.busy_jiffies < a.busy_jiffies || b.cpus <= 0 ||
      jiffies_per_second <= 0) {
    return 0;
  }
  const double total = static_cast<double>(b.total_jiffies - a.total_jiffies);
  const double busy = static_cast<double>(b.busy_jiffies - a.busy_jiffies);
  const double own = static_cast<double>(std::max<int64_t>(0, b.own_cpu_ns - a.own_cpu_ns)) *
                     static_cast<double>(jiffies_per_second) * 1e-9;
  const double others = (busy - own) / total * b.cpus;
  return std::clamp(others, 0.0, static_cast<double>(b.cpus));
}

int TakenCores(double others_load, int previous) {
  const int rounded = static_cast<int>(std::floor(std::max(0.0, others_load) + 0.5));
  if (rounded >= previous) return rounded;
  return others_load < previous - 0.7 ? rounded : previous;
}

int AvailableFrom(const CpuSnapshot& a, const CpuSnapshot& b, int usable,
                  int64_t jiffies_per_second, int* taken) {
  *taken = std::min(TakenCores(OthersLoad(a, b, jiffies_per_second), *taken), b.cpus);
  return std::max(1, std::min(usable, b.cpus - *taken));
}

int UsableCpus() {
  Readings& r = TheReadings();
  const int usable = r.usable.load(std::memory_order_relaxed);
  if (usable == 0) {
    std::lock_guard<std::mutex> lock(r.mu);  // the first reading: worth waiting for
    if (r.usable.load(std::memory_order_relaxed) == 0) r.RefreshUsable(CoarseNowNs());
    return r.usable.load(std::memory_order_relaxed);
  }
  const int64_t now = CoarseNowNs();
  if (now - r.usable_at.load(std::memory_order_relaxed) >= kUsableRefreshNs) {
    std::unique_lock<std::mutex> lock(r.mu, std::try_to_lock);
    if (lock.owns_lock() && now - r.usable_at.load(std::memory_order_relaxed) >= kUsableRefreshNs) {
      r.RefreshUsable(now);
    }
  }
  return usable;
}

int AvailableCpus(int usable) {
  Readings& r = TheReadings();
  const int64_t now = CoarseNowNs();
  if (now - r.sampled_at.load(std::memory_order_relaxed) >= kSampleNs) {
    std::unique_lock<std::mutex> lock(r.mu, std::try_to_lock);
    if (lock.owns_lock() && now - r.sampled_at.load(std::memory_order_relaxed) >= kSampleNs) {
      if (r.usable.load(std::memory_order_relaxed) == 0) r.RefreshUsable(now);
      r.Sample(now);
    }
  }
  const int free_cpus = r.free_cpus.load(std::memory_order_relaxed);
  if (free_cpus <= 0) return std::max(1, usable);
  return std::max(1, std::min(usable, free_cpus));
}

}  // namespace plexus

// The process-wide thread settings (plexus/threads.h): the default intra-op
// budget, the environment's overrides, and how a run's budget is resolved
// from them and from the CPUs other processes leave free (cpu_budget.h).
#include "plexus/threads.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string_view>

#include "base/cpu_budget.h"

namespace plexus {
namespace {

// A positive integer from the environment, or 0.
int EnvCount(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return 0;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (end == v || *end != '\0' || n <= 0) return 0;
  return static_cast<int>(std::min<long>(n, 1 << 16));
}

std::atomic<int>& DefaultSetting() {
  static std::atomic<int> setting{EnvCount("PLEXUS_INTRA_OP_THREADS")};
  return setting;
}

}  // namespace

void SetDefaultIntraOpThreads(int threads) {
  DefaultSetting().store(threads > 0 ? threads : EnvCount("PLEXUS_INTRA_OP_THREADS"),
                         std::memory_order_relaxed);
}

int DefaultIntraOpThreadsSetting() { return DefaultSetting().load(std::memory_order_relaxed); }

int DefaultIntraOpThreads() {
  const int set = DefaultIntraOpThreadsSetting();
  return set > 0 ? set : UsableCpus();
}

int UsableCpuCount() { return UsableCpus(); }

bool AdaptiveThreadsAllowed() {
  static const bool allowed = [] {
    const char* v = std::getenv("PLEXUS_ADAPTIVE_THREADS");
    return v == nullptr || std::string_view(v) != "0";
  }();
  return allowed;
}

int ResolveIntraOpThreads(int requested, bool adapt) {
  const int threads = requested > 0 ? requested : DefaultIntraOpThreads();
  if (!adapt || !AdaptiveThreadsAllowed()) return std::max(1, threads);
  return std::max(1, std::min(threads, AvailableCpus(UsableCpus())));
}

}  // namespace plexus

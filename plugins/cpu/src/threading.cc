// The cpu plugin's thread budget (threading.h).
#include "threading.h"

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "plexus/sdk/kernel.h"

#if defined(_OPENMP)
#include <dlfcn.h>
#include <omp.h>
#endif

namespace plexus::cpu {
namespace {

// OMP_NUM_THREADS=N (its first number) stays a cap, as users set it before
// the plugin followed a budget; unset: no cap.
int UserCap() {
  static const int cap = [] {
    const char* v = std::getenv("OMP_NUM_THREADS");
    if (v == nullptr) return INT_MAX;
    const long n = std::strtol(v, nullptr, 10);
    return n > 0 ? static_cast<int>(std::min<long>(n, INT_MAX)) : INT_MAX;
  }();
  return cap;
}

}  // namespace

bool CanFollowThreadBudget(const PX_HostServices* host) {
#if defined(_OPENMP)
  return host != nullptr && PX_STRUCT_HAS(host, PX_HostServices, intra_op_threads) &&
         host->intra_op_threads != nullptr;
#else
  (void)host;
  return false;
#endif
}

void ApplyThreadBudget(const PX_HostServices* host) {
#if defined(_OPENMP)
  thread_local int t_last = 0;  // what this thread last set; 0: nothing yet
  const int budget = sdk::IntraOpThreads(host);
  if (budget <= 0) return;
  const int threads = std::min(budget, UserCap());
  if (threads != t_last) {
    omp_set_num_threads(threads);
    t_last = threads;
  }
#else
  (void)host;
#endif
}

void PinOpenMpRuntime() {
#if defined(_OPENMP)
  static const bool pinned = [] {
    // The library that defines omp_get_max_threads, opened again with
    // RTLD_NODELETE: the loader then never unmaps it. RTLD_NOLOAD: it is
    // loaded already (this plugin links it); nothing new is loaded.
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&omp_get_max_threads), &info) == 0 || info.dli_fname == nullptr) {
      return false;
    }
    return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) != nullptr;
  }();
  (void)pinned;
#endif
}

int TeamSize() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

int ThreadIndex() {
#if defined(_OPENMP)
  return omp_get_thread_num();
#else
  return 0;
#endif
}

}  // namespace plexus::cpu

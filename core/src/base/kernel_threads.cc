// The per-thread intra-op budget of the kernel being run (kernel_threads.h).
#include "base/kernel_threads.h"

#include <algorithm>

#include "plexus/threads.h"

namespace plexus {
namespace {
thread_local int t_run_threads = 0;
}  // namespace

int CurrentRunThreads() { return t_run_threads; }

int KernelThreads() {
  if (t_run_threads > 0) return t_run_threads;
  return ResolveIntraOpThreads(0, /*adapt=*/true);  // eager ops
}

ScopedKernelThreads::ScopedKernelThreads(int threads) : previous_(t_run_threads) { Set(threads); }

ScopedKernelThreads::~ScopedKernelThreads() { t_run_threads = previous_; }

void ScopedKernelThreads::Set(int threads) {
  threads = std::max(1, threads);
  t_run_threads = previous_ > 0 ? std::min(previous_, threads) : threads;
}

}  // namespace plexus

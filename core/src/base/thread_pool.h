// The core's inter-op thread pool: independent branches of a graph run on
// it while the calling thread runs its own share. One pool per process,
// created on first use, sized by PLEXUS_INTER_OP_THREADS (default: the CPUs
// this process may use, UsableCpus in cpu_budget.h). Internal to the core.
#ifndef PLEXUS_SRC_THREAD_POOL_H_
#define PLEXUS_SRC_THREAD_POOL_H_

#include <functional>
#include <memory>

namespace plexus {

class InterOpPool {
 public:
  // The process's pool, or null when inter-op parallelism is off
  // (PLEXUS_INTER_OP_THREADS=1, or a single usable CPU).
  static InterOpPool* Get();

  explicit InterOpPool(int num_threads);
  ~InterOpPool();
  InterOpPool(const InterOpPool&) = delete;
  InterOpPool& operator=(const InterOpPool&) = delete;

  int num_threads() const;
  void Schedule(std::function<void()> fn);
  // The calling thread's index in the pool, or -1 for a thread outside it.
  int CurrentThreadId() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace plexus

#endif  // PLEXUS_SRC_THREAD_POOL_H_

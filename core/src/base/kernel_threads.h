// The intra-op budget of the kernel running on this thread: what the host
// service PX_HostServices.intra_op_threads (ABI 0.6) reports to plugins.
// Session::Run sets it for its run; the parallel scheduler sets each pool
// thread's share around the items it runs; outside any run (eager ops) it
// is the process default, adapted to load. Internal to the core.
#ifndef PLEXUS_SRC_BASE_KERNEL_THREADS_H_
#define PLEXUS_SRC_BASE_KERNEL_THREADS_H_

namespace plexus {

// The budget set on this thread, 0 outside any run.
int CurrentRunThreads();

// What a kernel computing on this thread may use now: the budget set on it,
// or the eager budget. At least 1.
int KernelThreads();

// Sets this thread's budget for its scope (and restores the previous one).
// A scope inside another (a run nested in a run: functions, loop bodies)
// never raises the budget: it keeps the smaller of the two.
class ScopedKernelThreads {
 public:
  explicit ScopedKernelThreads(int threads);
  ~ScopedKernelThreads();
  ScopedKernelThreads(const ScopedKernelThreads&) = delete;
  ScopedKernelThreads& operator=(const ScopedKernelThreads&) = delete;

  // Changes the budget set by this scope (the parallel scheduler's share
  // per item).
  void Set(int threads);

 private:
  int previous_;
};

}  // namespace plexus

#endif  // PLEXUS_SRC_BASE_KERNEL_THREADS_H_

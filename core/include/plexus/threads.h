// Thread settings: how many threads a kernel may use (the intra-op budget)
// and how the inter-op pool is sized. docs/architecture.md, "Threads".
//
// - The intra-op budget of a session is SessionOptions::intra_op_threads, or
//   when that is 0 the process default below. Eager ops use the process
//   default. Automatic (0) means the CPUs this process may use: its CPU
//   affinity, capped by its cgroup CPU quota.
// - With adaptation on (SessionOptions::adapt_threads_to_load, on by
//   default), each run uses at most the CPUs that other processes leave
//   free, measured about every 100 ms, so a busy neighbour on one core does
//   not stall every parallel kernel waiting for its time slice.
// - Independent branches of one run that run at the same time on the
//   inter-op pool share the run's budget.
// - Environment: PLEXUS_INTRA_OP_THREADS=N is the process default until
//   SetDefaultIntraOpThreads changes it; PLEXUS_ADAPTIVE_THREADS=0 turns
//   adaptation off for every session and eager op; PLEXUS_INTER_OP_THREADS=N
//   sizes the inter-op pool (default: the usable CPUs; 1 turns it off).
#ifndef PLEXUS_THREADS_H_
#define PLEXUS_THREADS_H_

namespace plexus {

// Sets the process-wide intra-op budget: used by eager ops and by sessions
// whose SessionOptions::intra_op_threads is 0, from their next run on.
// 0 restores the automatic value (PLEXUS_INTRA_OP_THREADS, else the usable
// CPUs); negative values count as 0.
void SetDefaultIntraOpThreads(int threads);

// The process-wide intra-op budget as set (0 when automatic).
int DefaultIntraOpThreadsSetting();

// The process-wide intra-op budget resolved: the setting, or the automatic
// value. At least 1.
int DefaultIntraOpThreads();

// The CPUs this process may use: its affinity mask, capped by its cgroup
// CPU quota (rounded up). At least 1.
int UsableCpuCount();

// False when PLEXUS_ADAPTIVE_THREADS=0 turns adaptation off everywhere.
bool AdaptiveThreadsAllowed();

// The budget a run with these settings gets now: `requested` (0: the
// process default), reduced to the CPUs other processes leave free when
// `adapt` is on and adaptation is allowed. At least 1.
int ResolveIntraOpThreads(int requested, bool adapt);

}  // namespace plexus

#endif  // PLEXUS_THREADS_H_

// One NCCL communicator of the cuda plugin: the object behind a PX_Comm*
// (ABI 0.7, plexus/plugin_api.h PX_CollectivesExt), and its life: creation
// through the host's key-value store and NCCL's non-blocking initialization
// under a deadline, the asynchronous error poll, abort, and the graceful
// destroy. The collectives themselves are in collectives.cc.
#ifndef PLEXUS_PLUGINS_CUDA_NCCL_COMM_H_
#define PLEXUS_PLUGINS_CUDA_NCCL_COMM_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "nccl_loader.h"
#include "plexus/plugin_api.h"

namespace plexus::cuda {

class GpuDevice;

struct NcclComm {
  const PX_HostServices* host = nullptr;
  const nccl::Api* api = nullptr;
  std::string name;
  int32_t nranks = 0;
  int32_t rank = 0;
  int32_t ordinal = 0;      // the CUDA device
  int64_t timeout_ms = -1;  // comm_create's: bounds every later wait too (negative: none)
  void* barrier_word = nullptr;  // one int32 in device memory, for barrier

  // Guards `comm` against comm_abort: every NCCL call on it is made under
  // this lock. Those calls return at once (the communicator is
  // non-blocking), so comm_abort never waits long for it.
  std::mutex mu;
  nccl::Comm comm = nullptr;  // null once aborted
  std::atomic<bool> aborted{false};

  // "all_reduce on NCCL communicator 'name' (rank 0 of 2)".
  std::string Describe(const char* what) const;
};

inline NcclComm* CommOf(PX_Comm* comm) { return reinterpret_cast<NcclComm*>(comm); }
inline PX_Comm* CommHandle(NcclComm* comm) { return reinterpret_cast<PX_Comm*>(comm); }

// comm_create: rank `rank` of `nranks` on `device`. Rank 0 publishes NCCL's
// unique id under "<name>/nccl_id" in `store` (which may be NULL for one
// rank) and every rank announces itself under "<name>/arrived/<rank>", so a
// timeout can name the ranks that never came. DEADLINE_EXCEEDED past
// timeout_ms; UNAVAILABLE without NCCL (saying how to install it) or with
// a dead peer.
PX_Status* CreateComm(GpuDevice& device, const PX_KVStore* store, const char* name, int32_t nranks,
                      int32_t rank, int64_t timeout_ms, NcclComm** out);

// comm_destroy: ncclCommFinalize, waited for (bounded by timeout_ms; past
// it the communicator is aborted), then ncclCommDestroy; frees `comm` in
// every case.
PX_Status* DestroyComm(NcclComm* comm);

// comm_abort: ncclCommAbort, once; later calls are no-ops.
PX_Status* AbortComm(NcclComm* comm);

// comm_get_async_error: NULL while healthy or initializing.
PX_Status* CommAsyncError(NcclComm* comm);

// A status for NCCL's result `r` of `what`: INVALID_ARGUMENT for invalid
// arguments or usage (two ranks on one GPU: "Duplicate GPU detected"),
// UNAVAILABLE for remote and system errors (a dead peer, the network),
// INTERNAL otherwise; the message has ncclGetErrorString and, where NCCL has
// it, ncclGetLastError. Call with comm.mu held or comm.comm unused.
PX_Status* NcclStatus(const NcclComm& comm, const char* what, nccl::Result r);

// ABORTED: "<what> on NCCL communicator ...: the communicator was aborted".
PX_Status* AbortedStatus(const NcclComm& comm, const char* what);

// Runs `enqueue` (a function making NCCL calls on comm.comm and returning
// the first result that is not ncclSuccess, else ncclSuccess) under the
// lock, then waits out ncclInProgress (the non-blocking communicator's "still
// queueing"), bounded by comm.timeout_ms (past it: aborted,
// DEADLINE_EXCEEDED). Returns ABORTED when the communicator is aborted.
template <typename Enqueue>
PX_Status* RunOnComm(NcclComm& comm, const char* what, Enqueue&& enqueue);

// The wait behind RunOnComm, once the lock is released.
PX_Status* WaitInProgress(NcclComm& comm, const char* what);

template <typename Enqueue>
PX_Status* RunOnComm(NcclComm& comm, const char* what, Enqueue&& enqueue) {
  nccl::Result r;
  {
    std::lock_guard<std::mutex> lock(comm.mu);
    if (comm.aborted.load() || comm.comm == nullptr) return AbortedStatus(comm, what);
    r = enqueue(comm.comm);
    if (r != nccl::kSuccess && r != nccl::kInProgress) return NcclStatus(comm, what, r);
  }
  return r == nccl::kInProgress ? WaitInProgress(comm, what) : nullptr;
}

}  // namespace plexus::cuda

#endif  // PLEXUS_PLUGINS_CUDA_NCCL_COMM_H_

// The life of an NCCL communicator (nccl_comm.h).
#include "nccl_comm.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gpu_device.h"
#include "gpu_error.h"

namespace plexus::cuda {
namespace {

using Clock = std::chrono::steady_clock;

// A point in time timeout_ms after the start (negative: never).
class Deadline {
 public:
  explicit Deadline(int64_t timeout_ms) : none_(timeout_ms < 0), at_(Clock::now() + Ms(timeout_ms)) {}
  bool passed() const { return !none_ && Clock::now() >= at_; }
  // What is left, for a store's get: at least 0; -1 when there is no limit.
  int64_t remaining_ms() const {
    if (none_) return -1;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(at_ - Clock::now()).count();
    return std::max<int64_t>(left, 0);
  }

 private:
  static std::chrono::milliseconds Ms(int64_t ms) { return std::chrono::milliseconds(ms < 0 ? 0 : ms); }
  bool none_;
  Clock::time_point at_;
};

// Sleeps a little longer each time, up to 10 ms: the polls below cost
// little, and initialization takes from milliseconds to seconds.
void Backoff(int* round) {
  const int us = std::min(10000, 50 << std::min(*round, 8));
  ++*round;
  std::this_thread::sleep_for(std::chrono::microseconds(us));
}

PX_Status* Error(const PX_HostServices* host, PX_Code code, const std::string& message) {
  return host->status_create(code, message.c_str());
}

// The message of a status the store returned, which is then destroyed.
std::string TakeMessage(const PX_HostServices* host, PX_Status* status, PX_Code* code) {
  *code = host->status_code(status);
  const char* m = host->status_message(status);
  std::string message = m != nullptr ? m : "";
  host->status_destroy(status);
  return message;
}

std::string Key(const NcclComm& c, const std::string& suffix) { return c.name + "/" + suffix; }

// True when `key` is in the store now.
bool StoreHas(const NcclComm& c, const PX_KVStore* store, const std::string& key) {
  void* value = nullptr;
  size_t size = 0;
  PX_Status* s = store->get(store->ctx, key.c_str(), 0, &value, &size);
  if (s != nullptr) {
    c.host->status_destroy(s);
    return false;
  }
  store->free_value(store->ctx, value);
  return true;
}

// "; rank(s) that never reached the store: 1, 3" (or what else may be
// wrong when every rank did).
std::string MissingRanks(const NcclComm& c, const PX_KVStore* store) {
  if (store == nullptr || c.nranks <= 1) return "";
  constexpr int kMaxChecked = 256, kMaxListed = 16;
  std::vector<int> missing;
  const int checked = std::min<int>(c.nranks, kMaxChecked);
  for (int r = 0; r < checked; ++r) {
    if (r != c.rank && !StoreHas(c, store, Key(c, "arrived/" + std::to_string(r)))) missing.push_back(r);
  }
  if (missing.empty()) {
    return checked == c.nranks ? "; every rank reached the store, but NCCL could not connect them "
                                 "(check NCCL_SOCKET_IFNAME and firewalls; NCCL_DEBUG=INFO says more)"
                               : "";
  }
  std::string text = "; rank(s) that never reached the store: ";
  for (size_t i = 0; i < missing.size() && i < kMaxListed; ++i) {
    text += (i ? ", " : "") + std::to_string(missing[i]);
  }
  if (missing.size() > kMaxListed) text += ", ...";
  if (checked < c.nranks) text += " (of the first " + std::to_string(checked) + " checked)";
  return text;
}

PX_Status* TimedOut(const NcclComm& c, const PX_KVStore* store, const std::string& detail) {
  return Error(c.host, PX_CODE_DEADLINE_EXCEEDED,
               "NCCL communicator " + c.name + ": rank " + std::to_string(c.rank) + " of " +
                   std::to_string(c.nranks) + " timed out after " + std::to_string(c.timeout_ms) +
                   " ms waiting for its peers" + detail + MissingRanks(c, store));
}

// The unique id: made by rank 0 and put in the store, read by the others.
PX_Status* ExchangeId(NcclComm& c, const PX_KVStore* store, const Deadline& deadline, nccl::UniqueId* id) {
  const std::string key = Key(c, "nccl_id");
  if (c.rank == 0) {
    const nccl::Result r = c.api->ncclGetUniqueId(id);
    if (r != nccl::kSuccess) return NcclStatus(c, "comm_create: ncclGetUniqueId", r);
    if (store == nullptr) return nullptr;
    return store->put(store->ctx, key.c_str(), id, sizeof(*id));
  }
  void* value = nullptr;
  size_t size = 0;
  PX_Status* s = store->get(store->ctx, key.c_str(), deadline.remaining_ms(), &value, &size);
  if (s != nullptr) {
    PX_Code code;
    std::string message = TakeMessage(c.host, s, &code);
    if (code == PX_CODE_DEADLINE_EXCEEDED) {
      return TimedOut(c, store, " (rank 0 did not publish the NCCL unique id '" + key + "': " + message + ")");
    }
    return Error(c.host, code, c.Describe("comm_create") + ": reading '" + key + "' from the store: " + message);
  }
  const bool ok = size == sizeof(*id);
  if (ok) std::memcpy(id, value, sizeof(*id));
  store->free_value(store->ctx, value);
  if (!ok) {
    return Error(c.host, PX_CODE_INVALID_ARGUMENT,
                 c.Describe("comm_create") + ": the store's '" + key + "' has " + std::to_string(size) +
                     " bytes, not an NCCL unique id (" + std::to_string(sizeof(*id)) +
                     "); is the name used by another communicator?");
  }
  return nullptr;
}

// Abandons a communicator that failed to initialize.
void AbortNow(NcclComm& c) {
  if (c.comm != nullptr) (void)c.api->ncclCommAbort(c.comm);
  c.comm = nullptr;
  c.aborted.store(true);
}

PX_Status* Initialize(NcclComm& c, const PX_KVStore* store, const Deadline& deadline) {
  if (store != nullptr && c.nranks > 1) {
    const std::string key = Key(c, "arrived/" + std::to_string(c.rank));
    PX_SDK_RETURN_IF_ERROR(store->put(store->ctx, key.c_str(), "", 0));
  }
  nccl::UniqueId id{};
  PX_SDK_RETURN_IF_ERROR(ExchangeId(c, store, deadline, &id));
  // NCCL initializes on the current device; barrier reduces one word.
  cudaError_t e = cudaSetDevice(c.ordinal);
  if (e == cudaSuccess) e = cudaMalloc(&c.barrier_word, sizeof(int32_t));
  if (e == cudaSuccess) e = cudaMemset(c.barrier_word, 0, sizeof(int32_t));
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky
    return GpuStatus(c.host, e, "comm_create: cudaSetDevice(ordinal), cudaMalloc(4 bytes)", __FILE__, __LINE__);
  }
  nccl::Config config;
  config.blocking = 0;  // initialization in the background, polled below under the deadline
  nccl::Result r = c.api->ncclCommInitRankConfig(&c.comm, c.nranks, id, c.rank, &config);
  if (r != nccl::kSuccess && r != nccl::kInProgress) {
    PX_Status* s = NcclStatus(c, "comm_create: ncclCommInitRankConfig", r);
    AbortNow(c);
    return s;
  }
  for (int round = 0;; Backoff(&round)) {
    nccl::Result state = nccl::kInProgress;
    r = c.api->ncclCommGetAsyncError(c.comm, &state);
    if (r != nccl::kSuccess) state = r;
    if (state == nccl::kSuccess) return nullptr;
    if (state != nccl::kInProgress) {
      PX_Status* s = NcclStatus(c, "comm_create: initialization", state);
      AbortNow(c);
      return s;
    }
    if (deadline.passed()) {
      AbortNow(c);
      return TimedOut(c, store, " (NCCL's initialization did not complete)");
    }
  }
}

}  // namespace

std::string NcclComm::Describe(const char* what) const {
  return std::string(what) + " on NCCL communicator '" + name + "' (rank " + std::to_string(rank) + " of " +
         std::to_string(nranks) + ")";
}

PX_Status* NcclStatus(const NcclComm& c, const char* what, nccl::Result r) {
  PX_Code code = PX_CODE_INTERNAL;
  if (r == nccl::kInvalidArgument || r == nccl::kInvalidUsage) code = PX_CODE_INVALID_ARGUMENT;
  if (r == nccl::kRemoteError || r == nccl::kSystemError) code = PX_CODE_UNAVAILABLE;
  std::string message = c.Describe(what) + " failed: ";
  const char* text = c.api->ncclGetErrorString(r);
  message += text != nullptr ? text : "unknown NCCL error";
  message += " (ncclResult_t " + std::to_string(r) + ")";
  const char* last = c.api->ncclGetLastError != nullptr ? c.api->ncclGetLastError(c.comm) : nullptr;
  if (last != nullptr && *last != '\0') message += ": " + std::string(last);
  if (r == nccl::kRemoteError || r == nccl::kSystemError) message += " (a peer may have died)";
  return Error(c.host, code, message);
}

PX_Status* AbortedStatus(const NcclComm& c, const char* what) {
  return Error(c.host, PX_CODE_ABORTED, c.Describe(what) + ": the communicator was aborted");
}

PX_Status* WaitInProgress(NcclComm& c, const char* what) {
  const Deadline deadline(c.timeout_ms);
  for (int round = 0;; Backoff(&round)) {
    std::lock_guard<std::mutex> lock(c.mu);
    if (c.aborted.load() || c.comm == nullptr) return AbortedStatus(c, what);
    nccl::Result state = nccl::kInProgress;
    const nccl::Result r = c.api->ncclCommGetAsyncError(c.comm, &state);
    if (r != nccl::kSuccess) return NcclStatus(c, what, r);
    if (state == nccl::kSuccess) return nullptr;
    if (state != nccl::kInProgress) return NcclStatus(c, what, state);
    if (deadline.passed()) {
      AbortNow(c);
      return Error(c.host, PX_CODE_DEADLINE_EXCEEDED,
                   c.Describe(what) + " was still queueing after " + std::to_string(c.timeout_ms) +
                       " ms: the communicator was aborted");
    }
  }
}

PX_Status* CreateComm(GpuDevice& device, const PX_KVStore* store, const char* name, int32_t nranks,
                      int32_t rank, int64_t timeout_ms, NcclComm** out) {
  const PX_HostServices* host = device.host();
  *out = nullptr;
  if (name == nullptr || *name == '\0') {
    return Error(host, PX_CODE_INVALID_ARGUMENT, "comm_create: the communicator needs a name");
  }
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    return Error(host, PX_CODE_INVALID_ARGUMENT,
                 std::string("comm_create of '") + name + "': rank " + std::to_string(rank) + " of " +
                     std::to_string(nranks) + " is not a rank of the group");
  }
  if (nranks > 1 && (store == nullptr || !PX_STRUCT_HAS(store, PX_KVStore, free_value) ||
                     store->put == nullptr || store->get == nullptr || store->free_value == nullptr)) {
    return Error(host, PX_CODE_INVALID_ARGUMENT,
                 std::string("comm_create of '") + name + "': a group of " + std::to_string(nranks) +
                     " ranks needs a key-value store with put, get and free_value");
  }
  std::string why;
  const nccl::Api* api = nccl::Loaded(&why);
  if (api == nullptr) {
    return Error(host, PX_CODE_UNAVAILABLE, std::string("comm_create of NCCL communicator '") + name + "': " + why);
  }
  const Deadline deadline(timeout_ms);
  auto c = std::make_unique<NcclComm>();
  c->host = host;
  c->api = api;
  c->name = name;
  c->nranks = nranks;
  c->rank = rank;
  c->ordinal = device.ordinal();
  c->timeout_ms = timeout_ms;
  PX_Status* s = Initialize(*c, nranks > 1 ? store : nullptr, deadline);
  if (s != nullptr) {
    if (c->barrier_word != nullptr) (void)cudaFree(c->barrier_word);
    return s;
  }
  *out = c.release();
  return nullptr;
}

PX_Status* AbortComm(NcclComm* c) {
  if (c->aborted.exchange(true)) return nullptr;
  std::lock_guard<std::mutex> lock(c->mu);
  PX_Status* s = nullptr;
  if (c->comm != nullptr) {
    const nccl::Result r = c->api->ncclCommAbort(c->comm);
    if (r != nccl::kSuccess && r != nccl::kInProgress) s = NcclStatus(*c, "comm_abort", r);
    c->comm = nullptr;
  }
  return s;
}

PX_Status* CommAsyncError(NcclComm* c) {
  std::lock_guard<std::mutex> lock(c->mu);
  if (c->aborted.load() || c->comm == nullptr) return AbortedStatus(*c, "comm_get_async_error");
  nccl::Result state = nccl::kSuccess;
  const nccl::Result r = c->api->ncclCommGetAsyncError(c->comm, &state);
  if (r != nccl::kSuccess) return NcclStatus(*c, "comm_get_async_error", r);
  if (state == nccl::kSuccess || state == nccl::kInProgress) return nullptr;
  return NcclStatus(*c, "comm_get_async_error", state);
}

PX_Status* DestroyComm(NcclComm* raw) {
  std::unique_ptr<NcclComm> c(raw);
  PX_Status* status = nullptr;
  (void)cudaSetDevice(c->ordinal);
  if (!c->aborted.load() && c->comm != nullptr) {
    // ncclCommFinalize waits (in the background) for the queued work.
    status = RunOnComm(*c, "comm_destroy: ncclCommFinalize",
                       [&](nccl::Comm comm) { return c->api->ncclCommFinalize(comm); });
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->comm != nullptr) {
      const nccl::Result r =
          status == nullptr ? c->api->ncclCommDestroy(c->comm) : c->api->ncclCommAbort(c->comm);
      if (status == nullptr && r != nccl::kSuccess && r != nccl::kInProgress) {
        status = NcclStatus(*c, "comm_destroy: ncclCommDestroy", r);
      }
      c->comm = nullptr;
    }
  }
  if (c->barrier_word != nullptr) (void)cudaFree(c->barrier_word);
  return status;
}

}  // namespace plexus::cuda

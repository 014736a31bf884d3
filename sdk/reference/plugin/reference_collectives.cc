// The reference plugin's collectives (ABI 0.7): every rank puts its data in
// the host's key-value store and reads the others' back. Slow (each byte
// goes through the store server) but short and plain, so it shows a plugin
// author the whole contract (communicators, the bootstrap through the store,
// deadlines, abort, dtypes) and lets the host's device-collective path be
// tested without special hardware. The REF device computes synchronously, so
// a collective has finished when its call returns; the stream is unused.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "plexus/plugin_api.h"
#include "plexus/sdk/plugin_sdk.h"
#include "reference_collectives.h"

namespace plexus::reference {
namespace {

const PX_HostServices* g_host = nullptr;

struct Comm {
  std::string name;
  int32_t nranks = 0;
  int32_t rank = 0;
  int64_t timeout_ms = 0;
  PX_KVStore store{};  // a copy; the store stays valid until destroy or abort
  std::mutex mu;
  int64_t seq = 0;
  std::atomic<bool> aborted{false};
};

Comm* Of(PX_Comm* c) { return reinterpret_cast<Comm*>(c); }

size_t ElementSize(const DLTensor& t) { return (t.dtype.bits * t.dtype.lanes + 7) / 8; }

size_t Elements(const DLTensor& t) {
  size_t n = 1;
  for (int d = 0; d < t.ndim; ++d) n *= static_cast<size_t>(t.shape[d]);
  return n;
}

char* Data(const DLTensor& t) { return static_cast<char*>(t.data) + t.byte_offset; }

PX_Status* Put(Comm& c, const std::string& key, const void* data, size_t n) {
  return c.store.put(c.store.ctx, (c.name + "/" + key).c_str(), data, n);
}

// Rank r's value of `key`, appended to `out`.
PX_Status* Get(Comm& c, const std::string& key, std::vector<char>* out) {
  void* value = nullptr;
  size_t size = 0;
  if (PX_Status* s = c.store.get(c.store.ctx, (c.name + "/" + key).c_str(), c.timeout_ms, &value, &size)) return s;
  out->insert(out->end(), static_cast<char*>(value), static_cast<char*>(value) + size);
  c.store.free_value(c.store.ctx, value);
  return nullptr;
}

template <typename T>
void Combine(T* acc, const T* x, size_t n, int32_t op) {
  for (size_t i = 0; i < n; ++i) {
    switch (op) {
      case PX_REDUCE_PROD: acc[i] = acc[i] * x[i]; break;
      case PX_REDUCE_MIN: acc[i] = x[i] < acc[i] ? x[i] : acc[i]; break;
      case PX_REDUCE_MAX: acc[i] = x[i] > acc[i] ? x[i] : acc[i]; break;
      default: acc[i] = acc[i] + x[i]; break;
    }
  }
}

template <typename T>
void Divide(T* acc, size_t n, int32_t by) {
  for (size_t i = 0; i < n; ++i) acc[i] = static_cast<T>(acc[i] / static_cast<T>(by));
}

// Reduces `n` elements of every rank's block (blocks of `stride` bytes in
// `all`) into `out`, in rank order.
PX_Status* Reduce(const DLTensor& like, const std::vector<char>& all, size_t stride, size_t n, int32_t nranks,
                  int32_t op, char* out) {
  std::memcpy(out, all.data(), n * ElementSize(like));
  auto run = [&](auto zero) {
    using T = decltype(zero);
    for (int32_t r = 1; r < nranks; ++r) Combine(reinterpret_cast<T*>(out), reinterpret_cast<const T*>(all.data() + r * stride), n, op);
    if (op == PX_REDUCE_MEAN) Divide(reinterpret_cast<T*>(out), n, nranks);
  };
  const DLDataType d = like.dtype;
  if (d.code == kDLFloat && d.bits == 32) run(float{});
  else if (d.code == kDLFloat && d.bits == 64) run(double{});
  else if (d.code == kDLInt && d.bits == 32) run(int32_t{});
  else if (d.code == kDLInt && d.bits == 64) run(int64_t{});
  else {
    return px_sdk_error(g_host, PX_CODE_UNIMPLEMENTED,
                        "REF collectives reduce float32, float64, int32 and int64, not dtype code %d bits %d",
                        d.code, d.bits);
  }
  return nullptr;
}

// Publishes this rank's `n` bytes as collective `seq` and gathers every
// rank's, in rank order (each must have the same size, or the call fails).
PX_Status* Exchange(Comm& c, const char* kind, const void* mine, size_t n, std::vector<char>* all) {
  std::lock_guard<std::mutex> lock(c.mu);
  if (c.aborted) return px_sdk_error(g_host, PX_CODE_ABORTED, "REF communicator %s was aborted", c.name.c_str());
  const std::string seq = std::to_string(++c.seq);
  if (PX_Status* s = Put(c, seq + "/" + std::to_string(c.rank), mine, n)) return s;
  for (int32_t r = 0; r < c.nranks; ++r) {
    const size_t before = all->size();
    if (PX_Status* s = Get(c, seq + "/" + std::to_string(r), all)) return s;
    if (all->size() - before != n) {
      return px_sdk_error(g_host, PX_CODE_INVALID_ARGUMENT, "REF %s #%s on %s: rank %d sent %zu bytes, rank %d %zu",
                          kind, seq.c_str(), c.name.c_str(), r, all->size() - before, c.rank, n);
    }
  }
  return nullptr;
}

PX_Status* CommCreate(PX_Device*, const PX_KVStore* store, const char* name, int32_t nranks, int32_t rank,
                      int64_t timeout_ms, PX_Comm** out) {
  if (store == nullptr || name == nullptr || out == nullptr || nranks < 1 || rank < 0 || rank >= nranks) {
    return px_sdk_error(g_host, PX_CODE_INVALID_ARGUMENT, "REF comm_create: bad arguments (rank %d of %d)", rank,
                        nranks);
  }
  auto* c = new (std::nothrow) Comm;
  if (c == nullptr) return px_sdk_error(g_host, PX_CODE_RESOURCE_EXHAUSTED, "out of host memory");
  c->name = name;
  c->nranks = nranks;
  c->rank = rank;
  c->timeout_ms = timeout_ms;
  c->store = *store;
  // Every rank arrives before the communicator is usable.
  std::vector<char> all;
  char one = 1;
  if (PX_Status* s = Exchange(*c, "creation", &one, 1, &all)) {
    delete c;
    return s;
  }
  *out = reinterpret_cast<PX_Comm*>(c);
  return nullptr;
}

PX_Status* CommDestroy(PX_Comm* comm) {
  delete Of(comm);
  return nullptr;
}

PX_Status* CommAbort(PX_Comm* comm) {
  Comm* c = Of(comm);
  c->aborted = true;  // a collective waiting in the store still ends at its deadline
  return nullptr;
}

PX_Status* CommGetAsyncError(PX_Comm* comm) {
  return Of(comm)->aborted ? px_sdk_error(g_host, PX_CODE_ABORTED, "REF communicator %s was aborted",
                                          Of(comm)->name.c_str())
                           : nullptr;
}

PX_Status* AllReduce(PX_Comm* comm, PX_Stream*, const DLTensor* in, DLTensor* out, int32_t op) {
  Comm& c = *Of(comm);
  const size_t n = Elements(*in), bytes = n * ElementSize(*in);
  std::vector<char> all;
  if (PX_Status* s = Exchange(c, "all-reduce", Data(*in), bytes, &all)) return s;
  return n == 0 ? nullptr : Reduce(*in, all, bytes, n, c.nranks, op, Data(*out));
}

PX_Status* AllGather(PX_Comm* comm, PX_Stream*, const DLTensor* in, DLTensor* out) {
  Comm& c = *Of(comm);
  std::vector<char> all;
  if (PX_Status* s = Exchange(c, "all-gather", Data(*in), Elements(*in) * ElementSize(*in), &all)) return s;
  if (!all.empty()) std::memcpy(Data(*out), all.data(), all.size());
  return nullptr;
}

PX_Status* ReduceScatter(PX_Comm* comm, PX_Stream*, const DLTensor* in, DLTensor* out, int32_t op) {
  Comm& c = *Of(comm);
  const size_t bytes = Elements(*in) * ElementSize(*in);
  std::vector<char> all;
  if (PX_Status* s = Exchange(c, "reduce-scatter", Data(*in), bytes, &all)) return s;
  const size_t n = Elements(*out), slice = n * ElementSize(*out);
  if (n == 0) return nullptr;
  // Rank r's slice of every rank's block: gather them, then reduce.
  std::vector<char> mine;
  for (int32_t r = 0; r < c.nranks; ++r) {
    const char* block = all.data() + r * bytes + c.rank * slice;
    mine.insert(mine.end(), block, block + slice);
  }
  return Reduce(*in, mine, slice, n, c.nranks, op, Data(*out));
}

PX_Status* Broadcast(PX_Comm* comm, PX_Stream*, const DLTensor* in, DLTensor* out, int32_t root) {
  Comm& c = *Of(comm);
  const size_t bytes = Elements(*out) * ElementSize(*out);
  std::vector<char> all;
  const void* mine = c.rank == root && in != nullptr ? Data(*in) : Data(*out);
  if (PX_Status* s = Exchange(c, "broadcast", mine, bytes, &all)) return s;
  if (bytes > 0) std::memcpy(Data(*out), all.data() + root * bytes, bytes);
  return nullptr;
}

PX_Status* AllToAll(PX_Comm* comm, PX_Stream*, const DLTensor* in, DLTensor* out) {
  Comm& c = *Of(comm);
  const size_t bytes = Elements(*in) * ElementSize(*in), block = bytes / c.nranks;
  std::vector<char> all;
  if (PX_Status* s = Exchange(c, "all-to-all", Data(*in), bytes, &all)) return s;
  for (int32_t r = 0; r < c.nranks; ++r) {
    if (block > 0) std::memcpy(Data(*out) + r * block, all.data() + r * bytes + c.rank * block, block);
  }
  return nullptr;
}

PX_Status* Barrier(PX_Comm* comm, PX_Stream*) {
  std::vector<char> all;
  char one = 1;
  return Exchange(*Of(comm), "barrier", &one, 1, &all);
}

const PX_CollectivesExt kCollectives = {
    sizeof(PX_CollectivesExt), CommCreate, CommDestroy, CommAbort, CommGetAsyncError, AllReduce, AllGather,
    ReduceScatter,            Broadcast,  AllToAll,    Barrier,
};

}  // namespace

const PX_CollectivesExt* Collectives(const PX_HostServices* host) {
  g_host = host;
  return &kCollectives;
}

}  // namespace plexus::reference

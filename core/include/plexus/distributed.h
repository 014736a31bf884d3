// Running one program on several processes (ranks) that exchange tensors
// through collectives: all-reduce, all-gather, reduce-scatter, broadcast,
// all-to-all and barrier, on Gloo's TCP transport for host tensors.
//
//   plexus::distributed::Options options;           // every field: from the environment
//   PX_RETURN_IF_ERROR(plexus::distributed::Initialize(options));
//   ... run graphs with CollectiveReduceV2 and friends, or eager ops ...
//   plexus::distributed::Shutdown();
//
// The environment (set by `plexus-run`, torchrun, or Open MPI's mpirun):
//   PLEXUS_RANK / RANK / OMPI_COMM_WORLD_RANK / PMI_RANK         this process's rank
//   PLEXUS_WORLD_SIZE / WORLD_SIZE / OMPI_COMM_WORLD_SIZE / PMI_SIZE
//   MASTER_ADDR (default 127.0.0.1), MASTER_PORT (default 29500): the store
//   PLEXUS_STORE_HOSTED=1   the launcher hosts the store; otherwise rank 0 does
//   PLEXUS_RUN_ID           namespace of this run's keys in the store
//   PLEXUS_DIST_TIMEOUT     seconds every collective and wait may take (300)
//   PLEXUS_DIST_DEBUG=1     check that all ranks issue the same collectives
//   PLEXUS_DIST_ADDRESS     the address other ranks reach this one at
//                           (default: the interface that routes to MASTER_ADDR)
//
// Collective ops with a group of one run without any of this. A graph's
// collectives initialize the world from the environment on first use.
#ifndef PLEXUS_DISTRIBUTED_H_
#define PLEXUS_DISTRIBUTED_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace plexus::distributed {

struct Options {
  int rank = -1;                 // -1: from the environment
  int world_size = -1;
  std::string master_addr;       // "": MASTER_ADDR, else 127.0.0.1
  int master_port = -1;          // -1: MASTER_PORT, else 29500
  std::string run_id;            // "": PLEXUS_RUN_ID, else "plexus"
  double timeout_seconds = -1;   // <0: PLEXUS_DIST_TIMEOUT, else 300
  int debug = -1;                // -1: PLEXUS_DIST_DEBUG
  int host_store = -1;           // 1: this rank hosts the store (default: rank 0 unless PLEXUS_STORE_HOSTED=1)
};

// Joins the world: connects to the store, then to every other rank, within
// the timeout (DEADLINE_EXCEEDED naming the ranks that never arrived).
// Calling it again with the same rank and size is a no-op.
absl::Status Initialize(const Options& options);
// Initializes from the environment unless already initialized.
absl::Status InitializeFromEnvironment();
bool IsInitialized();
bool EnvironmentHasWorld();  // whether the environment names a rank and world size
int Rank();        // 0 when not initialized
int WorldSize();   // 1 when not initialized
double TimeoutSeconds();
// Waits for every rank (timeout_seconds <= 0: the world's timeout).
absl::Status Barrier(double timeout_seconds = 0);
// Leaves the world: closes connections (and the store this rank hosts).
void Shutdown();

// A key-value store server for launchers (plexus-run hosts one).
class StoreServer {
 public:
  // Listens on host:port; port 0 picks a free one.
  static absl::StatusOr<std::unique_ptr<StoreServer>> Start(const std::string& host, int port);
  ~StoreServer();
  int port() const;
  void Stop();

 private:
  struct Impl;
  explicit StoreServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A client of a store, for launchers and tests.
class StoreClient {
 public:
  static absl::StatusOr<std::unique_ptr<StoreClient>> Connect(const std::string& host, int port,
                                                              double timeout_seconds);
  ~StoreClient();
  absl::Status Set(const std::string& key, const std::string& value);
  absl::StatusOr<std::string> Get(const std::string& key, double timeout_seconds);
  absl::StatusOr<int64_t> Add(const std::string& key, int64_t delta);
  absl::StatusOr<bool> Check(const std::string& key);

 private:
  struct Impl;
  explicit StoreClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace plexus::distributed

#endif  // PLEXUS_DISTRIBUTED_H_

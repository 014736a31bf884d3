#include "dist/world.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <mutex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "dist/store.h"
#include "plexus/distributed.h"
#include "plexus/status.h"

namespace plexus {
namespace dist {
namespace {

struct World {
  std::mutex mu;
  bool initialized = false;
  int rank = 0;
  int size = 1;
  std::string master_addr;
  int master_port = 0;
  std::string run_id;
  absl::Duration timeout = absl::Seconds(300);
  bool debug = false;
  std::string address;
  int generation = 0;  // of Initialize calls: each gets fresh store keys
  std::unique_ptr<TcpStoreServer> server;
  std::shared_ptr<Store> store;  // prefixed with the run id
  std::shared_ptr<Communicator> world;
  std::map<int64_t, std::shared_ptr<Communicator>> groups;
  std::map<std::pair<int64_t, std::string>, std::shared_ptr<DeviceCommunicator>> device_groups;
};

World& TheWorld() {
  static World* w = new World();
  return *w;
}

const char* FirstEnv(std::initializer_list<const char*> names) {
  for (const char* n : names) {
    const char* v = std::getenv(n);
    if (v != nullptr && *v != '\0') return v;
  }
  return nullptr;
}

bool ParseIntEnv(std::initializer_list<const char*> names, int* out) {
  const char* v = FirstEnv(names);
  return v != nullptr && absl::SimpleAtoi(v, out);
}

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

// The local address that routes to `host`: what other ranks can reach us at.
std::string LocalAddressFor(const std::string& host, int port) {
  if (IsLoopback(host)) return "127.0.0.1";
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0) return "127.0.0.1";
  std::string out = "127.0.0.1";
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  if (fd >= 0 && ::connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
    sockaddr_in local{};
    socklen_t len = sizeof(local);
    char buf[INET_ADDRSTRLEN];
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0 &&
        ::inet_ntop(AF_INET, &local.sin_addr, buf, sizeof(buf)) != nullptr) {
      out = buf;
    }
  }
  if (fd >= 0) ::close(fd);
  ::freeaddrinfo(res);
  return out;
}

CommOptions OptionsFor(World& w, const std::string& name) {
  CommOptions o;
  o.rank = w.rank;
  o.size = w.size;
  o.name = name;
  const std::string prefix = absl::StrCat(name, "#", w.generation);
  o.store = w.store == nullptr ? nullptr : std::make_shared<PrefixStore>(prefix, w.store);
  o.address = w.address;
  o.timeout = w.timeout;
  o.debug = w.debug;
  const std::string host = w.master_addr, run = w.run_id;
  const int port = w.master_port;
  const absl::Duration timeout = w.timeout;
  o.open_store = [host, port, run, prefix, timeout]() -> absl::StatusOr<std::shared_ptr<Store>> {
    PX_ASSIGN_OR_RETURN(std::shared_ptr<TcpStore> s, TcpStore::Connect(host, port, timeout));
    return std::shared_ptr<Store>(std::make_shared<PrefixStore>(prefix, std::make_shared<PrefixStore>(run, s)));
  };
  return o;
}

absl::Status InitializeLocked(World& w, const distributed::Options& in) {
  int rank = in.rank, size = in.world_size;
  if (rank < 0 && !ParseIntEnv({"PLEXUS_RANK", "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK"}, &rank)) rank = -1;
  if (size < 0 && !ParseIntEnv({"PLEXUS_WORLD_SIZE", "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}, &size)) {
    size = -1;
  }
  if (rank < 0 && size < 0) {
    rank = 0;
    size = 1;
  }
  if (rank < 0 || size < 1 || rank >= size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "distributed: rank ", rank, " and world size ", size,
        " do not make a world (set PLEXUS_RANK and PLEXUS_WORLD_SIZE, or start the program with plexus-run)"));
  }
  if (w.initialized) {
    if (w.rank == rank && w.size == size) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat("distributed: already initialized as rank ", w.rank, " of ",
                                                      w.size, "; call shutdown() first"));
  }
  std::string master = in.master_addr;
  if (master.empty()) {
    const char* v = FirstEnv({"MASTER_ADDR"});
    master = v != nullptr ? v : "127.0.0.1";
  }
  int port = in.master_port;
  if (port < 0 && !ParseIntEnv({"MASTER_PORT"}, &port)) port = 29500;
  std::string run = in.run_id;
  if (run.empty()) {
    const char* v = FirstEnv({"PLEXUS_RUN_ID", "TORCHELASTIC_RUN_ID"});
    run = v != nullptr ? v : "plexus";
  }
  double timeout = in.timeout_seconds;
  if (timeout < 0) {
    const char* v = FirstEnv({"PLEXUS_DIST_TIMEOUT"});
    if (v == nullptr || !absl::SimpleAtod(v, &timeout) || timeout <= 0) timeout = 300;
  }
  int debug = in.debug;
  if (debug < 0) {
    const char* v = FirstEnv({"PLEXUS_DIST_DEBUG"});
    debug = v != nullptr && std::string(v) != "0";
  }
  int host_store = in.host_store;
  if (host_store < 0) {
    const char* hosted = FirstEnv({"PLEXUS_STORE_HOSTED"});
    host_store = rank == 0 && !(hosted != nullptr && std::string(hosted) == "1");
  }
  w.rank = rank;
  w.size = size;
  w.master_addr = master;
  w.master_port = port;
  w.run_id = run;
  w.timeout = absl::Seconds(timeout);
  w.debug = debug != 0;
  ++w.generation;
  const char* addr = FirstEnv({"PLEXUS_DIST_ADDRESS"});
  w.address = addr != nullptr ? addr : LocalAddressFor(master, port);
  if (size > 1) {
    if (host_store) {
      auto server = std::make_unique<TcpStoreServer>();
      PX_RETURN_IF_ERROR(server->Start(IsLoopback(master) ? master : "0.0.0.0", port));
      w.server = std::move(server);
    }
    absl::StatusOr<std::shared_ptr<TcpStore>> store = TcpStore::Connect(master, port, w.timeout);
    if (!store.ok()) {
      w.server.reset();
      return absl::Status(store.status().code(), absl::StrCat("distributed: rank ", rank, ": ", store.status().message()));
    }
    w.store = std::make_shared<PrefixStore>(run, *store);
  }
  absl::StatusOr<std::shared_ptr<Communicator>> world = Communicator::Create(OptionsFor(w, "world"));
  if (!world.ok()) {
    w.store.reset();
    w.server.reset();
    return world.status();
  }
  w.world = *world;
  w.initialized = true;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<Communicator>> WorldCommunicator() {
  World& w = TheWorld();
  std::lock_guard<std::mutex> lock(w.mu);
  if (!w.initialized) PX_RETURN_IF_ERROR(InitializeLocked(w, distributed::Options{}));
  return w.world;
}

// Joins the world for a group of `group_size` (from the environment, on a
// collective's first use) and checks the group spans it. Holds w.mu.
absl::Status CheckGroupLocked(World& w, int64_t group_key, int group_size) {
  if (group_size == 1) return absl::OkStatus();
  if (!w.initialized) {
    if (!distributed::EnvironmentHasWorld()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "a collective of group ", group_key, " with ", group_size,
          " members needs a distributed run: start the program with plexus-run (or mpirun, or torchrun), "
          "or call plexus.distribute.init()"));
    }
    PX_RETURN_IF_ERROR(InitializeLocked(w, distributed::Options{}));
  }
  if (group_size != w.size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "group ", group_key, " has ", group_size, " members but the world has ", w.size,
        " ranks; Plexus runs one replica per process, so a group spans every rank (or only this one)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<DeviceCommunicator>> DeviceGroupCommunicator(int64_t group_key, int group_size,
                                                                            Device* device) {
  World& w = TheWorld();
  std::lock_guard<std::mutex> lock(w.mu);
  PX_RETURN_IF_ERROR(CheckGroupLocked(w, group_key, group_size));
  const auto key = std::make_pair(static_cast<int64_t>(group_size == 1 ? -group_key - 1 : group_key), device->name());
  auto it = w.device_groups.find(key);
  if (it != w.device_groups.end()) return it->second;
  const std::string name = absl::StrCat("group ", group_key, " on ", device->name(), "#", w.generation);
  // A group of one needs no store; the plugin still gets one (in-process).
  std::shared_ptr<Store> store = w.store;
  if (store == nullptr || group_size == 1) {
    static auto* local = new std::shared_ptr<TcpStoreServer>(std::make_shared<TcpStoreServer>());
    static absl::Status started = (*local)->Start("127.0.0.1", 0);
    PX_RETURN_IF_ERROR(started);
    PX_ASSIGN_OR_RETURN(std::shared_ptr<TcpStore> s, TcpStore::Connect("127.0.0.1", (*local)->port(), w.timeout));
    store = s;
  }
  PX_ASSIGN_OR_RETURN(std::shared_ptr<DeviceCommunicator> comm,
                      DeviceCommunicator::Create(device->shared_from_this(), store, name, group_size,
                                                 group_size == 1 ? 0 : w.rank, w.timeout));
  w.device_groups[key] = comm;
  return comm;
}

absl::StatusOr<std::shared_ptr<Communicator>> GroupCommunicator(int64_t group_key, int group_size) {
  static const auto* single = new std::shared_ptr<Communicator>(Communicator::Create(CommOptions{}).value());
  if (group_size == 1) return *single;
  World& w = TheWorld();
  std::lock_guard<std::mutex> lock(w.mu);
  PX_RETURN_IF_ERROR(CheckGroupLocked(w, group_key, group_size));
  auto it = w.groups.find(group_key);
  if (it != w.groups.end()) return it->second;
  PX_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> comm,
                      Communicator::Create(OptionsFor(w, absl::StrCat("group ", group_key))));
  w.groups[group_key] = comm;
  return comm;
}

}  // namespace dist

namespace distributed {

absl::Status Initialize(const Options& options) {
  dist::World& w = dist::TheWorld();
  std::lock_guard<std::mutex> lock(w.mu);
  return dist::InitializeLocked(w, options);
}

absl::Status InitializeFromEnvironment() { return Initialize(Options{}); }

bool EnvironmentHasWorld() {
  return dist::FirstEnv({"PLEXUS_WORLD_SIZE", "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) != nullptr;
}

bool IsInitialized() {
  dist::World& w = dist::TheWorld();
  std::lock_guard<std::mutex> lock(w.mu);
  return w.initialized;
}

int Rank() {
  dist::World& w = dist::TheWorld();
  std::lock_guard<std::mutex> lock(w.mu);
  return w.initialized ? w.rank : 0;
}

int WorldSize() {
  dist::World& w = dist::TheWorld();
  std::lock_guard<std::mutex> lock(w.mu);
  return w.initialized ? w.size : 1;
}

double TimeoutSeconds() {
  dist::World& w = dist::TheWorld();
  std::lock_guard<std::mutex> lock(w.mu);
  return absl::ToDoubleSeconds(w.timeout);
}

absl::Status Barrier(double timeout_seconds) {
  PX_ASSIGN_OR_RETURN(std::shared_ptr<dist::Communicator> comm, dist::WorldCommunicator());
  return comm->Barrier(timeout_seconds > 0 ? absl::Seconds(timeout_seconds) : absl::ZeroDuration());
}

void Shutdown() {
  dist::World& w = dist::TheWorld();
  std::unique_ptr<dist::TcpStoreServer> server;
  {
    std::lock_guard<std::mutex> lock(w.mu);
    if (!w.initialized) return;
    w.groups.clear();
    w.device_groups.clear();
    w.world.reset();
    w.store.reset();
    server = std::move(w.server);
    w.initialized = false;
    w.rank = 0;
    w.size = 1;
  }
  if (server) server->Stop();
}

struct StoreServer::Impl {
  dist::TcpStoreServer server;
};
StoreServer::StoreServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StoreServer::~StoreServer() = default;
absl::StatusOr<std::unique_ptr<StoreServer>> StoreServer::Start(const std::string& host, int port) {
  auto impl = std::make_unique<Impl>();
  PX_RETURN_IF_ERROR(impl->server.Start(host, port));
  return std::unique_ptr<StoreServer>(new StoreServer(std::move(impl)));
}
int StoreServer::port() const { return impl_->server.port(); }
void StoreServer::Stop() { impl_->server.Stop(); }

struct StoreClient::Impl {
  std::shared_ptr<dist::TcpStore> store;
};
StoreClient::StoreClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StoreClient::~StoreClient() = default;
absl::StatusOr<std::unique_ptr<StoreClient>> StoreClient::Connect(const std::string& host, int port,
                                                                  double timeout_seconds) {
  auto impl = std::make_unique<Impl>();
  PX_ASSIGN_OR_RETURN(impl->store, dist::TcpStore::Connect(host, port, absl::Seconds(timeout_seconds)));
  return std::unique_ptr<StoreClient>(new StoreClient(std::move(impl)));
}
absl::Status StoreClient::Set(const std::string& key, const std::string& value) {
  return impl_->store->Set(key, value);
}
absl::StatusOr<std::string> StoreClient::Get(const std::string& key, double timeout_seconds) {
  return impl_->store->Get(key, absl::Seconds(timeout_seconds));
}
absl::StatusOr<int64_t> StoreClient::Add(const std::string& key, int64_t delta) {
  return impl_->store->Add(key, delta);
}
absl::StatusOr<bool> StoreClient::Check(const std::string& key) { return impl_->store->Check(key); }

}  // namespace distributed
}  // namespace plexus

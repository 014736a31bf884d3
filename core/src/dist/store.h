// The key-value store ranks meet through: they publish their addresses (and
// NCCL's unique id) there, count arrivals, and leave heartbeats and abort
// marks. Every read that waits has a deadline.
//
//   TcpStoreServer server;                       // in the launcher or rank 0
//   PX_RETURN_IF_ERROR(server.Start("127.0.0.1", 0));
//   auto store = TcpStore::Connect("127.0.0.1", server.port(), absl::Seconds(30));
//   (*store)->Set("addr/0", bytes);
//   auto peer = (*store)->Get("addr/1", absl::Seconds(30));   // waits
//
// The protocol is private to Plexus (a request is an operation, a key, a
// value and an integer; a response a code and a value), so a store server and
// its clients must come from one Plexus version.
#ifndef PLEXUS_CORE_SRC_DIST_STORE_H_
#define PLEXUS_CORE_SRC_DIST_STORE_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace plexus::dist {

class Store {
 public:
  virtual ~Store() = default;
  virtual absl::Status Set(const std::string& key, const std::string& value) = 0;
  // The value of `key`, waiting up to `timeout` for it to be set; else
  // DEADLINE_EXCEEDED naming the key.
  virtual absl::StatusOr<std::string> Get(const std::string& key, absl::Duration timeout) = 0;
  // Adds `delta` to the integer under `key` (0 when unset); the new value.
  virtual absl::StatusOr<int64_t> Add(const std::string& key, int64_t delta) = 0;
  // Whether `key` is set, without waiting.
  virtual absl::StatusOr<bool> Check(const std::string& key) = 0;
  // Where the store is, for messages ("the store at 127.0.0.1:29500").
  virtual std::string Describe() const = 0;
};

// Keys under "<prefix>/" of another store: one namespace per run or group.
class PrefixStore : public Store {
 public:
  PrefixStore(std::string prefix, std::shared_ptr<Store> base)
      : prefix_(std::move(prefix) + "/"), base_(std::move(base)) {}
  absl::Status Set(const std::string& key, const std::string& value) override {
    return base_->Set(prefix_ + key, value);
  }
  absl::StatusOr<std::string> Get(const std::string& key, absl::Duration timeout) override {
    return base_->Get(prefix_ + key, timeout);
  }
  absl::StatusOr<int64_t> Add(const std::string& key, int64_t delta) override {
    return base_->Add(prefix_ + key, delta);
  }
  absl::StatusOr<bool> Check(const std::string& key) override { return base_->Check(prefix_ + key); }
  std::string Describe() const override { return base_->Describe(); }

 private:
  std::string prefix_;
  std::shared_ptr<Store> base_;
};

// A client of a TcpStoreServer: one connection, requests serialized. A lost
// connection is UNAVAILABLE naming the server's address.
class TcpStore : public Store {
 public:
  // Connects, retrying until `timeout` (the server may start later).
  static absl::StatusOr<std::shared_ptr<TcpStore>> Connect(const std::string& host, int port,
                                                           absl::Duration timeout);
  ~TcpStore() override;
  absl::Status Set(const std::string& key, const std::string& value) override;
  absl::StatusOr<std::string> Get(const std::string& key, absl::Duration timeout) override;
  absl::StatusOr<int64_t> Add(const std::string& key, int64_t delta) override;
  absl::StatusOr<bool> Check(const std::string& key) override;
  std::string Describe() const override;

 private:
  TcpStore(int fd, std::string host, int port) : fd_(fd), host_(std::move(host)), port_(port) {}
  // Sends one request and reads its response within `timeout`.
  absl::StatusOr<std::pair<uint8_t, std::string>> Call(uint8_t op, const std::string& key,
                                                       const std::string& value, int64_t arg,
                                                       absl::Duration timeout);
  std::mutex mu_;
  int fd_;
  std::string host_;
  int port_;
};

// The server: a map behind a mutex, one thread per client connection (a
// run has tens of ranks, not thousands).
class TcpStoreServer {
 public:
  TcpStoreServer() = default;
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  // Listens on host:port (port 0 picks a free one; see port()).
  absl::Status Start(const std::string& host, int port);
  int port() const { return port_; }
  // Closes every connection and joins the threads.
  void Stop();

 private:
  void AcceptLoop();
  void Serve(int fd);

  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread accept_thread_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, std::string> values_;
  std::vector<int> client_fds_;
  std::vector<std::thread> client_threads_;
};

}  // namespace plexus::dist

#endif  // PLEXUS_CORE_SRC_DIST_STORE_H_

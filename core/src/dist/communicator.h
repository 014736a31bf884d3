// A communicator: the ranks of one group and the collectives they run
// together on host tensors, over Gloo's TCP transport.
//
// Every rank must issue the same collectives in the same order (the
// executor guarantees it for graphs: dist/collective_order.h). Each
// collective gets the next sequence number, which is also its Gloo tag.
//
// Failures never hang: every collective has a deadline. A dead peer is
// UNAVAILABLE, a peer that does not answer in time DEADLINE_EXCEEDED; either
// poisons the communicator (later collectives fail at once, as TensorFlow's
// "restart to reset") and closes its connections, so that peers blocked on
// this rank fail too instead of waiting out their deadline. The message names
// the collective, its sequence number, and which ranks stopped answering or
// never arrived (from the heartbeats each rank leaves in the store).
#ifndef PLEXUS_CORE_SRC_DIST_COMMUNICATOR_H_
#define PLEXUS_CORE_SRC_DIST_COMMUNICATOR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "dist/store.h"
#include "plexus/tensor.h"

namespace plexus::dist {

enum class ReduceOp { kSum, kProd, kMin, kMax };

// "sum", "prod", "min", "max" (and TensorFlow's "Add", "Mul", "Min", "Max").
absl::StatusOr<ReduceOp> ParseReduceOp(const std::string& name);

struct CommOptions {
  int rank = 0;
  int size = 1;
  std::string name = "world";            // for messages: "communicator 'world'"
  std::shared_ptr<Store> store;          // keys of this communicator only (a PrefixStore)
  // Opens another connection to the store, for the heartbeat thread (a
  // request waiting on the main connection must not delay heartbeats).
  std::function<absl::StatusOr<std::shared_ptr<Store>>()> open_store;
  std::string address = "127.0.0.1";     // the interface Gloo listens on
  absl::Duration timeout = absl::Seconds(300);
  bool debug = false;                    // check every collective's signature across ranks
};

class Communicator {
 public:
  // Connects to every other rank (each rank must call it), within the
  // timeout; DEADLINE_EXCEEDED naming the ranks that never arrived.
  static absl::StatusOr<std::shared_ptr<Communicator>> Create(CommOptions options);
  ~Communicator();

  int rank() const { return options_.rank; }
  int size() const { return options_.size; }
  const std::string& name() const { return options_.name; }
  absl::Duration timeout() const { return options_.timeout; }
  // The number of collectives issued so far.
  int64_t sequence() const { return seq_; }

  // Each takes a host tensor and returns a new host tensor. `timeout` of 0
  // means the communicator's. AllReduce reduces in place when `in` holds
  // the only reference to its buffer.
  absl::StatusOr<Tensor> AllReduce(Tensor in, ReduceOp op, bool mean, absl::Duration timeout = {});
  // Concatenates every rank's input along dimension 0 (sizes may differ).
  absl::StatusOr<Tensor> AllGather(const Tensor& in, absl::Duration timeout = {});
  // Reduces, then rank r keeps the r-th of `size` equal slices along dim 0.
  absl::StatusOr<Tensor> ReduceScatter(const Tensor& in, ReduceOp op, bool mean, absl::Duration timeout = {});
  // Root's tensor on every rank; other ranks pass a tensor of the same
  // dtype and shape (its values are ignored).
  absl::StatusOr<Tensor> Broadcast(const Tensor& in, int root, absl::Duration timeout = {});
  // TensorFlow's BcastSend/BcastRecv: exactly one rank is the sender, and
  // the others learn which from the collective. Receivers pass a tensor of
  // the dtype and shape they expect; a different one is INVALID_ARGUMENT.
  absl::StatusOr<Tensor> BroadcastFromSender(const Tensor& in, bool is_sender, absl::Duration timeout = {});
  // Slice j of dim 0 goes to rank j; the result stacks what each rank sent.
  absl::StatusOr<Tensor> AllToAll(const Tensor& in, absl::Duration timeout = {});
  absl::Status Barrier(absl::Duration timeout = {});

  // Fails every later collective with `why` and closes the connections.
  void Abort(const absl::Status& why);
  // OK, or the error that poisoned the communicator.
  absl::Status health() const;

 private:
  struct Impl;
  explicit Communicator(CommOptions options);
  // Runs `body` (a Gloo call) as collective `kind` with the next sequence
  // number: checks the signature in debug mode, maps exceptions to statuses,
  // poisons on failure.
  absl::Status Run(const char* kind, const Tensor* in, int root, absl::Duration timeout,
                   const std::function<void(uint32_t tag, std::chrono::milliseconds)>& body);
  absl::Status CheckSignature(const char* kind, const Tensor* in, int root, std::chrono::milliseconds ms);
  std::string Diagnose(int64_t seq);
  void Heartbeat();

  absl::StatusOr<Tensor> Copy(const Tensor& in);

  CommOptions options_;
  std::unique_ptr<Impl> impl_;
  std::mutex spare_mu_;
  std::shared_ptr<Buffer> spare_;  // Copy's reusable buffer
  std::mutex run_mu_;  // one collective at a time
  std::atomic<int64_t> seq_{0};
  mutable std::mutex health_mu_;
  absl::Status health_;
  std::atomic<bool> stop_{false};
  std::thread heartbeat_;
};

}  // namespace plexus::dist

#endif  // PLEXUS_CORE_SRC_DIST_COMMUNICATOR_H_

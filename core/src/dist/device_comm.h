// Collectives on a device, through its plugin's collectives extension
// (PX_CollectivesExt, ABI 0.7): the cuda plugin's NCCL, the reference
// plugin's store-based one. The host hands the plugin the run's key-value
// store for its bootstrap and keeps every collective within a deadline: a
// watchdog aborts the plugin's communicator when a collective has not
// finished in time, and the communicator is poisoned after any failure.
//
// Inputs are device tensors; results are new device tensors. All ranks of a
// group must run a collective on the same kind of device with the same
// shapes (all-gather: equal first dimensions).
#ifndef PLEXUS_CORE_SRC_DIST_DEVICE_COMM_H_
#define PLEXUS_CORE_SRC_DIST_DEVICE_COMM_H_

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "dist/communicator.h"
#include "dist/store.h"
#include "plexus/device.h"
#include "plexus/plugin_api.h"
#include "plexus/tensor.h"

namespace plexus::dist {

class DeviceCommunicator {
 public:
  static absl::StatusOr<std::shared_ptr<DeviceCommunicator>> Create(std::shared_ptr<Device> device,
                                                                    std::shared_ptr<Store> store, std::string name,
                                                                    int size, int rank, absl::Duration timeout);
  ~DeviceCommunicator();

  absl::StatusOr<Tensor> AllReduce(const Tensor& in, ReduceOp op, bool mean, absl::Duration timeout);
  absl::StatusOr<Tensor> AllGather(const Tensor& in, absl::Duration timeout);
  absl::StatusOr<Tensor> ReduceScatter(const Tensor& in, ReduceOp op, bool mean, absl::Duration timeout);
  absl::StatusOr<Tensor> AllToAll(const Tensor& in, absl::Duration timeout);

 private:
  DeviceCommunicator() = default;
  // Queues one collective with `enqueue` on a stream of the device, waits
  // for it within the deadline (aborting the communicator past it), and
  // poisons the communicator on failure.
  absl::Status Run(const char* kind, absl::Duration timeout, const std::function<PX_Status*(PX_Stream*)>& enqueue);

  std::shared_ptr<Device> device_;
  const PX_CollectivesExt* ext_ = nullptr;
  PX_Comm* comm_ = nullptr;
  std::shared_ptr<Store> store_;
  PX_KVStore kv_{};
  std::string name_;
  int size_ = 1;
  int rank_ = 0;
  absl::Duration timeout_;
  std::mutex mu_;  // one collective at a time
  int64_t seq_ = 0;
  absl::Status health_;
};

}  // namespace plexus::dist

#endif  // PLEXUS_CORE_SRC_DIST_DEVICE_COMM_H_

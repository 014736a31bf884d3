// The process's place in a distributed run (plexus/distributed.h): its rank,
// the store, and one communicator per collective group.
#ifndef PLEXUS_CORE_SRC_DIST_WORLD_H_
#define PLEXUS_CORE_SRC_DIST_WORLD_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "dist/communicator.h"
#include "dist/device_comm.h"
#include "plexus/device.h"

namespace plexus::dist {

// The communicator of TensorFlow group `group_key` of `group_size` ranks
// (one replica per process: the size must be 1 or the world's). Created on
// first use, which every rank of the group must reach; initializes the world
// from the environment when needed.
absl::StatusOr<std::shared_ptr<Communicator>> GroupCommunicator(int64_t group_key, int group_size);
// The communicator of group `group_key` on `device`, through its plugin's
// collectives extension (dist/device_comm.h); the same rules as above.
absl::StatusOr<std::shared_ptr<DeviceCommunicator>> DeviceGroupCommunicator(int64_t group_key, int group_size,
                                                                            Device* device);
// The world's own communicator (group "world").
absl::StatusOr<std::shared_ptr<Communicator>> WorldCommunicator();

}  // namespace plexus::dist

#endif  // PLEXUS_CORE_SRC_DIST_WORLD_H_

// The streams of one run of an executor (run_streams.h).
#ifndef PLEXUS_SRC_EXEC_RUN_STREAMS_H_
#define PLEXUS_SRC_EXEC_RUN_STREAMS_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "plexus/device.h"
#include "plexus/status.h"

namespace plexus {

// The streams of one run: one per device for each thread slot (slot 0 is
// the thread that called Run; the parallel scheduler gives each pool thread
// a slot, since the ABI serializes calls per stream). On destruction (every
// return path) it waits for them, so no buffer is freed while queued work
// may still read it, and returns them to their devices (a failed one is
// dropped).
class RunStreams {
 public:
  RunStreams(const std::vector<std::shared_ptr<Device>>& devices, int num_slots)
      : devices_(devices), streams_(devices.size() * num_slots, nullptr) {}
  ~RunStreams() {
    for (size_t i = 0; i < streams_.size(); ++i) {
      if (streams_[i] == nullptr) continue;
      Device& device = *devices_[i % devices_.size()];
      // Always wait: work may have been queued after the last SynchronizeAll.
      bool healthy = device.SynchronizeStream(streams_[i]).ok();
      device.ReleaseStream(streams_[i], healthy && !failed_);
    }
  }
  // Slot 0's streams, for every device.
  absl::Status Acquire() {
    for (size_t i = 0; i < devices_.size(); ++i) {
      PX_ASSIGN_OR_RETURN(streams_[i], devices_[i]->AcquireStream());
    }
    return absl::OkStatus();
  }
  PX_Stream* stream(int device_index) const { return streams_[device_index]; }
  // The stream of `device_index` for thread slot `slot`, acquired on first
  // use. Only the thread owning the slot calls this during a run.
  absl::StatusOr<PX_Stream*> StreamFor(int device_index, int slot) {
    PX_Stream*& s = streams_[slot * devices_.size() + device_index];
    if (s == nullptr) {
      PX_ASSIGN_OR_RETURN(s, devices_[device_index]->AcquireStream());
    }
    return s;
  }
  // Waits for every stream; the first sticky error wins.
  absl::Status SynchronizeAll() {
    absl::Status first;
    for (size_t i = 0; i < streams_.size(); ++i) {
      if (streams_[i] == nullptr) continue;
      absl::Status s = devices_[i % devices_.size()]->SynchronizeStream(streams_[i]);
      if (!s.ok() && first.ok()) first = s;
    }
    failed_ = failed_ || !first.ok();
    return first;
  }
  // Waits for slot 0's stream of `device`.
  absl::Status Synchronize(const Device* device) {
    for (size_t i = 0; i < devices_.size(); ++i) {
      if (devices_[i].get() == device) return devices_[i]->SynchronizeStream(streams_[i]);
    }
    return absl::OkStatus();
  }

 private:
  const std::vector<std::shared_ptr<Device>>& devices_;
  std::vector<PX_Stream*> streams_;
  bool failed_ = false;
};

}  // namespace plexus

#endif  // PLEXUS_SRC_EXEC_RUN_STREAMS_H_

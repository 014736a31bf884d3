// Runs one pruned, placed graph signature: kernels are created once when the
// executor is built and reused by every Run. Internal to the core.
#ifndef PLEXUS_SRC_EXECUTOR_H_
#define PLEXUS_SRC_EXECUTOR_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "plexus/graph.h"
#include "plexus/runtime.h"

namespace plexus {

class Executor {
 public:
  struct Request {
    std::vector<Endpoint> feeds;
    std::vector<Endpoint> fetches;
    std::vector<const Node*> targets;
  };

  static absl::StatusOr<std::shared_ptr<Executor>> Create(
      const Graph& graph, const Runtime& runtime, std::shared_ptr<Device> device,
      Request request);
  ~Executor();

  // Feed values in the order of request.feeds; returns the fetches in host-
  // readable memory, in the order of request.fetches.
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& feed_values) const;

  const std::vector<std::string>& placement_notes() const { return notes_; }

 private:
  struct Source {
    int item = -1;   // producing item, or -1 when fed
    int output = 0;  // output index of the producer
    int feed = -1;   // feed index when item == -1
  };
  struct Item {
    const Node* node = nullptr;
    Device* device = nullptr;
    int device_index = 0;  // into devices_
    const KernelRegistration* kernel = nullptr;  // null when forwarding
    bool forward = false;  // outputs are the inputs (Identity)
    void* instance = nullptr;
    std::vector<Source> inputs;
    int first_slot = 0;  // index of output 0 in the run's value slots
    // Outputs of a constant node, computed once when the executor is built.
    std::vector<Tensor> constant_outputs;
  };

  Executor() = default;
  absl::Status CheckFeed(int index, const Tensor& value) const;
  // True when `tensor` shares its buffer with a constant computed at build.
  bool IsCachedConstant(const Tensor& tensor) const;
  // Infers output shapes, preallocates what it can, runs the kernel and
  // checks every output was produced.
  absl::Status Compute(const Item& item, const std::vector<Tensor>& inputs,
                       std::vector<Tensor>* outputs, PX_Stream* stream) const;

  Request request_;
  std::vector<Item> items_;
  std::vector<Source> fetch_sources_;
  std::vector<int> slot_uses_;  // consumers (and fetches) of each slot
  int num_slots_ = 0;
  std::vector<std::shared_ptr<Device>> devices_;  // keeps plugins loaded
  std::vector<std::string> notes_;
};

}  // namespace plexus

#endif  // PLEXUS_SRC_EXECUTOR_H_

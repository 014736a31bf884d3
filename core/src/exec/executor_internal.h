// What the executor's files share (executor.cc, plan.cc, execute.cc, the
// schedulers, the memory plan and device graphs): the streams and scratch of
// one run, the event pools and recordings, and small helpers over nodes.
// Internal to core/src/exec/.
#ifndef PLEXUS_SRC_EXEC_EXECUTOR_INTERNAL_H_
#define PLEXUS_SRC_EXEC_EXECUTOR_INTERNAL_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "exec/executor.h"
#include "exec/run_streams.h"
#include "plexus/device.h"
#include "plexus/graph.h"
#include "plexus/kernel_registry.h"

namespace plexus {

class TraceRecorder;

// "node 'x' (op Y) on CPU:0"
std::string Where(const Node& node, const Device& device);
std::string EndpointName(const Endpoint& e);
bool HasStringInput(const Node& node);
// A variable reference read as a value, where the op does not take a ref.
absl::Status Dereference(const Node& node, std::vector<Tensor>& inputs);

// True when a kernel reading from `target` (a device, or null for host
// memory) can read `value` where it lies: no variable reference, no string,
// and in that memory (host memory, which host-accessible devices share).
inline bool ReadableAt(const Tensor& value, const Device* target) {
  return !value.is_ref() && value.dtype() != DataType::kString &&
         (value.device() == target ||
          (value.host_readable() && (target == nullptr || target->host_accessible())));
}

// Where a kernel on `device` reads its input `k`: null (host memory) for a
// host-memory input, else the device.
inline Device* InputTarget(const KernelRegistration& kernel, Device* device, int k) {
  return kernel.InputInHostMemory(k) ? nullptr : device;
}

// True when the kernel can read `value` as its input `k` where it lies.
inline bool ReadsInPlace(const KernelRegistration& kernel, Device* device, int k, const Tensor& value) {
  return ReadableAt(value, InputTarget(kernel, device, k));
}

// Kernel launches bound once per scratch set (bound_launches.cc): for every
// kernel with static shapes whose inputs are constants, planned values or
// feeds, the descriptors it reads, and those of its planned outputs, are
// built when the set is made, since those addresses never move. A run calls
// compute straight from them: per run, only the feeds' descriptors are
// filled in and the outputs outside the plan (fetched ones, say) allocated.
struct Executor::BoundLaunches {
  static constexpr int kConstant = -2;  // launch_of: a constant, nothing to run
  struct Launch {
    // From the item, kept here so that a run reads only the launches.
    const Node* node = nullptr;
    Device* device = nullptr;
    const KernelRegistration* kernel = nullptr;
    void* instance = nullptr;
    int device_index = 0;
    int first_slot = 0;
    size_t first_input = 0;  // into descs; the outputs follow the inputs
    size_t num_inputs = 0;
    size_t num_outputs = 0;
    // The outputs (PX_KernelContext::outputs): planned views, or for the
    // outputs in `allocate`, made per run and moved to their slots.
    std::vector<Tensor> outputs;
    std::vector<int> allocate;
  };
  struct FeedUse {
    int feed;
    size_t desc;     // into descs
    Device* target;  // where the reader reads it (InputTarget)
  };
  std::vector<int> launch_of;  // per item: its launch, kConstant or -1 (empty: nothing bound)
  std::vector<Launch> launches;
  std::vector<DLTensor> descs;
  std::vector<FeedUse> feed_uses;  // by feed
};

// What a run needs besides its streams, kept by the executor between runs:
// the memory plan's arenas (one per device) with, for every planned slot, a
// tensor viewing its place, the serial path's value slots (persistent
// slots, see Executor::slot_persistent_, hold their value from the set's
// making on), use counts, retired list and bound launches. A run takes a set and gives it back once its streams
// have drained, so steady-state runs allocate nothing for these;
// concurrent runs each get their own.
struct Executor::RunScratch {
  std::vector<std::shared_ptr<Buffer>> arenas;  // per device, null when none
  std::vector<Tensor> views;                    // per slot, empty when not planned
  std::vector<Tensor> slots;
  std::vector<int> uses;
  std::vector<Tensor> retired;
  std::vector<Tensor> inputs, outputs;
  BoundLaunches bound;
};

struct Executor::RunState {
  RunState(const std::vector<std::shared_ptr<Device>>& devices, int num_slots = 1)
      : streams(devices, num_slots) {}
  TraceRecorder* trace = nullptr;
  // The feeds, when the caller gave them up (Executor::Run(&&)): the
  // in-order scheduler moves a variant feed into its last reader.
  std::vector<Tensor>* owned_feeds = nullptr;
  // Set by another thread (or a signal handler) to stop the run between
  // nodes with CANCELLED; see RunOptions.
  const std::atomic<bool>* cancel = nullptr;
  // Set once the run's deadline has passed (ScopedRunDeadline, RunOptions::timeout).
  const std::atomic<bool>* deadline = nullptr;
  absl::Time deadline_time = absl::InfiniteFuture();
  absl::Status CheckCancelled() const {
    if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
      return absl::CancelledError("the run was cancelled");
    }
    if (deadline != nullptr && deadline->load(std::memory_order_relaxed)) {
      return absl::DeadlineExceededError("the run passed its deadline and was stopped");
    }
    return absl::OkStatus();
  }
  // Recording a device graph: the streams must not be waited for (the work
  // is recorded, not run).
  bool capturing = false;
  // The memory plan's tensors for this run (null without a plan).
  std::unique_ptr<RunScratch> scratch;
  std::mutex retired_mu;  // for threads of the parallel scheduler
  // Inputs kept alive until the streams have drained: declared before
  // `streams`, so they die after its destructor has waited for the work.
  std::vector<Tensor> retired;
  RunStreams streams;
  // Keeps what device work may still use; drops variants (host values that
  // no stream touches), so that a loop's list is not held here and its next
  // update can happen in place.
  void Retire(std::vector<Tensor>& tensors) {
    for (Tensor& t : tensors) {
      if (t.buffer() != nullptr && t.dtype() != DataType::kVariant) retired.push_back(std::move(t));
    }
    tensors.clear();
  }
};

struct Executor::EventPool {
  std::mutex mu;
  std::vector<PX_Event*> free;
};

// A recorded device graph and everything its work reads and writes: the
// feed buffers, the memory plan's arenas (a scratch set kept out of the
// free list) and every tensor the recording run made (kept, so their
// addresses stay valid). The graph dies first.
struct Executor::Recording {
  std::shared_ptr<Device> device;
  PX_Graph* graph = nullptr;
  std::vector<Tensor> feeds;
  std::unique_ptr<RunScratch> scratch;
  std::vector<Tensor> kept;
  std::vector<Tensor> fetched;
  ~Recording() {
    if (graph != nullptr) device->DestroyGraph(graph);
  }
};

// The span of one item on the timeline, recorded when it goes out of scope
// (whichever way the item's run returns).
class Executor::TraceSpan {
 public:
  TraceSpan(TraceRecorder* trace, const Item& item)
      : trace_(trace), item_(item), start_(trace ? trace->Now() : 0) {}
  ~TraceSpan() {
    if (trace_ == nullptr) return;
    const bool on_device = (item_.kind == Kind::kKernel || item_.kind == Kind::kCopy) && item_.device != nullptr;
    trace_->Add({item_.node->name, item_.node->op, on_device ? item_.device->name() : "core", start_,
                 trace_->Now() - start_, TraceThreadId()});
  }

 private:
  TraceRecorder* trace_;
  const Item& item_;
  int64_t start_;
};

}  // namespace plexus

#endif  // PLEXUS_SRC_EXEC_EXECUTOR_INTERNAL_H_

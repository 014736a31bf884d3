// Runs one pruned, placed graph signature: kernels are created once when the
// executor is built and reused by every Run. Graphs without TensorFlow 1
// control flow run in a fixed topological order; graphs with it run through
// a dataflow scheduler with dead tensors, loop frames and iterations.
// Internal to the core.
#ifndef PLEXUS_SRC_EXECUTOR_H_
#define PLEXUS_SRC_EXECUTOR_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "devices/host_ops.h"
#include "plexus/graph.h"
#include "plexus/placement.h"
#include "plexus/runtime.h"

namespace plexus {

class SessionState;
class TraceRecorder;


struct ExecutorOptions {
  // Run independent expensive branches on the inter-op thread pool
  // (thread_pool.h) when the graph has any.
  bool inter_op_parallelism = true;
  // Place the intermediate tensors of graphs with static shapes at offsets
  // planned once in one arena per device per run (see MemoryPlan).
  bool memory_plan = true;
  // Copy each fetched tensor to host memory (false: leave it in the memory
  // of the device that made it; see SessionOptions::fetch_to_host).
  bool fetch_to_host = true;
  // Record the run's device work once into a graph (stream capture, ABI
  // 0.5) and replay it on later runs; see Executor::device_graph().
  bool device_graphs = false;
};

class Executor {
 public:
  struct Request {
    std::vector<Endpoint> feeds;
    std::vector<Endpoint> fetches;
    std::vector<const Node*> targets;
  };

  using Options = ExecutorOptions;

  static absl::StatusOr<std::shared_ptr<Executor>> Create(
      const Graph& graph, const Runtime& runtime, std::shared_ptr<Device> device,
      Request request, SessionState* state, Options options = {});
  ~Executor();

  // Feed values in the order of request.feeds; returns the fetches in host-
  // readable memory (or, without Options::fetch_to_host, where they were
  // made), in the order of request.fetches.
  // With `trace`, every node run is recorded on the timeline.
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& feed_values,
                                          TraceRecorder* trace = nullptr) const;
  // The same, taking the feeds: a variant fed here moves into its last
  // reader, which may then change it in place (a While body's list; see
  // devices/variant.h).
  absl::StatusOr<std::vector<Tensor>> Run(std::vector<Tensor>&& feed_values,
                                          TraceRecorder* trace = nullptr) const;

  const std::vector<std::string>& placement_notes() const { return notes_; }
  // Where every node runs and the copies between devices (plexus/placement.h).
  const PlacementReport& placement() const { return placement_; }
  // True when runs spread independent branches over the inter-op pool.
  bool parallel() const { return parallel_; }

  // The static memory plan: kernel outputs whose shapes are known when the
  // executor is built, whose readers all run on the producing device and
  // which are not fetched, get an offset in an arena that each run takes
  // from the device in one allocation. Offsets are assigned greedily by
  // size so that tensors alive at the same time never overlap.
  struct MemoryPlan {
    int64_t tensors = 0;       // planned tensors
    int64_t tensor_bytes = 0;  // their sizes added up
    int64_t arena_bytes = 0;   // the arenas added up
  };
  const MemoryPlan& memory_plan() const { return plan_; }
  int64_t num_copy_items() const { return static_cast<int64_t>(copy_nodes_.size()); }
  // The copy items that run at every run (those of constants ran once, at build).
  int64_t num_copies_per_run() const;

  // Device graphs (Options::device_graphs): a graph whose every kernel runs
  // on one device that can capture streams, with no host ops, no copies
  // between devices, no control flow and host-memory inputs only from
  // constants, runs once normally (warming caches), is recorded on its
  // second run and replayed on later runs with the same feed shapes: feeds
  // are copied into buffers the recording reads and the fetches are read
  // from the buffers it writes. A run that finds the graph busy (a
  // concurrent run) or other feed shapes runs normally. When recording
  // fails (a kernel waits for the device, say), runs stay normal.
  struct DeviceGraphInfo {
    bool eligible = false;  // the graph qualifies (see above)
    bool recorded = false;  // a recording exists
    int64_t replays = 0;    // runs that replayed it
    std::string note;       // why not, when not eligible or recording failed
  };
  DeviceGraphInfo device_graph() const;

 private:
  enum class Kind {
    kKernel,   // a plugin kernel
    kForward,  // outputs are the inputs (Identity, LoopCond, ...)
    kView,     // a metadata op run by the core (exec/views.h): a view, or shape values
    kHost,     // a host op run by the core
    kSwitch,
    kMerge,
    kEnter,
    kExit,
    kNextIteration,
    kCopy,  // moves a value to `device` (null: host memory), inserted at device boundaries
  };
  struct Source {
    int item = -1;   // producing item, or -1 when fed
    int output = 0;  // output index of the producer
    int feed = -1;   // feed index when item == -1
  };
  struct Edge {
    int item;
    int input;  // -1 for a control edge
  };
  struct Item {
    const Node* node = nullptr;
    Kind kind = Kind::kKernel;
    Device* device = nullptr;
    int device_index = 0;  // into devices_
    const KernelRegistration* kernel = nullptr;
    // The node's output shapes are fully known from the graph and cannot
    // change at run time: no shape function runs per launch.
    bool static_shapes = false;
    // Worth a thread of its own when the parallel scheduler finds it ready
    // beside other work (heavy math or a large output); cheap items run
    // inline on the thread that made them ready.
    bool expensive = false;
    bool string_inputs = false;  // some input is DT_STRING
    HostOpFn host_op = nullptr;
    void* instance = nullptr;
    std::vector<Source> inputs;
    // Per data input, the copy item that brings it to this item's device,
    // or -1 (empty when there is none).
    std::vector<int> input_copies;
    int first_slot = 0;  // index of output 0 in the run's value slots
    // Outputs of a constant node, computed once when the executor is built.
    std::vector<Tensor> constant_outputs;
    // For the dataflow scheduler.
    std::vector<std::vector<Edge>> out_edges;  // per output
    std::vector<int> control_out;
    int pending = 0;          // data inputs that are not fed, plus control inputs
    int num_data_inputs = 0;  // data inputs that are not fed
    int num_back_edges = 0;   // data inputs from NextIteration (Merge)
    std::string frame_name;   // Enter
    bool constant_enter = false;
  };
  struct Builder;   // the steps of Create (plan.cc)
  struct Dataflow;  // one run of the dataflow scheduler (run_dataflow.cc)
  struct RunState;
  struct ParallelRun;
  struct EventPool;
  struct RunScratch;
  struct BoundLaunches;
  struct Recording;
  class TraceSpan;

  Executor() = default;
  absl::Status CheckFeed(int index, const Tensor& value) const;
  // Run's body; `owned` is the feeds themselves when the caller gave them up.
  absl::StatusOr<std::vector<Tensor>> RunFeeds(const std::vector<Tensor>& feed_values,
                                               std::vector<Tensor>* owned, TraceRecorder* trace) const;
  bool IsCachedConstant(const Tensor& tensor) const;
  // Runs a kernel, host or forwarding item on its inputs.
  // Kernels launch on `stream`. With `inputs_ready`, the caller has already
  // waited for inputs made on other streams (the parallel scheduler does,
  // through events); otherwise this waits for the run stream of the
  // producing device.
  absl::Status Execute(const Item& item, std::vector<Tensor>&& inputs,
                       std::vector<Tensor>* outputs, RunState& run, PX_Stream* stream,
                       bool inputs_ready = false) const;
  absl::Status Compute(const Item& item, absl::Span<const Tensor* const> inputs,
                       std::vector<Tensor>* outputs, PX_Stream* stream, const RunState& run) const;
  void PlanMemory();
  // Binds the kernel launches of a new scratch set (bound_launches.cc).
  void BindLaunches(RunScratch& scratch) const;
  // Fills in the feeds' descriptors of the bound launches; false when some
  // feed is not where its reader reads it (the run then launches as usual).
  bool BindFeeds(BoundLaunches& bound, const std::vector<Tensor>& feeds) const;
  // Runs bound launch `launch`, its allocated outputs then moved to `slots`.
  absl::Status LaunchBound(BoundLaunches& bound, int launch, std::vector<Tensor>& slots, PX_Stream* stream,
                           const RunState& run) const;
  absl::StatusOr<std::vector<Tensor>> RunInOrder(const std::vector<Tensor>& feeds,
                                                 RunState& run) const;
  absl::StatusOr<std::vector<Tensor>> RunParallel(const std::vector<Tensor>& feeds,
                                                  RunState& run) const;
  // Events from a per-device pool, for the parallel scheduler.
  absl::StatusOr<PX_Event*> AcquireEvent(int device_index) const;
  void ReleaseEvent(int device_index, PX_Event* event) const;
  absl::StatusOr<std::vector<Tensor>> RunDataflow(const std::vector<Tensor>& feeds,
                                                  RunState& run) const;
  absl::StatusOr<std::vector<Tensor>> CollectFetches(const std::vector<Tensor>& fetched) const;
  // Device graphs: decides eligibility (at build), records, replays.
  void DecideDeviceGraph(const Options& options);
  absl::Status Record(const std::vector<Tensor>& feeds) const;
  // False (and nothing run) when the feeds' shapes differ from the recording's.
  absl::StatusOr<bool> Replay(const std::vector<Tensor>& feeds, std::vector<Tensor>* results) const;

  Request request_;
  SessionState* state_ = nullptr;
  std::vector<Item> items_;
  std::vector<Source> fetch_sources_;
  std::vector<int> slot_uses_;  // consumers (and fetches) of each slot
  std::vector<int> feed_uses_;  // consumers (and fetches) of each feed
  int num_slots_ = 0;
  bool dataflow_ = false;  // the graph has TensorFlow 1 control flow
  bool parallel_ = false;  // see parallel()
  bool fetch_to_host_ = true;  // Options::fetch_to_host
  MemoryPlan plan_;
  std::vector<int64_t> slot_offset_;  // arena offset of each slot, -1 when not planned
  // Per slot: its value is set when a scratch set is made and never changes
  // (a constant's output, or a planned slot's view), so the in-order
  // scheduler neither runs constant items nor clears these slots.
  std::vector<char> slot_persistent_;
  std::vector<int> transient_slots_;  // the others
  // The buffers of constants' outputs (never handed out to callers).
  absl::flat_hash_set<const Buffer*> constant_buffers_;
  std::vector<int64_t> arena_bytes_;  // per device
  // Scratch of finished runs, reused by later ones (see RunScratch).
  mutable std::mutex scratch_mu_;
  mutable std::vector<std::unique_ptr<RunScratch>> free_scratch_;
  absl::StatusOr<std::unique_ptr<RunScratch>> TakeScratch() const;
  std::vector<std::shared_ptr<Device>> devices_;  // keeps plugins loaded
  std::vector<std::unique_ptr<Node>> copy_nodes_;  // the nodes of copy items
  std::vector<std::string> notes_;
  PlacementReport placement_;
  mutable std::vector<std::unique_ptr<EventPool>> event_pools_;  // per device
  // Device graphs.
  int graph_device_ = -1;  // the device index it runs on; -1: not eligible
  mutable std::mutex graph_mu_;  // held by the run that records or replays
  mutable int graph_runs_ = 0;   // normal runs so far (the first one warms up)
  mutable bool graph_failed_ = false;
  mutable std::string graph_note_;
  mutable int64_t graph_replays_ = 0;
  mutable std::unique_ptr<Recording> recording_;
};

}  // namespace plexus

#endif  // PLEXUS_SRC_EXECUTOR_H_

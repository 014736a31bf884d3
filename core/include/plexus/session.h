// Sessions run a graph: feeds (which may override any tensor, not only
// placeholders), fetches and targets. A session places every node on one
// device (falling back to another device for ops that device lacks,
// host-accessible ones first, with a placement note), prunes the graph to
// what the request needs, and caches one executor per (feeds, fetches,
// targets) signature.
#ifndef PLEXUS_SESSION_H_
#define PLEXUS_SESSION_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "plexus/graph.h"
#include "plexus/optimizer_options.h"
#include "plexus/placement.h"
#include "plexus/runtime.h"

namespace plexus {

class Executor;
class SessionState;
class ResourceStore;  // variables and other resources by name (opaque)
class TraceRecorder;

struct SessionOptions {
  // Device name ("CPU:0", "cuda"); empty = the runtime's default device.
  std::string device;
  OptimizerOptions optimizer;
  // Record every node each Run executes, for WriteTrace.
  bool trace = false;
  // Run independent expensive branches (two convolutions side by side, say)
  // at the same time on the process's inter-op thread pool, whose size
  // PLEXUS_INTER_OP_THREADS sets (default: the hardware threads; 1 turns
  // it off everywhere). Cheap ops always run inline. Only runs whose
  // intra-op budget is one thread use it: with more, each kernel uses the
  // whole budget itself and the run is in order.
  bool inter_op_parallelism = true;
  // Give the intermediate tensors of graphs with static shapes offsets in
  // one arena per device, planned once so that tensors alive at the same
  // time never overlap (docs/architecture.md, "Memory plan").
  // PLEXUS_MEMORY_PLAN=off in the environment turns it off.
  bool memory_plan = true;
  // Copy every fetched tensor to host memory (the default). When false, a
  // fetch computed on a device whose memory the host cannot read stays in
  // that device's memory (Tensor::device() says which; CopyTensorTo brings
  // it over), so device-resident pipelines and benchmarks avoid the copy.
  // The run has finished writing it when Run returns.
  bool fetch_to_host = true;
  // Resources (variables) to share with an eager context or another
  // session (EagerContext::resources()); null: the
  // session's own.
  std::shared_ptr<ResourceStore> resources;
  // Record each run signature's device work once into a graph and replay
  // it on later runs (stream capture, ABI 0.5; CUDA graphs on the cuda
  // plugin), which removes the per-kernel launch cost of small graphs. It
  // applies when every kernel runs on one device whose plugin can capture,
  // with no host ops, no copies between devices, no control flow and
  // host-memory inputs only from constants; the first run is normal, the
  // second records, later ones with the same feed shapes replay
  // (ExecutionInfo says what happened). PLEXUS_DEVICE_GRAPHS=1 or =0 in the
  // environment overrides this.
  bool device_graphs = false;
  // Feed-shape specialization: when a run feeds a Placeholder whose
  // declared shape is not fully known (a batch of None, say), the session
  // builds that signature's executor for the fed shapes, as if the
  // Placeholder had declared them. Every shape in the graph is then static:
  // no shape function runs per node and run, the memory plan applies, and
  // the optimizer fuses what needs static shapes. Each new combination of
  // fed shapes builds another executor (the cost of a first run), up to this
  // many per signature; further shapes run on one general executor. 0 turns
  // it off; PLEXUS_SHAPE_SPECIALIZATIONS=N in the environment overrides it.
  int max_shape_specializations = 4;
  // How many threads each kernel may use (oneDNN's convolutions and
  // products on the cpu plugin, say). 0: the process default
  // (SetDefaultIntraOpThreads in plexus/threads.h; automatically the CPUs
  // this process may use). Independent branches running at the same time
  // on the inter-op pool share it. See docs/architecture.md, "Threads".
  int intra_op_threads = 0;
  // Use at most the CPUs other processes leave free, measured about every
  // 100 ms (never fewer than 1 thread): a busy neighbour on one core then
  // costs a core, not a stall of every parallel kernel. False: always the
  // count above. PLEXUS_ADAPTIVE_THREADS=0 turns it off for every session.
  bool adapt_threads_to_load = true;
};

// How the last executor a session built runs its graph.
struct ExecutionInfo {
  bool parallel = false;            // independent branches on the inter-op pool
  int64_t planned_tensors = 0;      // tensors placed by the memory plan
  int64_t planned_tensor_bytes = 0; // their sizes added up
  int64_t arena_bytes = 0;          // what the plan's arenas take instead
  int64_t copy_items = 0;           // copies inserted at device boundaries
  // Of those, the ones that run at every run: not a constant's, which is
  // copied once, when the executor is built (so a frozen graph whose
  // weights all reach their device that way has none).
  int64_t copies_per_run = 0;
  // SessionOptions::device_graphs, as of now:
  bool device_graph_eligible = false;  // the graph qualifies
  bool device_graph_recorded = false;  // a recording exists
  int64_t device_graph_replays = 0;    // runs that replayed it
  std::string device_graph_note;       // why not, when it does not apply
  // The intra-op budget of the last run (adapted to load when that is on).
  int intra_op_threads = 0;
};

// The cancel flag of the run on this thread, or null. Runs nested in a run
// (functions called by host ops) inherit it. ScopedRunCancelFlag sets it for
// every run the current thread makes in its scope (SavedModel calls too).
const std::atomic<bool>* CurrentRunCancelFlag();
class ScopedRunCancelFlag {
 public:
  explicit ScopedRunCancelFlag(const std::atomic<bool>* flag);
  ~ScopedRunCancelFlag();
  ScopedRunCancelFlag(const ScopedRunCancelFlag&) = delete;
  ScopedRunCancelFlag& operator=(const ScopedRunCancelFlag&) = delete;

 private:
  const std::atomic<bool>* previous_;
};

// A deadline for every run the current thread makes in the scope (SavedModel
// calls and the functions and loops a run calls included): once it has
// passed, a run stops between nodes and returns DEADLINE_EXCEEDED; work
// already queued on devices finishes first. An infinite deadline (or a
// timeout that is infinite or not positive) sets nothing. One watcher
// thread serves every deadline of the process.
const std::atomic<bool>* CurrentRunDeadlineFlag();
absl::Time CurrentRunDeadline();  // InfiniteFuture without one
class ScopedRunDeadline {
 public:
  explicit ScopedRunDeadline(absl::Time deadline);
  explicit ScopedRunDeadline(absl::Duration timeout);  // from now
  ~ScopedRunDeadline();
  ScopedRunDeadline(const ScopedRunDeadline&) = delete;
  ScopedRunDeadline& operator=(const ScopedRunDeadline&) = delete;
  // Whether the deadline in force in the scope has passed (a run that
  // failed then was stopped by it).
  bool passed() const;

 private:
  absl::Time deadline_;
  const std::atomic<bool>* previous_;
  absl::Time previous_time_;
  std::atomic<bool> passed_{false};
  int64_t ticket_ = -1;
};

// Both flags of a run, for a thread that works for it (a pool thread
// running its nodes): functions those nodes call see them.
class ScopedRunFlags {
 public:
  ScopedRunFlags(const std::atomic<bool>* cancel, const std::atomic<bool>* deadline, absl::Time deadline_time);
  ~ScopedRunFlags();
  ScopedRunFlags(const ScopedRunFlags&) = delete;
  ScopedRunFlags& operator=(const ScopedRunFlags&) = delete;

 private:
  ScopedRunCancelFlag cancel_;
  const std::atomic<bool>* previous_deadline_;
  absl::Time previous_time_;
};

// Options of one run.
struct RunOptions {
  // When set (from another thread or a signal handler), the run stops
  // between nodes and returns CANCELLED; work already queued on devices
  // finishes first. Functions and loops the run calls see the same flag.
  const std::atomic<bool>* cancel = nullptr;
  // The run stops between nodes once this much time has passed and returns
  // DEADLINE_EXCEEDED saying so; the session stays usable. Infinite (or not
  // positive): no limit. Combines with an enclosing ScopedRunDeadline: the
  // earlier one stops the run.
  absl::Duration timeout = absl::InfiniteDuration();
};

class Session {
 public:
  static absl::StatusOr<std::unique_ptr<Session>> Create(
      Runtime* runtime, std::shared_ptr<const Graph> graph,
      SessionOptions options = {});
  ~Session();

  // Runs the graph. `feeds` are (tensor name, value), tensor names "node" or
  // "node:k". `fetches` are tensor names; results come back in host memory in
  // the same order (see SessionOptions::fetch_to_host). A feed may be a
  // tensor in a device's memory; it is copied where its readers run. `targets` are node names run for their effects.
  absl::StatusOr<std::vector<Tensor>> Run(
      const std::vector<std::pair<std::string, Tensor>>& feeds,
      const std::vector<std::string>& fetches,
      const std::vector<std::string>& targets = {});
  absl::StatusOr<std::vector<Tensor>> Run(
      const std::vector<std::pair<std::string, Tensor>>& feeds,
      const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
      const RunOptions& options);

  const Graph& graph() const { return *graph_; }
  Device& device() const { return *device_; }
  // Placement decisions of the last executor built, one line per node that
  // was not placed on the session's device ("node 'x' (op Foo): ...").
  std::vector<std::string> placement_notes() const;
  // Where every node of the last run went (plexus/placement.h); empty before
  // the first run.
  PlacementReport placement() const;
  // What the optimizer did for the last executor built, one line per pass
  // that changed the graph.
  std::vector<std::string> optimizer_log() const;
  // The graph the last executor runs (the optimized one, or graph()).
  std::shared_ptr<const Graph> last_run_graph() const;
  // How the last executor built runs (scheduler, memory plan, copies).
  ExecutionInfo last_execution_info() const;
  // With SessionOptions::trace: writes the timeline of every run so far in
  // Chrome's trace event format (open it in Perfetto or chrome://tracing),
  // a track per device and thread.
  absl::Status WriteTrace(const std::string& path) const;

 private:
  Session(Runtime* runtime, std::shared_ptr<const Graph> graph,
          std::shared_ptr<Device> device, SessionOptions options);

  struct CachedExecutor {
    std::shared_ptr<const Graph> graph;  // what the executor's nodes point into
    std::shared_ptr<Executor> executor;
  };

  Runtime* runtime_;
  std::shared_ptr<const Graph> graph_;
  std::shared_ptr<Device> device_;
  mutable std::mutex mu_;
  SessionOptions options_;
  std::map<std::string, CachedExecutor> executors_;
  // Feed-shape specializations built so far, per signature (without shapes).
  std::map<std::string, int> specializations_;
  std::vector<std::string> placement_notes_;
  std::vector<std::string> optimizer_log_;
  std::shared_ptr<const Graph> last_run_graph_;
  ExecutionInfo last_execution_info_;
  std::shared_ptr<Executor> last_executor_;  // of the last run
  std::atomic<int> last_run_threads_{0};     // the last run's intra-op budget
  std::unique_ptr<TraceRecorder> trace_;
  // Variables and other resources, and instantiated functions: they live as
  // long as the session, so state persists across runs.
  std::unique_ptr<SessionState> state_;
};

}  // namespace plexus

#endif  // PLEXUS_SESSION_H_

#include "plexus/session.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "absl/strings/str_join.h"
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "plexus/graph_import.h"
#include "exec/executor.h"
#include "passes/optimizer/graph_util.h"
#include "passes/optimizer/optimizer.h"
#include "exec/session_state.h"
#include "placer/placer.h"
#include "base/kernel_threads.h"
#include "base/trace.h"
#include "exec/strict_placement.h"
#include "plexus/run_metadata.h"
#include "plexus/threads.h"
#include "plexus/status.h"

namespace plexus {

Session::Session(Runtime* runtime, std::shared_ptr<const Graph> graph,
                 std::shared_ptr<Device> device, SessionOptions options)
    : runtime_(runtime), graph_(std::move(graph)), device_(std::move(device)), options_(std::move(options)) {
  if (options_.trace) trace_ = std::make_unique<TraceRecorder>();
  state_ = std::make_unique<SessionState>(
      runtime_, device_, std::make_shared<const tf::FunctionDefLibrary>(graph_->library), options_.resources);
}

Session::~Session() {
  // Executors hold kernels of plugins and refer to the state: drop them
  // before the state.
  executors_.clear();
  last_executor_.reset();
  state_.reset();
}

absl::StatusOr<std::unique_ptr<Session>> Session::Create(Runtime* runtime,
                                                         std::shared_ptr<const Graph> graph,
                                                         SessionOptions options) {
  if (runtime == nullptr || graph == nullptr) {
    return absl::InvalidArgumentError("Session::Create needs a runtime and a graph");
  }
  if (options.intra_op_threads < 0) {
    return absl::InvalidArgumentError(absl::StrCat("SessionOptions::intra_op_threads is ",
                                                   options.intra_op_threads,
                                                   "; it must be 0 (automatic) or more"));
  }
  std::shared_ptr<Device> device;
  if (options.device.empty()) {
    device = runtime->DefaultDevice();
    if (device == nullptr) {
      return absl::FailedPreconditionError(
          "no device is available: no plugin with devices is loaded (set PLEXUS_PLUGIN_PATH, "
          "or install plugins in the plexus-plugins folder beside the library)");
    }
  } else {
    PX_ASSIGN_OR_RETURN(device, runtime->FindDevice(options.device));
  }
  if (const char* env = std::getenv("PLEXUS_OPTIMIZER"); env != nullptr) {
    std::string v = env;
    if (v == "off" || v == "0" || v == "false") options.optimizer.enabled = false;
  }
  if (const char* env = std::getenv("PLEXUS_MEMORY_PLAN"); env != nullptr) {
    std::string v = env;
    if (v == "off" || v == "0" || v == "false") options.memory_plan = false;
  }
  if (const char* env = std::getenv("PLEXUS_DEVICE_GRAPHS"); env != nullptr) {
    std::string v = env;
    if (v == "off" || v == "0" || v == "false") options.device_graphs = false;
    if (v == "on" || v == "1" || v == "true") options.device_graphs = true;
  }
  if (const char* env = std::getenv("PLEXUS_SHAPE_SPECIALIZATIONS"); env != nullptr && *env != '\0') {
    int n = 0;
    if (!absl::SimpleAtoi(env, &n) || n < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "PLEXUS_SHAPE_SPECIALIZATIONS must be a number >= 0 (0 turns it off), got '", env, "'"));
    }
    options.max_shape_specializations = n;
  }
  if (const char* env = std::getenv("PLEXUS_DISABLE_PASSES"); env != nullptr) {
    for (absl::string_view name : absl::StrSplit(env, ',', absl::SkipEmpty())) {
      options.optimizer.disabled_passes.emplace_back(name);
    }
  }
  for (const std::string& name : options.optimizer.disabled_passes) {
    bool known = false;
    for (const opt::PassInfo& pass : opt::AllPasses()) known |= name == pass.name;
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat("unknown optimizer pass '", name,
                                                     "'; the passes are: ", opt::PassNames()));
    }
  }
  return std::unique_ptr<Session>(
      new Session(runtime, std::move(graph), std::move(device), std::move(options)));
}

absl::StatusOr<std::vector<Tensor>> Session::Run(
    const std::vector<std::pair<std::string, Tensor>>& feeds,
    const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
    const RunOptions& options) {
  ScopedRunCancelFlag cancel(options.cancel);
  // Whether this timeout, not an enclosing earlier deadline, is the one in force.
  const bool own = options.timeout != absl::InfiniteDuration() && options.timeout > absl::ZeroDuration() &&
                   absl::Now() + options.timeout < CurrentRunDeadline();
  ScopedRunDeadline deadline(options.timeout);
  auto out = Run(feeds, fetches, targets);
  if (!out.ok() && out.status().code() == absl::StatusCode::kDeadlineExceeded && deadline.passed() && own) {
    return absl::DeadlineExceededError(absl::StrCat("the run took longer than its timeout of ",
                                                    absl::FormatDuration(options.timeout),
                                                    " and was stopped (", out.status().message(), ")"));
  }
  return out;
}

namespace {

// The endpoints a run names, in `request`, with the fed values; returns the
// signature's cache key.
absl::StatusOr<std::string> ResolveRequest(const Graph& graph,
                                           const std::vector<std::pair<std::string, Tensor>>& feeds,
                                           const std::vector<std::string>& fetches,
                                           const std::vector<std::string>& targets, Executor::Request* request,
                                           std::vector<Tensor>* feed_values) {
  std::vector<std::string> key_parts;
  for (const auto& [name, value] : feeds) {
    PX_ASSIGN_OR_RETURN(Endpoint e, graph.ResolveTensor(name));
    request->feeds.push_back(e);
    feed_values->push_back(value);
    key_parts.push_back(absl::StrCat(e.node->name, ":", e.index));
  }
  key_parts.push_back("->");
  for (const std::string& name : fetches) {
    PX_ASSIGN_OR_RETURN(Endpoint e, graph.ResolveTensor(name));
    request->fetches.push_back(e);
    key_parts.push_back(absl::StrCat(e.node->name, ":", e.index));
  }
  key_parts.push_back("|");
  for (const std::string& name : targets) {
    absl::string_view node_name = name;
    if (!node_name.empty() && node_name[0] == '^') node_name.remove_prefix(1);
    const Node* node = graph.FindNode(node_name);
    if (node == nullptr) {
      return absl::NotFoundError(absl::StrCat("target '", name, "' names no node in the graph"));
    }
    request->targets.push_back(node);
    key_parts.push_back(node->name);
  }
  return absl::StrJoin(key_parts, ",");
}

// Runs `executor` recording its timeline into `metadata`, and into the
// session's trace when it has one.
absl::StatusOr<std::vector<Tensor>> RunRecorded(Executor& executor, const std::vector<Tensor>& feed_values,
                                                TraceRecorder* session_trace, RunMetadata* metadata) {
  TraceRecorder recorder;
  auto out = executor.Run(feed_values, &recorder);
  metadata->wall_ns = recorder.Now();
  for (TraceRecorder::Event& e : recorder.events()) {
    metadata->nodes.push_back(NodeTiming{e.name, e.op, e.device, e.start_ns, e.duration_ns});
    if (session_trace != nullptr) {
      e.start_ns += session_trace->Now() - metadata->wall_ns;
      session_trace->Add(std::move(e));
    }
  }
  return out;
}

// What the optimizer passes may rely on for one signature: the nodes it
// names (never removed), the fed endpoints, the roots, and the session's
// constant evaluator and placer (for graph dumps).
opt::PassContext PassContextFor(const Executor::Request& request, Runtime* runtime,
                                const std::shared_ptr<Device>& device, const Graph& graph,
                                const OptimizerOptions& optimizer) {
  opt::PassContext ctx;
  for (const Endpoint& e : request.feeds) {
    ctx.protected_nodes.insert(e.node->name);
    ctx.fed.insert(opt::EndpointKey(e.node->name, e.index));
  }
  for (const Endpoint& e : request.fetches) {
    ctx.protected_nodes.insert(e.node->name);
    ctx.roots.push_back(e.node->name);
  }
  for (const Node* n : request.targets) {
    ctx.protected_nodes.insert(n->name);
    ctx.roots.push_back(n->name);
  }
  ctx.runtime = runtime;
  ctx.device = device;
  ctx.source = graph.source;
  if (!optimizer.dump_dir.empty()) {
    auto placer = std::make_shared<Placer>(
        *runtime, device, [](const Node& n) { return n.Describe(); });
    ctx.place = [placer](const Graph& graph, const Node& node) -> std::string {
      auto choice = placer->Place(node, RequestedDevice(graph, node));
      if (!choice.ok() || choice->how != PlacedBy::kKernel) return "core";
      return choice->device->name();
    };
  }
  if (std::shared_ptr<Device> host = runtime->HostDevice()) {
    ctx.evaluate = [runtime, host](std::shared_ptr<const Graph> graph,
                                   const std::vector<std::string>& fetches)
        -> absl::StatusOr<std::vector<Tensor>> {
      SessionOptions options;
      options.device = host->name();
      options.optimizer.enabled = false;
      PX_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                          Session::Create(runtime, std::move(graph), options));
      return session->Run({}, fetches);
    };
  }
  return ctx;
}

// The fed shapes a signature's executor may be specialized for: each fed
// Placeholder (output 0) whose declared shape is not fully known and that
// the fed value fits, with the value's shape. Empty when none.
std::vector<std::pair<std::string, Shape>> SpecializableFeeds(const Executor::Request& request,
                                                              const std::vector<Tensor>& values) {
  std::vector<std::pair<std::string, Shape>> out;
  for (size_t i = 0; i < request.feeds.size(); ++i) {
    const Endpoint& e = request.feeds[i];
    if (e.node->op != "Placeholder" || e.index != 0 || e.node->output_shapes.empty()) continue;
    const PartialShape& declared = e.node->output_shapes[0];
    const Shape& fed = values[i].shape();
    if (declared.fully_defined() || !values[i].valid()) continue;
    if (declared.rank_known()) {
      if (declared.rank() != static_cast<int64_t>(fed.size())) continue;
      bool fits = true;
      for (size_t d = 0; d < fed.size(); ++d) fits &= declared.dims()[d] < 0 || declared.dims()[d] == fed[d];
      if (!fits) continue;
    }
    out.emplace_back(e.node->name, fed);
  }
  return out;
}

// A copy of `graph` whose Placeholders in `shapes` declare those shapes.
absl::StatusOr<std::shared_ptr<const Graph>> WithFedShapes(
    const Graph& graph, const std::vector<std::pair<std::string, Shape>>& shapes) {
  tf::GraphDef def = GraphToGraphDef(graph);
  for (tf::NodeDef& node : *def.mutable_node()) {
    for (const auto& [name, shape] : shapes) {
      if (node.name() != name) continue;
      tf::TensorShapeProto* proto = (*node.mutable_attr())["shape"].mutable_shape();
      proto->Clear();
      for (int64_t d : shape) proto->add_dim()->set_size(d);
    }
  }
  auto imported = ImportGraphDef(def, graph.source);
  if (!imported.ok()) {
    // Shape inference with the fed shapes failed: a run error, not an import
    // one, so say which feeds and drop the import's "importing FILE: ".
    std::string message(imported.status().message());
    const std::string prefix = absl::StrCat("importing ", graph.source, ": ");
    if (absl::StartsWith(message, prefix)) message = message.substr(prefix.size());
    std::vector<std::string> fed;
    for (const auto& [name, shape] : shapes) fed.push_back(absl::StrCat("'", name, "' ", ShapeToString(shape)));
    return absl::Status(imported.status().code(),
                        absl::StrCat("the feeds ", absl::StrJoin(fed, ", "), " do not fit the graph",
                                     graph.source.empty() ? "" : absl::StrCat(" ", graph.source), ": ", message));
  }
  std::unique_ptr<Graph> specialized = *std::move(imported);
  specialized->source = graph.source;
  return std::shared_ptr<const Graph>(std::move(specialized));
}

}  // namespace

absl::StatusOr<std::vector<Tensor>> Session::Run(
    const std::vector<std::pair<std::string, Tensor>>& feeds,
    const std::vector<std::string>& fetches, const std::vector<std::string>& targets) {
  if (fetches.empty() && targets.empty()) {
    return absl::InvalidArgumentError("Session::Run needs at least one fetch or target");
  }
  // The caller's metadata is this run's only: runs nested in it report nothing.
  RunMetadata* metadata = CurrentRunMetadata();
  if (metadata != nullptr) *metadata = RunMetadata();
  ScopedRunMetadata nested(nullptr);
  Executor::Request request;
  std::vector<Tensor> feed_values;
  PX_ASSIGN_OR_RETURN(std::string key, ResolveRequest(*graph_, feeds, fetches, targets, &request, &feed_values));
  // Feed-shape specialization (SessionOptions::max_shape_specializations):
  // the fed shapes join the key, while this signature has room for them.
  std::vector<std::pair<std::string, Shape>> fed_shapes;
  if (options_.max_shape_specializations > 0) fed_shapes = SpecializableFeeds(request, feed_values);
  const std::string base_key = key;
  if (!fed_shapes.empty()) {
    std::string shapes_key = "#";
    for (const auto& [name, shape] : fed_shapes) absl::StrAppend(&shapes_key, name, "=", absl::StrJoin(shape, "x"), ";");
    std::lock_guard<std::mutex> lock(mu_);
    if (executors_.count(key + shapes_key) > 0 ||
        specializations_[base_key] < options_.max_shape_specializations) {
      key += shapes_key;
    } else {
      fed_shapes.clear();  // full: the general executor
    }
  }

  std::shared_ptr<Executor> executor;
  std::shared_ptr<const Graph> run_graph;  // the graph the executor's nodes point into
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = executors_.find(key);
    if (it != executors_.end()) {
      executor = it->second.executor;
      last_executor_ = executor;
      last_run_graph_ = it->second.graph;
      run_graph = it->second.graph;
    }
  }
  if (executor == nullptr) {
    if (metadata != nullptr) metadata->built_executor = true;
    CachedExecutor entry;
    entry.graph = graph_;
    if (!fed_shapes.empty()) {
      PX_ASSIGN_OR_RETURN(entry.graph, WithFedShapes(*graph_, fed_shapes));
      auto remap = [&](const Endpoint& e) { return Endpoint{entry.graph->FindNode(e.node->name), e.index}; };
      for (Endpoint& e : request.feeds) e = remap(e);
      for (Endpoint& e : request.fetches) e = remap(e);
      for (const Node*& n : request.targets) n = entry.graph->FindNode(n->name);
    }
    std::vector<std::string> log;
    if (options_.optimizer.enabled) {
      opt::PassContext ctx = PassContextFor(request, runtime_, device_, *entry.graph, options_.optimizer);
      PX_ASSIGN_OR_RETURN(opt::OptimizeResult result, opt::Optimize(*entry.graph, ctx, options_.optimizer));
      log = std::move(result.log);
      if (result.graph != nullptr) {
        // The request's endpoints, in the optimized graph (the nodes the
        // signature names keep their names).
        auto remap = [&](const Endpoint& e) { return Endpoint{result.graph->FindNode(e.node->name), e.index}; };
        for (Endpoint& e : request.feeds) e = remap(e);
        for (Endpoint& e : request.fetches) e = remap(e);
        for (const Node*& n : request.targets) n = result.graph->FindNode(n->name);
        entry.graph = result.graph;
      }
    }
    PX_ASSIGN_OR_RETURN(executor,
                        Executor::Create(*entry.graph, *runtime_, device_, std::move(request), state_.get(),
                                         Executor::Options{options_.inter_op_parallelism, options_.memory_plan, options_.fetch_to_host,
                                                          options_.device_graphs}));
    entry.executor = executor;
    std::lock_guard<std::mutex> lock(mu_);
    placement_notes_ = executor->placement_notes();
    optimizer_log_ = std::move(log);
    last_run_graph_ = entry.graph;
    last_execution_info_.parallel = executor->parallel();
    last_execution_info_.planned_tensors = executor->memory_plan().tensors;
    last_execution_info_.planned_tensor_bytes = executor->memory_plan().tensor_bytes;
    last_execution_info_.arena_bytes = executor->memory_plan().arena_bytes;
    last_execution_info_.copy_items = executor->num_copy_items();
    last_execution_info_.copies_per_run = executor->num_copies_per_run();
    // Another thread may have built the same signature meanwhile: keep its
    // executor and drop ours (try_emplace leaves `entry`, whose graph our
    // executor points into, untouched until then; it dies executor first).
    auto [it, inserted] = executors_.try_emplace(key, std::move(entry));
    if (inserted && !fed_shapes.empty()) ++specializations_[base_key];
    if (!inserted) {
      executor = it->second.executor;
      last_run_graph_ = it->second.graph;
    }
    run_graph = it->second.graph;
    last_executor_ = executor;
  }
  if (StrictPlacement()) {
    PX_RETURN_IF_ERROR(CheckStrictPlacement(executor->placement(), *run_graph, *runtime_, *device_));
  }
  // The run's intra-op budget, read by the plugins' kernels through the
  // host service intra_op_threads (base/kernel_threads.h).
  ScopedKernelThreads threads(ResolveIntraOpThreads(options_.intra_op_threads,
                                                    options_.adapt_threads_to_load));
  last_run_threads_.store(CurrentRunThreads(), std::memory_order_relaxed);
  if (metadata == nullptr) return executor->Run(feed_values, trace_.get());
  return RunRecorded(*executor, feed_values, trace_.get(), metadata);
}

absl::Status Session::WriteTrace(const std::string& path) const {
  if (trace_ == nullptr) {
    return absl::FailedPreconditionError("the session was created without SessionOptions::trace");
  }
  return trace_->WriteFile(path);
}

std::vector<std::string> Session::optimizer_log() const {
  std::lock_guard<std::mutex> lock(mu_);
  return optimizer_log_;
}

std::shared_ptr<const Graph> Session::last_run_graph() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_run_graph_ ? last_run_graph_ : graph_;
}

ExecutionInfo Session::last_execution_info() const {
  std::shared_ptr<Executor> executor;
  ExecutionInfo info;
  {
    std::lock_guard<std::mutex> lock(mu_);
    info = last_execution_info_;
    executor = last_executor_;
  }
  if (executor != nullptr) {
    const Executor::DeviceGraphInfo g = executor->device_graph();
    info.device_graph_eligible = g.eligible;
    info.device_graph_recorded = g.recorded;
    info.device_graph_replays = g.replays;
    info.device_graph_note = g.note;
  }
  info.intra_op_threads = last_run_threads_.load(std::memory_order_relaxed);
  return info;
}

PlacementReport Session::placement() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_executor_ != nullptr ? last_executor_->placement() : PlacementReport{};
}

std::vector<std::string> Session::placement_notes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return placement_notes_;
}

}  // namespace plexus

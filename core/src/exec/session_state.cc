#include "exec/session_state.h"

#include "absl/strings/str_cat.h"
#include "devices/tensor_copy.h"
#include "exec/executor.h"
#include "plexus/device.h"
#include "plexus/graph_import.h"
#include "plexus/status.h"

namespace plexus {

std::string Variable::DebugString() const {
  return absl::StrCat("variable '", name_, "' (", DataTypeName(dtype_), " ", shape_.ToString(), ")");
}

absl::StatusOr<Tensor> Variable::Read() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!value_.valid()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "attempting to use uninitialized variable '", name_, "'"));
  }
  // Readers share the value where it lives, host or device memory: its
  // buffer is pinned (see Keep), so nothing writes it while they hold it,
  // and an assignment replaces the buffer.
  return value_;
}

absl::StatusOr<Tensor> Variable::Keep(Tensor value) {
  if (value.dtype() == DataType::kString || value.buffer() == nullptr) return value;
  Buffer& buffer = *value.buffer();
  if (!buffer.exposed() && !buffer.is_view()) {
    // Plexus's own memory, host or device, never written again: kept
    // without a copy. A device value stays on its device (the callers
    // have waited for it to be complete).
    buffer.Pin();
    return value;
  }
  // Memory someone else may write (an import, or handed out for writing) or
  // a view into a larger block (a run's memory plan): a copy of its own, in
  // the same memory.
  PX_ASSIGN_OR_RETURN(Tensor copy, CopyInSameMemory(value));
  copy.buffer()->Pin();
  return copy;
}

bool Variable::initialized() const {
  std::lock_guard<std::mutex> lock(mu_);
  return value_.valid();
}

absl::Status Variable::Assign(Tensor value) {
  // A variable whose value is in a device's memory stays there: a value
  // from host memory (a kernel that ran on the CPU, a restore) is copied to
  // that device once, rather than on every later read there.
  Device* home = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (value_.valid() && value_.buffer() != nullptr && !value_.host_readable()) home = value_.device();
  }
  if (home != nullptr && value.host_readable() && value.dtype() != DataType::kString &&
      value.dtype() != DataType::kVariant) {
    PX_ASSIGN_OR_RETURN(value, CopyTensorTo(value, home));
  }
  PX_ASSIGN_OR_RETURN(Tensor kept, Keep(std::move(value)));
  std::lock_guard<std::mutex> lock(mu_);
  value_ = std::move(kept);
  return absl::OkStatus();
}

absl::Status Variable::Update(const std::function<absl::StatusOr<Tensor>(const Tensor&)>& fn) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!value_.valid()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "attempting to use uninitialized variable '", name_, "'"));
  }
  // The update runs on the host: a value in device memory is copied there
  // and the result back, so the variable stays on its device.
  Device* device = value_.host_readable() ? nullptr : value_.device();
  Tensor current = value_;
  if (device != nullptr) {
    PX_ASSIGN_OR_RETURN(current, CopyTensorTo(value_, nullptr));
  }
  PX_ASSIGN_OR_RETURN(Tensor next, fn(current));
  if (device != nullptr && next.host_readable()) {
    PX_ASSIGN_OR_RETURN(next, CopyTensorTo(next, device));
  }
  PX_ASSIGN_OR_RETURN(value_, Keep(std::move(next)));
  return absl::OkStatus();
}

struct SessionState::Instance {
  std::shared_ptr<const Graph> graph;
  std::shared_ptr<Executor> executor;
  size_t num_args = 0;
};

SessionState::SessionState(Runtime* runtime, std::shared_ptr<Device> device,
                           std::shared_ptr<const tf::FunctionDefLibrary> library,
                           std::shared_ptr<ResourceStore> resources)
    : runtime_(runtime),
      device_(std::move(device)),
      library_(std::move(library)),
      resources_(resources != nullptr ? std::move(resources) : std::make_shared<ResourceStore>()) {}

SessionState::~SessionState() = default;

std::shared_ptr<ResourceBase> ResourceStore::Find(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = resources_.find(key);
  return it == resources_.end() ? nullptr : it->second;
}

void ResourceStore::Erase(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  resources_.erase(key);
}

std::string VariableResourceKey(absl::string_view container, absl::string_view shared_name) {
  return absl::StrCat("variable/", container, "/", shared_name);
}

absl::StatusOr<std::shared_ptr<ResourceBase>> ResourceStore::LookupOrCreate(
    const std::string& key,
    const std::function<absl::StatusOr<std::shared_ptr<ResourceBase>>()>& create) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = resources_.find(key);
  if (it != resources_.end()) return it->second;
  PX_ASSIGN_OR_RETURN(std::shared_ptr<ResourceBase> r, create());
  resources_.emplace(key, r);
  return r;
}

bool SessionState::HasFunction(const std::string& name) const {
  if (library_ == nullptr) return false;
  for (const tf::FunctionDef& f : library_->function()) {
    if (f.signature().name() == name) return true;
  }
  return false;
}

absl::StatusOr<std::shared_ptr<SessionState::Instance>> SessionState::Instantiate(
    const std::string& name) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = functions_.find(name);
    if (it != functions_.end()) return it->second;
  }
  const tf::FunctionDef* function = nullptr;
  if (library_ != nullptr) {
    for (const tf::FunctionDef& f : library_->function()) {
      if (f.signature().name() == name) function = &f;
    }
  }
  if (function == nullptr) {
    return absl::NotFoundError(absl::StrCat("function '", name, "' is not in the graph's library"));
  }
  PX_ASSIGN_OR_RETURN(FunctionGraph fg, FunctionToGraphDef(*function, *library_));
  PX_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph,
                      ImportGraphDef(fg.graph, absl::StrCat("function ", name)));
  auto instance = std::make_shared<Instance>();
  instance->graph = std::shared_ptr<const Graph>(std::move(graph));
  instance->num_args = fg.arg_nodes.size();
  Executor::Request request;
  for (const std::string& arg : fg.arg_nodes) {
    PX_ASSIGN_OR_RETURN(Endpoint e, instance->graph->ResolveTensor(arg + ":0"));
    request.feeds.push_back(e);
  }
  for (const std::string& fetch : fg.fetches) {
    PX_ASSIGN_OR_RETURN(Endpoint e, instance->graph->ResolveTensor(fetch));
    request.fetches.push_back(e);
  }
  for (const std::string& target : fg.targets) {
    const Node* node = instance->graph->FindNode(target);
    if (node == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("function '", name, "': control return '",
                                                     target, "' names no node"));
    }
    request.targets.push_back(node);
  }
  auto executor = Executor::Create(*instance->graph, *runtime_, device_, std::move(request), this);
  if (!executor.ok()) {
    return Annotate(executor.status(), absl::StrCat("in function '", name, "'"));
  }
  instance->executor = *std::move(executor);
  std::lock_guard<std::mutex> lock(mu_);
  functions_.emplace(name, instance);
  return instance;
}

absl::StatusOr<std::vector<Tensor>> SessionState::CallFunction(const std::string& name, std::vector<Tensor> args) {
  PX_ASSIGN_OR_RETURN(std::shared_ptr<Instance> instance, Instantiate(name));
  if (args.size() != instance->num_args) {
    return absl::InvalidArgumentError(absl::StrCat("function '", name, "' takes ",
                                                   instance->num_args, " argument(s), got ",
                                                   args.size()));
  }
  // Nesting depth of function calls on this thread (a run and the calls it
  // makes stay on one thread).
  constexpr int kMaxDepth = 100;
  static thread_local int depth = 0;
  struct DepthGuard {
    DepthGuard() { ++depth; }
    ~DepthGuard() { --depth; }
  } guard;
  if (depth > kMaxDepth) {
    return absl::ResourceExhaustedError(absl::StrCat("function '", name, "': calls nest deeper than ",
                                                     kMaxDepth, " (runaway recursion?)"));
  }
  auto results = instance->executor->Run(std::move(args));
  if (!results.ok()) return Annotate(results.status(), absl::StrCat("in function '", name, "'"));
  return results;
}

}  // namespace plexus

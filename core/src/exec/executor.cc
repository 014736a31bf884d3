// The executor: Create composes placement, the plan of items, constants,
// the memory plan and device graphs; Run picks a scheduler. Each job lives
// in a file of its own in core/src/exec/ (docs/architecture.md, "Executor").
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/kernel_threads.h"
#include "base/thread_pool.h"
#include "base/trace.h"
#include "devices/host_services.h"
#include "exec/executor.h"
#include "exec/executor_internal.h"
#include "exec/session_state.h"
#include "plexus/logging.h"
#include "plexus/op_def.h"
#include "plexus/plugin_host.h"
#include "plexus/session.h"
#include "plexus/status.h"

namespace plexus {

namespace {
thread_local const std::atomic<bool>* t_run_cancel = nullptr;
}  // namespace

const std::atomic<bool>* CurrentRunCancelFlag() { return t_run_cancel; }

ScopedRunCancelFlag::ScopedRunCancelFlag(const std::atomic<bool>* flag) : previous_(t_run_cancel) {
  if (flag != nullptr) t_run_cancel = flag;
}
ScopedRunCancelFlag::~ScopedRunCancelFlag() { t_run_cancel = previous_; }

std::string EndpointName(const Endpoint& e) { return absl::StrCat(e.node->name, ":", e.index); }

std::string Where(const Node& node, const Device& device) {
  return absl::StrCat(node.Describe(), " on ", device.name());
}

bool HasStringInput(const Node& node) {
  return std::find(node.input_types.begin(), node.input_types.end(), DataType::kString) !=
         node.input_types.end();
}

// A variable reference read as a value, where the op does not take a ref.
absl::Status Dereference(const Node& node, std::vector<Tensor>& inputs) {
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!inputs[k].is_ref()) continue;
    if (k < node.input_is_ref.size() && node.input_is_ref[k]) continue;
    auto* var = inputs[k].resource_as<Variable>();
    if (var == nullptr) return absl::InternalError(absl::StrCat(node.Describe(), ": bad reference input"));
    auto value = var->Read();
    if (!value.ok()) return Annotate(value.status(), node.Describe());
    inputs[k] = *std::move(value);
  }
  return absl::OkStatus();
}

Executor::~Executor() {
  recording_.reset();  // before the kernels and events it may use
  for (Item& item : items_) {
    if (item.kernel != nullptr && item.kernel->create != nullptr && item.instance != nullptr &&
        item.kernel->destroy != nullptr) {
      item.kernel->destroy(item.instance);
    }
  }
  for (size_t d = 0; d < event_pools_.size(); ++d) {
    Device& device = *devices_[d];
    for (PX_Event* event : event_pools_[d]->free) device.plugin().table().event_destroy(device.handle(), event);
  }
}


bool Executor::IsCachedConstant(const Tensor& tensor) const {
  return tensor.buffer() != nullptr && constant_buffers_.contains(tensor.buffer().get());
}

absl::Status Executor::CheckFeed(int index, const Tensor& value) const {
  const Endpoint& e = request_.feeds[index];
  DataType expected = e.node->output_types[e.index];
  if (!value.valid()) {
    return absl::InvalidArgumentError(absl::StrCat("feed '", EndpointName(e), "' is empty"));
  }
  if (value.dtype() != expected) {
    return absl::InvalidArgumentError(absl::StrCat(
        "feed '", EndpointName(e), "' has dtype ", DataTypeName(value.dtype()), ", but ",
        e.node->Describe(), " produces ", DataTypeName(expected)));
  }
  const PartialShape& declared = e.node->output_shapes[e.index];
  bool compatible = !declared.rank_known() || declared.rank() == value.dims();
  for (int64_t d = 0; compatible && declared.rank_known() && d < declared.rank(); ++d) {
    compatible = declared.dim(d) < 0 || declared.dim(d) == value.shape()[d];
  }
  if (!compatible) {
    return absl::InvalidArgumentError(absl::StrCat(
        "feed '", EndpointName(e), "' has shape ", ShapeToString(value.shape()), ", but ",
        e.node->Describe(), " declares shape ", declared.ToString()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Tensor>> Executor::Run(const std::vector<Tensor>& feed_values,
                                                  TraceRecorder* trace) const {
  return RunFeeds(feed_values, nullptr, trace);
}

absl::StatusOr<std::vector<Tensor>> Executor::Run(std::vector<Tensor>&& feed_values, TraceRecorder* trace) const {
  return RunFeeds(feed_values, &feed_values, trace);
}

absl::StatusOr<std::vector<Tensor>> Executor::RunFeeds(const std::vector<Tensor>& feed_values,
                                                       std::vector<Tensor>* owned, TraceRecorder* trace) const {
  if (feed_values.size() != request_.feeds.size()) {
    return absl::InvalidArgumentError(absl::StrCat("expected ", request_.feeds.size(),
                                                   " feed values, got ", feed_values.size()));
  }
  for (size_t i = 0; i < feed_values.size(); ++i) {
    PX_RETURN_IF_ERROR(CheckFeed(static_cast<int>(i), feed_values[i]));
  }
  if (graph_device_ >= 0 && trace == nullptr) {
    // A device graph: record it (second run), replay it (later runs).
    std::unique_lock<std::mutex> lock(graph_mu_, std::try_to_lock);
    if (lock.owns_lock() && !graph_failed_) {
      if (recording_ == nullptr && graph_runs_ >= 1) {
        absl::Status recorded = Record(feed_values);
        if (!recorded.ok()) {
          graph_failed_ = true;
          graph_note_ = absl::StrCat("recording failed, runs stay normal: ", recorded.message());
          Log(LogLevel::kInfo, absl::StrCat("device graph on ", devices_[graph_device_]->name(), ": ", graph_note_));
        }
      }
      if (recording_ != nullptr) {
        std::vector<Tensor> results;
        absl::StatusOr<bool> replayed = Replay(feed_values, &results);
        if (!replayed.ok()) {
          // This run fails; later ones run normally.
          graph_failed_ = true;
          graph_note_ = absl::StrCat("a replay failed, runs stay normal: ", replayed.status().message());
          recording_.reset();
          return replayed.status();
        }
        if (*replayed) return results;
        // Other feed shapes than the recording's: run normally.
      } else {
        ++graph_runs_;
      }
    }
  }
  // The parallel scheduler needs the pool, and is not used from a pool
  // thread (a run nested in a host op), whose waiting could starve the pool.
  // Nor when the run's intra-op budget is more than one thread: each kernel
  // then uses the whole budget itself, and two kernels at once only split
  // it and crowd the cores with each other's thread teams (ResNet50 and the
  // transformer encoder ran 1.5x slower on two threads that way).
  InterOpPool* pool = parallel_ && KernelThreads() <= 1 ? InterOpPool::Get() : nullptr;
  if (pool != nullptr && pool->CurrentThreadId() >= 0) pool = nullptr;
  RunState run(devices_, pool != nullptr ? 1 + pool->num_threads() : 1);
  run.trace = trace;
  run.owned_feeds = owned;
  run.cancel = CurrentRunCancelFlag();
  run.deadline = CurrentRunDeadlineFlag();
  run.deadline_time = CurrentRunDeadline();
  // (The serial path reuses its scratch's retired list.)
  if (dataflow_ || pool != nullptr) run.retired.reserve(items_.size());
  PX_RETURN_IF_ERROR(run.streams.Acquire());
  PX_ASSIGN_OR_RETURN(std::vector<Tensor> fetched,
                      dataflow_          ? RunDataflow(feed_values, run)
                      : pool != nullptr ? RunParallel(feed_values, run)
                                        : RunInOrder(feed_values, run));
  PX_RETURN_IF_ERROR(run.streams.SynchronizeAll());
  if (run.scratch != nullptr) {
    // The streams have drained: the next run may write the arenas.
    run.scratch->retired.swap(run.retired);
    run.scratch->retired.clear();
    std::lock_guard<std::mutex> lock(scratch_mu_);
    free_scratch_.push_back(std::move(run.scratch));
  }
  return CollectFetches(fetched);
}

absl::StatusOr<std::vector<Tensor>> Executor::CollectFetches(const std::vector<Tensor>& fetched) const {
  std::vector<Tensor> results;
  for (size_t i = 0; i < fetched.size(); ++i) {
    Tensor value = fetched[i];
    if (value.is_ref()) {
      auto* var = value.resource_as<Variable>();
      if (var == nullptr) return absl::InternalError("bad reference fetched");
      PX_ASSIGN_OR_RETURN(value, var->Read());
    }
    Device* device = value.device();
    if (!fetch_to_host_ && device != nullptr && !value.host_readable()) {
      // Left on its device. The run has waited for its streams, so the
      // tensor is complete. Callers may write into what they fetch: a cached
      // constant or a variable's own buffer is copied on the device.
      if (IsCachedConstant(value) || fetched[i].is_ref()) {
        PX_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buffer, device->Allocate(value.nbytes()));
        if (value.nbytes()) {
          PX_RETURN_IF_ERROR(device->CopyDeviceToDevice(buffer->data(), value.raw_data(), value.nbytes()));
        }
        value = Tensor(value.dtype(), value.shape(), std::move(buffer));
      }
      results.push_back(std::move(value));
      continue;
    }
    PX_ASSIGN_OR_RETURN(Tensor host, CopyTensorTo(value, nullptr));
    if (IsCachedConstant(host) || (host.buffer() != nullptr && fetched[i].is_ref())) {
      // Callers may write into what they fetch: never hand out the cache or
      // a variable's own buffer.
      PX_ASSIGN_OR_RETURN(Tensor copy, Tensor::AllocateHost(host.dtype(), host.shape()));
      if (host.nbytes()) std::memcpy(copy.raw_data(), host.raw_data(), host.nbytes());
      host = std::move(copy);
    }
    results.push_back(std::move(host));
  }
  return results;
}

}  // namespace plexus

// Device graphs: a run recorded once on a device that can capture streams
// and replayed on later runs (Executor::DecideDeviceGraph, Record, Replay).
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

void Executor::DecideDeviceGraph(const Options& options) {
  graph_device_ = -1;
  if (!options.device_graphs) {
    graph_note_ = "off";
    return;
  }
  auto refuse = [&](std::string why) { graph_note_ = std::move(why); };
  if (dataflow_) return refuse("the graph has TensorFlow 1 control flow");
  if (parallel_) return refuse("independent branches run in parallel");
  int device = -1;
  for (const Item& item : items_) {
    if (!item.constant_outputs.empty() || item.kind == Kind::kForward) continue;
    const Node& node = *item.node;
    if (item.kind == Kind::kView) {
      // A replay runs no view: its shape must not depend on values.
      if (node.def->output_is_view && !item.static_shapes) {
        return refuse(absl::StrCat(node.Describe(), " takes its shape from values at each run"));
      }
      continue;
    }
    if (item.kind == Kind::kCopy) {
      return refuse(absl::StrCat("a value is copied between devices at each run (", node.name, ")"));
    }
    if (item.kind != Kind::kKernel) return refuse(absl::StrCat(node.Describe(), " runs on the host"));
    if (item.string_inputs) return refuse(absl::StrCat(node.Describe(), " reads strings"));
    if (device < 0) device = item.device_index;
    if (device != item.device_index) {
      return refuse(absl::StrCat("kernels run on ", devices_[device]->name(), " and ", item.device->name()));
    }
    for (size_t k = 0; k < item.inputs.size(); ++k) {
      if (!item.kernel->InputInHostMemory(static_cast<int>(k))) continue;
      const Source& s = item.inputs[k];
      if (s.item < 0 || items_[s.item].constant_outputs.empty()) {
        return refuse(absl::StrCat(node.Describe(), " reads input ", k,
                                   " in host memory, and it is not a constant"));
      }
    }
  }
  if (device < 0) return refuse("no kernel runs");
  if (!devices_[device]->supports_capture()) {
    return refuse(absl::StrCat("the plugin of ", devices_[device]->name(), " cannot capture streams"));
  }
  graph_device_ = device;
  graph_note_.clear();
}

absl::Status Executor::Record(const std::vector<Tensor>& feeds) const {
  auto rec = std::make_unique<Recording>();
  rec->device = devices_[graph_device_];
  Device& device = *rec->device;
  // Buffers the recorded work reads the feeds from.
  for (const Tensor& f : feeds) {
    if (f.dtype() == DataType::kString || f.is_ref()) {
      return absl::FailedPreconditionError("a feed is a string or a reference");
    }
    PX_ASSIGN_OR_RETURN(Tensor buffer, device.AllocateTensor(f.dtype(), f.shape()));
    if (f.nbytes() > 0) {
      PX_ASSIGN_OR_RETURN(Tensor host, CopyTensorTo(f, nullptr));
      PX_RETURN_IF_ERROR(device.CopyHostToDevice(buffer.raw_data(), host.raw_data(), f.nbytes()));
    }
    rec->feeds.push_back(std::move(buffer));
  }
  RunState run(devices_, 1);
  PX_RETURN_IF_ERROR(run.streams.Acquire());
  // Everything that allocates before the recording starts.
  PX_ASSIGN_OR_RETURN(run.scratch, TakeScratch());
  PX_Stream* stream = run.streams.stream(graph_device_);
  PX_RETURN_IF_ERROR(device.BeginCapture(stream));
  run.capturing = true;
  absl::StatusOr<std::vector<Tensor>> fetched = RunInOrder(rec->feeds, run);
  absl::StatusOr<PX_Graph*> graph = device.EndCapture(stream);
  run.capturing = false;
  if (graph.ok()) rec->graph = *graph;
  if (!fetched.ok()) return fetched.status();
  if (!graph.ok()) return graph.status();
  rec->scratch = std::move(run.scratch);
  rec->kept = std::move(run.retired);
  rec->fetched = *std::move(fetched);
  recording_ = std::move(rec);
  return absl::OkStatus();
}

absl::StatusOr<bool> Executor::Replay(const std::vector<Tensor>& feeds, std::vector<Tensor>* results) const {
  Recording& rec = *recording_;
  for (size_t i = 0; i < feeds.size(); ++i) {
    if (feeds[i].shape() != rec.feeds[i].shape() || feeds[i].dtype() != rec.feeds[i].dtype()) return false;
  }
  Device& device = *rec.device;
  RunStreams streams(devices_, 1);
  PX_RETURN_IF_ERROR(streams.Acquire());
  PX_Stream* stream = streams.stream(graph_device_);
  std::vector<Tensor> staged;  // host copies of feeds from other devices
  for (size_t i = 0; i < feeds.size(); ++i) {
    const Tensor& f = feeds[i];
    const size_t bytes = f.nbytes();
    if (bytes == 0) continue;
    if (f.device() == &device) {
      PX_RETURN_IF_ERROR(device.CopyDeviceToDeviceAsync(stream, rec.feeds[i].raw_data(), f.raw_data(), bytes));
    } else {
      PX_ASSIGN_OR_RETURN(Tensor host, CopyTensorTo(f, nullptr));
      PX_RETURN_IF_ERROR(device.CopyHostToDeviceAsync(stream, rec.feeds[i].raw_data(), host.raw_data(), bytes));
      staged.push_back(std::move(host));
    }
  }
  PX_RETURN_IF_ERROR(device.LaunchGraph(stream, rec.graph));
  std::vector<Tensor> fetched = rec.fetched;
  if (!fetch_to_host_ || device.host_accessible()) {
    // The next replay writes the same buffers: hand out copies (copying to
    // the host would hand out these very buffers on a host-accessible
    // device).
    for (Tensor& t : fetched) {
      if (t.device() != &device || t.nbytes() == 0) continue;
      PX_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buffer, device.Allocate(t.nbytes()));
      PX_RETURN_IF_ERROR(device.CopyDeviceToDeviceAsync(stream, buffer->data(), t.raw_data(), t.nbytes()));
      t = Tensor(t.dtype(), t.shape(), std::move(buffer));
    }
  }
  PX_RETURN_IF_ERROR(streams.SynchronizeAll());
  ++graph_replays_;
  PX_ASSIGN_OR_RETURN(*results, CollectFetches(fetched));
  return true;
}

Executor::DeviceGraphInfo Executor::device_graph() const {
  std::lock_guard<std::mutex> lock(graph_mu_);
  DeviceGraphInfo info;
  info.eligible = graph_device_ >= 0;
  info.recorded = recording_ != nullptr;
  info.replays = graph_replays_;
  info.note = graph_note_;
  return info;
}

}  // namespace plexus

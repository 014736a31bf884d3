// Running one item of the executor: kernels (through exec/launch.h), host
// ops, forwarding, copies and control flow values.
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
#include "devices/host_ops.h"
#include "exec/executor.h"
#include "exec/executor_internal.h"
#include "exec/launch.h"
#include "exec/views.h"
#include "exec/session_state.h"
#include "plexus/logging.h"
#include "plexus/op_def.h"
#include "plexus/plugin_host.h"
#include "plexus/session.h"
#include "plexus/status.h"

namespace plexus {

absl::Status Executor::Execute(const Item& item, std::vector<Tensor>&& inputs,
                               std::vector<Tensor>* outputs, RunState& run, PX_Stream* stream,
                               bool inputs_ready) const {
  PX_RETURN_IF_ERROR(run.CheckCancelled());
  const Node& node = *item.node;
  // The node's span on the timeline, whichever way this returns.
  TraceSpan span(run.trace, item);
  if (!item.constant_outputs.empty()) {
    *outputs = item.constant_outputs;
    return absl::OkStatus();
  }
  PX_RETURN_IF_ERROR(Dereference(node, inputs));
  if (item.kind == Kind::kCopy) {
    const Tensor& value = inputs[0];
    Device* source = value.device();
    if (source == item.device) {
      // Already there (a variable read where it lives): nothing to wait for.
      outputs->assign(1, value);
      return absl::OkStatus();
    }
    if (!inputs_ready && source != nullptr && !source->host_accessible()) {
      // Produced on a run stream: wait for it first.
      PX_RETURN_IF_ERROR(Annotate(run.streams.Synchronize(source), node.name));
    }
    auto moved = CopyTensorTo(value, item.device);
    if (!moved.ok()) return Annotate(moved.status(), absl::StrCat("copying '", node.inputs[0].node->name, ":",
                                                                  node.inputs[0].index, "'"));
    outputs->assign(1, *std::move(moved));
    return absl::OkStatus();
  }
  if (item.kind == Kind::kForward) {
    // Output k is input k, shared (tensors are never written in place).
    outputs->assign(inputs.begin(), inputs.begin() + node.num_outputs());
    return absl::OkStatus();
  }
  if (item.kind == Kind::kView) {
    // A view's other inputs (a Reshape's shape) are read on the host, unless
    // the output shape is static; shape values read no input data at all.
    const bool reads_values = node.def->output_is_view && !item.static_shapes;
    for (size_t k = 1; reads_values && k < inputs.size(); ++k) {
      Tensor& value = inputs[k];
      if (value.host_readable()) continue;
      if (!inputs_ready && value.device() != nullptr) {
        PX_RETURN_IF_ERROR(Annotate(run.streams.Synchronize(value.device()), node.Describe()));
      }
      auto host = CopyTensorTo(value, nullptr);
      if (!host.ok()) return Annotate(host.status(), absl::StrCat(node.Describe(), ": input ", k));
      value = *std::move(host);
    }
    absl::InlinedVector<const Tensor*, 4> pointers;
    for (const Tensor& t : inputs) pointers.push_back(&t);
    return RunMetadataOp(node, pointers, item.static_shapes, *item.device, &Where, outputs);
  }
  if (item.kind == Kind::kHost) {
    for (size_t k = 0; k < inputs.size(); ++k) {
      Tensor& value = inputs[k];
      if (value.device() != nullptr) {
        // Produced on a run stream: wait for it before reading it here.
        if (!inputs_ready) {
          PX_RETURN_IF_ERROR(Annotate(run.streams.Synchronize(value.device()), node.Describe()));
        }
        // A collective its device runs itself takes its input there, and a
        // variable keeps an assigned value where it is.
        if (k == 0 && RunsOnDeviceCollectives(node.op, value.device())) continue;
        if (TakesInputOnDevice(node.op, static_cast<int>(k))) continue;
        auto host = CopyTensorTo(value, nullptr);
        if (!host.ok()) return Annotate(host.status(), absl::StrCat(node.Describe(), ": input ", k));
        value = *std::move(host);
      }
    }
    HostOpContext ctx(node, std::move(inputs), state_);
    if (state_ == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(node.Describe(), " needs a session"));
    }
    PX_RETURN_IF_ERROR(item.host_op(ctx));
    for (int k = 0; k < node.num_outputs(); ++k) {
      const Tensor& t = ctx.outputs()[k];
      if (!t.valid()) {
        return absl::InternalError(absl::StrCat(node.Describe(), ": the host op produced no output ", k));
      }
      if (t.dtype() != node.output_types[k]) {
        return absl::InternalError(absl::StrCat(node.Describe(), ": output ", k, " is ",
                                                DataTypeName(t.dtype()), ", expected ",
                                                DataTypeName(node.output_types[k])));
      }
    }
    *outputs = std::move(ctx.outputs());
    return absl::OkStatus();
  }
  Device& device = *item.device;
  // A plugin kernel: inputs moved to where the kernel wants them. Copies
  // made here are kept until the streams drain (the run keeps the originals
  // alive through its value slots).
  absl::InlinedVector<Tensor, 4> staged;
  for (size_t k = 0; k < inputs.size(); ++k) {
    Tensor& value = inputs[k];
    if (value.dtype() == DataType::kString) continue;  // always host memory
    Device* target = item.kernel->InputInHostMemory(static_cast<int>(k)) ? nullptr : &device;
    Device* source = value.device();
    if (!inputs_ready && source != nullptr && source != target && !source->host_accessible()) {
      // Produced on another device's run stream: wait for it first.
      PX_RETURN_IF_ERROR(Annotate(run.streams.Synchronize(source), Where(node, device)));
    }
    auto moved = CopyTensorTo(value, target);
    if (!moved.ok()) return Annotate(moved.status(), absl::StrCat(Where(node, device), ": input ", k));
    if (moved->buffer() != value.buffer()) {
      value = *std::move(moved);
      staged.push_back(value);
    }
  }
  absl::InlinedVector<const Tensor*, 8> pointers;
  for (const Tensor& t : inputs) pointers.push_back(&t);
  absl::Status status = Compute(item, pointers, outputs, stream, run);
  if (!staged.empty()) {
    std::lock_guard<std::mutex> lock(run.retired_mu);
    for (Tensor& t : staged) run.retired.push_back(std::move(t));
  }
  return status;
}


absl::Status Executor::Compute(const Item& item, absl::Span<const Tensor* const> inputs,
                               std::vector<Tensor>* outputs, PX_Stream* stream,
                               const RunState& run) const {
  PX_RETURN_IF_ERROR(run.CheckCancelled());
  const LaunchSpec spec{item.node, item.device, item.kernel, item.instance, item.static_shapes, &Where};
  const Tensor* planned = run.scratch != nullptr && !run.scratch->views.empty()
                              ? &run.scratch->views[item.first_slot]
                              : nullptr;
  OutputDescs descs;
  PX_RETURN_IF_ERROR(PrepareOutputs(spec, inputs, planned, outputs, &descs));
  return CallKernel(spec, inputs, outputs, &descs, stream);
}

}  // namespace plexus

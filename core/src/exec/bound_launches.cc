// Kernel launches bound once per scratch set (Executor::BoundLaunches): the
// in-order scheduler's fast path for kernels whose inputs lie at addresses
// fixed for the set's life.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "base/trace.h"
#include "devices/host_services.h"
#include "exec/executor.h"
#include "exec/executor_internal.h"
#include "exec/launch.h"
#include "plexus/plugin_host.h"

namespace plexus {

void Executor::BindLaunches(RunScratch& scratch) const {
  BoundLaunches& bound = scratch.bound;
  bound = BoundLaunches();
  bound.launch_of.assign(items_.size(), -1);
  auto planned = [&](int slot) { return !slot_offset_.empty() && slot_offset_[slot] >= 0; };
  for (size_t i = 0; i < items_.size(); ++i) {
    const Item& item = items_[i];
    const Node& node = *item.node;
    if (!item.constant_outputs.empty()) {
      bound.launch_of[i] = BoundLaunches::kConstant;  // in its slots already
      continue;
    }
    if (item.kind != Kind::kKernel || !item.static_shapes || item.string_inputs) continue;
    // Outputs: planned, or of a fixed size to allocate per run.
    bool bindable = true;
    for (int k = 0; bindable && k < node.num_outputs(); ++k) {
      const DataType dtype = node.output_types[k];
      bindable = planned(item.first_slot + k) ||
                 (DataTypeSize(dtype) > 0 && node.output_shapes[k].fully_defined());
    }
    // Inputs: a constant's output or a planned view (their addresses are
    // fixed), or a feed (filled in per run).
    std::vector<const Tensor*> values;
    for (size_t k = 0; bindable && k < item.inputs.size(); ++k) {
      const Source& s = item.inputs[k];
      const Tensor* value = nullptr;
      if (s.item < 0) {
        values.push_back(nullptr);
        continue;
      }
      const int slot = items_[s.item].first_slot + s.output;
      if (!items_[s.item].constant_outputs.empty()) {
        value = &items_[s.item].constant_outputs[s.output];
      } else if (planned(slot)) {
        value = &scratch.views[slot];
      }
      bindable = value != nullptr && value->valid() &&
                 ReadsInPlace(*item.kernel, item.device, static_cast<int>(k), *value);
      values.push_back(value);
    }
    if (!bindable) continue;
    BoundLaunches::Launch launch;
    launch.node = &node;
    launch.device = item.device;
    launch.kernel = item.kernel;
    launch.instance = item.instance;
    launch.device_index = item.device_index;
    launch.first_slot = item.first_slot;
    launch.first_input = bound.descs.size();
    launch.num_inputs = values.size();
    launch.num_outputs = static_cast<size_t>(node.num_outputs());
    for (size_t k = 0; k < values.size(); ++k) {
      if (values[k] != nullptr) {
        bound.descs.push_back(values[k]->ToDLTensor());
        continue;
      }
      bound.feed_uses.push_back(
          {item.inputs[k].feed, bound.descs.size(), InputTarget(*item.kernel, item.device, static_cast<int>(k))});
      bound.descs.push_back(DLTensor{});
    }
    for (int k = 0; k < node.num_outputs(); ++k) {
      const int slot = item.first_slot + k;
      launch.outputs.push_back(planned(slot) ? scratch.views[slot] : Tensor());
      if (!planned(slot)) launch.allocate.push_back(k);
    }
    // Once the outputs stay where they are: a descriptor's shape points into its tensor.
    for (const Tensor& output : launch.outputs) bound.descs.push_back(output.ToDLTensor());
    bound.launch_of[i] = static_cast<int>(bound.launches.size());
    bound.launches.push_back(std::move(launch));
  }
  std::stable_sort(bound.feed_uses.begin(), bound.feed_uses.end(),
                   [](const BoundLaunches::FeedUse& a, const BoundLaunches::FeedUse& b) { return a.feed < b.feed; });
}

bool Executor::BindFeeds(BoundLaunches& bound, const std::vector<Tensor>& feeds) const {
  // feed_uses is sorted by feed: each feed's descriptor is made once.
  int last = -1;
  DLTensor desc{};
  for (const BoundLaunches::FeedUse& use : bound.feed_uses) {
    const Tensor& value = feeds[use.feed];
    if (!ReadableAt(value, use.target)) return false;
    if (use.feed != last) {
      last = use.feed;
      desc = value.ToDLTensor();
    }
    bound.descs[use.desc] = desc;
  }
  return true;
}

absl::Status Executor::LaunchBound(BoundLaunches& bound, int index, std::vector<Tensor>& slots, PX_Stream* stream,
                                   const RunState& run) const {
  PX_RETURN_IF_ERROR(run.CheckCancelled());
  BoundLaunches::Launch& launch = bound.launches[index];
  // The kernel gets copies of its output descriptors: whatever it does to
  // them, the bound ones stay as built.
  const DLTensor* first_output = bound.descs.data() + launch.first_input + launch.num_inputs;
  absl::InlinedVector<DLTensor, 4> outputs(first_output, first_output + launch.num_outputs);
  if (!launch.allocate.empty()) {
    const LaunchSpec spec{launch.node, launch.device, launch.kernel, launch.instance, /*static_shapes=*/true, &Where};
    for (int k : launch.allocate) {
      PX_ASSIGN_OR_RETURN(launch.outputs[k], AllocateKernelOutput(spec, k, launch.node->output_shapes[k].dims()));
      outputs[k] = launch.outputs[k].ToDLTensor();
    }
  }
  PX_KernelContext ctx{launch.node, launch.device, launch.kernel, &launch.outputs, outputs.data(), outputs.size()};
  PX_Status* status = launch.kernel->compute(launch.instance, &ctx, bound.descs.data() + launch.first_input,
                                             launch.num_inputs, outputs.data(), outputs.size(), stream);
  for (int k : launch.allocate) slots[launch.first_slot + k] = std::move(launch.outputs[k]);
  if (status == nullptr) return absl::OkStatus();
  absl::Status s = TakePluginStatus(status);
  return absl::Status(s.code(), absl::StrCat(Where(*launch.node, *launch.device), ": ", s.message()));
}

}  // namespace plexus

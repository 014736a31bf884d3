// The in-order scheduler: every item in the plan's topological order on the
// calling thread, with the memory plan when there is one.
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

absl::StatusOr<std::vector<Tensor>> Executor::RunInOrder(const std::vector<Tensor>& feed_values,
                                                         RunState& run) const {
  if (run.scratch == nullptr) {
    PX_ASSIGN_OR_RETURN(run.scratch, TakeScratch());
  }
  run.retired.swap(run.scratch->retired);  // its capacity, for this run
  std::vector<Tensor>& slots = run.scratch->slots;
  std::vector<int>& uses = run.scratch->uses;
  uses.assign(slot_uses_.begin(), slot_uses_.end());
  auto value_of = [&](const Source& s) -> const Tensor& {
    return s.item < 0 ? feed_values[s.feed] : slots[items_[s.item].first_slot + s.output];
  };
  // A variant read for the last time moves into its reader, so that a host
  // op holding the only reference may change it in place (devices/variant.h).
  std::vector<int> feeds_left(feed_uses_);
  auto take = [&](const Source& s) -> Tensor {
    if (s.item >= 0) {
      const int slot = items_[s.item].first_slot + s.output;
      if (uses[slot] == 1 && !slot_persistent_[slot] && slots[slot].dtype() == DataType::kVariant) return std::move(slots[slot]);
      return slots[slot];
    }
    const bool last = --feeds_left[s.feed] == 0;
    if (last && run.owned_feeds != nullptr && feed_values[s.feed].dtype() == DataType::kVariant) {
      return std::move((*run.owned_feeds)[s.feed]);
    }
    return feed_values[s.feed];
  };
  std::vector<Tensor>& inputs = run.scratch->inputs;
  std::vector<Tensor>& outputs = run.scratch->outputs;
  // On an error return, wait for the streams before the tensors above are
  // freed: queued work may still read or write them.
  struct SyncOnExit {
    RunState& run;
    ~SyncOnExit() {
      if (!run.capturing) run.streams.SynchronizeAll().IgnoreError();
    }
  } sync_on_exit{run};
  absl::InlinedVector<const Tensor*, 8> pointers;
  // Launches bound to this scratch set run straight from their descriptors
  // (not while tracing: those launches are timed one by one).
  BoundLaunches& bound = run.scratch->bound;
  const bool use_bound = run.trace == nullptr && BindFeeds(bound, feed_values);
  for (size_t i = 0; i < items_.size(); ++i) {
    if (use_bound) {
      const int launch = bound.launch_of[i];
      if (launch >= 0) {
        // Its inputs are persistent slots or feeds: nothing to retire.
        PX_RETURN_IF_ERROR(LaunchBound(bound, launch, slots,
                                       run.streams.stream(bound.launches[launch].device_index), run));
        continue;
      }
      if (launch == BoundLaunches::kConstant) continue;  // in its slots already
    }
    const Item& item = items_[i];
    const Node& node = *item.node;
    // A constant's outputs are in its slots since the scratch set was made.
    if (!item.constant_outputs.empty() && run.trace == nullptr) continue;
    // The common case, a kernel whose inputs are already where it reads
    // them (no copy, no variable reference, no string): the kernel reads the
    // slots directly, without copying tensors into an input list.
    bool direct = item.kind == Kind::kKernel && item.constant_outputs.empty();
    pointers.clear();
    for (size_t k = 0; direct && k < item.inputs.size(); ++k) {
      const Tensor& t = value_of(item.inputs[k]);
      direct = ReadsInPlace(*item.kernel, item.device, static_cast<int>(k), t);
      pointers.push_back(&t);
    }
    if (direct) {
      TraceSpan span(run.trace, item);
      PX_RETURN_IF_ERROR(Compute(item, pointers, &outputs, run.streams.stream(item.device_index), run));
    } else {
      inputs.clear();
      for (const Source& s : item.inputs) inputs.push_back(take(s));
      PX_RETURN_IF_ERROR(Execute(item, std::move(inputs), &outputs, run, run.streams.stream(item.device_index)));
      inputs.clear();  // what a forwarding item read must not outlive its slot
    }
    for (int k = 0; k < node.num_outputs(); ++k) slots[item.first_slot + k] = std::move(outputs[k]);
    // Retire inputs nobody else needs; they are freed once the streams drain.
    // Planned values need no keeping: their arena lives with the scratch.
    for (const Source& s : item.inputs) {
      if (s.item < 0) continue;
      const int slot = items_[s.item].first_slot + s.output;
      if (slot_persistent_[slot] || --uses[slot] != 0) continue;
      run.retired.push_back(std::move(slots[slot]));
    }
  }
  std::vector<Tensor> fetched;
  for (const Source& s : fetch_sources_) fetched.push_back(value_of(s));
  // Values still in slots (fetched, or never read) wait with the retired
  // ones for the streams to drain; the slots stay for the next run.
  for (int slot : transient_slots_) {
    Tensor& t = slots[slot];
    if (!t.valid()) continue;
    if (t.buffer() != nullptr || t.is_ref()) run.retired.push_back(std::move(t));
    t = Tensor();
  }
  return fetched;
}

}  // namespace plexus

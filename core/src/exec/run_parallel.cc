// The parallel scheduler: independent expensive items on the inter-op pool,
// one stream per thread and device, values crossing streams through events.
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

absl::StatusOr<PX_Event*> Executor::AcquireEvent(int device_index) const {
  EventPool& pool = *event_pools_[device_index];
  {
    std::lock_guard<std::mutex> lock(pool.mu);
    if (!pool.free.empty()) {
      PX_Event* event = pool.free.back();
      pool.free.pop_back();
      return event;
    }
  }
  Device& device = *devices_[device_index];
  PX_Event* event = nullptr;
  PX_RETURN_IF_ERROR(device.Check(device.plugin().table().event_create(device.handle(), &event),
                                  "creating an event"));
  return event;
}

void Executor::ReleaseEvent(int device_index, PX_Event* event) const {
  EventPool& pool = *event_pools_[device_index];
  std::lock_guard<std::mutex> lock(pool.mu);
  pool.free.push_back(event);
}


namespace {

// Where and when a value of the parallel scheduler was made: an event
// recorded on the producing stream right after the launch.
struct SlotSync {
  PX_Event* event = nullptr;
  PX_Stream* stream = nullptr;
  int device_index = -1;
};

}  // namespace

// One run of the parallel scheduler. Items become ready when their pending
// count (data and control inputs) reaches zero. The thread that makes an
// item ready runs it inline when it is cheap, keeps the first expensive one
// for itself and hands further expensive ones to the pool. Each thread
// launches on its own stream per device; a value crossing streams is waited
// for through the event recorded after its producer (a stream wait on the
// same device, a host wait across devices or for the host).
struct Executor::ParallelRun {
  ParallelRun(const Executor& e, RunState& r, const std::vector<Tensor>& f, InterOpPool* p)
      : ex(e),
        run(r),
        feeds(f),
        pool(p),
        slots(e.num_slots_),
        sync(e.num_slots_),
        pending(new std::atomic<int>[e.items_.size()]),
        events_by_slot(1 + p->num_threads()),
        run_threads(KernelThreads()) {
    for (size_t i = 0; i < ex.items_.size(); ++i) pending[i].store(ex.items_[i].pending, std::memory_order_relaxed);
  }

  const Executor& ex;
  RunState& run;
  const std::vector<Tensor>& feeds;
  InterOpPool* pool;
  std::vector<Tensor> slots;
  std::vector<SlotSync> sync;
  std::unique_ptr<std::atomic<int>[]> pending;
  // Events recorded during the run, per thread slot: (device index, event).
  std::vector<std::vector<std::pair<int, PX_Event*>>> events_by_slot;
  std::mutex mu;
  std::condition_variable idle;
  int outstanding = 0;  // tasks handed to the pool and not finished
  absl::Status status;  // the first error
  std::atomic<bool> failed{false};
  // The run's intra-op budget, shared by the threads running its items at
  // the same time (`active` of them): each kernel gets run_threads / active.
  const int run_threads;
  std::atomic<int> active{0};

  void Fail(absl::Status s) {
    std::lock_guard<std::mutex> lock(mu);
    if (status.ok()) status = std::move(s);
    failed.store(true, std::memory_order_relaxed);
  }

  void Schedule(int item) {
    {
      std::lock_guard<std::mutex> lock(mu);
      ++outstanding;
    }
    pool->Schedule([this, item] {
      ScopedRunFlags flags(run.cancel, run.deadline, run.deadline_time);  // for the functions its nodes call
      absl::InlinedVector<int, 16> start{item};
      RunFrom(start);
      std::lock_guard<std::mutex> lock(mu);
      if (--outstanding == 0) idle.notify_all();
    });
  }

  void WaitIdle() {
    std::unique_lock<std::mutex> lock(mu);
    idle.wait(lock, [this] { return outstanding == 0; });
  }

  // Runs the items of `stack` and everything they make ready that this
  // thread keeps.
  void RunFrom(absl::InlinedVector<int, 16>& stack) {
    const int slot = pool->CurrentThreadId() + 1;  // the caller is slot 0
    std::vector<Tensor> inputs, outputs;
    active.fetch_add(1, std::memory_order_relaxed);
    ScopedKernelThreads share(run_threads);
    while (!stack.empty()) {
      const int i = stack.back();
      stack.pop_back();
      if (failed.load(std::memory_order_relaxed)) continue;
      if (ex.items_[i].kind == Kind::kKernel) {
        share.Set(run_threads / std::max(1, active.load(std::memory_order_relaxed)));
      }
      absl::Status s = RunItem(i, slot, inputs, outputs);
      if (!s.ok()) {
        Fail(std::move(s));
        continue;
      }
      const Item& item = ex.items_[i];
      bool kept_expensive = false;
      auto ready = [&](int c) {
        if (pending[c].fetch_sub(1, std::memory_order_acq_rel) != 1) return;
        if (!ex.items_[c].expensive) {
          stack.push_back(c);
        } else if (!kept_expensive) {
          kept_expensive = true;
          stack.push_back(c);
        } else {
          Schedule(c);
        }
      };
      for (const auto& edges : item.out_edges) {
        for (const Edge& e : edges) ready(e.item);
      }
      for (int c : item.control_out) ready(c);
    }
    active.fetch_sub(1, std::memory_order_relaxed);
  }

  absl::Status RunItem(int i, int slot, std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) {
    const Item& item = ex.items_[i];
    const Node& node = *item.node;
    PX_Stream* stream = nullptr;
    if (item.kind == Kind::kKernel) {
      auto acquired = run.streams.StreamFor(item.device_index, slot);
      if (!acquired.ok()) return Annotate(acquired.status(), Where(node, *item.device));
      stream = *acquired;
    }
    inputs.clear();
    for (size_t k = 0; k < item.inputs.size(); ++k) {
      const Source& s = item.inputs[k];
      if (s.item < 0) {
        inputs.push_back(feeds[s.feed]);
        continue;
      }
      const int index = ex.items_[s.item].first_slot + s.output;
      inputs.push_back(slots[index]);
      const SlotSync& ss = sync[index];
      if (ss.event == nullptr || item.kind == Kind::kForward) continue;  // forwards pass it on
      if (item.kind == Kind::kView &&
          (k == 0 || node.def->outputs_from_shapes || item.static_shapes)) {
        continue;  // a view passes input 0's event on; shape values read no data
      }
      Device& producer = *ex.devices_[ss.device_index];
      const PX_PluginTable& table = producer.plugin().table();
      if (item.kind == Kind::kKernel && ss.device_index == item.device_index &&
          !item.kernel->InputInHostMemory(static_cast<int>(k))) {
        if (ss.stream != stream) {
          PX_RETURN_IF_ERROR(Annotate(
              producer.Check(table.stream_wait_event(producer.handle(), stream, ss.event),
                             "waiting for an input made on another stream"),
              node.Describe()));
        }
      } else {
        PX_RETURN_IF_ERROR(Annotate(producer.Check(table.event_synchronize(producer.handle(), ss.event),
                                                   "waiting for an input"),
                                    node.Describe()));
      }
    }
    PX_RETURN_IF_ERROR(ex.Execute(item, std::move(inputs), &outputs, run, stream, /*inputs_ready=*/true));
    for (int k = 0; k < node.num_outputs(); ++k) slots[item.first_slot + k] = std::move(outputs[k]);
    if (item.kind == Kind::kView && node.def->output_is_view) {
      const Source& s = item.inputs[0];
      if (s.item >= 0) sync[item.first_slot] = sync[ex.items_[s.item].first_slot + s.output];
    } else if (item.kind == Kind::kForward) {
      for (int k = 0; k < node.num_outputs(); ++k) {
        const Source& s = item.inputs[k];
        if (s.item >= 0) sync[item.first_slot + k] = sync[ex.items_[s.item].first_slot + s.output];
      }
    } else if (item.kind == Kind::kKernel && item.constant_outputs.empty()) {
      bool read = false;
      for (const auto& edges : item.out_edges) read = read || !edges.empty();
      if (read) {
        PX_ASSIGN_OR_RETURN(PX_Event* event, ex.AcquireEvent(item.device_index));
        events_by_slot[slot].emplace_back(item.device_index, event);
        Device& device = *item.device;
        PX_RETURN_IF_ERROR(Annotate(
            device.Check(device.plugin().table().event_record(device.handle(), stream, event),
                         "recording an event"),
            node.Describe()));
        for (int k = 0; k < node.num_outputs(); ++k) {
          sync[item.first_slot + k] = SlotSync{event, stream, item.device_index};
        }
      }
    }
    return absl::OkStatus();
  }
};

absl::StatusOr<std::vector<Tensor>> Executor::RunParallel(const std::vector<Tensor>& feed_values,
                                                          RunState& run) const {
  ParallelRun par(*this, run, feed_values, InterOpPool::Get());
  absl::InlinedVector<int, 16> mine;
  bool kept_expensive = false;
  for (size_t i = 0; i < items_.size(); ++i) {
    if (items_[i].pending != 0) continue;
    if (!items_[i].expensive) {
      mine.push_back(static_cast<int>(i));
    } else if (!kept_expensive) {
      kept_expensive = true;
      mine.push_back(static_cast<int>(i));
    } else {
      par.Schedule(static_cast<int>(i));
    }
  }
  par.RunFrom(mine);
  par.WaitIdle();
  // Events go back to their pools only once the streams have drained.
  absl::Status drained = run.streams.SynchronizeAll();
  for (const auto& events : par.events_by_slot) {
    for (const auto& [device_index, event] : events) ReleaseEvent(device_index, event);
  }
  PX_RETURN_IF_ERROR(par.status);
  PX_RETURN_IF_ERROR(drained);
  std::vector<Tensor> fetched;
  for (const Source& s : fetch_sources_) {
    fetched.push_back(s.item < 0 ? feed_values[s.feed] : par.slots[items_[s.item].first_slot + s.output]);
  }
  // The values die with `par`; keep them until the caller's final
  // synchronize like the serial path does.
  for (Tensor& t : par.slots) {
    if (t.buffer() != nullptr) run.retired.push_back(std::move(t));
  }
  return fetched;
}

}  // namespace plexus

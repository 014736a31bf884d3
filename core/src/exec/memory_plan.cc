// The executor's static memory plan (Executor::PlanMemory) and the per-run
// scratch sets that hold its arenas (Executor::TakeScratch).
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

void Executor::PlanMemory() {
  constexpr int64_t kAlign = 256;
  constexpr size_t kMaxPlanned = 8192;  // the greedy placement is quadratic
  struct Planned {
    int slot;
    int device;
    int64_t bytes;
    int first, last;  // items (serial positions) between which it lives
    int64_t offset = -1;
  };
  std::vector<char> fetched(num_slots_, 0);
  for (const Source& s : fetch_sources_) {
    if (s.item >= 0) fetched[items_[s.item].first_slot + s.output] = 1;
  }
  // Follows a slot through forwarding items (which hand their inputs on as
  // outputs): the last reader, or -1 when a reader keeps the value beyond
  // the run's order (a host op, control flow, another device, a fetch).
  std::function<int(int, int, int)> last_reader = [&](int item, int output, int device) -> int {
    const int slot = items_[item].first_slot + output;
    if (fetched[slot]) return -1;
    int last = item;
    for (const Edge& e : items_[item].out_edges[output]) {
      const Item& reader = items_[e.item];
      if (reader.kind == Kind::kKernel) {
        if (reader.device_index != device) return -1;
        last = std::max(last, e.item);
      } else if (reader.kind == Kind::kForward ||
                 (reader.kind == Kind::kView && reader.node->def->output_is_view)) {
        // A view's output is its input 0's memory: follow it as a forward.
        if (e.input >= reader.node->num_outputs()) {
          last = std::max(last, e.item);
          continue;
        }
        int further = last_reader(e.item, e.input, device);
        if (further < 0) return -1;
        last = std::max(last, further);
      } else if (reader.kind == Kind::kView) {
        last = std::max(last, e.item);  // shape values: read when it runs
      } else {
        return -1;
      }
    }
    return last;
  };
  std::vector<Planned> planned;
  for (size_t i = 0; i < items_.size() && planned.size() < kMaxPlanned; ++i) {
    const Item& item = items_[i];
    if (item.kind != Kind::kKernel || !item.static_shapes || !item.constant_outputs.empty()) continue;
    const Node& node = *item.node;
    for (int k = 0; k < node.num_outputs(); ++k) {
      const DataType dtype = node.output_types[k];
      const size_t element = DataTypeSize(dtype);
      if (element == 0 || dtype == DataType::kString || item.kernel->OutputInHostMemory(k)) continue;
      const int64_t bytes = NumElements(node.output_shapes[k].dims()) * static_cast<int64_t>(element);
      if (bytes <= 0) continue;
      const int last = last_reader(static_cast<int>(i), k, item.device_index);
      if (last < 0) continue;
      planned.push_back(Planned{item.first_slot + k, item.device_index, (bytes + kAlign - 1) / kAlign * kAlign,
                                static_cast<int>(i), last});
    }
  }
  if (planned.empty()) return;
  // Greedy by size: the largest tensors first, each at the lowest offset
  // that overlaps no tensor already placed and alive at the same time.
  std::vector<int> by_size(planned.size());
  for (size_t i = 0; i < by_size.size(); ++i) by_size[i] = static_cast<int>(i);
  std::stable_sort(by_size.begin(), by_size.end(),
                   [&](int a, int b) { return planned[a].bytes > planned[b].bytes; });
  slot_offset_.assign(num_slots_, -1);
  arena_bytes_.assign(devices_.size(), 0);
  std::vector<std::vector<int>> placed(devices_.size());  // per device, by offset
  for (int index : by_size) {
    Planned& p = planned[index];
    std::vector<int>& here = placed[p.device];
    int64_t offset = 0;
    for (int other : here) {  // sorted by offset
      const Planned& q = planned[other];
      if (q.last < p.first || p.last < q.first) continue;  // never alive together
      if (offset + p.bytes <= q.offset) break;             // fits in the gap before q
      offset = std::max(offset, q.offset + q.bytes);
    }
    p.offset = offset;
    here.insert(std::upper_bound(here.begin(), here.end(), index,
                                 [&](int a, int b) { return planned[a].offset < planned[b].offset; }),
                index);
    slot_offset_[p.slot] = offset;
    arena_bytes_[p.device] = std::max(arena_bytes_[p.device], offset + p.bytes);
    plan_.tensors++;
    plan_.tensor_bytes += p.bytes;
  }
  for (int64_t bytes : arena_bytes_) plan_.arena_bytes += bytes;
  Log(LogLevel::kDebug, absl::StrCat("memory plan: ", plan_.tensors, " tensors of ", plan_.tensor_bytes,
                                     " bytes in arenas of ", plan_.arena_bytes, " bytes"));
}

absl::StatusOr<std::unique_ptr<Executor::RunScratch>> Executor::TakeScratch() const {
  {
    std::lock_guard<std::mutex> lock(scratch_mu_);
    if (!free_scratch_.empty()) {
      std::unique_ptr<RunScratch> set = std::move(free_scratch_.back());
      free_scratch_.pop_back();
      return set;
    }
  }
  auto set = std::make_unique<RunScratch>();
  set->slots.resize(num_slots_);
  set->retired.reserve(items_.size());
  for (const Item& item : items_) {
    for (size_t k = 0; k < item.constant_outputs.size(); ++k) {
      set->slots[item.first_slot + k] = item.constant_outputs[k];
    }
  }
  if (slot_offset_.empty()) {
    BindLaunches(*set);
    return set;
  }
  set->arenas.assign(devices_.size(), nullptr);
  for (size_t d = 0; d < arena_bytes_.size(); ++d) {
    if (arena_bytes_[d] == 0) continue;
    auto arena = devices_[d]->Allocate(static_cast<size_t>(arena_bytes_[d]));
    if (!arena.ok()) {
      return Annotate(arena.status(), absl::StrCat("the memory plan's arena of ", arena_bytes_[d], " bytes"));
    }
    set->arenas[d] = *std::move(arena);
  }
  set->views.resize(num_slots_);
  for (const Item& item : items_) {
    for (int k = 0; k < item.node->num_outputs(); ++k) {
      const int64_t offset = slot_offset_[item.first_slot + k];
      if (offset < 0) continue;
      const std::shared_ptr<Buffer>& arena = set->arenas[item.device_index];
      const DataType dtype = item.node->output_types[k];
      const Shape& shape = item.node->output_shapes[k].dims();
      const size_t bytes = static_cast<size_t>(NumElements(shape)) * DataTypeSize(dtype);
      set->views[item.first_slot + k] =
          Tensor(dtype, shape, std::make_shared<Buffer>(static_cast<char*>(arena->data()) + offset, bytes, arena));
      set->slots[item.first_slot + k] = set->views[item.first_slot + k];
    }
  }
  BindLaunches(*set);
  return set;
}

}  // namespace plexus

#include "executor.h"

#include "trace.h"

#include <algorithm>
#include <optional>
#include <cstring>
#include <deque>
#include <functional>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "host_services.h"
#include "plexus/logging.h"
#include "plexus/op_def.h"
#include "plexus/plugin_host.h"
#include "plexus/status.h"
#include "plexus/session.h"
#include "session_state.h"
#include "thread_pool.h"

namespace plexus {

namespace {
thread_local const std::atomic<bool>* t_run_cancel = nullptr;
}  // namespace

const std::atomic<bool>* CurrentRunCancelFlag() { return t_run_cancel; }

ScopedRunCancelFlag::ScopedRunCancelFlag(const std::atomic<bool>* flag) : previous_(t_run_cancel) {
  if (flag != nullptr) t_run_cancel = flag;
}
ScopedRunCancelFlag::~ScopedRunCancelFlag() { t_run_cancel = previous_; }

namespace {

std::string EndpointName(const Endpoint& e) { return absl::StrCat(e.node->name, ":", e.index); }

// "node 'x' (op Y) on CPU:0"
std::string Where(const Node& node, const Device& device) {
  return absl::StrCat(node.Describe(), " on ", device.name());
}

}  // namespace

namespace {

// The streams of one run: one per device for each thread slot (slot 0 is
// the thread that called Run; the parallel scheduler gives each pool thread
// a slot, since the ABI serializes calls per stream). On destruction (every
// return path) it waits for them, so no buffer is freed while queued work
// may still read it, and returns them to their devices (a failed one is
// dropped).
class RunStreams {
 public:
  RunStreams(const std::vector<std::shared_ptr<Device>>& devices, int num_slots)
      : devices_(devices), streams_(devices.size() * num_slots, nullptr) {}
  ~RunStreams() {
    for (size_t i = 0; i < streams_.size(); ++i) {
      if (streams_[i] == nullptr) continue;
      Device& device = *devices_[i % devices_.size()];
      // Always wait: work may have been queued after the last SynchronizeAll.
      bool healthy = device.SynchronizeStream(streams_[i]).ok();
      device.ReleaseStream(streams_[i], healthy && !failed_);
    }
  }
  // Slot 0's streams, for every device.
  absl::Status Acquire() {
    for (size_t i = 0; i < devices_.size(); ++i) {
      PX_ASSIGN_OR_RETURN(streams_[i], devices_[i]->AcquireStream());
    }
    return absl::OkStatus();
  }
  PX_Stream* stream(int device_index) const { return streams_[device_index]; }
  // The stream of `device_index` for thread slot `slot`, acquired on first
  // use. Only the thread owning the slot calls this during a run.
  absl::StatusOr<PX_Stream*> StreamFor(int device_index, int slot) {
    PX_Stream*& s = streams_[slot * devices_.size() + device_index];
    if (s == nullptr) {
      PX_ASSIGN_OR_RETURN(s, devices_[device_index]->AcquireStream());
    }
    return s;
  }
  // Waits for every stream; the first sticky error wins.
  absl::Status SynchronizeAll() {
    absl::Status first;
    for (size_t i = 0; i < streams_.size(); ++i) {
      if (streams_[i] == nullptr) continue;
      absl::Status s = devices_[i % devices_.size()]->SynchronizeStream(streams_[i]);
      if (!s.ok() && first.ok()) first = s;
    }
    failed_ = failed_ || !first.ok();
    return first;
  }
  // Waits for slot 0's stream of `device`.
  absl::Status Synchronize(const Device* device) {
    for (size_t i = 0; i < devices_.size(); ++i) {
      if (devices_[i].get() == device) return devices_[i]->SynchronizeStream(streams_[i]);
    }
    return absl::OkStatus();
  }

 private:
  const std::vector<std::shared_ptr<Device>>& devices_;
  std::vector<PX_Stream*> streams_;
  bool failed_ = false;
};

}  // namespace

// What a run needs besides its streams, kept by the executor between runs:
// the memory plan's arenas (one per device) with, for every planned slot, a
// tensor viewing its place, and the serial path's value slots, use counts
// and retired list. A run takes a set and gives it back once its streams
// have drained, so steady-state runs allocate nothing for these;
// concurrent runs each get their own.
struct Executor::RunScratch {
  std::vector<std::shared_ptr<Buffer>> arenas;  // per device, null when none
  std::vector<Tensor> views;                    // per slot, empty when not planned
  std::vector<Tensor> slots;
  std::vector<int> uses;
  std::vector<Tensor> retired;
  std::vector<Tensor> inputs, outputs;
};

struct Executor::RunState {
  RunState(const std::vector<std::shared_ptr<Device>>& devices, int num_slots = 1)
      : streams(devices, num_slots) {}
  TraceRecorder* trace = nullptr;
  // Set by another thread (or a signal handler) to stop the run between
  // nodes with CANCELLED; see RunOptions.
  const std::atomic<bool>* cancel = nullptr;
  absl::Status CheckCancelled() const {
    if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
      return absl::CancelledError("the run was cancelled");
    }
    return absl::OkStatus();
  }
  // Recording a device graph: the streams must not be waited for (the work
  // is recorded, not run).
  bool capturing = false;
  // The memory plan's tensors for this run (null without a plan).
  std::unique_ptr<RunScratch> scratch;
  std::mutex retired_mu;  // for threads of the parallel scheduler
  // Inputs kept alive until the streams have drained: declared before
  // `streams`, so they die after its destructor has waited for the work.
  std::vector<Tensor> retired;
  RunStreams streams;
  void Retire(std::vector<Tensor>& tensors) {
    for (Tensor& t : tensors) {
      if (t.buffer() != nullptr) retired.push_back(std::move(t));
    }
    tensors.clear();
  }
};

namespace {

bool IsControlFlowOp(const std::string& op) {
  return op == "Switch" || op == "Merge" || op == "Enter" || op == "Exit" ||
         op == "NextIteration" || op == "RefSwitch" || op == "RefMerge" || op == "RefEnter" ||
         op == "RefExit" || op == "RefNextIteration";
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

}  // namespace

namespace {

// The device a node asks for: its own NodeDef.device, else that of the first
// node it is colocated with (a "loc:@NAME" entry of its _class attribute).
std::string RequestedDevice(const Graph& graph, const Node& node) {
  if (!node.requested_device.empty()) return node.requested_device;
  const tf::AttrValue* cls = node.FindAttr("_class");
  if (cls == nullptr || cls->value_case() != tf::AttrValue::kList) return "";
  for (const std::string& entry : cls->list().s()) {
    if (entry.rfind("loc:@", 0) != 0) continue;
    const Node* other = graph.FindNode(entry.substr(5));
    if (other != nullptr && !other->requested_device.empty()) return other->requested_device;
  }
  return "";
}

}  // namespace

namespace {

// Ops heavy enough to deserve a thread of their own, whatever their size.
bool IsHeavyOp(const std::string& op) {
  static const auto* heavy = new std::set<std::string, std::less<>>{
      "MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3", "_FusedMatMul", "Conv2D", "Conv3D",
      "_FusedConv2D", "_FusedDepthwiseConv2dNative", "DepthwiseConv2dNative", "Conv2DBackpropInput", "Conv2DBackpropFilter",
      "Einsum", "MaxPool", "AvgPool", "FFT", "IFFT", "RFFT", "IRFFT", "_PlexusFusedElementwise"};
  return heavy->count(op) > 0;
}

bool IsExpensive(const Node& node) {
  if (IsHeavyOp(node.op)) return true;
  // Large outputs: a pass over 64 Ki elements or more.
  for (const PartialShape& shape : node.output_shapes) {
    if (!shape.fully_defined()) continue;
    int64_t elements = 1;
    for (int64_t d : shape.dims()) elements *= d;
    if (elements >= (int64_t{1} << 16)) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<std::shared_ptr<Executor>> Executor::Create(const Graph& graph,
                                                           const Runtime& runtime,
                                                           std::shared_ptr<Device> device,
                                                           Request request, SessionState* state,
                                                           Options options) {
  std::shared_ptr<Executor> exec(new Executor());
  exec->request_ = std::move(request);
  exec->state_ = state;
  const Request& req = exec->request_;

  // Which endpoints are fed.
  std::map<std::pair<int, int>, int> fed;
  for (size_t i = 0; i < req.feeds.size(); ++i) {
    auto key = std::make_pair(req.feeds[i].node->id, req.feeds[i].index);
    if (!fed.emplace(key, static_cast<int>(i)).second) {
      return absl::InvalidArgumentError(absl::StrCat("tensor '", EndpointName(req.feeds[i]),
                                                     "' is fed more than once"));
    }
  }

  // Prune: a node runs when it is a target, when one of its unfed outputs is
  // needed, or when a running node depends on it through a control edge.
  std::vector<char> runs(graph.num_nodes(), 0);
  std::vector<const Node*> work;
  auto mark = [&](const Node* n) {
    if (!runs[n->id]) {
      runs[n->id] = 1;
      work.push_back(n);
    }
  };
  for (const Endpoint& f : req.fetches) {
    if (!fed.count({f.node->id, f.index})) mark(f.node);
  }
  for (const Node* t : req.targets) mark(t);
  while (!work.empty()) {
    const Node* n = work.back();
    work.pop_back();
    for (const Endpoint& in : n->inputs) {
      if (!fed.count({in.node->id, in.index})) mark(in.node);
    }
    for (const Node* c : n->control_inputs) mark(c);
  }
  for (const auto& node : graph.nodes()) {
    if (runs[node->id] && IsControlFlowOp(node->op)) exec->dataflow_ = true;
  }

  // Topological order of the running nodes: Kahn's algorithm over the edges
  // of the pruned subgraph, leaving out loop back edges (out of
  // NextIteration).
  std::vector<int> pending(graph.num_nodes(), 0);
  std::vector<std::vector<const Node*>> out_edges(graph.num_nodes());
  std::vector<const Node*> order;
  auto back_edge = [](const Node* source) {
    return source->op == "NextIteration" || source->op == "RefNextIteration";
  };
  for (const auto& node : graph.nodes()) {
    if (!runs[node->id]) continue;
    for (const Endpoint& in : node->inputs) {
      if (runs[in.node->id] && !fed.count({in.node->id, in.index}) && !back_edge(in.node)) {
        ++pending[node->id];
        out_edges[in.node->id].push_back(node.get());
      }
    }
    for (const Node* c : node->control_inputs) {
      if (!runs[c->id] || back_edge(c)) continue;
      ++pending[node->id];
      out_edges[c->id].push_back(node.get());
    }
  }
  for (const auto& node : graph.nodes()) {
    if (runs[node->id] && pending[node->id] == 0) order.push_back(node.get());
  }
  for (size_t i = 0; i < order.size(); ++i) {
    for (const Node* consumer : out_edges[order[i]->id]) {
      if (--pending[consumer->id] == 0) order.push_back(consumer);
    }
  }
  long running = std::count(runs.begin(), runs.end(), 1);
  if (static_cast<long>(order.size()) != running) {
    for (const auto& node : graph.nodes()) {
      if (runs[node->id] && pending[node->id] > 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            node->Describe(), " is part of a cycle that does not pass through a NextIteration "
            "node (only loop frames may have cycles)"));
      }
    }
  }

  // Place each node: control flow, forwarding and host ops run in the core;
  // kernels on the session's device when it has one, else on another device
  // (host-accessible ones first, where copies are free), saying so.
  std::vector<std::shared_ptr<Device>> fallbacks;
  for (const auto& d : runtime.devices()) {
    if (d != device && d->host_accessible()) fallbacks.push_back(d);
  }
  for (const auto& d : runtime.devices()) {
    if (d != device && !d->host_accessible()) fallbacks.push_back(d);
  }
  auto kernel_on = [](const Device& d, const Node& node) -> const KernelRegistration* {
    // String inputs reach only plugins that speak ABI 0.2 or newer.
    if (HasStringInput(node) && d.plugin().abi_minor() < 2) return nullptr;
    return d.plugin().kernels().Find(node);
  };
  // Nodes whose static output shapes hold at run time: feeds are checked
  // against static shapes, but a fed value that is not a placeholder's (a
  // constant, say) may change values, such as a Reshape's target shape,
  // that the static shapes were inferred from. Everything downstream of
  // such a feed infers its shapes at run time.
  std::vector<char> tainted(graph.num_nodes(), 0);
  for (const Node* node : order) {
    for (const Endpoint& in : node->inputs) {
      if (tainted[in.node->id] || (fed.count({in.node->id, in.index}) && in.node->op != "Placeholder")) {
        tainted[node->id] = 1;
      }
    }
  }
  std::vector<int> item_of(graph.num_nodes(), -1);
  exec->devices_.push_back(device);

  // Copy items at device boundaries (graphs without TF1 control flow): where
  // each value lives (null: host memory) when the executor knows it ahead
  // (not for fed values), and one copy item per value and destination,
  // shared by every reader there, placed just before its first reader.
  std::map<std::pair<int, int>, Device*> location;
  std::map<std::tuple<int, int, Device*>, int> copy_of;
  auto host_side = [](Device* d) { return d == nullptr || d->host_accessible(); };
  auto record_locations = [&](const Node& node, const Item& item) {
    for (int k = 0; k < node.num_outputs(); ++k) {
      const auto key = std::make_pair(node.id, k);
      if (node.output_types[k] == DataType::kString) {
        location[key] = nullptr;
      } else if (item.kind == Kind::kKernel) {
        location[key] = item.kernel->OutputInHostMemory(k) ? nullptr : item.device;
      } else if (item.kind == Kind::kHost) {
        location[key] = nullptr;
      } else if (item.kind == Kind::kForward && k < node.num_inputs()) {
        auto it = location.find({node.inputs[k].node->id, node.inputs[k].index});
        if (it != location.end() && !fed.count({node.inputs[k].node->id, node.inputs[k].index})) {
          location[key] = it->second;
        }
      }
    }
  };
  auto add_copies = [&](const Node& node, Item& item) {
    if (item.kind != Kind::kKernel && item.kind != Kind::kHost) return;
    for (int k = 0; k < node.num_inputs(); ++k) {
      const Endpoint& e = node.inputs[k];
      if (fed.count({e.node->id, e.index}) || e.node->output_types[e.index] == DataType::kString) continue;
      auto loc = location.find({e.node->id, e.index});
      if (loc == location.end()) continue;
      Device* to = item.kind == Kind::kKernel && !item.kernel->InputInHostMemory(k) ? item.device : nullptr;
      Device* from = loc->second;
      if (from == to || (host_side(from) && host_side(to))) continue;
      int& index = copy_of[std::make_tuple(e.node->id, e.index, to)];
      if (index == 0) {
        auto copy_node = std::make_unique<Node>();
        copy_node->id = -1;
        copy_node->name = absl::StrCat(e.node->name, ":", e.index, "/copy_to_", to ? to->name() : "host");
        copy_node->op = "_PlexusCopy";
        copy_node->def = OpRegistry::Global().Find("Identity");
        copy_node->inputs = {e};
        copy_node->input_types = {e.node->output_types[e.index]};
        copy_node->output_types = {e.node->output_types[e.index]};
        copy_node->input_is_ref = {false};
        copy_node->output_shapes = {e.node->output_shapes[e.index]};
        Item copy;
        copy.node = copy_node.get();
        copy.kind = Kind::kCopy;
        copy.device = to;
        copy.first_slot = exec->num_slots_;
        exec->num_slots_ += 1;
        copy.out_edges.resize(1);
        exec->notes_.push_back(absl::StrCat("copy of '", e.node->name, ":", e.index, "' from ",
                                            from ? from->name() : "host memory", " to ",
                                            to ? to->name() : "host memory", " for ", node.Describe()));
        Log(LogLevel::kDebug, exec->notes_.back());
        exec->copy_nodes_.push_back(std::move(copy_node));
        exec->items_.push_back(std::move(copy));
        index = static_cast<int>(exec->items_.size());  // +1, so that 0 means none
      }
      item.input_copies.resize(node.num_inputs(), -1);
      item.input_copies[k] = index - 1;
    }
  };
  for (const Node* node : order) {
    Item item;
    item.node = node;
    item.device = device.get();
    HostOpUse host_use = HostOpUse::kFallback;
    HostOpFn host_op = FindHostOp(node->op, &host_use);
    const std::string& op = node->op;
    if (op == "Switch" || op == "RefSwitch") {
      item.kind = Kind::kSwitch;
    } else if (op == "Merge" || op == "RefMerge") {
      item.kind = Kind::kMerge;
    } else if (op == "Enter" || op == "RefEnter") {
      item.kind = Kind::kEnter;
      PX_ASSIGN_OR_RETURN(item.frame_name, GetAttrString(*node, "frame_name"));
      PX_ASSIGN_OR_RETURN(item.constant_enter, GetAttrBool(*node, "is_constant"));
    } else if (op == "Exit" || op == "RefExit") {
      item.kind = Kind::kExit;
    } else if (op == "NextIteration" || op == "RefNextIteration") {
      item.kind = Kind::kNextIteration;
    } else if (node->def->forwards_inputs || op == "LoopCond") {
      item.kind = Kind::kForward;
    } else if (host_op != nullptr && host_use == HostOpUse::kAlways) {
      item.kind = Kind::kHost;
      item.host_op = host_op;
    } else {
      // A device the node asks for (NodeDef.device, or the device asked for
      // by the node it is colocated with) wins when it exists and has a
      // kernel; otherwise soft placement, with a note saying why.
      std::string request = RequestedDevice(graph, *node);
      std::string refused;
      if (!request.empty()) {
        auto spec = ParseDeviceSpec(request);
        std::shared_ptr<Device> wanted = spec.ok() && !spec->type.empty() ? runtime.FindDevice(*spec) : nullptr;
        if (!spec.ok()) {
          refused = std::string(spec.status().message());
        } else if (spec->type.empty()) {
          // "/job:worker" and the like name no device: nothing to honour.
        } else if (wanted == nullptr) {
          refused = "no such device here";
        } else if ((item.kernel = kernel_on(*wanted, *node)) == nullptr) {
          refused = absl::StrCat("no kernel on ", wanted->name());
        } else if (wanted != device) {
          item.device = wanted.get();
          auto it = std::find(exec->devices_.begin(), exec->devices_.end(), wanted);
          item.device_index = static_cast<int>(it - exec->devices_.begin());
          if (it == exec->devices_.end()) exec->devices_.push_back(wanted);
          exec->notes_.push_back(absl::StrCat(node->Describe(), ": placed on ", wanted->name(),
                                              " as requested ('", request, "')"));
          Log(LogLevel::kDebug, exec->notes_.back());
        }
      }
      if (item.kernel == nullptr) item.kernel = kernel_on(*device, *node);
      if (!refused.empty() && item.kernel != nullptr) {
        exec->notes_.push_back(absl::StrCat(node->Describe(), ": requested '", request, "' (", refused,
                                            "), placed on ", device->name()));
        Log(LogLevel::kInfo, exec->notes_.back());
      }
      for (size_t f = 0; item.kernel == nullptr && f < fallbacks.size(); ++f) {
        const std::shared_ptr<Device>& other = fallbacks[f];
        item.kernel = kernel_on(*other, *node);
        if (item.kernel == nullptr) continue;
        item.device = other.get();
        auto it = std::find(exec->devices_.begin(), exec->devices_.end(), other);
        item.device_index = static_cast<int>(it - exec->devices_.begin());
        if (it == exec->devices_.end()) exec->devices_.push_back(other);
        exec->notes_.push_back(absl::StrCat(node->Describe(), ": no kernel on ", device->name(),
                                            ", placed on ", other->name()));
        Log(LogLevel::kInfo, exec->notes_.back());
      }
      if (item.kernel == nullptr && host_op != nullptr) {
        item.kind = Kind::kHost;
        item.host_op = host_op;
        item.device = device.get();
        exec->notes_.push_back(absl::StrCat(node->Describe(), ": no kernel on ", device->name(),
                                            ", run by the core on the host"));
        Log(LogLevel::kDebug, exec->notes_.back());
      } else if (item.kernel == nullptr) {
        return absl::NotFoundError(absl::StrCat(Where(*node, *device), ": ",
                                                DescribeKernelMismatch(*node, device->plugin()),
                                                fallbacks.empty() ? "" : ", nor does any other device"));
      }
    }
    item.string_inputs = HasStringInput(*node);
    if (item.kernel != nullptr) {
      // Inputs must be static too (a partly known input could reach a size
      // the static output does not fit), and not from a stateful producer
      // (a variable's shape may change with Assign(validate_shape=false)).
      item.static_shapes = !tainted[node->id];
      for (const PartialShape& shape : node->output_shapes) item.static_shapes &= shape.fully_defined();
      for (const Endpoint& in : node->inputs) {
        item.static_shapes &= in.node->output_shapes[in.index].fully_defined() && !in.node->def->is_stateful;
      }
      PX_RETURN_IF_ERROR(item.device->Open());
      item.instance = item.kernel->user_data;  // stateless kernels get user_data
      if (item.kernel->create != nullptr) {
        item.instance = nullptr;
        PX_NodeView view{node, {}, {}};
        absl::Status s = TakePluginStatus(
            item.kernel->create(item.kernel->user_data, &view, &item.instance));
        if (!s.ok()) {
          return absl::Status(s.code(), absl::StrCat(Where(*node, *item.device),
                                                     ": kernel creation failed: ", s.message()));
        }
      }
    }
    if (!exec->dataflow_) add_copies(*node, item);
    item.first_slot = exec->num_slots_;
    exec->num_slots_ += node->num_outputs();
    item.out_edges.resize(node->num_outputs());
    record_locations(*node, item);
    item_of[node->id] = static_cast<int>(exec->items_.size());
    exec->items_.push_back(std::move(item));
  }

  // Wire inputs and count the uses of each slot.
  exec->slot_uses_.assign(exec->num_slots_, 0);
  auto source_of = [&](const Endpoint& e) {
    Source s;
    auto it = fed.find({e.node->id, e.index});
    if (it != fed.end()) {
      s.feed = it->second;
    } else {
      s.item = item_of[e.node->id];
      s.output = e.index;
      exec->slot_uses_[exec->items_[s.item].first_slot + s.output]++;
    }
    return s;
  };
  for (size_t i = 0; i < exec->items_.size(); ++i) {
    Item& item = exec->items_[i];
    for (int k = 0; k < item.node->num_inputs(); ++k) {
      Source s;
      if (!item.input_copies.empty() && item.input_copies[k] >= 0) {
        s.item = item.input_copies[k];
        exec->slot_uses_[exec->items_[s.item].first_slot]++;
      } else {
        s = source_of(item.node->inputs[k]);
      }
      item.inputs.push_back(s);
      if (s.item >= 0) {
        exec->items_[s.item].out_edges[s.output].push_back(Edge{static_cast<int>(i), k});
        ++item.num_data_inputs;
        if (exec->items_[s.item].kind == Kind::kNextIteration) ++item.num_back_edges;
      }
    }
    item.pending = item.num_data_inputs;
    for (const Node* c : item.node->control_inputs) {
      if (item_of[c->id] < 0) continue;
      exec->items_[item_of[c->id]].control_out.push_back(static_cast<int>(i));
      ++item.pending;
    }
  }
  for (const Endpoint& f : req.fetches) exec->fetch_sources_.push_back(source_of(f));

  // Constant nodes (no inputs, no control dependencies) run once, now; every
  // run then shares their outputs instead of recomputing them.
  RunState build(exec->devices_);
  PX_RETURN_IF_ERROR(build.streams.Acquire());
  for (Item& item : exec->items_) {
    const Node& node = *item.node;
    std::vector<Tensor> outputs;
    if (item.kind == Kind::kCopy) {
      // A constant brought to another device: copied once, here, instead of
      // at every run.
      const Source& s = item.inputs[0];
      if (s.item < 0 || exec->items_[s.item].constant_outputs.empty()) continue;
      PX_RETURN_IF_ERROR(exec->Execute(item, {exec->items_[s.item].constant_outputs[s.output]}, &outputs, build,
                                       build.streams.stream(item.device_index)));
      item.constant_outputs = std::move(outputs);
      continue;
    }
    if ((item.kind != Kind::kKernel && item.kind != Kind::kHost) || !node.def->is_constant ||
        !node.inputs.empty() || !node.control_inputs.empty()) {
      continue;
    }
    PX_RETURN_IF_ERROR(exec->Execute(item, {}, &outputs, build, build.streams.stream(item.device_index)));
    item.constant_outputs = std::move(outputs);
  }
  PX_RETURN_IF_ERROR(build.streams.SynchronizeAll());

  // Inter-op parallelism pays when two expensive items can run at once:
  // some depth (longest path from the sources) holds two of them, and
  // items at one depth never depend on each other.
  std::vector<int> depth(exec->items_.size(), 0);
  std::map<int, int> expensive_at_depth;
  for (size_t i = 0; i < exec->items_.size(); ++i) {
    Item& item = exec->items_[i];
    for (const Source& s : item.inputs) {
      if (s.item >= 0) depth[i] = std::max(depth[i], depth[s.item] + 1);
    }
    for (const Node* c : item.node->control_inputs) {
      if (item_of[c->id] >= 0) depth[i] = std::max(depth[i], depth[item_of[c->id]] + 1);
    }
    item.expensive = item.kind == Kind::kKernel && item.constant_outputs.empty() && IsExpensive(*item.node);
    if (item.expensive && ++expensive_at_depth[depth[i]] == 2 && options.inter_op_parallelism &&
        !exec->dataflow_ && InterOpPool::Get() != nullptr) {
      exec->parallel_ = true;
    }
  }
  for (size_t d = 0; d < exec->devices_.size(); ++d) exec->event_pools_.push_back(std::make_unique<EventPool>());
  // The plan follows the serial order, so only serial runs use it.
  exec->fetch_to_host_ = options.fetch_to_host;
  if (options.memory_plan && !exec->dataflow_ && !exec->parallel_) exec->PlanMemory();
  exec->DecideDeviceGraph(options);
  return exec;
}

// The span of one item on the timeline, recorded when it goes out of scope
// (whichever way the item's run returns).
class Executor::TraceSpan {
 public:
  TraceSpan(TraceRecorder* trace, const Item& item)
      : trace_(trace), item_(item), start_(trace ? trace->Now() : 0) {}
  ~TraceSpan() {
    if (trace_ == nullptr) return;
    const bool on_device = (item_.kind == Kind::kKernel || item_.kind == Kind::kCopy) && item_.device != nullptr;
    trace_->Add({item_.node->name, item_.node->op, on_device ? item_.device->name() : "core", start_,
                 trace_->Now() - start_, TraceThreadId()});
  }

 private:
  TraceRecorder* trace_;
  const Item& item_;
  int64_t start_;
};

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
  if (item.kind == Kind::kHost) {
    for (size_t k = 0; k < inputs.size(); ++k) {
      Tensor& value = inputs[k];
      if (value.device() != nullptr) {
        // Produced on a run stream: wait for it before reading it here.
        if (!inputs_ready) {
          PX_RETURN_IF_ERROR(Annotate(run.streams.Synchronize(value.device()), node.Describe()));
        }
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
      } else if (reader.kind == Kind::kForward) {
        if (e.input >= reader.node->num_outputs()) {
          last = std::max(last, e.item);
          continue;
        }
        int further = last_reader(e.item, e.input, device);
        if (further < 0) return -1;
        last = std::max(last, further);
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
  if (slot_offset_.empty()) return set;
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
    }
  }
  return set;
}

struct Executor::EventPool {
  std::mutex mu;
  std::vector<PX_Event*> free;
};

// A recorded device graph and everything its work reads and writes: the
// feed buffers, the memory plan's arenas (a scratch set kept out of the
// free list) and every tensor the recording run made (kept, so their
// addresses stay valid). The graph dies first.
struct Executor::Recording {
  std::shared_ptr<Device> device;
  PX_Graph* graph = nullptr;
  std::vector<Tensor> feeds;
  std::unique_ptr<RunScratch> scratch;
  std::vector<Tensor> kept;
  std::vector<Tensor> fetched;
  ~Recording() {
    if (graph != nullptr) device->DestroyGraph(graph);
  }
};

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

absl::Status Executor::Compute(const Item& item, absl::Span<const Tensor* const> inputs,
                               std::vector<Tensor>* outputs_ptr, PX_Stream* stream,
                               const RunState& run) const {
  PX_RETURN_IF_ERROR(run.CheckCancelled());
  const Node& node = *item.node;
  Device& device = *item.device;
  std::vector<Tensor>& outputs = *outputs_ptr;
  // Output shapes: from the graph when they are static, else from the shape
  // function, now that input shapes are exact.
  std::optional<InferenceContext> ctx;
  if (!item.static_shapes) {
    std::vector<PartialShape> input_shapes;
    std::vector<const Tensor*> input_values;
    for (const Tensor* t : inputs) {
      input_shapes.push_back(PartialShape(t->shape()));
      input_values.push_back(t->host_readable() ? t : nullptr);
    }
    ctx.emplace(node, std::move(input_shapes), std::move(input_values));
    PX_RETURN_IF_ERROR(Annotate(InferShapes(*ctx), absl::StrCat("on ", device.name())));
  }
  outputs.assign(node.num_outputs(), Tensor());
  absl::InlinedVector<DLTensor, 4> output_descs(node.num_outputs(), DLTensor{});
  for (int k = 0; k < node.num_outputs(); ++k) {
    const PartialShape& shape = item.static_shapes ? node.output_shapes[k] : ctx->output(k);
    if (!shape.fully_defined()) {
      // The kernel allocates it; its dtype and device are known already.
      DLTensor& d = output_descs[k];
      d.ndim = -1;
      auto dl = ToDLDataType(node.output_types[k]);
      if (dl.ok()) d.dtype = *dl;
      bool host = item.kernel->OutputInHostMemory(k);
      d.device.device_type = host ? kDLCPU
                                  : static_cast<DLDeviceType>(device.plugin().table().dlpack_device_type);
      d.device.device_id = host ? 0 : device.ordinal();
      continue;
    }
    if (run.scratch != nullptr && !run.scratch->views.empty() && run.scratch->views[item.first_slot + k].valid()) {
      // A planned tensor: its place in the run's arena.
      outputs[k] = run.scratch->views[item.first_slot + k];
      output_descs[k] = outputs[k].ToDLTensor();
      continue;
    }
    auto allocated = item.kernel->OutputInHostMemory(k)
                         ? Tensor::AllocateHost(node.output_types[k], shape.dims())
                         : device.AllocateTensor(node.output_types[k], shape.dims());
    if (!allocated.ok()) {
      return Annotate(allocated.status(), absl::StrCat(Where(node, device), ": output ", k));
    }
    outputs[k] = *std::move(allocated);
    output_descs[k] = outputs[k].ToDLTensor();
  }
  absl::InlinedVector<DLTensor, 4> input_descs;
  input_descs.reserve(inputs.size());
  // String inputs cross the ABI as arrays of (pointer, size) pairs.
  std::vector<std::vector<PX_StringRef>> string_refs;
  if (item.string_inputs) string_refs.reserve(inputs.size());
  for (const Tensor* input : inputs) {
    const Tensor& t = *input;
    input_descs.push_back(KernelInputDescriptor(t, &string_refs));
  }

  PX_KernelContext kctx{&node, &device, item.kernel, &outputs, output_descs.data(),
                        output_descs.size()};
  absl::Status status = TakePluginStatus(item.kernel->compute(
      item.instance, &kctx, input_descs.data(), input_descs.size(), output_descs.data(),
      output_descs.size(), stream));
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat(Where(node, device), ": ", status.message()));
  }
  for (int k = 0; k < node.num_outputs(); ++k) {
    if (!outputs[k].valid()) {
      return absl::InternalError(absl::StrCat(Where(node, device), ": the kernel returned without "
                                              "allocating output ", k));
    }
  }
  return absl::OkStatus();
}

bool Executor::IsCachedConstant(const Tensor& tensor) const {
  for (const Item& item : items_) {
    for (const Tensor& t : item.constant_outputs) {
      if (t.buffer() != nullptr && t.buffer() == tensor.buffer()) return true;
    }
  }
  return false;
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
  InterOpPool* pool = parallel_ ? InterOpPool::Get() : nullptr;
  if (pool != nullptr && pool->CurrentThreadId() >= 0) pool = nullptr;
  RunState run(devices_, pool != nullptr ? 1 + pool->num_threads() : 1);
  run.trace = trace;
  run.cancel = CurrentRunCancelFlag();
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
  for (const Item& item : items_) {
    const Node& node = *item.node;
    // The common case, a kernel whose inputs are already where it reads
    // them (no copy, no variable reference, no string): the kernel reads the
    // slots directly, without copying tensors into an input list.
    bool direct = item.kind == Kind::kKernel && item.constant_outputs.empty();
    pointers.clear();
    for (size_t k = 0; direct && k < item.inputs.size(); ++k) {
      const Tensor& t = value_of(item.inputs[k]);
      Device* target = item.kernel->InputInHostMemory(static_cast<int>(k)) ? nullptr : item.device;
      direct = !t.is_ref() && t.dtype() != DataType::kString &&
               (t.device() == target || (t.host_readable() && (target == nullptr || target->host_accessible())));
      pointers.push_back(&t);
    }
    if (direct) {
      TraceSpan span(run.trace, item);
      PX_RETURN_IF_ERROR(Compute(item, pointers, &outputs, run.streams.stream(item.device_index), run));
    } else {
      inputs.clear();
      for (const Source& s : item.inputs) inputs.push_back(value_of(s));
      PX_RETURN_IF_ERROR(Execute(item, std::move(inputs), &outputs, run, run.streams.stream(item.device_index)));
    }
    for (int k = 0; k < node.num_outputs(); ++k) slots[item.first_slot + k] = std::move(outputs[k]);
    // Retire inputs nobody else needs; they are freed once the streams drain.
    // Planned values need no keeping: their arena lives with the scratch.
    for (const Source& s : item.inputs) {
      if (s.item < 0) continue;
      const int slot = items_[s.item].first_slot + s.output;
      if (--uses[slot] != 0) continue;
      if (!slot_offset_.empty() && slot_offset_[slot] >= 0) {
        slots[slot] = Tensor();
      } else {
        run.retired.push_back(std::move(slots[slot]));
      }
    }
  }
  std::vector<Tensor> fetched;
  for (const Source& s : fetch_sources_) fetched.push_back(value_of(s));
  // Values still in slots (fetched, or never read) wait with the retired
  // ones for the streams to drain; the slots stay for the next run.
  for (Tensor& t : slots) {
    if (!t.valid()) continue;
    if (t.buffer() != nullptr || t.is_ref()) run.retired.push_back(std::move(t));
    t = Tensor();
  }
  return fetched;
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
        events_by_slot(1 + p->num_threads()) {
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
    while (!stack.empty()) {
      const int i = stack.back();
      stack.pop_back();
      if (failed.load(std::memory_order_relaxed)) continue;
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
    if (item.kind == Kind::kForward) {
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

namespace {

// One instance of a loop frame: a frame name entered from one iteration of
// its parent frame.
struct Frame {
  std::string name;
  Frame* parent = nullptr;
  int64_t parent_iter = 0;
  int64_t max_iter = 0;
  // Values of loop-invariant Enter nodes, given to every iteration.
  std::vector<std::pair<int, Tensor>> invariants;
  std::map<std::pair<int64_t, std::string>, Frame*> children;
};

struct Token {
  Tensor value;
  bool dead = false;
};

struct NodeState {
  std::vector<Tensor> inputs;
  int pending = 0;
  int dead_data = 0;
  int arrived = 0;  // Merge: data inputs arrived, not counting back edges
  bool dead = false;
  bool fired = false;
};

struct Task {
  int item;
  Frame* frame;
  int64_t iter;
  std::vector<Tensor> inputs;
  bool dead;
  int merge_index = -1;  // the input a Merge forwards
};

absl::StatusOr<bool> PredicateValue(const Node& node, const Tensor& pred) {
  PX_ASSIGN_OR_RETURN(Tensor host, CopyTensorTo(pred, nullptr));
  if (host.dtype() != DataType::kBool || host.num_elements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(node.Describe(), ": the predicate must be a bool "
                                                   "scalar, got ", host.DebugString()));
  }
  return host.data<uint8_t>()[0] != 0;
}

}  // namespace

// TensorFlow 1 control flow: every value is tagged with a frame instance and
// an iteration; Switch makes one output dead, Merge forwards the first live
// input, a dead input makes a node's outputs dead without running it, Enter
// moves into a child frame, NextIteration into the next iteration and Exit
// back to the parent frame.
absl::StatusOr<std::vector<Tensor>> Executor::RunDataflow(const std::vector<Tensor>& feed_values,
                                                          RunState& run) const {
  std::vector<std::unique_ptr<Frame>> frames;
  frames.push_back(std::make_unique<Frame>());
  Frame* root = frames.back().get();
  std::map<std::tuple<int, const Frame*, int64_t>, NodeState> states;
  std::deque<Task> ready;

  // Fetches produced by items in the root frame.
  std::map<std::pair<int, int>, std::vector<int>> fetch_of;
  std::vector<Tensor> fetched(fetch_sources_.size());
  std::vector<int> fetch_state(fetch_sources_.size(), 0);  // 0 missing, 1 live, 2 dead
  for (size_t i = 0; i < fetch_sources_.size(); ++i) {
    const Source& s = fetch_sources_[i];
    if (s.item < 0) {
      fetched[i] = feed_values[s.feed];
      fetch_state[i] = 1;
    } else {
      fetch_of[{s.item, s.output}].push_back(static_cast<int>(i));
    }
  }

  auto state_of = [&](int item, Frame* frame, int64_t iter) -> NodeState& {
    auto key = std::make_tuple(item, static_cast<const Frame*>(frame), iter);
    auto it = states.find(key);
    if (it != states.end()) return it->second;
    NodeState& st = states[key];
    const Item& it_item = items_[item];
    st.inputs.resize(it_item.node->num_inputs());
    st.pending = it_item.pending;
    for (size_t k = 0; k < it_item.inputs.size(); ++k) {
      if (it_item.inputs[k].item < 0) st.inputs[k] = feed_values[it_item.inputs[k].feed];
    }
    return st;
  };
  auto finish = [&](int item, Frame* frame, int64_t iter, NodeState& st, int merge_index) {
    ready.push_back(Task{item, frame, iter, std::move(st.inputs), st.dead, merge_index});
    states.erase(std::make_tuple(item, static_cast<const Frame*>(frame), iter));
  };
  // Delivers one token to input `input` (-1: a control edge) of `item`.
  auto deliver = [&](int item, int input, const Token& token, Frame* frame, int64_t iter) {
    const Item& target = items_[item];
    NodeState& st = state_of(item, frame, iter);
    if (target.kind == Kind::kMerge) {
      // Control inputs of a Merge are not waited for (TensorFlow waits; no
      // real graph here has them). Once fired, the state stays as a marker
      // until every input that is not a loop back edge has arrived, so a
      // late token cannot fire the Merge again.
      if (input < 0) return;
      const bool back_edge = items_[target.inputs[input].item].kind == Kind::kNextIteration;
      const int expected = target.num_data_inputs - target.num_back_edges;
      if (!back_edge) ++st.arrived;
      if (!st.fired) {
        if (!token.dead) {
          st.fired = true;
          ready.push_back(Task{item, frame, iter, {}, false, input});
          ready.back().inputs.resize(target.node->num_inputs());
          ready.back().inputs[input] = token.value;
        } else if (++st.dead_data == target.num_data_inputs) {
          st.fired = true;
          ready.push_back(Task{item, frame, iter, {}, true, -1});
        }
      }
      if (st.fired && (back_edge || st.arrived >= expected)) {
        states.erase(std::make_tuple(item, static_cast<const Frame*>(frame), iter));
      }
      return;
    }
    if (input >= 0) st.inputs[input] = token.value;
    if (token.dead) st.dead = true;
    if (--st.pending == 0) finish(item, frame, iter, st, -1);
  };
  auto propagate = [&](int item, const std::vector<Token>& outs, bool node_dead, Frame* frame,
                       int64_t iter) {
    const Item& source = items_[item];
    for (size_t k = 0; k < outs.size(); ++k) {
      for (const Edge& e : source.out_edges[k]) deliver(e.item, e.input, outs[k], frame, iter);
      if (frame == root) {
        auto f = fetch_of.find({item, static_cast<int>(k)});
        if (f != fetch_of.end()) {
          for (int i : f->second) {
            fetched[i] = outs[k].value;
            fetch_state[i] = outs[k].dead ? 2 : 1;
          }
        }
      }
    }
    for (int c : source.control_out) deliver(c, -1, Token{Tensor(), node_dead}, frame, iter);
  };

  for (size_t i = 0; i < items_.size(); ++i) {
    if (items_[i].pending == 0 && items_[i].kind != Kind::kMerge) {
      NodeState& st = state_of(static_cast<int>(i), root, 0);
      finish(static_cast<int>(i), root, 0, st, -1);
    }
  }

  std::vector<Tensor> outputs;
  // On an error return, wait for the streams before the tensors above are
  // freed: queued work may still read or write them.
  struct SyncOnExit {
    RunStreams& streams;
    ~SyncOnExit() { streams.SynchronizeAll().IgnoreError(); }
  } sync_on_exit{run.streams};
  while (!ready.empty()) {
    Task task = std::move(ready.front());
    ready.pop_front();
    const Item& item = items_[task.item];
    const Node& node = *item.node;
    std::vector<Token> outs(node.num_outputs());
    if (task.dead) {
      for (Token& t : outs) t.dead = true;
    }
    switch (item.kind) {
      case Kind::kSwitch: {
        if (task.dead) break;
        PX_RETURN_IF_ERROR(Dereference(node, task.inputs));
        if (Device* d = task.inputs[1].device(); d != nullptr && !d->host_accessible()) {
          // Made by a kernel on a run stream: wait for it before reading it.
          PX_RETURN_IF_ERROR(Annotate(run.streams.Synchronize(d), node.Describe()));
        }
        PX_ASSIGN_OR_RETURN(bool pred, PredicateValue(node, task.inputs[1]));
        outs[pred ? 1 : 0].value = task.inputs[0];
        outs[pred ? 0 : 1].dead = true;
        break;
      }
      case Kind::kMerge: {
        if (task.dead) break;
        outs[0].value = task.inputs[task.merge_index];
        PX_ASSIGN_OR_RETURN(outs[1].value, Tensor::AllocateHost(DataType::kInt32, {}));
        outs[1].value.data<int32_t>()[0] = task.merge_index;
        break;
      }
      case Kind::kEnter: {
        if (!task.dead) {
          PX_RETURN_IF_ERROR(Dereference(node, task.inputs));
          outs[0].value = task.inputs[0];
        }
        Frame*& child = task.frame->children[{task.iter, item.frame_name}];
        if (child == nullptr) {
          frames.push_back(std::make_unique<Frame>());
          child = frames.back().get();
          child->name = item.frame_name;
          child->parent = task.frame;
          child->parent_iter = task.iter;
        }
        if (item.constant_enter && !task.dead) {
          child->invariants.emplace_back(task.item, outs[0].value);
          for (int64_t i = 0; i <= child->max_iter; ++i) propagate(task.item, outs, false, child, i);
        } else {
          propagate(task.item, outs, task.dead, child, 0);
        }
        run.Retire(task.inputs);
        continue;
      }
      case Kind::kExit: {
        if (task.frame->parent == nullptr) {
          return absl::InvalidArgumentError(absl::StrCat(node.Describe(), " is not inside a loop frame"));
        }
        if (task.dead) continue;  // only the final iteration's value leaves
        PX_RETURN_IF_ERROR(Dereference(node, task.inputs));
        outs[0].value = task.inputs[0];
        propagate(task.item, outs, false, task.frame->parent, task.frame->parent_iter);
        continue;
      }
      case Kind::kNextIteration: {
        if (task.frame->parent == nullptr) {
          return absl::InvalidArgumentError(absl::StrCat(node.Describe(), " is not inside a loop frame"));
        }
        if (task.dead) continue;  // the loop has ended
        PX_RETURN_IF_ERROR(Dereference(node, task.inputs));
        outs[0].value = task.inputs[0];
        Frame* frame = task.frame;
        int64_t next = task.iter + 1;
        if (next > frame->max_iter) {
          frame->max_iter = next;
          for (const auto& [enter, value] : frame->invariants) {
            std::vector<Token> inv(1);
            inv[0].value = value;
            propagate(enter, inv, false, frame, next);
          }
        }
        propagate(task.item, outs, false, frame, next);
        continue;
      }
      default: {
        if (task.dead) break;
        PX_RETURN_IF_ERROR(Execute(item, std::move(task.inputs), &outputs, run,
                                   run.streams.stream(item.device_index)));
        for (int k = 0; k < node.num_outputs(); ++k) outs[k].value = std::move(outputs[k]);
        break;
      }
    }
    propagate(task.item, outs, task.dead, task.frame, task.iter);
    run.Retire(task.inputs);
    // Outputs nobody reads may still be written by queued device work: they
    // are freed with the rest once the streams drain.
    for (Token& t : outs) {
      if (t.value.buffer() != nullptr) run.retired.push_back(std::move(t.value));
    }
    if (run.retired.size() > 4096) {
      PX_RETURN_IF_ERROR(run.streams.SynchronizeAll());
      run.retired.clear();
    }
  }
  for (size_t i = 0; i < fetched.size(); ++i) {
    if (fetch_state[i] == 1) continue;
    const Endpoint& e = request_.fetches[i];
    return absl::InvalidArgumentError(absl::StrCat(
        "fetch '", EndpointName(e), "' ",
        fetch_state[i] == 2 ? "is dead: it is on the branch of a conditional that was not taken"
                            : "was never computed: its inputs were not all produced (a dead "
                              "branch or a loop that did not finish)"));
  }
  return fetched;
}

}  // namespace plexus

// The executor's plan of a graph signature (Executor::Create): pruning to
// what the fetches and targets need, a topological order, one item per
// node on the device the placer chose, copy items at device boundaries,
// inputs wired to slots, constants run once, and the parallel decision.
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
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/thread_pool.h"
#include "base/trace.h"
#include "devices/host_ops.h"
#include "devices/host_services.h"
#include "exec/executor.h"
#include "exec/executor_internal.h"
#include "exec/session_state.h"
#include "placer/placer.h"
#include "plexus/logging.h"
#include "plexus/op_def.h"
#include "plexus/plugin_host.h"
#include "plexus/session.h"
#include "plexus/status.h"

namespace plexus {
namespace {

std::string DescribeNode(const Node& node) { return node.Describe(); }

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

// The steps of Executor::Create, over the state they share.
struct Executor::Builder {
  Builder(const Graph& g, const Runtime& r, std::shared_ptr<Device> d, Executor* e)
      : graph(g), device(std::move(d)), exec(e), placer(r, device, &DescribeNode),
        item_of(g.num_nodes(), -1) {}

  const Graph& graph;
  std::shared_ptr<Device> device;
  Executor* exec;
  const Placer placer;
  std::map<std::pair<int, int>, int> fed;  // fed endpoint -> feed index
  std::vector<const Node*> order;          // the running nodes, topologically
  std::vector<char> tainted;               // see FindTainted
  std::vector<int> item_of;                // node id -> item, -1 when it does not run
  // Copy items (graphs without TF1 control flow): where each value lives
  // (null: host memory) when the executor knows it ahead (not for fed
  // values), and one copy item per value and destination.
  std::map<std::pair<int, int>, Device*> location;
  std::map<std::tuple<int, int, Device*>, int> copy_of;  // +1, so that 0 means none

  bool IsFed(const Endpoint& e) const { return fed.count({e.node->id, e.index}) > 0; }

  absl::Status FindFeeds();
  absl::Status PruneAndOrder();
  void FindTainted();
  absl::Status BuildItems();
  absl::Status Place(const Node& node, Item& item);
  bool StaticShapes(const Node& node) const;
  bool ConstInputsHold(const Node& node) const;
  absl::Status CreateKernel(const Node& node, Item& item);
  void RecordLocations(const Node& node, const Item& item);
  void AddCopies(const Node& node, Item& item);
  void WireInputs();
  absl::Status RunConstants();
  void DecideParallel(const Options& options);
};

absl::Status Executor::Builder::FindFeeds() {
  const Request& req = exec->request_;
  for (size_t i = 0; i < req.feeds.size(); ++i) {
    auto key = std::make_pair(req.feeds[i].node->id, req.feeds[i].index);
    if (!fed.emplace(key, static_cast<int>(i)).second) {
      return absl::InvalidArgumentError(absl::StrCat("tensor '", EndpointName(req.feeds[i]),
                                                     "' is fed more than once"));
    }
  }
  return absl::OkStatus();
}

// Prune: a node runs when it is a target, when one of its unfed outputs is
// needed, or when a running node depends on it through a control edge.
// Then a topological order of the running nodes: Kahn's algorithm over the
// edges of the pruned subgraph, leaving out loop back edges (out of
// NextIteration).
absl::Status Executor::Builder::PruneAndOrder() {
  const Request& req = exec->request_;
  std::vector<char> runs(graph.num_nodes(), 0);
  std::vector<const Node*> work;
  auto mark = [&](const Node* n) {
    if (!runs[n->id]) {
      runs[n->id] = 1;
      work.push_back(n);
    }
  };
  for (const Endpoint& f : req.fetches) {
    if (!IsFed(f)) mark(f.node);
  }
  for (const Node* t : req.targets) mark(t);
  while (!work.empty()) {
    const Node* n = work.back();
    work.pop_back();
    for (const Endpoint& in : n->inputs) {
      if (!IsFed(in)) mark(in.node);
    }
    for (const Node* c : n->control_inputs) mark(c);
  }
  for (const auto& node : graph.nodes()) {
    if (runs[node->id] && IsControlFlowOp(node->op)) exec->dataflow_ = true;
  }

  std::vector<int> pending(graph.num_nodes(), 0);
  std::vector<std::vector<const Node*>> out_edges(graph.num_nodes());
  auto back_edge = [](const Node* source) {
    return source->op == "NextIteration" || source->op == "RefNextIteration";
  };
  for (const auto& node : graph.nodes()) {
    if (!runs[node->id]) continue;
    for (const Endpoint& in : node->inputs) {
      if (runs[in.node->id] && !IsFed(in) && !back_edge(in.node)) {
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
  return absl::OkStatus();
}

// Nodes whose static output shapes hold at run time: feeds are checked
// against static shapes, but a fed value that is not a placeholder's (a
// constant, say) may change values, such as a Reshape's target shape, that
// the static shapes were inferred from. Everything downstream of such a
// feed infers its shapes at run time.
void Executor::Builder::FindTainted() {
  tainted.assign(graph.num_nodes(), 0);
  for (const Node* node : order) {
    for (const Endpoint& in : node->inputs) {
      if (tainted[in.node->id] || (IsFed(in) && in.node->op != "Placeholder")) tainted[node->id] = 1;
    }
  }
}

// How the node runs and where (placer/placer.h): control flow, forwarding
// and host ops in the core; kernels on the session's device when it has
// one, else on another device, saying so.
absl::Status Executor::Builder::Place(const Node& node, Item& item) {
  PX_ASSIGN_OR_RETURN(PlacementChoice choice, placer.Place(node, RequestedDevice(graph, node)));
  const std::string& op = node.op;
  if (choice.how == PlacedBy::kCore) {
    if (op == "Switch" || op == "RefSwitch") {
      item.kind = Kind::kSwitch;
    } else if (op == "Merge" || op == "RefMerge") {
      item.kind = Kind::kMerge;
    } else if (op == "Enter" || op == "RefEnter") {
      item.kind = Kind::kEnter;
      PX_ASSIGN_OR_RETURN(item.frame_name, GetAttrString(node, "frame_name"));
      PX_ASSIGN_OR_RETURN(item.constant_enter, GetAttrBool(node, "is_constant"));
    } else if (op == "Exit" || op == "RefExit") {
      item.kind = Kind::kExit;
    } else if (op == "NextIteration" || op == "RefNextIteration") {
      item.kind = Kind::kNextIteration;
    } else if (IsMetadataOp(node)) {
      item.kind = Kind::kView;
      item.static_shapes = StaticShapes(node);
    } else {
      item.kind = Kind::kForward;
    }
  } else if (choice.how == PlacedBy::kHostOp) {
    item.kind = Kind::kHost;
    item.host_op = choice.host_op;
  } else {
    item.kernel = choice.kernel;
    item.device = choice.device.get();
    auto it = std::find(exec->devices_.begin(), exec->devices_.end(), choice.device);
    item.device_index = static_cast<int>(it - exec->devices_.begin());
    if (it == exec->devices_.end()) exec->devices_.push_back(choice.device);
  }
  if (!choice.note.empty()) {
    exec->notes_.push_back(choice.note);
    Log(choice.note_level, choice.note);
  }
  exec->placement_.nodes.push_back(NodePlacement{
      node.name, node.op, choice.how, choice.how == PlacedBy::kKernel ? item.device->name() : "",
      choice.how == PlacedBy::kKernel ? item.device->plugin().name() : "", choice.reason});
  return absl::OkStatus();
}

// Whether the node's output shapes in the graph hold at every run. Inputs
// must be static too (a partly known input could reach a size the static
// output does not fit), and not from a stateful producer (a variable's shape
// may change with Assign(validate_shape=false)).
bool Executor::Builder::StaticShapes(const Node& node) const {
  bool known = !tainted[node.id];
  for (const PartialShape& shape : node.output_shapes) known &= shape.fully_defined();
  for (const Endpoint& in : node.inputs) {
    known &= in.node->output_shapes[in.index].fully_defined() && !in.node->def->is_stateful;
  }
  return known;
}

// Whether the node's `_plexus_const_inputs` (the const_inputs pass's
// promise that those data inputs are constants, so kernels may convert them
// once) holds in this executor: each listed input is an output of a constant
// op (Const) that no feed replaces, so its contents are the same at every
// run (and, without control inputs, its buffer too: RunConstants computes it
// once and every run shares it). A graph
// that arrived with the attribute (a dumped optimized graph, imported again)
// and ran with that pass off, or with the Const fed, would otherwise keep a
// kernel reading a stale copy.
bool Executor::Builder::ConstInputsHold(const Node& node) const {
  const tf::AttrValue* promise = node.FindAttr("_plexus_const_inputs");
  if (promise == nullptr) return true;
  for (int64_t position : promise->list().i()) {
    if (position < 0 || position >= node.num_inputs()) return false;
    const Endpoint& in = node.inputs[position];
    const Node& source = *in.node;
    if (IsFed(in) || source.def == nullptr || !source.def->is_constant) return false;
  }
  return true;
}

absl::Status Executor::Builder::CreateKernel(const Node& node, Item& item) {
  item.static_shapes = StaticShapes(node);
  PX_RETURN_IF_ERROR(item.device->Open());
  item.instance = item.kernel->user_data;  // stateless kernels get user_data
  if (item.kernel->create != nullptr) {
    item.instance = nullptr;
    // A promise that does not hold is not passed on.
    std::optional<Node> unpromised;
    if (!ConstInputsHold(node)) {
      unpromised.emplace(node);
      unpromised->attrs.erase("_plexus_const_inputs");
    }
    PX_NodeView view{unpromised ? &*unpromised : &node, {}, {}};
    absl::Status s = TakePluginStatus(item.kernel->create(item.kernel->user_data, &view, &item.instance));
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat(Where(node, *item.device), ": kernel creation failed: ",
                                                 s.message()));
    }
  }
  return absl::OkStatus();
}

void Executor::Builder::RecordLocations(const Node& node, const Item& item) {
  for (int k = 0; k < node.num_outputs(); ++k) {
    const auto key = std::make_pair(node.id, k);
    if (node.output_types[k] == DataType::kString) {
      location[key] = nullptr;
    } else if (item.kind == Kind::kKernel) {
      location[key] = item.kernel->OutputInHostMemory(k) ? nullptr : item.device;
    } else if (item.kind == Kind::kHost) {
      location[key] = nullptr;
      // A variable is read where it lives: on the run's device when that
      // device's memory is its own, as its values are assigned there
      // (TakesInputOnDevice). Copies are made at run time where it is not.
      if (node.op == "ReadVariableOp" && device != nullptr && !device->host_accessible()) {
        location[key] = device.get();
      }
      // A collective run by its input's device leaves its result there.
      if (k == 0 && node.num_inputs() > 0) {
        auto in = location.find({node.inputs[0].node->id, node.inputs[0].index});
        if (in != location.end() && RunsOnDeviceCollectives(node.op, in->second)) location[key] = in->second;
      }
    } else if (item.kind == Kind::kView && node.def->outputs_from_shapes) {
      location[key] = nullptr;
    } else if ((item.kind == Kind::kForward || item.kind == Kind::kView) && k < node.num_inputs()) {
      auto it = location.find({node.inputs[k].node->id, node.inputs[k].index});
      if (it != location.end() && !IsFed(node.inputs[k])) location[key] = it->second;
    }
  }
}

// One copy item per value and destination, shared by every reader there,
// placed just before its first reader.
void Executor::Builder::AddCopies(const Node& node, Item& item) {
  if (item.kind != Kind::kKernel && item.kind != Kind::kHost) return;
  auto host_side = [](Device* d) { return d == nullptr || d->host_accessible(); };
  for (int k = 0; k < node.num_inputs(); ++k) {
    const Endpoint& e = node.inputs[k];
    if (IsFed(e) || e.node->output_types[e.index] == DataType::kString) continue;
    auto loc = location.find({e.node->id, e.index});
    if (loc == location.end()) continue;
    Device* to = item.kind == Kind::kKernel && !item.kernel->InputInHostMemory(k) ? item.device : nullptr;
    Device* from = loc->second;
    if (item.kind == Kind::kHost && k == 0 && RunsOnDeviceCollectives(node.op, from)) {
      exec->notes_.push_back(absl::StrCat(node.Describe(), " runs on ", from->name(), " through the ",
                                          from->plugin().name(), " plugin's collectives extension"));
      Log(LogLevel::kDebug, exec->notes_.back());
      continue;
    }
    if (from == to || (host_side(from) && host_side(to))) continue;
    if (item.kind == Kind::kHost && TakesInputOnDevice(node.op, k)) continue;  // stored where it is
    if (item.kind == Kind::kHost && absl::StartsWith(node.op, "Collective")) {
      // The fallback of collectives: through host memory and Gloo.
      exec->notes_.push_back(absl::StrCat(
          node.Describe(), " runs as a host collective (Gloo): its input from ", from->name(),
          " goes through host memory, since ",
          from->collectives() == nullptr
              ? absl::StrCat("the ", from->plugin().name(), " plugin offers no collectives extension")
              : std::string("the extension runs only all-reduce, all-gather, reduce-scatter and all-to-all")));
      Log(LogLevel::kInfo, exec->notes_.back());
    }
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
      const std::string from_name = from ? from->name() : "host memory";
      const std::string to_name = to ? to->name() : "host memory";
      exec->placement_.copies.push_back(
          CopyPlacement{absl::StrCat(e.node->name, ":", e.index), from_name, to_name, node.Describe()});
      exec->notes_.push_back(absl::StrCat("copy of '", e.node->name, ":", e.index, "' from ", from_name,
                                          " to ", to_name, " for ", node.Describe()));
      Log(LogLevel::kDebug, exec->notes_.back());
      exec->copy_nodes_.push_back(std::move(copy_node));
      exec->items_.push_back(std::move(copy));
      index = static_cast<int>(exec->items_.size());
    }
    item.input_copies.resize(node.num_inputs(), -1);
    item.input_copies[k] = index - 1;
  }
}

absl::Status Executor::Builder::BuildItems() {
  for (const Node* node : order) {
    Item item;
    item.node = node;
    item.device = device.get();
    PX_RETURN_IF_ERROR(Place(*node, item));
    item.string_inputs = HasStringInput(*node);
    if (item.kernel != nullptr) PX_RETURN_IF_ERROR(CreateKernel(*node, item));
    if (!exec->dataflow_) AddCopies(*node, item);
    item.first_slot = exec->num_slots_;
    exec->num_slots_ += node->num_outputs();
    item.out_edges.resize(node->num_outputs());
    RecordLocations(*node, item);
    item_of[node->id] = static_cast<int>(exec->items_.size());
    exec->items_.push_back(std::move(item));
  }
  return absl::OkStatus();
}

// Wires each item's inputs to the slots that make them and counts the uses
// of each slot.
void Executor::Builder::WireInputs() {
  exec->slot_uses_.assign(exec->num_slots_, 0);
  exec->feed_uses_.assign(exec->request_.feeds.size(), 0);
  auto source_of = [&](const Endpoint& e) {
    Source s;
    auto it = fed.find({e.node->id, e.index});
    if (it != fed.end()) {
      s.feed = it->second;
      exec->feed_uses_[s.feed]++;
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
  for (const Endpoint& f : exec->request_.fetches) exec->fetch_sources_.push_back(source_of(f));
}

// Constant nodes (no inputs, no control dependencies) run once, now; every
// run then shares their outputs instead of recomputing them.
absl::Status Executor::Builder::RunConstants() {
  std::map<std::string, NodePlacement*> placement_of;
  for (NodePlacement& p : exec->placement_.nodes) placement_of[p.node] = &p;
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
      PX_RETURN_IF_ERROR(exec->Execute(item, {exec->items_[s.item].constant_outputs[s.output]}, &outputs,
                                       build, build.streams.stream(item.device_index)));
      item.constant_outputs = std::move(outputs);
      continue;
    }
    if ((item.kind != Kind::kKernel && item.kind != Kind::kHost) || !node.def->is_constant ||
        !node.inputs.empty() || !node.control_inputs.empty()) {
      continue;
    }
    PX_RETURN_IF_ERROR(exec->Execute(item, {}, &outputs, build, build.streams.stream(item.device_index)));
    item.constant_outputs = std::move(outputs);
    auto p = placement_of.find(node.name);
    if (p != placement_of.end()) p->second->once = true;
  }
  return build.streams.SynchronizeAll();
}

int64_t Executor::num_copies_per_run() const {
  int64_t n = 0;
  for (const Item& item : items_) n += item.kind == Kind::kCopy && item.constant_outputs.empty();
  return n;
}

// Inter-op parallelism pays when two expensive items can run at once: some
// depth (longest path from the sources) holds two of them, and items at one
// depth never depend on each other.
void Executor::Builder::DecideParallel(const Options& options) {
  std::vector<int> depth(exec->items_.size(), 0);
  std::map<int, int> expensive_at_depth;
  bool has_collectives = false;
  for (size_t i = 0; i < exec->items_.size(); ++i) {
    Item& item = exec->items_[i];
    for (const Source& s : item.inputs) {
      if (s.item >= 0) depth[i] = std::max(depth[i], depth[s.item] + 1);
    }
    for (const Node* c : item.node->control_inputs) {
      if (item_of[c->id] >= 0) depth[i] = std::max(depth[i], depth[item_of[c->id]] + 1);
    }
    // Collectives must be issued in one order on every rank: a graph with
    // any runs serially, in the order PruneAndOrder derived from the graph
    // alone (the same on every rank).
    if (absl::StartsWith(item.node->op, "Collective")) has_collectives = true;
    item.expensive = item.kind == Kind::kKernel && item.constant_outputs.empty() && IsExpensive(*item.node);
    if (item.expensive && ++expensive_at_depth[depth[i]] == 2 && options.inter_op_parallelism &&
        !exec->dataflow_ && InterOpPool::Get() != nullptr) {
      exec->parallel_ = true;
    }
  }
  if (has_collectives) exec->parallel_ = false;
}

absl::StatusOr<std::shared_ptr<Executor>> Executor::Create(const Graph& graph, const Runtime& runtime,
                                                           std::shared_ptr<Device> device,
                                                           Request request, SessionState* state,
                                                           Options options) {
  std::shared_ptr<Executor> exec(new Executor());
  exec->request_ = std::move(request);
  exec->state_ = state;
  exec->devices_.push_back(device);
  exec->placement_.device = device->name();
  Builder b(graph, runtime, device, exec.get());
  PX_RETURN_IF_ERROR(b.FindFeeds());
  PX_RETURN_IF_ERROR(b.PruneAndOrder());
  b.FindTainted();
  PX_RETURN_IF_ERROR(b.BuildItems());
  b.WireInputs();
  PX_RETURN_IF_ERROR(b.RunConstants());
  b.DecideParallel(options);
  for (size_t d = 0; d < exec->devices_.size(); ++d) exec->event_pools_.push_back(std::make_unique<EventPool>());
  // The plan follows the serial order, so only serial runs use it.
  exec->fetch_to_host_ = options.fetch_to_host;
  if (options.memory_plan && !exec->dataflow_ && !exec->parallel_) exec->PlanMemory();
  exec->slot_persistent_.assign(exec->num_slots_, 0);
  for (const Item& item : exec->items_) {
    for (size_t k = 0; k < item.constant_outputs.size(); ++k) {
      exec->slot_persistent_[item.first_slot + k] = 1;
      if (item.constant_outputs[k].buffer() != nullptr) {
        exec->constant_buffers_.insert(item.constant_outputs[k].buffer().get());
      }
    }
  }
  for (size_t slot = 0; slot < exec->slot_offset_.size(); ++slot) {
    if (exec->slot_offset_[slot] >= 0) exec->slot_persistent_[slot] = 1;
  }
  for (int slot = 0; slot < exec->num_slots_; ++slot) {
    if (!exec->slot_persistent_[slot]) exec->transient_slots_.push_back(slot);
  }
  exec->DecideDeviceGraph(options);
  return exec;
}

}  // namespace plexus

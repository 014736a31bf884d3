#include "executor.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "host_services.h"
#include "plexus/logging.h"
#include "plexus/plugin_host.h"
#include "plexus/status.h"

namespace plexus {
namespace {

std::string EndpointName(const Endpoint& e) { return absl::StrCat(e.node->name, ":", e.index); }

// "node 'x' (op Y) on CPU:0"
std::string Where(const Node& node, const Device& device) {
  return absl::StrCat(node.Describe(), " on ", device.name());
}

// Why no kernel matched, for the error message.
std::string KernelMismatch(const Node& node, const Plugin& plugin) {
  std::vector<std::string> types;
  for (const auto& [name, value] : node.attrs) {
    if (value.value_case() == tf::AttrValue::kType) {
      types.push_back(absl::StrCat(name, "=", DataTypeName(BaseType(value.type()))));
    }
  }
  std::vector<std::string> have;
  for (const KernelRegistration* reg : plugin.kernels().ForOp(node.op)) have.push_back(reg->Describe());
  return absl::StrCat("plugin '", plugin.name(), "' has no kernel for op ", node.op,
                      types.empty() ? "" : absl::StrCat(" with ", absl::StrJoin(types, ", ")),
                      have.empty() ? "" : absl::StrCat(" (it has: ", absl::StrJoin(have, "; "), ")"));
}

}  // namespace

absl::StatusOr<std::shared_ptr<Executor>> Executor::Create(const Graph& graph,
                                                           const Runtime& runtime,
                                                           std::shared_ptr<Device> device,
                                                           Request request) {
  std::shared_ptr<Executor> exec(new Executor());
  exec->request_ = std::move(request);
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

  // Topological order of the running nodes: Kahn's algorithm over the edges
  // of the pruned subgraph (one entry per edge, so the work is linear).
  std::vector<int> pending(graph.num_nodes(), 0);
  std::vector<std::vector<const Node*>> out_edges(graph.num_nodes());
  std::vector<const Node*> order;
  for (const auto& node : graph.nodes()) {
    if (!runs[node->id]) continue;
    for (const Endpoint& in : node->inputs) {
      if (runs[in.node->id] && !fed.count({in.node->id, in.index})) {
        ++pending[node->id];
        out_edges[in.node->id].push_back(node.get());
      }
    }
    for (const Node* c : node->control_inputs) {
      if (!runs[c->id]) continue;
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
    return absl::UnimplementedError("the graph to run has a cycle; loops are not supported yet");
  }

  // Place each node: on the session's device when it has a kernel, else on
  // another device (host-accessible ones first, where copies are free), and
  // say so. A placer with a cost model comes later.
  std::vector<std::shared_ptr<Device>> fallbacks;
  for (const auto& d : runtime.devices()) {
    if (d != device && d->host_accessible()) fallbacks.push_back(d);
  }
  for (const auto& d : runtime.devices()) {
    if (d != device && !d->host_accessible()) fallbacks.push_back(d);
  }
  std::vector<int> item_of(graph.num_nodes(), -1);
  exec->devices_.push_back(device);
  for (const Node* node : order) {
    Item item;
    item.node = node;
    item.device = device.get();
    if (node->def->forwards_inputs) {
      // Identity-like: the run forwards the input tensors, no kernel needed.
      item.forward = true;
      item.first_slot = exec->num_slots_;
      exec->num_slots_ += node->num_outputs();
      item_of[node->id] = static_cast<int>(exec->items_.size());
      exec->items_.push_back(std::move(item));
      continue;
    }
    item.kernel = device->plugin().kernels().Find(*node);
    for (size_t f = 0; item.kernel == nullptr && f < fallbacks.size(); ++f) {
      const std::shared_ptr<Device>& other = fallbacks[f];
      item.kernel = other->plugin().kernels().Find(*node);
      if (item.kernel == nullptr) continue;
      item.device = other.get();
      auto it = std::find(exec->devices_.begin(), exec->devices_.end(), other);
      item.device_index = static_cast<int>(it - exec->devices_.begin());
      if (it == exec->devices_.end()) exec->devices_.push_back(other);
      exec->notes_.push_back(absl::StrCat(node->Describe(), ": no kernel on ", device->name(),
                                          ", placed on ", other->name()));
      Log(LogLevel::kInfo, exec->notes_.back());
    }
    if (item.kernel == nullptr) {
      return absl::NotFoundError(absl::StrCat(Where(*node, *device), ": ",
                                              KernelMismatch(*node, device->plugin()),
                                              fallbacks.empty() ? "" : ", nor does any other device"));
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
    item.first_slot = exec->num_slots_;
    exec->num_slots_ += node->num_outputs();
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
  for (Item& item : exec->items_) {
    for (const Endpoint& in : item.node->inputs) item.inputs.push_back(source_of(in));
  }
  for (const Endpoint& f : req.fetches) exec->fetch_sources_.push_back(source_of(f));

  // Constant nodes (no inputs, no control dependencies) run once, now; every
  // run then shares their outputs instead of recomputing them.
  for (Item& item : exec->items_) {
    const Node& node = *item.node;
    if (item.forward || !node.def->is_constant || !node.inputs.empty() || !node.control_inputs.empty()) continue;
    PX_ASSIGN_OR_RETURN(PX_Stream* stream, item.device->AcquireStream());
    std::vector<Tensor> outputs;
    absl::Status status = exec->Compute(item, {}, &outputs, stream);
    absl::Status sync = item.device->SynchronizeStream(stream);
    item.device->ReleaseStream(stream, sync.ok());
    PX_RETURN_IF_ERROR(status);
    PX_RETURN_IF_ERROR(Annotate(sync, Where(node, *item.device)));
    item.constant_outputs = std::move(outputs);
  }
  return exec;
}

Executor::~Executor() {
  for (Item& item : items_) {
    if (item.kernel != nullptr && item.kernel->create != nullptr && item.instance != nullptr &&
        item.kernel->destroy != nullptr) {
      item.kernel->destroy(item.instance);
    }
  }
}

absl::Status Executor::Compute(const Item& item, const std::vector<Tensor>& inputs,
                               std::vector<Tensor>* outputs_ptr, PX_Stream* stream) const {
  const Node& node = *item.node;
  Device& device = *item.device;
  std::vector<Tensor>& outputs = *outputs_ptr;
  // Output shapes from the shape function, now that input shapes are exact.
  std::vector<PartialShape> input_shapes;
  std::vector<const Tensor*> input_values;
  for (const Tensor& t : inputs) {
    input_shapes.push_back(PartialShape(t.shape()));
    input_values.push_back(t.host_readable() ? &t : nullptr);
  }
  InferenceContext ctx(node, std::move(input_shapes), std::move(input_values));
  PX_RETURN_IF_ERROR(Annotate(InferShapes(ctx), absl::StrCat("on ", device.name())));
  outputs.assign(node.num_outputs(), Tensor());
  std::vector<DLTensor> output_descs(node.num_outputs(), DLTensor{});
  for (int k = 0; k < node.num_outputs(); ++k) {
    const PartialShape& shape = ctx.output(k);
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
    auto allocated = item.kernel->OutputInHostMemory(k)
                         ? Tensor::AllocateHost(node.output_types[k], shape.dims())
                         : device.AllocateTensor(node.output_types[k], shape.dims());
    if (!allocated.ok()) {
      return Annotate(allocated.status(), absl::StrCat(Where(node, device), ": output ", k));
    }
    outputs[k] = *std::move(allocated);
    output_descs[k] = outputs[k].ToDLTensor();
  }
  std::vector<DLTensor> input_descs;
  input_descs.reserve(inputs.size());
  for (const Tensor& t : inputs) input_descs.push_back(t.ToDLTensor());

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

namespace {

// The streams of one run, one per device. On destruction (every return
// path) it waits for them, so no buffer is freed while queued work may still
// read it, and returns them to their devices (a failed one is dropped).
class RunStreams {
 public:
  explicit RunStreams(const std::vector<std::shared_ptr<Device>>& devices)
      : devices_(devices), streams_(devices.size(), nullptr) {}
  ~RunStreams() {
    for (size_t i = 0; i < streams_.size(); ++i) {
      if (streams_[i] == nullptr) continue;
      bool healthy = synced_ || devices_[i]->SynchronizeStream(streams_[i]).ok();
      devices_[i]->ReleaseStream(streams_[i], healthy && !failed_);
    }
  }
  absl::Status Acquire() {
    for (size_t i = 0; i < devices_.size(); ++i) {
      PX_ASSIGN_OR_RETURN(streams_[i], devices_[i]->AcquireStream());
    }
    return absl::OkStatus();
  }
  PX_Stream* stream(int device_index) const { return streams_[device_index]; }
  // Waits for every stream; the first sticky error wins.
  absl::Status SynchronizeAll() {
    absl::Status first;
    for (size_t i = 0; i < streams_.size(); ++i) {
      absl::Status s = devices_[i]->SynchronizeStream(streams_[i]);
      if (!s.ok() && first.ok()) first = s;
    }
    synced_ = true;
    failed_ = !first.ok();
    return first;
  }
  absl::Status Synchronize(const Device* device) {
    for (size_t i = 0; i < devices_.size(); ++i) {
      if (devices_[i].get() == device) return devices_[i]->SynchronizeStream(streams_[i]);
    }
    return absl::OkStatus();
  }

 private:
  const std::vector<std::shared_ptr<Device>>& devices_;
  std::vector<PX_Stream*> streams_;
  bool synced_ = false;
  bool failed_ = false;
};

}  // namespace

absl::StatusOr<std::vector<Tensor>> Executor::Run(const std::vector<Tensor>& feed_values) const {
  if (feed_values.size() != request_.feeds.size()) {
    return absl::InvalidArgumentError(absl::StrCat("expected ", request_.feeds.size(),
                                                   " feed values, got ", feed_values.size()));
  }
  for (size_t i = 0; i < feed_values.size(); ++i) {
    PX_RETURN_IF_ERROR(CheckFeed(static_cast<int>(i), feed_values[i]));
  }
  // Declared before `streams` so they die after it has waited for the work.
  std::vector<Tensor> slots(num_slots_);
  std::vector<Tensor> retired;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  RunStreams streams(devices_);
  PX_RETURN_IF_ERROR(streams.Acquire());

  std::vector<int> uses = slot_uses_;
  auto value_of = [&](const Source& s) -> const Tensor& {
    return s.item < 0 ? feed_values[s.feed] : slots[items_[s.item].first_slot + s.output];
  };
  for (const Item& item : items_) {
    const Node& node = *item.node;
    Device& device = *item.device;
    if (!item.constant_outputs.empty()) {
      for (int k = 0; k < node.num_outputs(); ++k) slots[item.first_slot + k] = item.constant_outputs[k];
      continue;
    }
    if (item.forward) {
      // Output k is input k, shared (tensors are never written in place).
      for (int k = 0; k < node.num_outputs(); ++k) {
        slots[item.first_slot + k] = value_of(item.inputs[k]);
      }
    } else {
    // Inputs, moved to where the kernel wants them.
    for (Tensor& t : inputs) retired.push_back(std::move(t));
    inputs.clear();
    for (size_t k = 0; k < item.inputs.size(); ++k) {
      const Tensor& value = value_of(item.inputs[k]);
      Device* target = item.kernel->InputInHostMemory(static_cast<int>(k)) ? nullptr : &device;
      Device* source = value.device();
      if (source != nullptr && source != target && !source->host_accessible()) {
        // Produced on another device's run stream: wait for it first.
        PX_RETURN_IF_ERROR(Annotate(streams.Synchronize(source), Where(node, device)));
      }
      auto moved = CopyTensorTo(value, target);
      if (!moved.ok()) return Annotate(moved.status(), absl::StrCat(Where(node, device), ": input ", k));
      if (moved->dtype() == DataType::kString) {
        return absl::UnimplementedError(absl::StrCat(
            Where(node, device), ": string tensors cannot be passed to plugin kernels yet"));
      }
      inputs.push_back(*std::move(moved));
    }
    if (absl::Status status = Compute(item, inputs, &outputs, streams.stream(item.device_index));
        !status.ok()) {
      return status;
    }
    for (int k = 0; k < node.num_outputs(); ++k) slots[item.first_slot + k] = std::move(outputs[k]);
    }
    // Retire inputs nobody else needs; they are freed once the streams drain.
    for (const Source& s : item.inputs) {
      if (s.item >= 0 && --uses[items_[s.item].first_slot + s.output] == 0) {
        retired.push_back(std::move(slots[items_[s.item].first_slot + s.output]));
      }
    }
  }
  PX_RETURN_IF_ERROR(streams.SynchronizeAll());
  std::vector<Tensor> results;
  for (const Source& s : fetch_sources_) {
    PX_ASSIGN_OR_RETURN(Tensor host, CopyTensorTo(value_of(s), nullptr));
    if (IsCachedConstant(host)) {
      // Callers may write into what they fetch: never hand out the cache.
      PX_ASSIGN_OR_RETURN(Tensor copy, Tensor::AllocateHost(host.dtype(), host.shape()));
      std::memcpy(copy.raw_data(), host.raw_data(), host.nbytes());
      host = std::move(copy);
    }
    results.push_back(std::move(host));
  }
  return results;
}

}  // namespace plexus

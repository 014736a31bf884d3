#include "plexus/eager.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "devices/host_ops.h"
#include "devices/host_services.h"
#include "plexus/graph_import.h"
#include "plexus/kernel_registry.h"
#include "plexus/plugin_host.h"
#include "plexus/status.h"
#include "exec/launch.h"
#include "placer/placer.h"
#include "exec/session_state.h"
#include "exec/views.h"

namespace plexus {
namespace {

bool IsGraphOnlyOp(absl::string_view op) {
  static const char* const kOps[] = {"Switch", "Merge", "Enter", "Exit", "NextIteration",
                                     "LoopCond", "RefSwitch", "RefMerge", "RefEnter", "RefExit",
                                     "RefNextIteration", "ControlTrigger", "NoOp", "_Arg", "_Retval",
                                     "Placeholder", "PlaceholderWithDefault"};
  for (const char* o : kOps) {
    if (op == o) return true;
  }
  return false;
}

std::string Where(const Node& node, const Device* device) {
  return absl::StrCat("op ", node.op, device != nullptr ? absl::StrCat(" on ", device->name()) : "");
}

std::string WhereOnDevice(const Node& node, const Device& device) { return Where(node, &device); }

std::string DescribeEagerOp(const Node& node) { return absl::StrCat("op ", node.op); }

void SetType(AttrMap* attrs, const std::string& name, DataType type) {
  tf::AttrValue v;
  v.set_type(static_cast<tf::DataType>(type));
  attrs->emplace(name, std::move(v));
}

}  // namespace

absl::Status EagerContext::InferAttrs(const OpDef& def, absl::Span<const DataType> types,
                                      AttrMap* attrs) {
  return InferOpAttrs(def, types, attrs);
}

EagerContext::EagerContext(Runtime* runtime)
    : runtime_(runtime),
      state_(std::make_unique<SessionState>(runtime, runtime->HostDevice(),
                                            std::make_shared<tf::FunctionDefLibrary>())) {}

std::shared_ptr<ResourceStore> EagerContext::resources() const { return state_->resources(); }

EagerContext::~EagerContext() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cache_.clear();  // kernel instances before the streams and devices
  }
  for (auto& [device, ds] : streams_) {
    (void)ds->Sync();  // also destroys the events it waited on; gives up a failed stream
    if (ds->stream != nullptr) ds->device->ReleaseStream(ds->stream, true);
  }
}

size_t EagerContext::cache_size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_.size();
}

void EagerContext::ClearCache() {
  std::lock_guard<std::mutex> lock(mu_);
  cache_.clear();
}

EagerContextStream* EagerContext::Slot(Device* device) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = streams_[device];
  if (slot == nullptr) {
    slot = std::make_unique<DeviceStream>();
    slot->device = device->shared_from_this();
  }
  return slot.get();
}

absl::StatusOr<PX_Stream*> EagerContextStream::Get() {
  if (stream == nullptr) {
    PX_ASSIGN_OR_RETURN(stream, device->AcquireStream());
  }
  return stream;
}

absl::Status EagerContextStream::Hold(const Tensor& t) {
  // Bounds what a long run of eager ops without a read holds back.
  constexpr size_t kMaxTensors = 4096;
  constexpr size_t kMaxBytes = size_t{512} << 20;
  if (t.buffer() == nullptr || !in_flight_buffers.insert(t.buffer().get()).second) return absl::OkStatus();
  in_flight.push_back(t);
  in_flight_bytes += t.nbytes();
  if (in_flight.size() >= kMaxTensors || in_flight_bytes >= kMaxBytes) return Sync();
  return absl::OkStatus();
}

absl::Status EagerContextStream::Sync() {
  if (stream == nullptr) return absl::OkStatus();
  absl::Status status = device->SynchronizeStream(stream);
  // Done (or given up): what the work used may be freed now.
  in_flight.clear();
  in_flight_buffers.clear();
  in_flight_bytes = 0;
  for (PX_Event* event : in_flight_events) device->plugin().table().event_destroy(device->handle(), event);
  in_flight_events.clear();
  if (!status.ok()) {
    // The stream keeps its first error: give it up so later ops start clean.
    device->ReleaseStream(stream, false);
    stream = nullptr;
  }
  return status;
}

Device* EagerContext::DeviceFor(absl::Span<const Tensor> inputs, Device* requested) {
  if (requested != nullptr) return requested;
  for (const Tensor& t : inputs) {
    if (t.device() != nullptr) return t.device();
  }
  return nullptr;
}

absl::Status EagerContext::Synchronize(Device* device) {
  if (device == nullptr) return absl::OkStatus();
  DeviceStream* ds = Slot(device);
  std::lock_guard<std::mutex> launch(ds->launch_mu);
  return ds->Sync();
}

absl::StatusOr<EagerContext::NativeImport> EagerContext::BeginNativeImport(Device* device) {
  NativeImport import;
  import.device = device;
  PX_ASSIGN_OR_RETURN(import.stream, device->AcquireStream());
  absl::StatusOr<uint64_t> handle = device->NativeStreamHandle(import.stream);
  if (!handle.ok()) {
    device->ReleaseStream(import.stream, true);
    return handle.status();
  }
  import.handle = *handle;
  return import;
}

absl::Status EagerContext::FinishNativeImport(const NativeImport& import, bool ordered) {
  Device* device = import.device;
  if (device == nullptr || import.stream == nullptr) return absl::OkStatus();
  absl::Status status;
  if (ordered) {
    // The eager stream waits for an event recorded on the import stream
    // after the producer's wait; the event lives until the eager stream's
    // next wait (Sync), so the plugin never sees a wait on a destroyed event.
    const PX_PluginTable& t = device->plugin().table();
    DeviceStream* ds = Slot(device);
    std::lock_guard<std::mutex> launch(ds->launch_mu);
    PX_Event* event = nullptr;
    absl::StatusOr<PX_Stream*> eager = ds->Get();
    status = eager.status();
    if (status.ok()) status = device->Check(t.event_create(device->handle(), &event), "event_create");
    if (status.ok()) {
      ds->in_flight_events.push_back(event);
      status = device->Check(t.event_record(device->handle(), import.stream, event),
                             "event_record (after a DLPack producer's work)");
    }
    if (status.ok()) {
      status = device->Check(t.stream_wait_event(device->handle(), *eager, event),
                             "stream_wait_event (the eager stream after a DLPack producer's work)");
    }
    // Bounds the events a long run of imports without a wait holds.
    constexpr size_t kMaxEvents = 1024;
    if (status.ok() && ds->in_flight_events.size() >= kMaxEvents) status = ds->Sync();
  }
  // Nothing of plexus ran on the import stream: it goes back to the pool.
  // When the wait could not be queued, the import stream (its work is the
  // producer's) is waited for on the host instead, so nothing reads the
  // tensor early.
  if (!status.ok()) (void)device->SynchronizeStream(import.stream);
  device->ReleaseStream(import.stream, status.ok());
  return status;
}

absl::Status EagerContext::OrderNativeStream(Device* device, uint64_t native_stream) {
  DeviceStream* ds = Slot(device);
  std::lock_guard<std::mutex> launch(ds->launch_mu);
  PX_ASSIGN_OR_RETURN(PX_Stream* stream, ds->Get());
  return device->NativeStreamWait(native_stream, stream);
}

absl::StatusOr<std::shared_ptr<const EagerOp>> EagerContext::Prepare(
    absl::string_view op, absl::Span<const DataType> input_types, const AttrMap& attrs,
    Device* device) {
  // The cache key: op, device, input dtypes and the attributes given.
  std::string key;
  key.reserve(op.size() + 16 + input_types.size());
  key.append(op.data(), op.size());
  key.push_back('\0');
  key.append(reinterpret_cast<const char*>(&device), sizeof(device));
  for (DataType t : input_types) key.push_back(static_cast<char>(t));
  for (const auto& [name, value] : attrs) {
    key.push_back('\0');
    key.append(name);
    key.push_back('=');
    std::string bytes;
    value.SerializeToString(&bytes);
    key.append(bytes);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
  }
  PX_ASSIGN_OR_RETURN(std::shared_ptr<const EagerOp> prepared, Build(op, input_types, attrs, device));
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = cache_.emplace(std::move(key), prepared);
  return it->second;
}

absl::StatusOr<std::vector<Tensor>> EagerContext::Execute(absl::string_view op,
                                                          absl::Span<const Tensor> inputs,
                                                          const AttrMap& attrs, Device* device) {
  absl::InlinedVector<DataType, 4> types;
  for (const Tensor& t : inputs) types.push_back(t.dtype());
  PX_ASSIGN_OR_RETURN(std::shared_ptr<const EagerOp> prepared,
                      Prepare(op, types, attrs, DeviceFor(inputs, device)));
  return prepared->Run(inputs);
}

absl::StatusOr<std::shared_ptr<const EagerOp>> EagerContext::Build(
    absl::string_view op_name, absl::Span<const DataType> input_types, const AttrMap& given,
    Device* requested) {
  const OpDef* def = OpRegistry::Global().Find(op_name);
  if (def == nullptr) {
    return absl::NotFoundError(absl::StrCat("op '", op_name, "' is not registered in Plexus"));
  }
  if (IsGraphOnlyOp(op_name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "op ", op_name, " exists only inside graphs; it cannot run eagerly (trace a function "
        "with plexus.function instead)"));
  }
  for (const ArgSpec& arg : def->inputs) {
    if (arg.is_ref) {
      return absl::InvalidArgumentError(absl::StrCat(
          "op ", op_name, " takes input '", arg.name, "' by reference (a TensorFlow 1 variable); "
          "it runs only inside graphs"));
    }
  }
  auto prepared = std::shared_ptr<EagerOp>(new EagerOp());
  EagerOp& e = *prepared;
  e.context_ = this;
  e.graph_ = std::make_unique<Graph>();
  e.graph_->source = "eager";
  std::vector<Node*> placeholders;
  for (size_t k = 0; k < input_types.size(); ++k) {
    Node* p = e.graph_->AddNode(absl::StrCat("input_", k), "Placeholder");
    p->def = OpRegistry::Global().Find("Placeholder");
    SetType(&p->attrs, "dtype", input_types[k]);
    p->output_types = {input_types[k]};
    p->output_shapes = {PartialShape::Unknown()};
    placeholders.push_back(p);
  }
  Node* node = e.graph_->AddNode(std::string(op_name), std::string(op_name));
  node->def = def;
  node->attrs = given;
  // The optimizer's promise that an input is a constant of the graph
  // (kernels keep a converted copy of it) is never true of an eager op,
  // whose inputs change from call to call: a caller cannot make it.
  node->attrs.erase("_plexus_const_inputs");
  PX_RETURN_IF_ERROR(InferAttrs(*def, input_types, &node->attrs));
  PX_RETURN_IF_ERROR(PrepareNode(node));
  if (node->input_types.size() != input_types.size()) {
    return absl::InvalidArgumentError(absl::StrCat(node->Describe(), ": takes ",
                                                   node->input_types.size(), " input(s), got ",
                                                   input_types.size()));
  }
  for (size_t k = 0; k < input_types.size(); ++k) {
    if (node->input_types[k] != input_types[k]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "op ", op_name, ": input ", k, " is ", DataTypeName(input_types[k]),
          " but the op expects ", DataTypeName(node->input_types[k])));
    }
    node->inputs.push_back(Endpoint{placeholders[k], 0});
    placeholders[k]->consumers.push_back(node);
  }
  node->output_shapes.assign(node->num_outputs(), PartialShape::Unknown());
  e.node_ = node;
  e.host_memory_inputs_.assign(input_types.size(), 0);

  if (def->forwards_inputs) return prepared;  // Identity and friends
  // The device asked for, else the host device; then every other device
  // (placer/placer.h).
  const Placer placer(*runtime_, requested != nullptr ? requested->shared_from_this() : nullptr,
                      &DescribeEagerOp);
  PX_ASSIGN_OR_RETURN(PlacementChoice choice, placer.Place(*node, ""));
  if (choice.how != PlacedBy::kKernel) {
    e.host_op_ = choice.host_op;
    return prepared;
  }
  e.kernel_ = choice.kernel;
  e.device_ = choice.device;
  if (choice.device != placer.preferred()) e.note_ = choice.note;
  for (size_t k = 0; k < input_types.size(); ++k) {
    e.host_memory_inputs_[k] = e.kernel_->InputInHostMemory(static_cast<int>(k));
  }
  PX_RETURN_IF_ERROR(e.device_->Open());
  e.slot_ = Slot(e.device_.get());
  e.instance_ = e.kernel_->user_data;
  if (e.kernel_->create != nullptr) {
    e.instance_ = nullptr;
    PX_NodeView view{node, {}, {}};
    absl::Status s = TakePluginStatus(e.kernel_->create(e.kernel_->user_data, &view, &e.instance_));
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat(Where(*node, e.device_.get()),
                                                 ": kernel creation failed: ", s.message()));
    }
    e.owns_instance_ = true;
  }
  return prepared;
}

EagerOp::~EagerOp() {
  if (owns_instance_ && instance_ != nullptr && kernel_->destroy != nullptr) {
    kernel_->destroy(instance_);
  }
}

absl::StatusOr<std::vector<Tensor>> EagerOp::RunMetadata(absl::Span<const Tensor> inputs) const {
  const Node& node = *node_;
  // A view or shape values (exec/views.h): no kernel, no device work. A
  // view's other inputs (a Reshape's shape) are read on the host.
  std::vector<Tensor> staged(inputs.begin(), inputs.end());
  for (size_t k = 1; node.def->output_is_view && k < staged.size(); ++k) {
    if (staged[k].host_readable()) continue;
    if (staged[k].device() != nullptr) PX_RETURN_IF_ERROR(context_->Synchronize(staged[k].device()));
    auto host = CopyTensorTo(staged[k], nullptr);
    if (!host.ok()) return Annotate(host.status(), absl::StrCat(Where(node, nullptr), ": input ", k));
    staged[k] = *std::move(host);
  }
  std::vector<const Tensor*> pointers;
  for (const Tensor& t : staged) pointers.push_back(&t);
  std::vector<Tensor> outputs;
  // Errors name the device whose memory the op views, as a kernel's would.
  Device* device = !inputs.empty() && inputs[0].device() != nullptr ? inputs[0].device()
                                                                   : context_->runtime().HostDevice().get();
  if (device == nullptr) device = context_->runtime().DefaultDevice().get();
  if (device == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(Where(node, nullptr), ": no device is loaded"));
  }
  PX_RETURN_IF_ERROR(RunMetadataOp(node, pointers, /*static_shapes=*/false, *device, &WhereOnDevice,
                                   &outputs));
  return outputs;
}

absl::StatusOr<std::vector<Tensor>> EagerOp::RunHostOp(absl::Span<const Tensor> inputs) const {
  const Node& node = *node_;
  std::vector<Tensor> host_inputs;
  host_inputs.reserve(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& t = inputs[k];
    if (t.device() != nullptr && !t.host_readable()) {
      PX_RETURN_IF_ERROR(context_->Synchronize(t.device()));
    }
    if ((k == 0 && RunsOnDeviceCollectives(node.op, t.device())) ||  // its device runs it
        TakesInputOnDevice(node.op, static_cast<int>(k))) {
      host_inputs.push_back(t);
      continue;
    }
    auto host = CopyTensorTo(t, nullptr);
    if (!host.ok()) return Annotate(host.status(), absl::StrCat(Where(node, nullptr), ": input ", k));
    host_inputs.push_back(*std::move(host));
  }
  HostOpContext ctx(node, std::move(host_inputs), context_->state());
  PX_RETURN_IF_ERROR(host_op_(ctx));
  for (int k = 0; k < node.num_outputs(); ++k) {
    const Tensor& t = ctx.outputs()[k];
    if (!t.valid() || t.dtype() != node.output_types[k]) {
      return absl::InternalError(absl::StrCat(Where(node, nullptr), ": the host op produced a bad output ", k));
    }
  }
  return std::move(ctx.outputs());
}

absl::StatusOr<std::vector<Tensor>> EagerOp::Run(absl::Span<const Tensor> inputs) const {
  const Node& node = *node_;
  if (inputs.size() != node.input_types.size()) {
    return absl::InvalidArgumentError(absl::StrCat(Where(node, device_.get()), ": takes ",
                                                   node.input_types.size(), " input(s), got ",
                                                   inputs.size()));
  }
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!inputs[k].valid() || inputs[k].dtype() != node.input_types[k]) {
      return absl::InvalidArgumentError(absl::StrCat(
          Where(node, device_.get()), ": input ", k, " is ",
          inputs[k].valid() ? DataTypeName(inputs[k].dtype()) : "empty", ", expected ",
          DataTypeName(node.input_types[k])));
    }
  }
  if (node.def->forwards_inputs) {
    return std::vector<Tensor>(inputs.begin(), inputs.begin() + node.num_outputs());
  }
  if (IsMetadataOp(node)) return RunMetadata(inputs);
  if (host_op_ != nullptr) return RunHostOp(inputs);
  Device& device = *device_;
  // Inputs where the kernel reads them (copies only where needed).
  absl::InlinedVector<const Tensor*, 4> in(inputs.size());
  absl::InlinedVector<Tensor, 2> moved_inputs;
  moved_inputs.reserve(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& value = inputs[k];
    in[k] = &value;
    if (value.dtype() == DataType::kString) continue;
    Device* target = host_memory_inputs_[k] ? nullptr : &device;
    Device* source = value.device();
    if (source == target || (value.host_readable() && (target == nullptr || target->host_accessible()))) {
      continue;
    }
    if (source != nullptr && !source->host_accessible()) {
      PX_RETURN_IF_ERROR(context_->Synchronize(source));
    }
    if (target != nullptr && !target->host_accessible()) {
      // The copy lands at once, while earlier eager work may still read the
      // block it reuses: wait for the stream first.
      PX_RETURN_IF_ERROR(context_->Synchronize(target));
    }
    auto moved = CopyTensorTo(value, target);
    if (!moved.ok()) return Annotate(moved.status(), absl::StrCat(Where(node, &device), ": input ", k));
    moved_inputs.push_back(*std::move(moved));
    in[k] = &moved_inputs.back();
  }

  const LaunchSpec spec{&node, &device, kernel_, instance_, /*static_shapes=*/false, &WhereOnDevice};
  // Memory held for queued work comes back once the stream is waited for.
  const ReleaseMemoryFn release = [this]() -> absl::StatusOr<bool> {
    EagerContextStream& ds = *slot_;
    std::lock_guard<std::mutex> launch(ds.launch_mu);
    if (ds.in_flight.empty()) return false;
    PX_RETURN_IF_ERROR(ds.Sync());
    return true;
  };
  std::vector<Tensor> outputs;
  OutputDescs output_descs;
  PX_RETURN_IF_ERROR(PrepareOutputs(spec, absl::MakeConstSpan(in.data(), in.size()), nullptr, &outputs,
                                    &output_descs, &release));
  absl::Status status;
  {
    EagerContextStream& ds = *slot_;
    std::lock_guard<std::mutex> launch(ds.launch_mu);
    auto stream = ds.Get();
    status = stream.ok() ? CallKernel(spec, absl::MakeConstSpan(in.data(), in.size()), &outputs,
                                      &output_descs, *stream)
                         : Annotate(stream.status(), Where(node, &device));
    // Host-accessible devices finish here (their errors surface now); a
    // failed stream is given up either way. Elsewhere the work finishes
    // later: its inputs (copies made here too) and outputs stay allocated
    // until then, even when the caller drops them at once.
    if (!status.ok() || device.host_accessible()) {
      absl::Status synced = ds.Sync();
      if (status.ok()) status = Annotate(synced, Where(node, &device));
    } else {
      for (const Tensor* t : in) {
        if (status.ok() && t->device() != nullptr && !t->host_readable()) status = ds.Hold(*t);
      }
      for (const Tensor& t : outputs) {
        if (status.ok() && t.valid() && t.device() != nullptr && !t.host_readable()) status = ds.Hold(t);
      }
    }
  }
  PX_RETURN_IF_ERROR(status);
  return outputs;
}

}  // namespace plexus

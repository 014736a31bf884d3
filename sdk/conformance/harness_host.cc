#include "harness_host.h"
#include "validate.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph.pb.h"
#include "plexus/graph_import.h"
#include "plexus/kernel_registry.h"
#include "plexus/tensor_proto.h"

namespace plexus::conformance {
namespace {

// What the harness's opaque handles point to.
struct HarnessStatus {
  PX_Code code;
  std::string message;
};

struct HarnessNodeView {
  const Node* node;
  std::deque<Tensor> tensors;      // materialized tensor attributes
  std::deque<DLTensor> descriptors;
};

// A buffer the harness allocated for a launch: device memory through the
// plugin, or host memory.
struct LaunchBuffer {
  void* ptr = nullptr;
  bool host = false;
};

struct HarnessKernelContext {
  const Node* node;
  HarnessDevice* device;
  const KernelInfo* kernel;
  DLTensor* outputs;
  size_t num_outputs;
  std::vector<std::vector<int64_t>>* output_shapes;  // storage for descriptors
  std::vector<LaunchBuffer>* buffers;                // freed after the launch
  std::mutex* mu;                                    // guards the two vectors
};

struct HarnessRegistrar {
  HarnessPlugin* plugin;
  bool open;
};

constexpr char kShapePayload[] = "plexus.conformance/shape-refusal";

PX_Status* NewStatus(PX_Code code, const std::string& message) {
  Counters().statuses_created++;
  return reinterpret_cast<PX_Status*>(new HarnessStatus{code, message});
}

template <typename Fn>
PX_Status* Guarded(Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const std::exception& e) {
    return NewStatus(PX_CODE_INTERNAL, absl::StrCat("conformance host: ", e.what()));
  } catch (...) {
    return NewStatus(PX_CODE_INTERNAL, "conformance host: unknown exception");
  }
}

PX_Status* StatusCreate(PX_Code code, const char* message) noexcept {
  try {
    if (code == PX_CODE_OK) {
      Counters().BadCall("status_create called with code OK (return NULL for OK)");
    }
    return NewStatus(code, message ? message : "");
  } catch (...) {
    return nullptr;
  }
}

void StatusDestroy(PX_Status* status) {
  if (status == nullptr) return;
  Counters().statuses_freed++;
  delete reinterpret_cast<HarnessStatus*>(status);
}

PX_Code StatusCode(const PX_Status* status) {
  return status ? reinterpret_cast<const HarnessStatus*>(status)->code : PX_CODE_OK;
}

const char* StatusMessage(const PX_Status* status) {
  return status ? reinterpret_cast<const HarnessStatus*>(status)->message.c_str() : "";
}

void HostLog(void* host_context, PX_LogLevel level, const char* message) noexcept try {
  HostCounters& c = Counters();
  std::lock_guard<std::mutex> lock(c.mu);
  if (c.log_lines.size() < 20) c.log_lines.push_back(message ? message : "(null)");
} catch (...) {
}

PX_Status* KernelRegister(PX_KernelRegistrar* registrar_handle, const PX_KernelDef* def) {
  return Guarded([&]() -> PX_Status* {
    auto* registrar = reinterpret_cast<HarnessRegistrar*>(registrar_handle);
    if (registrar == nullptr || !registrar->open) {
      Counters().BadCall("kernel_register called outside register_kernels");
      return NewStatus(PX_CODE_FAILED_PRECONDITION,
                       "kernel_register called outside register_kernels");
    }
    auto refuse = [&](const std::string& why) {
      Counters().BadCall(absl::StrCat("kernel_register: ", why));
      return NewStatus(PX_CODE_INVALID_ARGUMENT, absl::StrCat("kernel_register: ", why));
    };
    // The same checks as the runtime's (plexus/kernel_registry.h).
    absl::Status valid = CheckKernelDef(def);
    if (!valid.ok()) {
      std::string why(valid.message());
      const std::string prefix = "kernel_register: ";
      if (absl::StartsWith(why, prefix)) why = why.substr(prefix.size());
      return refuse(why);
    }
    KernelInfo info;
    info.op = def->op_name;
    for (size_t i = 0; i < def->num_type_constraints; ++i) {
      const PX_TypeConstraint& c = def->type_constraints[i];
      std::vector<DataType> allowed;
      for (size_t k = 0; k < c.num_allowed; ++k) allowed.push_back(static_cast<DataType>(c.allowed[k]));
      info.type_constraints.emplace_back(c.attr_name, std::move(allowed));
    }
    info.host_memory_inputs.assign(def->host_memory_inputs,
                                   def->host_memory_inputs + def->num_host_memory_inputs);
    info.host_memory_outputs.assign(def->host_memory_outputs,
                                    def->host_memory_outputs + def->num_host_memory_outputs);
    info.user_data = def->user_data;
    info.create = def->create;
    info.compute = def->compute;
    info.destroy = def->destroy;
    info.priority = PX_STRUCT_HAS(def, PX_KernelDef, priority) ? def->priority : 0;
    registrar->plugin->mutable_kernels()->push_back(std::move(info));
    return nullptr;
  });
}

const Node* ViewNode(const PX_NodeView* view) {
  return reinterpret_cast<const HarnessNodeView*>(view)->node;
}

const char* NodeName(const PX_NodeView* n) { return ViewNode(n)->name.c_str(); }
const char* NodeOp(const PX_NodeView* n) { return ViewNode(n)->op.c_str(); }
size_t NodeNumInputs(const PX_NodeView* n) { return ViewNode(n)->inputs.size(); }
size_t NodeNumOutputs(const PX_NodeView* n) { return ViewNode(n)->output_types.size(); }
PX_DataType NodeInputType(const PX_NodeView* n, size_t i) {
  const Node* node = ViewNode(n);
  if (i >= node->input_types.size()) {
    Counters().BadCall(absl::StrCat("node_input_type(", i, ") past the node's inputs"));
    return PX_DT_INVALID;
  }
  return static_cast<PX_DataType>(node->input_types[i]);
}
PX_DataType NodeOutputType(const PX_NodeView* n, size_t i) {
  const Node* node = ViewNode(n);
  if (i >= node->output_types.size()) {
    Counters().BadCall(absl::StrCat("node_output_type(", i, ") past the node's outputs"));
    return PX_DT_INVALID;
  }
  return static_cast<PX_DataType>(node->output_types[i]);
}

PX_Status* FromAbsl(const absl::Status& s) {
  if (s.ok()) return nullptr;
  return NewStatus(static_cast<PX_Code>(s.code()), std::string(s.message()));
}

template <typename T, typename Getter>
PX_Status* GetAttr(const PX_NodeView* n, const char* name, T* out, Getter getter) {
  return Guarded([&]() -> PX_Status* {
    if (n == nullptr || name == nullptr || out == nullptr) {
      Counters().BadCall("node attribute accessor called with a null argument");
      return NewStatus(PX_CODE_INVALID_ARGUMENT, "node attribute accessor: null argument");
    }
    auto value = getter(*ViewNode(n), name);
    if (!value.ok()) return FromAbsl(value.status());
    *out = static_cast<T>(*value);
    return nullptr;
  });
}

PX_Status* NodeAttrInt(const PX_NodeView* n, const char* name, int64_t* out) {
  return GetAttr(n, name, out, GetAttrInt);
}
PX_Status* NodeAttrFloat(const PX_NodeView* n, const char* name, float* out) {
  return GetAttr(n, name, out, GetAttrFloat);
}
PX_Status* NodeAttrBool(const PX_NodeView* n, const char* name, int* out) {
  return GetAttr(n, name, out, GetAttrBool);
}
PX_Status* NodeAttrType(const PX_NodeView* n, const char* name, PX_DataType* out) {
  return GetAttr(n, name, out, GetAttrType);
}

PX_Status* NodeAttrString(const PX_NodeView* n, const char* name, const char** out_data,
                          size_t* out_size) {
  return Guarded([&]() -> PX_Status* {
    if (n == nullptr || name == nullptr || out_data == nullptr || out_size == nullptr) {
      Counters().BadCall("node_attr_string called with a null argument");
      return NewStatus(PX_CODE_INVALID_ARGUMENT, "node_attr_string: null argument");
    }
    const Node* node = ViewNode(n);
    const tf::AttrValue* value = node->FindAttr(name);
    if (value == nullptr) {
      return NewStatus(PX_CODE_NOT_FOUND,
                       absl::StrCat(node->Describe(), ": attribute '", name, "' is missing"));
    }
    if (value->value_case() != tf::AttrValue::kS) {
      return NewStatus(PX_CODE_INVALID_ARGUMENT,
                       absl::StrCat(node->Describe(), ": attribute '", name, "' is not a string"));
    }
    *out_data = value->s().data();
    *out_size = value->s().size();
    return nullptr;
  });
}

PX_Status* NodeAttrIntList(const PX_NodeView* n, const char* name, int64_t* out_values,
                           size_t capacity, size_t* out_count) {
  return Guarded([&]() -> PX_Status* {
    if (n == nullptr || name == nullptr || out_count == nullptr ||
        (capacity > 0 && out_values == nullptr)) {
      Counters().BadCall("node_attr_int_list called with a null argument");
      return NewStatus(PX_CODE_INVALID_ARGUMENT, "node_attr_int_list: null argument");
    }
    auto list = GetAttrIntList(*ViewNode(n), name);
    if (!list.ok()) return FromAbsl(list.status());
    *out_count = list->size();
    for (size_t i = 0; i < list->size() && i < capacity; ++i) out_values[i] = (*list)[i];
    return nullptr;
  });
}

PX_Status* NodeAttrStringList(const PX_NodeView* n, const char* name, const char** out_data,
                              size_t* out_sizes, size_t capacity, size_t* out_count) {
  return Guarded([&]() -> PX_Status* {
    if (n == nullptr || name == nullptr || out_count == nullptr ||
        (capacity > 0 && (out_data == nullptr || out_sizes == nullptr))) {
      Counters().BadCall("node_attr_string_list called with a null argument");
      return NewStatus(PX_CODE_INVALID_ARGUMENT, "node_attr_string_list: null argument");
    }
    const Node* node = ViewNode(n);
    const tf::AttrValue* value = node->FindAttr(name);
    if (value == nullptr) {
      return NewStatus(PX_CODE_NOT_FOUND,
                       absl::StrCat(node->Describe(), ": attribute '", name, "' is missing"));
    }
    if (value->value_case() != tf::AttrValue::kList) {
      return NewStatus(PX_CODE_INVALID_ARGUMENT, absl::StrCat(node->Describe(), ": attribute '",
                                                              name, "' is not a list(string)"));
    }
    const auto& items = value->list().s();
    *out_count = static_cast<size_t>(items.size());
    for (size_t i = 0; i < *out_count && i < capacity; ++i) {
      out_data[i] = items[static_cast<int>(i)].data();
      out_sizes[i] = items[static_cast<int>(i)].size();
    }
    return nullptr;
  });
}

PX_Status* NodeAttrTensor(const PX_NodeView* n, const char* name, const DLTensor** out) {
  return Guarded([&]() -> PX_Status* {
    if (n == nullptr || name == nullptr || out == nullptr) {
      Counters().BadCall("node_attr_tensor called with a null argument");
      return NewStatus(PX_CODE_INVALID_ARGUMENT, "node_attr_tensor: null argument");
    }
    const Node* node = ViewNode(n);
    auto proto = GetAttrTensorProto(*node, name);
    if (!proto.ok()) return FromAbsl(proto.status());
    auto tensor = TensorFromProto(**proto);
    if (!tensor.ok()) return FromAbsl(tensor.status());
    if (tensor->dtype() == DataType::kString) {
      return NewStatus(PX_CODE_UNIMPLEMENTED, "string tensors cannot cross the plugin ABI");
    }
    auto* view = const_cast<HarnessNodeView*>(reinterpret_cast<const HarnessNodeView*>(n));
    view->tensors.push_back(*std::move(tensor));
    view->descriptors.push_back(view->tensors.back().ToDLTensor());
    *out = &view->descriptors.back();
    return nullptr;
  });
}

size_t ElementBytes(DataType dtype) { return DataTypeSize(dtype); }

// Allocates `bytes` for a launch: host memory, or device memory through the
// plugin. Zero bytes still get a real (one-byte) host allocation, and device
// memory of zero bytes is whatever the plugin's allocate(0) returns.
absl::StatusOr<LaunchBuffer> AllocateLaunchBuffer(HarnessDevice& device, size_t bytes, bool host) {
  LaunchBuffer b;
  b.host = host;
  if (host) {
    b.ptr = std::aligned_alloc(64, ((bytes + 63) / 64) * 64 + 64);
    if (b.ptr == nullptr) return absl::ResourceExhaustedError("host allocation failed");
    return b;
  }
  void* ptr = nullptr;
  PX_Status* s = device.table().allocate(device.handle(), bytes, 64, &ptr);
  absl::Status status = device.Check(s);
  if (!status.ok()) return status;
  if (bytes > 0 && ptr == nullptr) {
    return absl::InternalError(absl::StrCat("allocate(", bytes, ") returned OK and a NULL pointer"));
  }
  b.ptr = ptr;
  return b;
}

void FreeLaunchBuffer(HarnessDevice& device, const LaunchBuffer& b) {
  if (b.host) {
    std::free(b.ptr);
  } else {
    device.table().deallocate(device.handle(), b.ptr);
  }
}

PX_Status* OutputAllocate(PX_KernelContext* ctx_handle, size_t index, int32_t ndim,
                          const int64_t* shape) {
  return Guarded([&]() -> PX_Status* {
    auto* ctx = reinterpret_cast<HarnessKernelContext*>(ctx_handle);
    if (ctx == nullptr) {
      Counters().BadCall("output_allocate called with a null context");
      return NewStatus(PX_CODE_INVALID_ARGUMENT, "output_allocate: null context");
    }
    auto bad = [&](const std::string& why) {
      Counters().BadCall(absl::StrCat(ctx->node->op, ": output_allocate: ", why));
      return NewStatus(PX_CODE_INVALID_ARGUMENT, absl::StrCat("output_allocate: ", why));
    };
    if (index >= ctx->num_outputs) {
      return bad(absl::StrCat("output ", index, " out of range (", ctx->num_outputs, " outputs)"));
    }
    if (ndim < 0 || (ndim > 0 && shape == nullptr)) return bad("bad shape");
    DataType dtype = ctx->node->output_types[index];
    if (dtype == DataType::kString) {
      return NewStatus(PX_CODE_UNIMPLEMENTED, "output_allocate: a kernel cannot make strings");
    }
    int64_t elements = 1;
    for (int i = 0; i < ndim; ++i) {
      if (shape[i] < 0) return bad("negative dimension");
      elements *= shape[i];
    }
    {
      std::lock_guard<std::mutex> lock(*ctx->mu);
      if (ctx->outputs[index].ndim != -1) {
        return bad(absl::StrCat("output ", index, " is allocated already"));
      }
    }
    if (ctx->device->plugin().TakeInjectedFailure()) {
      return NewStatus(PX_CODE_RESOURCE_EXHAUSTED,
                       "output_allocate: allocation failure injected by plexus-plugin-check");
    }
    bool host = ctx->kernel->OutputInHostMemory(static_cast<int>(index));
    auto buffer = AllocateLaunchBuffer(*ctx->device, static_cast<size_t>(elements) * ElementBytes(dtype),
                                       host);
    if (!buffer.ok()) return FromAbsl(buffer.status());
    std::lock_guard<std::mutex> lock(*ctx->mu);
    ctx->buffers->push_back(*buffer);
    std::vector<int64_t>& dims = (*ctx->output_shapes)[index];
    dims.assign(shape, shape + ndim);
    DLTensor& d = ctx->outputs[index];
    d.data = buffer->ptr;
    d.ndim = ndim;
    d.shape = dims.data();
    d.strides = nullptr;
    d.byte_offset = 0;
    d.device = host ? DLDevice{kDLCPU, 0} : ctx->device->dl_device();
    return nullptr;
  });
}

const char* KernelNodeName(PX_KernelContext* ctx) {
  return ctx ? reinterpret_cast<HarnessKernelContext*>(ctx)->node->name.c_str() : "";
}

// The thread budget: the hardware threads, what a plugin uses without
// one, so that kernels run as they would on a host of ABI 0.5.
int32_t IntraOpThreads() {
  Counters().intra_op_threads_calls++;
  static const int32_t threads = static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
  return threads;
}

void FillServices(PX_HostServices* s, void* host_context) {
  std::memset(s, 0, sizeof(*s));
  s->struct_size = sizeof(PX_HostServices);
  s->host_context = host_context;
  s->status_create = StatusCreate;
  s->status_destroy = StatusDestroy;
  s->status_code = StatusCode;
  s->status_message = StatusMessage;
  s->log = HostLog;
  s->kernel_register = KernelRegister;
  s->node_name = NodeName;
  s->node_op = NodeOp;
  s->node_num_inputs = NodeNumInputs;
  s->node_num_outputs = NodeNumOutputs;
  s->node_input_type = NodeInputType;
  s->node_output_type = NodeOutputType;
  s->node_attr_int = NodeAttrInt;
  s->node_attr_float = NodeAttrFloat;
  s->node_attr_bool = NodeAttrBool;
  s->node_attr_type = NodeAttrType;
  s->node_attr_string = NodeAttrString;
  s->node_attr_int_list = NodeAttrIntList;
  s->node_attr_tensor = NodeAttrTensor;
  s->output_allocate = OutputAllocate;
  s->kernel_node_name = KernelNodeName;
  s->node_attr_string_list = NodeAttrStringList;
  s->intra_op_threads = IntraOpThreads;
}

}  // namespace

void HostCounters::BadCall(const std::string& message) {
  bad_calls++;
  std::lock_guard<std::mutex> lock(mu);
  if (bad_call_messages.size() < 10) bad_call_messages.push_back(message);
}

HostCounters& Counters() {
  static auto* counters = new HostCounters();
  return *counters;
}

absl::Status TakeStatus(const PX_HostServices* services, PX_Status* status) {
  if (status == nullptr) return absl::OkStatus();
  auto* s = reinterpret_cast<HarnessStatus*>(status);
  absl::Status result(static_cast<absl::StatusCode>(s->code), s->message);
  if (s->code == PX_CODE_OK) result = absl::UnknownError(absl::StrCat("status with code OK: ", s->message));
  StatusDestroy(status);
  return result;
}

bool KernelInfo::InputInHostMemory(int i) const {
  return std::find(host_memory_inputs.begin(), host_memory_inputs.end(), i) !=
         host_memory_inputs.end();
}
bool KernelInfo::OutputInHostMemory(int i) const {
  return std::find(host_memory_outputs.begin(), host_memory_outputs.end(), i) !=
         host_memory_outputs.end();
}
bool KernelInfo::Matches(const Node& node) const {
  if (node.op != op) return false;
  for (const auto& [attr, allowed] : type_constraints) {
    const tf::AttrValue* value = node.FindAttr(attr);
    if (value == nullptr) return false;
    if (value->value_case() == tf::AttrValue::kType) {
      if (std::find(allowed.begin(), allowed.end(), static_cast<DataType>(value->type())) ==
          allowed.end()) {
        return false;
      }
    } else if (value->value_case() == tf::AttrValue::kList) {
      for (int t : value->list().type()) {
        if (std::find(allowed.begin(), allowed.end(), static_cast<DataType>(t)) == allowed.end()) {
          return false;
        }
      }
    } else {
      return false;
    }
  }
  return true;
}

absl::StatusOr<std::unique_ptr<HarnessPlugin>> HarnessPlugin::Load(const std::string& path,
                                                                   const HostOptions& options) {
  std::unique_ptr<HarnessPlugin> p(new HarnessPlugin());
  p->path_ = path;
  p->options_ = options;
  dlerror();
  p->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (p->handle_ == nullptr) {
    const char* err = dlerror();
    return absl::NotFoundError(absl::StrCat("cannot load plugin ", path, ": ", err ? err : "dlopen failed"));
  }
  auto probe = reinterpret_cast<PX_PluginProbeFn>(dlsym(p->handle_, PX_PLUGIN_PROBE_SYMBOL));
  auto init = reinterpret_cast<PX_PluginInitializeFn>(dlsym(p->handle_, PX_PLUGIN_INITIALIZE_SYMBOL));
  if (probe == nullptr || init == nullptr) {
    return absl::NotFoundError(absl::StrCat(path, ": does not export ",
                                            probe == nullptr ? PX_PLUGIN_PROBE_SYMBOL
                                                             : PX_PLUGIN_INITIALIZE_SYMBOL));
  }
  p->probe_.struct_size = sizeof(PX_PluginProbeInfo);
  probe(&p->probe_);
  FillServices(&p->services_, p.get());
  // The table the host allocates, zero-filled, with guard bytes past our
  // own struct when the host pretends to be newer.
  size_t alloc = std::max(options.table_size, sizeof(PX_PluginTable)) + 64;
  p->table_bytes_.assign(alloc, 0);
  for (size_t i = options.table_size; i < alloc; ++i) p->table_bytes_[i] = 0xA5;
  p->table_ = reinterpret_cast<PX_PluginTable*>(p->table_bytes_.data());
  p->table_->struct_size = options.table_size;
  PX_HostInitArgs args{};
  args.struct_size = sizeof(args);
  args.abi_major = options.abi_major;
  args.abi_min_minor = options.abi_min_minor;
  args.abi_max_minor = options.abi_max_minor;
  args.services = &p->services_;
  args.synchronous_debug = options.synchronous_debug ? 1 : 0;
  args.plugin_path = path.c_str();
  absl::Status status =
      TakeStatus(&p->services_, InitializePlugin(init, p->probe_.plugin_name, &args, p->table_));
  if (!status.ok()) {
    // Refused: unload without shutdown (initialization did not complete).
    return status;
  }
  p->initialized_ = true;
  return p;
}

HarnessPlugin::~HarnessPlugin() {
  if (initialized_ && table_ != nullptr &&
      table_->struct_size > offsetof(PX_PluginTable, plugin_shutdown) &&
      table_->plugin_shutdown != nullptr) {
    table_->plugin_shutdown(table_->plugin_state);
  }
  if (handle_ != nullptr) dlclose(handle_);
}

absl::Status HarnessPlugin::RegisterKernels() {
  if (registered_) return absl::OkStatus();
  registered_ = true;
  if (table_->register_kernels == nullptr) {
    return absl::FailedPreconditionError("register_kernels is NULL");
  }
  HarnessRegistrar registrar{this, true};
  absl::Status s = TakeStatus(&services_, table_->register_kernels(
                                              table_->plugin_state,
                                              reinterpret_cast<PX_KernelRegistrar*>(&registrar)));
  registrar.open = false;
  return s;
}

const KernelInfo* HarnessPlugin::FindKernel(const Node& node) const {
  const KernelInfo* best = nullptr;
  for (const KernelInfo& k : kernels_) {
    if (k.Matches(node) && (best == nullptr || k.priority > best->priority)) best = &k;
  }
  return best;
}

bool HarnessPlugin::TakeInjectedFailure() {
  int n = fail_output_allocations_.load();
  while (n != 0) {
    if (n < 0 || fail_output_allocations_.compare_exchange_weak(n, n - 1)) {
      injected_failures_++;
      return true;
    }
  }
  return false;
}

absl::StatusOr<std::unique_ptr<HarnessDevice>> HarnessDevice::Open(HarnessPlugin* plugin,
                                                                   int ordinal) {
  std::unique_ptr<HarnessDevice> d(new HarnessDevice());
  d->plugin_ = plugin;
  d->ordinal_ = ordinal;
  PX_Device* handle = nullptr;
  absl::Status s = TakeStatus(plugin->services(), plugin->table().device_open(
                                                      plugin->table().plugin_state, ordinal, &handle));
  if (!s.ok()) return s;
  if (handle == nullptr) {
    return absl::InternalError("device_open returned OK and a NULL device");
  }
  d->device_ = handle;
  return d;
}

HarnessDevice::~HarnessDevice() {
  if (device_ != nullptr) table().device_close(table().plugin_state, device_);
}

DLDevice HarnessDevice::dl_device() const {
  return DLDevice{static_cast<DLDeviceType>(table().dlpack_device_type), ordinal_};
}

absl::StatusOr<std::unique_ptr<KernelInstance>> KernelInstance::Create(HarnessDevice* device,
                                                                      const KernelInfo* kernel,
                                                                      const Node* node) {
  std::unique_ptr<KernelInstance> k(new KernelInstance());
  k->device_ = device;
  k->kernel_ = kernel;
  k->node_ = node;
  if (kernel->create == nullptr) {
    k->instance_ = kernel->user_data;
    return k;
  }
  HarnessNodeView view{node, {}, {}};
  void* instance = nullptr;
  absl::Status s = device->Check(kernel->create(
      kernel->user_data, reinterpret_cast<const PX_NodeView*>(&view), &instance));
  if (!s.ok()) return absl::Status(s.code(), absl::StrCat("kernel create: ", s.message()));
  k->instance_ = instance;
  return k;
}

KernelInstance::~KernelInstance() {
  if (kernel_ != nullptr && kernel_->create != nullptr && kernel_->destroy != nullptr &&
      instance_ != nullptr) {
    kernel_->destroy(instance_);
  }
}

bool KernelInstance::IsShapeRefusal(const absl::Status& status) {
  return status.GetPayload(kShapePayload).has_value();
}

absl::StatusOr<std::vector<Tensor>> KernelInstance::Run(const std::vector<Tensor>& inputs,
                                                        PX_Stream* stream, OutputMode mode,
                                                        bool skip_sync) const {
  HarnessDevice& device = *device_;
  const PX_PluginTable& table = device.table();
  const Node& node = *node_;
  // Output shapes, as the core computes them at run time.
  std::vector<PartialShape> input_shapes;
  std::vector<const Tensor*> input_values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    input_shapes.push_back(PartialShape(inputs[i].shape()));
    input_values.push_back(kernel_->InputInHostMemory(static_cast<int>(i)) ? &inputs[i] : nullptr);
  }
  InferenceContext shape_ctx(node, std::move(input_shapes), std::move(input_values));
  absl::Status shape_status = InferShapes(shape_ctx);
  if (!shape_status.ok()) {
    shape_status.SetPayload(kShapePayload, absl::Cord("1"));
    return shape_status;
  }

  std::vector<LaunchBuffer> buffers;
  std::mutex mu;
  // Buffers are freed only after the stream has drained: a launch that
  // failed may still have work queued that reads or writes them.
  struct Cleanup {
    HarnessDevice& device;
    std::vector<LaunchBuffer>& buffers;
    PX_Stream* stream;
    bool synced = false;
    ~Cleanup() {
      if (!synced && !buffers.empty()) {
        device.Check(device.table().stream_synchronize(device.handle(), stream)).IgnoreError();
      }
      for (const LaunchBuffer& b : buffers) FreeLaunchBuffer(device, b);
    }
  } cleanup{device, buffers, stream};

  // Inputs.
  std::vector<DLTensor> in_desc(inputs.size(), DLTensor{});
  std::vector<std::vector<PX_StringRef>> string_refs(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    DLTensor& d = in_desc[i];
    d.ndim = static_cast<int32_t>(t.shape().size());
    d.shape = const_cast<int64_t*>(t.shape().data());
    if (t.dtype() == DataType::kString) {
      for (const std::string& s : t.strings()) string_refs[i].push_back(PX_StringRef{s.data(), s.size()});
      d.data = string_refs[i].data();
      d.device = DLDevice{kDLCPU, 0};
      d.dtype = DLDataType{PX_DL_STRING, static_cast<uint8_t>(8 * sizeof(PX_StringRef)), 1};
      continue;
    }
    auto dl = ToDLDataType(t.dtype());
    if (!dl.ok()) return dl.status();
    d.dtype = *dl;
    if (kernel_->InputInHostMemory(static_cast<int>(i))) {
      d.data = t.raw_data();
      d.device = DLDevice{kDLCPU, 0};
      continue;
    }
    auto buffer = AllocateLaunchBuffer(device, t.nbytes(), false);
    if (!buffer.ok()) {
      return absl::Status(buffer.status().code(),
                          absl::StrCat("allocating input ", i, ": ", buffer.status().message()));
    }
    buffers.push_back(*buffer);
    if (t.nbytes() > 0) {
      absl::Status s = device.Check(table.memcpy_h2d(device.handle(), buffer->ptr, t.raw_data(),
                                                     t.nbytes()));
      if (!s.ok()) return absl::Status(s.code(), absl::StrCat("memcpy_h2d of input ", i, ": ", s.message()));
    }
    d.data = buffer->ptr;
    d.device = device.dl_device();
  }

  // Outputs.
  const size_t num_outputs = node.output_types.size();
  std::vector<DLTensor> out_desc(num_outputs, DLTensor{});
  std::vector<std::vector<int64_t>> out_shapes(num_outputs);
  for (size_t k = 0; k < num_outputs; ++k) {
    DLTensor& d = out_desc[k];
    auto dl = ToDLDataType(node.output_types[k]);
    if (!dl.ok()) return dl.status();
    d.dtype = *dl;
    bool host = kernel_->OutputInHostMemory(static_cast<int>(k));
    d.device = host ? DLDevice{kDLCPU, 0} : device.dl_device();
    const PartialShape& shape = shape_ctx.output(static_cast<int>(k));
    if (mode == OutputMode::kKernelAllocated || !shape.fully_defined()) {
      d.ndim = -1;
      continue;
    }
    out_shapes[k].assign(shape.dims().begin(), shape.dims().end());
    int64_t elements = 1;
    for (int64_t x : out_shapes[k]) elements *= x;
    auto buffer = AllocateLaunchBuffer(device, static_cast<size_t>(elements) * ElementBytes(node.output_types[k]),
                                       host);
    if (!buffer.ok()) {
      return absl::Status(buffer.status().code(),
                          absl::StrCat("allocating output ", k, ": ", buffer.status().message()));
    }
    buffers.push_back(*buffer);
    d.data = buffer->ptr;
    d.ndim = static_cast<int32_t>(out_shapes[k].size());
    d.shape = out_shapes[k].data();
  }
  // What the host handed over, to check that the kernel left it alone.
  std::vector<DLTensor> given = out_desc;

  HarnessKernelContext ctx{&node, &device, kernel_, out_desc.data(), num_outputs,
                           &out_shapes, &buffers, &mu};
  absl::Status status = device.Check(kernel_->compute(
      instance_, reinterpret_cast<PX_KernelContext*>(&ctx), in_desc.data(), in_desc.size(),
      out_desc.data(), out_desc.size(), stream));
  if (!status.ok()) return status;
  if (!skip_sync) {
    cleanup.synced = true;
    status = device.Check(table.stream_synchronize(device.handle(), stream));
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat("stream_synchronize: ", status.message()));
    }
  }
  std::vector<Tensor> results;
  for (size_t k = 0; k < num_outputs; ++k) {
    const DLTensor& d = out_desc[k];
    if (d.ndim == -1) {
      return absl::InternalError(
          absl::StrCat("the kernel returned OK without allocating output ", k));
    }
    if (given[k].ndim != -1 && (d.data != given[k].data || d.ndim != given[k].ndim)) {
      return absl::InternalError(
          absl::StrCat("the kernel replaced the descriptor of output ", k, " that the host allocated"));
    }
    Shape dims(d.shape, d.shape + d.ndim);
    auto host = Tensor::AllocateHost(node.output_types[k], dims);
    if (!host.ok()) return host.status();
    if (host->nbytes() > 0) {
      const char* src = static_cast<const char*>(d.data) + d.byte_offset;
      if (kernel_->OutputInHostMemory(static_cast<int>(k))) {
        std::memcpy(host->raw_data(), src, host->nbytes());
      } else {
        absl::Status s = device.Check(table.memcpy_d2h(device.handle(), host->raw_data(), src,
                                                       host->nbytes()));
        if (!s.ok()) {
          return absl::Status(s.code(), absl::StrCat("memcpy_d2h of output ", k, ": ", s.message()));
        }
      }
    }
    results.push_back(*std::move(host));
  }
  return results;
}

absl::StatusOr<std::unique_ptr<Graph>> OneNodeGraph(
    const std::string& op, const std::vector<Tensor>& inputs,
    const std::vector<std::pair<std::string, tf::AttrValue>>& attrs) {
  tf::GraphDef def;
  for (size_t i = 0; i < inputs.size(); ++i) {
    tf::NodeDef* p = def.add_node();
    p->set_name(absl::StrCat("in", i));
    p->set_op("Placeholder");
    (*p->mutable_attr())["dtype"].set_type(static_cast<tf::DataType>(inputs[i].dtype()));
  }
  tf::NodeDef* node = def.add_node();
  node->set_name("op");
  node->set_op(op);
  for (size_t i = 0; i < inputs.size(); ++i) node->add_input(absl::StrCat("in", i));
  for (const auto& [name, value] : attrs) (*node->mutable_attr())[name] = value;
  return ImportGraphDef(def, "<conformance case>");
}

const Node* OpNode(const Graph& graph) { return graph.FindNode("op"); }

}  // namespace plexus::conformance

#include "devices/host_services.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/kernel_threads.h"
#include "plexus/logging.h"
#include "plexus/plugin_host.h"
#include "plexus/tensor_proto.h"

namespace plexus {
namespace {
extern PX_Status kOutOfMemoryStatus;
}  // namespace

absl::Status TakePluginStatus(PX_Status* status) {
  if (status == nullptr) return absl::OkStatus();
  absl::StatusCode code = static_cast<absl::StatusCode>(status->code);
  if (status->code == PX_CODE_OK) code = absl::StatusCode::kUnknown;  // OK must be NULL
  absl::Status result(code, status->message);
  if (status != &kOutOfMemoryStatus) delete status;
  return result;
}

PX_Status* MakePluginStatus(const absl::Status& status) {
  if (status.ok()) return nullptr;
  return new PX_Status{static_cast<PX_Code>(status.code()), std::string(status.message())};
}

namespace {

// Returned when a status cannot even be allocated; never freed.
PX_Status kOutOfMemoryStatus{PX_CODE_RESOURCE_EXHAUSTED, "host out of memory creating a status"};

PX_Status* StatusCreate(PX_Code code, const char* message) noexcept {
  if (code < PX_CODE_OK || code > PX_CODE_UNAUTHENTICATED) code = PX_CODE_UNKNOWN;
  try {
    return new PX_Status{code, message ? message : ""};
  } catch (...) {
    return &kOutOfMemoryStatus;
  }
}
void StatusDestroy(PX_Status* status) {
  if (status != &kOutOfMemoryStatus) delete status;
}

// Host services are called from plugin code, possibly C or built without
// exceptions: no C++ exception may leave them.
template <typename Fn>
PX_Status* Guarded(Fn&& fn) noexcept {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return StatusCreate(PX_CODE_RESOURCE_EXHAUSTED, "host out of memory");
  } catch (const std::exception& e) {
    return StatusCreate(PX_CODE_INTERNAL, e.what());
  } catch (...) {
    return StatusCreate(PX_CODE_INTERNAL, "unexpected exception in a host service");
  }
}
PX_Code StatusCode(const PX_Status* status) { return status ? status->code : PX_CODE_OK; }
const char* StatusMessage(const PX_Status* status) { return status ? status->message.c_str() : ""; }

void HostLog(void* host_context, PX_LogLevel level, const char* message) noexcept try {
  const Plugin* plugin = static_cast<const Plugin*>(host_context);
  std::string text = absl::StrCat(plugin ? plugin->log_prefix() : "plugin", ": ",
                                  message ? message : "");
  Log(static_cast<LogLevel>(level < PX_LOG_DEBUG || level > PX_LOG_ERROR ? PX_LOG_ERROR : level),
      text);
} catch (...) {
  // Logging must never fail the caller.
}

PX_Status* KernelRegister(PX_KernelRegistrar* registrar, const PX_KernelDef* def) {
  return Guarded([&]() -> PX_Status* {
  if (registrar == nullptr || registrar->registry == nullptr) {
    return StatusCreate(PX_CODE_FAILED_PRECONDITION,
                        "kernel_register called outside register_kernels");
  }
  absl::Status valid = CheckKernelDef(def);
  if (!valid.ok()) return StatusCreate(PX_CODE_INVALID_ARGUMENT, std::string(valid.message()).c_str());
  KernelRegistration reg;
  reg.op = def->op_name;
  for (size_t i = 0; i < def->num_type_constraints; ++i) {
    const PX_TypeConstraint& c = def->type_constraints[i];
    std::vector<DataType> allowed;
    for (size_t k = 0; k < c.num_allowed; ++k) allowed.push_back(static_cast<DataType>(c.allowed[k]));
    reg.type_constraints.emplace_back(c.attr_name, std::move(allowed));
  }
  for (size_t i = 0; i < def->num_host_memory_inputs; ++i) reg.host_memory_inputs.push_back(def->host_memory_inputs[i]);
  for (size_t i = 0; i < def->num_host_memory_outputs; ++i) reg.host_memory_outputs.push_back(def->host_memory_outputs[i]);
  reg.user_data = def->user_data;
  reg.create = def->create;
  reg.compute = def->compute;
  reg.destroy = def->destroy;
  reg.priority = PX_STRUCT_HAS(def, PX_KernelDef, priority) ? def->priority : 0;
  reg.plugin = registrar->plugin;
  registrar->registry->Add(std::move(reg));
  return nullptr;
  });
}

const char* NodeName(const PX_NodeView* node) { return node->node->name.c_str(); }
const char* NodeOp(const PX_NodeView* node) { return node->node->op.c_str(); }
size_t NodeNumInputs(const PX_NodeView* node) { return node->node->inputs.size(); }
size_t NodeNumOutputs(const PX_NodeView* node) { return node->node->output_types.size(); }
PX_DataType NodeInputType(const PX_NodeView* node, size_t i) {
  return i < node->node->input_types.size() ? static_cast<PX_DataType>(node->node->input_types[i])
                                            : PX_DT_INVALID;
}
PX_DataType NodeOutputType(const PX_NodeView* node, size_t i) {
  return i < node->node->output_types.size() ? static_cast<PX_DataType>(node->node->output_types[i])
                                             : PX_DT_INVALID;
}

template <typename T, typename Getter>
PX_Status* GetAttr(const PX_NodeView* node, const char* name, T* out, Getter getter) {
  return Guarded([&]() -> PX_Status* {
  if (node == nullptr || name == nullptr || out == nullptr) {
    return StatusCreate(PX_CODE_INVALID_ARGUMENT, "node attribute accessor: null argument");
  }
  auto value = getter(*node->node, name);
  if (!value.ok()) return MakePluginStatus(value.status());
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
    return StatusCreate(PX_CODE_INVALID_ARGUMENT, "node_attr_string: null argument");
  }
  const tf::AttrValue* value = n->node->FindAttr(name);
  if (value == nullptr) {
    return MakePluginStatus(absl::NotFoundError(
        absl::StrCat(n->node->Describe(), ": attribute '", name, "' is missing")));
  }
  if (value->value_case() != tf::AttrValue::kS) {
    return MakePluginStatus(absl::InvalidArgumentError(
        absl::StrCat(n->node->Describe(), ": attribute '", name, "' is not a string")));
  }
  *out_data = value->s().data();
  *out_size = value->s().size();
  return nullptr;
  });
}

PX_Status* NodeAttrIntList(const PX_NodeView* n, const char* name, int64_t* out_values,
                           size_t capacity, size_t* out_count) {
  return Guarded([&]() -> PX_Status* {
  if (n == nullptr || name == nullptr || out_count == nullptr) {
    return StatusCreate(PX_CODE_INVALID_ARGUMENT, "node_attr_int_list: null argument");
  }
  auto list = GetAttrIntList(*n->node, name);
  if (!list.ok()) return MakePluginStatus(list.status());
  *out_count = list->size();
  for (size_t i = 0; i < list->size() && i < capacity && out_values; ++i) out_values[i] = (*list)[i];
  return nullptr;
  });
}

PX_Status* NodeAttrStringList(const PX_NodeView* n, const char* name, const char** out_data,
                              size_t* out_sizes, size_t capacity, size_t* out_count) {
  return Guarded([&]() -> PX_Status* {
  if (n == nullptr || name == nullptr || out_count == nullptr ||
      (capacity > 0 && (out_data == nullptr || out_sizes == nullptr))) {
    return StatusCreate(PX_CODE_INVALID_ARGUMENT, "node_attr_string_list: null argument");
  }
  const tf::AttrValue* value = n->node->FindAttr(name);
  if (value == nullptr) {
    return MakePluginStatus(absl::NotFoundError(
        absl::StrCat(n->node->Describe(), ": attribute '", name, "' is missing")));
  }
  if (value->value_case() != tf::AttrValue::kList) {
    return MakePluginStatus(absl::InvalidArgumentError(
        absl::StrCat(n->node->Describe(), ": attribute '", name, "' is not a list(string)")));
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
    return StatusCreate(PX_CODE_INVALID_ARGUMENT, "node_attr_tensor: null argument");
  }
  auto proto = GetAttrTensorProto(*n->node, name);
  if (!proto.ok()) return MakePluginStatus(proto.status());
  auto tensor = TensorFromProto(**proto);
  if (!tensor.ok()) {
    return MakePluginStatus(absl::Status(tensor.status().code(),
        absl::StrCat(n->node->Describe(), ": attribute '", name, "': ", tensor.status().message())));
  }
  if (tensor->dtype() == DataType::kString) {
    return MakePluginStatus(absl::UnimplementedError(absl::StrCat(
        n->node->Describe(), ": string tensors cannot cross the plugin ABI")));
  }
  // The view is host-owned and borrowed for the call: mutating its caches
  // through a const pointer is the host's own business.
  PX_NodeView* view = const_cast<PX_NodeView*>(n);
  view->tensors.push_back(*std::move(tensor));
  view->descriptors.push_back(view->tensors.back().ToDLTensor());
  *out = &view->descriptors.back();
  return nullptr;
  });
}

PX_Status* OutputAllocate(PX_KernelContext* ctx, size_t index, int32_t ndim,
                          const int64_t* shape) {
  return Guarded([&]() -> PX_Status* {
  if (ctx == nullptr) return StatusCreate(PX_CODE_INVALID_ARGUMENT, "output_allocate: null context");
  if (index >= ctx->num_outputs) {
    return MakePluginStatus(absl::OutOfRangeError(absl::StrCat(
        "output_allocate: output ", index, " out of range; the op has ", ctx->num_outputs)));
  }
  if (ndim < 0 || (ndim > 0 && shape == nullptr)) {
    return StatusCreate(PX_CODE_INVALID_ARGUMENT, "output_allocate: bad shape");
  }
  if (ctx->output_descriptors[index].ndim >= 0) {
    // The host allocated it (its shape was known) or the kernel already
    // did: a second allocation would leave the first one unwritten.
    return MakePluginStatus(absl::FailedPreconditionError(absl::StrCat(
        "output_allocate: output ", index, " is already allocated; write into it")));
  }
  Shape dims(shape, shape + ndim);
  for (int64_t d : dims) {
    if (d < 0) {
      return MakePluginStatus(absl::InvalidArgumentError(
          absl::StrCat("output_allocate: negative dimension in ", ShapeToString(dims))));
    }
  }
  DataType dtype = ctx->node->output_types[index];
  absl::StatusOr<Tensor> tensor =
      ctx->kernel->OutputInHostMemory(static_cast<int>(index))
          ? Tensor::AllocateHost(dtype, dims)
          : ctx->device->AllocateTensor(dtype, dims);
  if (!tensor.ok()) return MakePluginStatus(tensor.status());
  (*ctx->outputs)[index] = *std::move(tensor);
  ctx->output_descriptors[index] = (*ctx->outputs)[index].ToDLTensor();
  return nullptr;
  });
}

const char* KernelNodeName(PX_KernelContext* ctx) { return ctx ? ctx->node->name.c_str() : ""; }

// The run's share for this thread (base/kernel_threads.h).
int32_t IntraOpThreads() { return KernelThreads(); }

}  // namespace

void FillHostServices(PX_HostServices* s, void* host_context) {
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

DLTensor KernelInputDescriptor(const Tensor& t, std::vector<std::vector<PX_StringRef>>* string_refs) {
  DLTensor d = t.ToDLTensor();
  if (t.dtype() == DataType::kString) {
    std::vector<PX_StringRef> refs;
    refs.reserve(t.strings().size());
    for (const std::string& v : t.strings()) refs.push_back(PX_StringRef{v.data(), v.size()});
    string_refs->push_back(std::move(refs));
    d.data = string_refs->back().data();
    d.device.device_type = kDLCPU;
    d.device.device_id = 0;
    d.dtype.code = PX_DL_STRING;
    d.dtype.bits = 8 * sizeof(PX_StringRef);
    d.dtype.lanes = 1;
  }
  return d;
}

}  // namespace plexus

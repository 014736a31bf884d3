// The layer's wrappers of kernel registration, create, compute and destroy,
// and of the host's output_allocate. On host-accessible memory each output
// is computed into a shadow buffer of the layer's, poison-filled and fenced
// by guard bytes; after the kernel (and its stream) finish, the guards and
// the poison are checked and the shadow is copied into the real output.
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "layer.h"
#include "plexus/sdk/plugin_sdk.h"

namespace pxv {
namespace {

thread_local Layer* g_registering = nullptr;

struct Shadow {
  size_t index = 0;
  unsigned char* block = nullptr;  // guard, data, guard
  size_t bytes = 0;
  size_t element = 1;
};

// One running compute: where output_allocate must mirror the outputs it
// allocates.
struct Launch {
  Layer* layer = nullptr;
  DLTensor* core_outputs = nullptr;  // the host's array
  DLTensor* outputs = nullptr;       // the array the plugin sees
  size_t num_outputs = 0;
  bool shadows_allowed = false;
  std::vector<Shadow> shadows;
};

std::mutex g_launch_mu;
std::unordered_map<const PX_KernelContext*, Launch*> g_launches;

PX_Status* KernelRegister(PX_KernelRegistrar* registrar, const PX_KernelDef* def);
PX_Status* OutputAllocate(PX_KernelContext* ctx, size_t index, int32_t ndim, const int64_t* shape);

bool HostAccessibleMemory(Layer* layer, const DLDevice& device) {
  if (device.device_type == kDLCPU || device.device_type == kDLCUDAHost) return true;
  if (device.device_type != layer->real.dlpack_device_type) return false;
  std::lock_guard<std::mutex> lock(layer->mu);
  auto it = layer->host_accessible.find(device.device_id);
  return it != layer->host_accessible.end() && it->second;
}

// Redirects outputs[index] to a poisoned, guarded shadow when it lies in
// host-accessible memory.
void MaybeShadow(Launch* launch, size_t index) {
  DLTensor& out = launch->outputs[index];
  if (!launch->shadows_allowed || out.ndim < 0 || out.data == nullptr || !px_sdk_is_contiguous(&out)) return;
  if (out.dtype.code == PX_DL_STRING || !HostAccessibleMemory(launch->layer, out.device)) return;
  const size_t bytes = px_sdk_nbytes(&out);
  if (bytes == 0) return;
  Shadow shadow;
  shadow.index = index;
  shadow.bytes = bytes;
  shadow.element = (out.dtype.bits * out.dtype.lanes + 7) / 8;
  if (shadow.element == 0) shadow.element = 1;
  const size_t total = (kGuardBytes + bytes + kGuardBytes + 63) / 64 * 64;
  shadow.block = static_cast<unsigned char*>(std::aligned_alloc(64, total));
  if (shadow.block == nullptr) return;
  std::memset(shadow.block, kGuardByte, kGuardBytes);
  std::memset(shadow.block + kGuardBytes, kPoisonByte, bytes);
  std::memset(shadow.block + kGuardBytes + bytes, kGuardByte, total - kGuardBytes - bytes);
  out.data = shadow.block + kGuardBytes;
  out.byte_offset = 0;
  launch->shadows.push_back(shadow);
}

bool AllPoison(const unsigned char* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != kPoisonByte) return false;
  }
  return true;
}

// Guard and poison findings of one shadow; empty when it is clean.
std::string CheckShadow(const Shadow& s) {
  const unsigned char* data = s.block + kGuardBytes;
  Allocation a;
  a.bytes = s.bytes;
  a.front = kGuardBytes;
  a.back = kGuardBytes;
  std::string guards = CheckGuards(a, data);
  if (!guards.empty()) return "the kernel wrote outside output " + std::to_string(s.index) + " (" + guards + ")";
  if (s.bytes >= 4 && AllPoison(data, s.bytes)) {
    return "the kernel returned OK without writing output " + std::to_string(s.index) + " (all " +
           std::to_string(s.bytes) + " bytes still hold the layer's poison fill)";
  }
  if (s.element >= 4) {
    for (size_t i = 0; i + s.element <= s.bytes; i += s.element) {
      if (AllPoison(data + i, s.element)) {
        return "the kernel returned OK leaving element " + std::to_string(i / s.element) + " of output " +
               std::to_string(s.index) + " unwritten (it still holds the layer's poison fill)";
      }
    }
  }
  return "";
}

PX_Status* CheckArguments(Layer* layer, PX_KernelContext* ctx, const DLTensor* inputs, size_t num_inputs,
                          DLTensor* outputs, size_t num_outputs) {
  if (ctx == nullptr) return Breach(layer, "compute", "ctx", "is NULL");
  if (num_inputs > 0 && inputs == nullptr) return Breach(layer, "compute", "inputs", "is NULL");
  if (num_outputs > 0 && outputs == nullptr) return Breach(layer, "compute", "outputs", "is NULL");
  for (size_t i = 0; i < num_inputs; ++i) {
    const DLTensor& t = inputs[i];
    const std::string arg = "inputs[" + std::to_string(i) + "]";
    if (t.ndim < 0 || (t.ndim > 0 && t.shape == nullptr)) {
      return Breach(layer, "compute", arg.c_str(), "has no shape (ndim " + std::to_string(t.ndim) + ")");
    }
    if (t.data == nullptr && px_sdk_num_elements(&t) > 0) {
      return Breach(layer, "compute", arg.c_str(), "data is NULL for a tensor with elements");
    }
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    const DLTensor& t = outputs[i];
    if (t.ndim >= 0 && t.data == nullptr && (t.ndim > 0 && t.shape == nullptr ? 1 : px_sdk_num_elements(&t)) > 0) {
      const std::string arg = "outputs[" + std::to_string(i) + "]";
      return Breach(layer, "compute", arg.c_str(), "data is NULL for an allocated output with elements");
    }
  }
  return nullptr;
}

// After an OK compute: wait for the stream, then check and copy back each
// shadow. Returns the first breach.
PX_Status* FinishShadows(Layer* layer, Launch* launch, StreamWrap* stream) {
  if (launch->shadows.empty()) return nullptr;
  bool check = true;
  if (stream != nullptr) {
    PX_Status* s = layer->real.stream_synchronize(stream->device->real, stream->real);
    if (s != nullptr) {  // the stream keeps its error for the host to find
      FreeStatus(layer, s);
      check = false;
    }
  }
  std::string breach;
  for (const Shadow& s : launch->shadows) {
    if (check && breach.empty()) breach = CheckShadow(s);
    DLTensor& core = launch->core_outputs[s.index];
    std::memcpy(static_cast<unsigned char*>(core.data) + core.byte_offset, s.block + kGuardBytes, s.bytes);
    std::free(s.block);
  }
  launch->shadows.clear();
  if (breach.empty()) return nullptr;
  const std::string arg = "outputs";
  return Breach(layer, "compute", arg.c_str(), breach, PX_CODE_INTERNAL);
}

PX_Status* Compute(void* kernel, PX_KernelContext* ctx, const DLTensor* inputs, size_t num_inputs,
                   DLTensor* outputs, size_t num_outputs, PX_Stream* stream_handle) {
  auto* instance = static_cast<InstanceWrap*>(kernel);
  // A created instance is in the registry (live, or destroyed and kept for a
  // while); anything else is a stateless kernel's own InstanceWrap.
  Layer* owner = nullptr;
  std::string why = CheckHandle(instance, Kind::kKernel, &owner);
  if (!why.empty() && owner != nullptr) {
    PX_Status* s = Breach(owner, "compute", "kernel", why);
    return s ? s : MakeStatus(owner, PX_CODE_FAILED_PRECONDITION, "validation layer: unusable kernel");
  }
  KernelWrap* kw = instance->kernel;
  Layer* layer = kw->layer;
  if (PX_Status* s = CheckArguments(layer, ctx, inputs, num_inputs, outputs, num_outputs)) return s;
  StreamWrap* stream = nullptr;
  if (stream_handle != nullptr) {
    Layer* owner = nullptr;
    std::string why = CheckHandle(stream_handle, Kind::kStream, &owner);
    if (!why.empty()) {
      PX_Status* s = Breach(layer, "compute", "stream", why);
      return s ? s : MakeStatus(layer, PX_CODE_FAILED_PRECONDITION, "validation layer: unusable stream");
    }
    auto* wrap = reinterpret_cast<StreamWrap*>(stream_handle);
    if (PX_Status* s = EnterStream(wrap->device, stream_handle, "compute", "stream", &stream)) return s;
  }
  const char* node = layer->host->kernel_node_name ? layer->host->kernel_node_name(ctx) : "";
  PX_Status* status = FaultKernel(layer, kw->op, node ? node : "");
  if (status != nullptr) {
    LeaveStream(stream);
    return status;
  }
  std::vector<DLTensor> seen(outputs, outputs + num_outputs);
  Launch launch;
  launch.layer = layer;
  launch.core_outputs = outputs;
  launch.outputs = seen.data();
  launch.num_outputs = num_outputs;
  launch.shadows_allowed = stream == nullptr || !stream->capturing;
  for (size_t k = 0; k < num_outputs; ++k) MaybeShadow(&launch, k);
  {
    std::lock_guard<std::mutex> lock(g_launch_mu);
    g_launches[ctx] = &launch;
  }
  instance->computing.fetch_add(1);
  status = kw->compute(instance->real, ctx, inputs, num_inputs, seen.data(), num_outputs,
                       stream ? stream->real : nullptr);
  instance->computing.fetch_sub(1);
  {
    std::lock_guard<std::mutex> lock(g_launch_mu);
    g_launches.erase(ctx);
  }
  if (status != nullptr) {
    for (const Shadow& s : launch.shadows) std::free(s.block);
    LeaveStream(stream);
    return status;
  }
  status = FinishShadows(layer, &launch, stream);
  LeaveStream(stream);
  return status;
}

PX_Status* Create(void* user_data, const PX_NodeView* node, void** out_kernel) {
  KernelWrap* kw = static_cast<InstanceWrap*>(user_data)->kernel;
  Layer* layer = kw->layer;
  if (node == nullptr) return Breach(layer, "create", "node", "is NULL");
  if (out_kernel == nullptr) return Breach(layer, "create", "out_kernel", "is NULL");
  void* real = nullptr;
  PX_Status* s = kw->create(kw->user_data, node, &real);
  if (s != nullptr) return s;
  auto* instance = new InstanceWrap();
  instance->kernel = kw;
  instance->real = real;
  AddHandle(instance, Kind::kKernel, layer);
  *out_kernel = instance;
  return nullptr;
}

void Destroy(void* kernel) {
  auto* instance = static_cast<InstanceWrap*>(kernel);
  Layer* layer = nullptr;
  std::string why = CheckHandle(instance, Kind::kKernel, &layer);
  if (!why.empty()) {
    BreachLater(layer ? layer : AnyLayer(), "destroy", "kernel", why);
    return;
  }
  KernelWrap* kw = instance->kernel;
  if (instance->computing.load() != 0) {
    BreachLater(kw->layer, "destroy", "kernel", "destroyed while a compute of the same instance runs");
  }
  if (kw->destroy != nullptr) kw->destroy(instance->real);
  KillHandle(instance);
}

PX_Status* CheckDef(Layer* layer, const PX_KernelDef* def) {
  if (def == nullptr) return Breach(layer, "kernel_register", "def", "is NULL");
  const size_t needed = offsetof(PX_KernelDef, destroy) + sizeof(def->destroy);
  if (def->struct_size < needed || def->struct_size > 64 * sizeof(PX_KernelDef)) {
    return Breach(layer, "kernel_register", "def->struct_size", std::to_string(def->struct_size) +
                  " is not a plausible PX_KernelDef size (at least " + std::to_string(needed) + ")",
                  PX_CODE_INVALID_ARGUMENT);
  }
  const std::string op = def->op_name ? def->op_name : "";
  if (op.empty()) return Breach(layer, "kernel_register", "def->op_name", "is NULL or empty", PX_CODE_INVALID_ARGUMENT);
  if (def->compute == nullptr) {
    return Breach(layer, "kernel_register", "def->compute", "is NULL (kernel for " + op + ")",
                  PX_CODE_INVALID_ARGUMENT);
  }
  if (def->num_type_constraints > 0 && def->type_constraints == nullptr) {
    return Breach(layer, "kernel_register", "def->type_constraints", "is NULL with " +
                  std::to_string(def->num_type_constraints) + " constraints (kernel for " + op + ")",
                  PX_CODE_INVALID_ARGUMENT);
  }
  for (size_t i = 0; i < def->num_type_constraints; ++i) {
    const PX_TypeConstraint& c = def->type_constraints[i];
    if (c.struct_size < sizeof(PX_TypeConstraint) || c.attr_name == nullptr ||
        (c.num_allowed > 0 && c.allowed == nullptr)) {
      const std::string arg = "def->type_constraints[" + std::to_string(i) + "]";
      return Breach(layer, "kernel_register", arg.c_str(), "is malformed (struct_size, attr_name or allowed; "
                    "kernel for " + op + ")", PX_CODE_INVALID_ARGUMENT);
    }
  }
  if ((def->num_host_memory_inputs > 0 && def->host_memory_inputs == nullptr) ||
      (def->num_host_memory_outputs > 0 && def->host_memory_outputs == nullptr)) {
    return Breach(layer, "kernel_register", "def->host_memory_inputs", "a host-memory index list is NULL "
                  "with a non-zero count (kernel for " + op + ")", PX_CODE_INVALID_ARGUMENT);
  }
  return nullptr;
}

PX_Status* KernelRegister(PX_KernelRegistrar* registrar, const PX_KernelDef* def) {
  Layer* layer = g_registering;
  if (layer == nullptr) {
    layer = AnyLayer();
    if (PX_Status* s = Breach(layer, "kernel_register", "registrar", "called outside register_kernels")) return s;
    return layer->host->kernel_register(registrar, def);
  }
  if (PX_Status* s = CheckDef(layer, def)) return s;
  auto kw = std::make_unique<KernelWrap>();
  kw->layer = layer;
  kw->op = def->op_name;
  kw->user_data = def->user_data;
  kw->create = def->create;
  kw->compute = def->compute;
  kw->destroy = def->destroy;
  kw->stateless.kernel = kw.get();
  kw->stateless.real = def->user_data;
  PX_KernelDef wrapped;
  std::memset(&wrapped, 0, sizeof(wrapped));
  std::memcpy(&wrapped, def, std::min(sizeof(wrapped), def->struct_size));
  wrapped.struct_size = std::min(sizeof(wrapped), def->struct_size);
  wrapped.user_data = &kw->stateless;
  wrapped.create = def->create ? Create : nullptr;
  wrapped.compute = Compute;
  wrapped.destroy = def->destroy || def->create ? Destroy : nullptr;
  {
    std::lock_guard<std::mutex> lock(layer->mu);
    layer->kernels.push_back(std::move(kw));
  }
  return layer->host->kernel_register(registrar, &wrapped);
}

PX_Status* OutputAllocate(PX_KernelContext* ctx, size_t index, int32_t ndim, const int64_t* shape) {
  Launch* launch = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_launch_mu);
    auto it = g_launches.find(ctx);
    if (it != g_launches.end()) launch = it->second;
  }
  Layer* layer = launch ? launch->layer : AnyLayer();
  if (launch == nullptr) {
    if (PX_Status* s = Breach(layer, "output_allocate", "ctx", "is not the context of a running compute")) return s;
  }
  if (ndim > 0 && shape == nullptr) return Breach(layer, "output_allocate", "shape", "is NULL with ndim > 0");
  PX_Status* s = layer->host->output_allocate(ctx, index, ndim, shape);
  if (s != nullptr || launch == nullptr || index >= launch->num_outputs) return s;
  launch->outputs[index] = launch->core_outputs[index];
  MaybeShadow(launch, index);
  return nullptr;
}

}  // namespace

PX_Status* RegisterKernels(void* plugin, PX_KernelRegistrar* registrar) {
  auto* layer = static_cast<Layer*>(plugin);
  g_registering = layer;
  PX_Status* s = layer->real.register_kernels(layer->real.plugin_state, registrar);
  g_registering = nullptr;
  return s;
}

void FillKernelServices(Layer* layer) {
  layer->services.kernel_register = KernelRegister;
  if (PX_STRUCT_HAS(&layer->services, PX_HostServices, output_allocate)) {
    layer->services.output_allocate = OutputAllocate;
  }
}

}  // namespace pxv

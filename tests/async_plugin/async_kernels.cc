// The asynchronous test device: the reference kernels, queued on the
// streams through wrapped kernel definitions and host services.
#include "async_device.h"
#include "reference_kernels.h"

#include <algorithm>
#include <atomic>
#include <new>

namespace plexus::async_device {

// ---------------------------------------------------------------------------
// Kernels: the reference kernels, queued
// ---------------------------------------------------------------------------

struct WrappedDef {
  PX_KernelCreateFn create = nullptr;
  PX_KernelComputeFn compute = nullptr;
  PX_KernelDestroyFn destroy = nullptr;
  void* user_data = nullptr;
  std::vector<bool> host_input;  // by input index
  bool host_outputs = false;
};

struct Instance {
  const WrappedDef* def;
  void* inner;
  std::atomic<int> refs{1};
};

void Release(Instance* k) {
  if (k->refs.fetch_sub(1) != 1) return;
  if (k->def->create != nullptr && k->def->destroy != nullptr) k->def->destroy(k->inner);
  delete k;
}

// What the reference kernels get as their PX_KernelContext: the host's
// context while compute runs (null once it has returned) and the node name.
struct LaunchContext {
  PX_KernelContext* host;
  const std::string* node;
};

PX_Status* OutputAllocate(PX_KernelContext* ctx, size_t index, int32_t ndim, const int64_t* shape) {
  auto* launch = reinterpret_cast<LaunchContext*>(ctx);
  if (launch->host == nullptr) {
    return Error(PX_CODE_INTERNAL, "node '%s': output %zu allocated after compute returned",
                 launch->node->c_str(), index);
  }
  return g_plugin->real->output_allocate(launch->host, index, ndim, shape);
}

const char* KernelNodeName(PX_KernelContext* ctx) {
  return reinterpret_cast<LaunchContext*>(ctx)->node->c_str();
}

PX_Status* CreateWrapped(void* user_data, const PX_NodeView* node, void** out) {
  const auto* def = static_cast<const WrappedDef*>(user_data);
  void* inner = def->user_data;  // a stateless kernel's compute gets its user_data
  if (def->create != nullptr) {
    if (PX_Status* s = def->create(def->user_data, node, &inner)) return s;
  }
  auto* k = new (std::nothrow) Instance{def, inner};
  if (k == nullptr) {
    if (def->create != nullptr && def->destroy != nullptr) def->destroy(inner);
    return Error(PX_CODE_RESOURCE_EXHAUSTED, "out of host memory");
  }
  *out = k;
  return nullptr;
}

void DestroyWrapped(void* kernel) { Release(static_cast<Instance*>(kernel)); }

// One queued launch: descriptors and host-memory inputs copied, since the
// host's are borrowed for the call only.
struct Launch {
  Instance* kernel = nullptr;
  std::string node;
  std::vector<DLTensor> inputs, outputs;
  std::deque<std::vector<int64_t>> dims;  // shapes and strides the descriptors point at
  std::deque<std::vector<char>> host_data;
  ~Launch() {
    if (kernel != nullptr) Release(kernel);
  }
  DLTensor Copy(const DLTensor& t, bool copy_data) {
    DLTensor c = t;
    dims.emplace_back(t.shape, t.shape + std::max(t.ndim, 0));
    c.shape = dims.back().data();
    if (t.strides != nullptr) {
      dims.emplace_back(t.strides, t.strides + std::max(t.ndim, 0));
      c.strides = dims.back().data();
    }
    if (copy_data) {
      const char* p = static_cast<const char*>(px_sdk_data(&t));
      const size_t bytes = p == nullptr ? 0 : px_sdk_nbytes(&t);
      host_data.emplace_back(p, p + bytes);
      c.data = host_data.back().data();
      c.byte_offset = 0;
    }
    return c;
  }
};

PX_Status* CheckArgument(Device* device, const std::string& node, const char* what, size_t i,
                         const DLTensor& t) {
  if (device == nullptr || t.data == nullptr) return nullptr;
  const size_t bytes = px_sdk_nbytes(&t);
  if (bytes == 0 || IsDeviceMemory(device, px_sdk_data(&t), bytes)) return nullptr;
  return Error(PX_CODE_INVALID_ARGUMENT, "node '%s': %s %zu (%zu bytes) is not %s memory",
               node.c_str(), what, i, bytes, device->name.c_str());
}

PX_Status* ComputeWrapped(void* kernel, PX_KernelContext* ctx, const DLTensor* inputs,
                          size_t num_inputs, DLTensor* outputs, size_t num_outputs,
                          PX_Stream* s) {
  auto* k = static_cast<Instance*>(kernel);
  Stream* stream = StreamOf(s);
  const WrappedDef& def = *k->def;
  std::string node = g_plugin->real->kernel_node_name(ctx);
  Device* device = DeviceOfStream(stream);
  bool later = !def.host_outputs && !g_plugin->synchronous_debug;
  for (size_t i = 0; i < num_inputs; ++i) {
    const bool host = i < def.host_input.size() && def.host_input[i];
    if (inputs[i].dtype.code == PX_DL_STRING) later = false;
    if (!host) {
      if (PX_Status* e = CheckArgument(device, node, "input", i, inputs[i])) return e;
    }
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    if (outputs[i].ndim < 0) {
      later = false;
    } else if (!def.host_outputs) {
      if (PX_Status* e = CheckArgument(device, node, "output", i, outputs[i])) return e;
    }
  }
  if (!later) {
    // Sizes its outputs or fills host memory: waits for the stream, runs now.
    if (PX_Status* e = stream->Synchronize()) return e;
    LaunchContext launch{ctx, &node};
    return def.compute(k->inner, reinterpret_cast<PX_KernelContext*>(&launch), inputs, num_inputs,
                       outputs, num_outputs, s);
  }
  auto launch = std::make_shared<Launch>();
  launch->node = std::move(node);
  for (size_t i = 0; i < num_inputs; ++i) {
    const bool host = i < def.host_input.size() && def.host_input[i];
    launch->inputs.push_back(launch->Copy(inputs[i], host));
  }
  for (size_t i = 0; i < num_outputs; ++i) launch->outputs.push_back(launch->Copy(outputs[i], false));
  k->refs.fetch_add(1);
  launch->kernel = k;
  stream->Enqueue([launch, s](Stream&) -> PX_Status* {
    LaunchContext context{nullptr, &launch->node};
    Instance* kernel = launch->kernel;
    PX_Status* status = kernel->def->compute(
        kernel->inner, reinterpret_cast<PX_KernelContext*>(&context), launch->inputs.data(),
        launch->inputs.size(), launch->outputs.data(), launch->outputs.size(), s);
    if (status == nullptr) return nullptr;
    PX_Status* named = Error(g_plugin->real->status_code(status), "node '%s': %s",
                             launch->node.c_str(), g_plugin->real->status_message(status));
    g_plugin->real->status_destroy(status);
    return named;
  });
  return nullptr;
}

PX_Status* RegisterWrapped(PX_KernelRegistrar* registrar, const PX_KernelDef* def) {
  auto wrapped = std::make_shared<WrappedDef>();
  wrapped->create = def->create;
  wrapped->compute = def->compute;
  wrapped->destroy = def->destroy;
  wrapped->user_data = def->user_data;
  for (size_t i = 0; i < def->num_host_memory_inputs; ++i) {
    const int32_t index = def->host_memory_inputs[i];
    if (index < 0) continue;
    if (wrapped->host_input.size() <= static_cast<size_t>(index)) wrapped->host_input.resize(index + 1);
    wrapped->host_input[index] = true;
  }
  wrapped->host_outputs = def->num_host_memory_outputs > 0;
  PX_KernelDef copy = *def;
  copy.create = CreateWrapped;
  copy.compute = ComputeWrapped;
  copy.destroy = DestroyWrapped;
  copy.user_data = wrapped.get();
  {
    std::lock_guard<std::mutex> lock(g_plugin->defs_mu);
    g_plugin->defs.push_back(std::move(wrapped));
  }
  return g_plugin->real->kernel_register(registrar, &copy);
}

PX_Status* RegisterKernels(void*, PX_KernelRegistrar* registrar) {
  return reference::RegisterAllKernels(&g_plugin->info, registrar);
}

}  // namespace plexus::async_device

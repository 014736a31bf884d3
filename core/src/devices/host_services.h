// Host side of the plugin ABI: the definitions of the host-owned opaque
// handles and the PX_HostServices table handed to each plugin. Internal to
// the core.
#ifndef PLEXUS_SRC_HOST_SERVICES_H_
#define PLEXUS_SRC_HOST_SERVICES_H_

#include <deque>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "plexus/device.h"
#include "plexus/graph.h"
#include "plexus/kernel_registry.h"
#include "plexus/plugin_api.h"
#include "plexus/tensor.h"

struct PX_Status {
  PX_Code code;
  std::string message;
};

struct PX_NodeView {
  const plexus::Node* node;
  // Tensor attributes materialized for node_attr_tensor; deque keeps the
  // descriptors' addresses stable.
  std::deque<plexus::Tensor> tensors;
  std::deque<DLTensor> descriptors;
};

struct PX_KernelContext {
  const plexus::Node* node;
  plexus::Device* device;
  const plexus::KernelRegistration* kernel;
  std::vector<plexus::Tensor>* outputs;  // filled by output_allocate
  DLTensor* output_descriptors;
  size_t num_outputs;
};

struct PX_KernelRegistrar {
  plexus::Plugin* plugin;
  plexus::KernelRegistry* registry;
};

namespace plexus {

// Takes ownership of a plugin-returned status; OK for null.
absl::Status TakePluginStatus(PX_Status* status);
// A status for the plugin (owned by the receiver); null for OK.
PX_Status* MakePluginStatus(const absl::Status& status);

// The kernel ABI's descriptor of input `t`. String tensors cross as arrays
// of (pointer, size) pairs, kept in `string_refs`, which must outlive the
// kernel call.
DLTensor KernelInputDescriptor(const Tensor& t, std::vector<std::vector<PX_StringRef>>* string_refs);

// Fills `services` with the host's functions; `host_context` is passed back
// to log() and identifies the plugin.
void FillHostServices(PX_HostServices* services, void* host_context);

}  // namespace plexus

#endif  // PLEXUS_SRC_HOST_SERVICES_H_

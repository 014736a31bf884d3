// One kernel launch across the plugin ABI (launch.h).
#include "exec/launch.h"

#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "devices/host_services.h"
#include "plexus/plugin_host.h"
#include "plexus/status.h"

namespace plexus {
namespace {

std::string WhereOf(const LaunchSpec& spec) { return spec.where(*spec.node, *spec.device); }

}  // namespace

absl::Status NameShapeError(const Node& node, const std::string& where, const absl::Status& s) {
  absl::string_view message = s.message();
  const std::string prefix = absl::StrCat(node.Describe(), ": ");
  if (absl::StartsWith(message, prefix)) message.remove_prefix(prefix.size());
  return absl::Status(s.code(), absl::StrCat(where, ": ", message));
}

absl::Status PrepareOutputs(const LaunchSpec& spec, absl::Span<const Tensor* const> inputs,
                            const Tensor* planned, std::vector<Tensor>* outputs_ptr, OutputDescs* descs,
                            const ReleaseMemoryFn* release_memory) {
  const Node& node = *spec.node;
  Device& device = *spec.device;
  std::vector<Tensor>& outputs = *outputs_ptr;
  std::optional<InferenceContext> ctx;
  if (!spec.static_shapes) {
    std::vector<PartialShape> input_shapes;
    std::vector<const Tensor*> input_values;
    input_shapes.reserve(inputs.size());
    input_values.reserve(inputs.size());
    for (const Tensor* t : inputs) {
      input_shapes.push_back(PartialShape(t->shape()));
      input_values.push_back(t->host_readable() ? t : nullptr);
    }
    ctx.emplace(node, std::move(input_shapes), std::move(input_values));
    if (absl::Status s = InferShapes(*ctx); !s.ok()) return NameShapeError(node, WhereOf(spec), s);
  }
  outputs.assign(node.num_outputs(), Tensor());
  descs->assign(node.num_outputs(), DLTensor{});
  for (int k = 0; k < node.num_outputs(); ++k) {
    const PartialShape& shape = spec.static_shapes ? node.output_shapes[k] : ctx->output(k);
    const bool host = spec.kernel->OutputInHostMemory(k);
    if (!shape.fully_defined()) {
      // The kernel allocates it; its dtype and device are known already.
      DLTensor& d = (*descs)[k];
      d.ndim = -1;
      auto dl = ToDLDataType(node.output_types[k]);
      if (dl.ok()) d.dtype = *dl;
      d.device.device_type = host ? kDLCPU
                                  : static_cast<DLDeviceType>(device.plugin().table().dlpack_device_type);
      d.device.device_id = host ? 0 : device.ordinal();
      continue;
    }
    if (planned != nullptr && planned[k].valid()) {
      outputs[k] = planned[k];  // its place in the run's arena
      (*descs)[k] = outputs[k].ToDLTensor();
      continue;
    }
    PX_ASSIGN_OR_RETURN(outputs[k], AllocateKernelOutput(spec, k, shape.dims(), release_memory));
    (*descs)[k] = outputs[k].ToDLTensor();
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> AllocateKernelOutput(const LaunchSpec& spec, int k, const Shape& dims,
                                            const ReleaseMemoryFn* release_memory) {
  const DataType dtype = spec.node->output_types[k];
  const bool host = spec.kernel->OutputInHostMemory(k);
  auto allocated = host ? Tensor::AllocateHost(dtype, dims) : spec.device->AllocateTensor(dtype, dims);
  if (!host && !allocated.ok() && absl::IsResourceExhausted(allocated.status()) && release_memory != nullptr &&
      *release_memory) {
    PX_ASSIGN_OR_RETURN(bool released, (*release_memory)());
    if (released) allocated = spec.device->AllocateTensor(dtype, dims);
  }
  if (!allocated.ok()) return Annotate(allocated.status(), absl::StrCat(WhereOf(spec), ": output ", k));
  return allocated;
}

absl::Status CallKernel(const LaunchSpec& spec, absl::Span<const Tensor* const> inputs,
                        std::vector<Tensor>* outputs, OutputDescs* descs, PX_Stream* stream) {
  absl::InlinedVector<DLTensor, 4> input_descs;
  input_descs.reserve(inputs.size());
  // String inputs cross the ABI as arrays of (pointer, size) pairs.
  std::vector<std::vector<PX_StringRef>> string_refs;
  for (const Tensor* input : inputs) input_descs.push_back(KernelInputDescriptor(*input, &string_refs));
  PX_KernelContext kctx{spec.node, spec.device, spec.kernel, outputs, descs->data(), descs->size()};
  absl::Status status = TakePluginStatus(spec.kernel->compute(spec.instance, &kctx, input_descs.data(),
                                                              input_descs.size(), descs->data(),
                                                              descs->size(), stream));
  if (!status.ok()) return absl::Status(status.code(), absl::StrCat(WhereOf(spec), ": ", status.message()));
  return CheckOutputs(spec, *outputs);
}

absl::Status CheckOutputs(const LaunchSpec& spec, const std::vector<Tensor>& outputs) {
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (!outputs[k].valid()) {
      return absl::InternalError(absl::StrCat(WhereOf(spec), ": the kernel returned without "
                                              "allocating output ", k));
    }
  }
  return absl::OkStatus();
}

}  // namespace plexus

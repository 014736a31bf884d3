// One kernel launch across the plugin ABI: the only place the core calls a
// plugin's compute on the hot path. The executor (execute.cc) and eager
// execution (eager.cc) both launch through here, so shapes, output memory,
// string inputs and errors behave the same in graphs and eagerly.
//
//   LaunchSpec spec{&node, &device, kernel, instance, static_shapes, Where};
//   PX_RETURN_IF_ERROR(PrepareOutputs(spec, inputs, planned, &outputs, &descs));
//   PX_RETURN_IF_ERROR(CallKernel(spec, inputs, &outputs, &descs, stream));
//
// Inputs must already be where the kernel reads them (device or host
// memory, as the kernel's registration says): callers stage copies and
// order streams, because they know which stream made each input.
#ifndef PLEXUS_SRC_EXEC_LAUNCH_H_
#define PLEXUS_SRC_EXEC_LAUNCH_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "plexus/device.h"
#include "plexus/graph.h"
#include "plexus/kernel_registry.h"
#include "plexus/tensor.h"

namespace plexus {

struct LaunchSpec {
  const Node* node = nullptr;
  Device* device = nullptr;
  const KernelRegistration* kernel = nullptr;
  void* instance = nullptr;  // what the kernel's create returned, or its user_data
  // The node's output shapes in the graph are exact: no shape function runs.
  bool static_shapes = false;
  // How errors name the launch: "node 'x' (op Y) on CPU:0" in graphs,
  // "op Y on CPU:0" eagerly.
  std::string (*where)(const Node& node, const Device& device) = nullptr;
};

using OutputDescs = absl::InlinedVector<DLTensor, 4>;

// Called when a device allocation fails with RESOURCE_EXHAUSTED: frees what
// it can (eager execution waits for its queued work) and returns true to
// ask for one more try.
using ReleaseMemoryFn = std::function<absl::StatusOr<bool>()>;

// Output shapes (the graph's when static, else the shape function's over the
// inputs' exact shapes and host-readable values) and their memory: in host
// memory for outputs the kernel keeps there, at planned[k] when `planned` is
// given and planned[k] is valid (the memory plan), else newly allocated. An
// output whose shape is still unknown is left to the kernel (ndim -1 in its
// descriptor).
absl::Status PrepareOutputs(const LaunchSpec& spec, absl::Span<const Tensor* const> inputs,
                            const Tensor* planned, std::vector<Tensor>* outputs, OutputDescs* descs,
                            const ReleaseMemoryFn* release_memory = nullptr);

// Output `k` of the launch, of shape `dims`: in host memory when the kernel
// keeps that output there, else on the device (after one release_memory try
// when the device is out of memory). Errors name the launch and the output.
absl::StatusOr<Tensor> AllocateKernelOutput(const LaunchSpec& spec, int k, const Shape& dims,
                                            const ReleaseMemoryFn* release_memory = nullptr);

// Calls the kernel's compute on `stream` and checks that it made every
// output. Errors name the node and device.
absl::Status CallKernel(const LaunchSpec& spec, absl::Span<const Tensor* const> inputs,
                        std::vector<Tensor>* outputs, OutputDescs* descs, PX_Stream* stream);

// A shape function's error named as a launch's are: "WHERE: message", where
// WHERE says node and device and the node's own description is not repeated.
absl::Status NameShapeError(const Node& node, const std::string& where, const absl::Status& s);

// Checks, once compute has returned, that every output exists.
absl::Status CheckOutputs(const LaunchSpec& spec, const std::vector<Tensor>& outputs);

}  // namespace plexus

#endif  // PLEXUS_SRC_EXEC_LAUNCH_H_

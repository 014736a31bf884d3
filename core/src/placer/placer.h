// The placer: the one place that decides where an op runs, for graphs (the
// executor), eager ops and graph dumps alike (docs/architecture.md,
// "Placement").
//
// For an op that the core does not run itself, the order of preference is:
//   1. the device the node asks for (its NodeDef.device, or the device of a
//      node it is colocated with), when it exists here and has a kernel;
//   2. the preferred device (the session's, or the eager device);
//   3. every other device, host-accessible ones first (copies to and from
//      them are free);
//   4. a host op of the core, for ops that have one as a fallback.
// Kernels taking string inputs are only found on plugins of ABI 0.2 or newer.
#ifndef PLEXUS_SRC_PLACER_PLACER_H_
#define PLEXUS_SRC_PLACER_PLACER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "devices/host_ops.h"
#include "plexus/graph.h"
#include "plexus/logging.h"
#include "plexus/placement.h"
#include "plexus/runtime.h"

namespace plexus {

struct PlacementChoice {
  PlacedBy how = PlacedBy::kKernel;
  // The kernel's device; for host ops and the core's own work, the
  // preferred device (the executor keeps its items there).
  std::shared_ptr<Device> device;
  const KernelRegistration* kernel = nullptr;
  HostOpFn host_op = nullptr;
  // Why not the preferred device, or how a request was honoured ("" when the
  // op simply runs there), and how loudly to log it.
  std::string note;
  LogLevel note_level = LogLevel::kDebug;
  std::string reason;  // the note without the node's name, for the report
};

class Placer {
 public:
  // `describe` names a node in notes and errors: "node 'x' (op Y)" in
  // graphs, "op Y" eagerly.
  using DescribeFn = std::string (*)(const Node& node);

  // `preferred` may be null: then the host device, else the default one.
  Placer(const Runtime& runtime, std::shared_ptr<Device> preferred, DescribeFn describe);

  const std::shared_ptr<Device>& preferred() const { return preferred_; }

  // Where `node` runs. `request` is the device it asks for ("" for none).
  // NOT_FOUND when no device has a kernel and the core has no host op; the
  // message names the node, the preferred device and what its plugin has.
  absl::StatusOr<PlacementChoice> Place(const Node& node, absl::string_view request) const;

  // The kernel for `node` on `device`, or null (string inputs need ABI 0.2).
  static const KernelRegistration* KernelOn(const Device& device, const Node& node);

 private:
  const Runtime& runtime_;
  std::shared_ptr<Device> preferred_;
  std::vector<std::shared_ptr<Device>> fallbacks_;  // host-accessible first
  DescribeFn describe_;
};

// TensorFlow 1 dataflow control flow (Switch, Merge, Enter, Exit,
// NextIteration and their Ref forms): the executor runs them itself.
bool IsControlFlowOp(absl::string_view op);

// True for ops that the core runs without any kernel: TensorFlow 1 control
// flow, ops whose outputs are their inputs (Identity, LoopCond, ...) and
// metadata ops (IsMetadataOp).
bool RunsInCore(const Node& node);

// Whether the core can run `op` whatever the plugins, judged by the op alone
// (no node): the ops of RunsInCore, and those with a host op (also a
// fallback one). For `plexus ops --missing`.
bool OpRunsInCore(const std::string& op, const OpDef& def);

// True for the metadata ops the core runs itself (exec/views.h): views
// (Reshape, ExpandDims, Squeeze) of dense tensors, and shape values (Shape,
// ShapeN, Size, Rank). Plugins may still offer kernels for them; the
// placer prefers the core, which launches nothing.
bool IsMetadataOp(const Node& node);

// The device a node asks for: its own NodeDef.device, else that of the first
// node it is colocated with (a "loc:@NAME" entry of its _class attribute).
std::string RequestedDevice(const Graph& graph, const Node& node);

// "plugin 'cpu' has no kernel for op X with T=float (it has: ...)".
std::string DescribeKernelMismatch(const Node& node, const Plugin& plugin);

}  // namespace plexus

#endif  // PLEXUS_SRC_PLACER_PLACER_H_

// The conformance tool's own host: a strict, instrumented implementation of
// the host side of the plugin ABI. It loads a plugin file with dlopen and can
// pretend to be an older or newer host, counts the statuses a plugin creates,
// checks every argument a plugin passes back, and can inject failures into
// output allocation. The core's host (core/src/devices/host_services.cc) is not used:
// the tool must reach corners that a well-behaved host never visits.
//
// Host-owned handles (PX_Status, PX_NodeView, PX_KernelContext,
// PX_KernelRegistrar) point at the harness's own structs below; the tool never
// defines the opaque ABI types themselves.
#ifndef PLEXUS_SDK_CONFORMANCE_HARNESS_HOST_H_
#define PLEXUS_SDK_CONFORMANCE_HARNESS_HOST_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "plexus/dtype.h"
#include "plexus/graph.h"
#include "plexus/plugin_api.h"
#include "plexus/tensor.h"

namespace plexus::conformance {

// How the harness presents itself to the plugin.
struct HostOptions {
  uint32_t abi_major = PX_ABI_VERSION_MAJOR;
  uint32_t abi_min_minor = 0;
  uint32_t abi_max_minor = PX_ABI_VERSION_MINOR;
  bool synchronous_debug = false;
  // The PX_PluginTable size the host claims (smaller: an older host; larger:
  // a newer one). The bytes past sizeof(PX_PluginTable) are guard bytes.
  size_t table_size = sizeof(PX_PluginTable);
};

// One kernel as the plugin registered it, deep-copied.
struct KernelInfo {
  std::string op;
  std::vector<std::pair<std::string, std::vector<DataType>>> type_constraints;
  std::vector<int32_t> host_memory_inputs;
  std::vector<int32_t> host_memory_outputs;
  void* user_data = nullptr;
  PX_KernelCreateFn create = nullptr;
  PX_KernelComputeFn compute = nullptr;
  PX_KernelDestroyFn destroy = nullptr;
  int32_t priority = 0;

  bool InputInHostMemory(int i) const;
  bool OutputInHostMemory(int i) const;
  // True when every type constraint accepts the node's attribute value.
  bool Matches(const Node& node) const;
};

// Counters shared by every plugin the harness loads.
struct HostCounters {
  std::atomic<int64_t> statuses_created{0};
  std::atomic<int64_t> statuses_freed{0};
  std::atomic<int64_t> bad_calls{0};  // host services called with bad arguments
  std::atomic<int64_t> intra_op_threads_calls{0};  // thread budgets asked for (ABI 0.6)
  std::mutex mu;
  std::vector<std::string> bad_call_messages;  // the first few
  std::vector<std::string> log_lines;          // the first few
  void BadCall(const std::string& message);
};
HostCounters& Counters();

// A loaded and initialized plugin. Destruction calls plugin_shutdown and
// dlclose; close every device and free everything first.
class HarnessPlugin {
 public:
  // dlopen, probe, initialize. A refusal by the plugin comes back as its
  // status; a load failure names the file.
  static absl::StatusOr<std::unique_ptr<HarnessPlugin>> Load(const std::string& path,
                                                             const HostOptions& options);
  ~HarnessPlugin();
  HarnessPlugin(const HarnessPlugin&) = delete;
  HarnessPlugin& operator=(const HarnessPlugin&) = delete;

  const std::string& path() const { return path_; }
  const PX_PluginProbeInfo& probe() const { return probe_; }
  const PX_PluginTable& table() const { return *table_; }
  // The table as the plugin left it, guard bytes included.
  const std::vector<unsigned char>& raw_table() const { return table_bytes_; }
  const PX_HostServices* services() const { return &services_; }
  const HostOptions& options() const { return options_; }

  // Calls register_kernels once; the kernels are then in kernels().
  absl::Status RegisterKernels();
  const std::vector<KernelInfo>& kernels() const { return kernels_; }
  // The highest-priority kernel that accepts `node`, or null.
  const KernelInfo* FindKernel(const Node& node) const;

  // Injected failures of output_allocate: the next `n` calls fail with
  // RESOURCE_EXHAUSTED (n < 0: every call until reset).
  void FailOutputAllocations(int n) { fail_output_allocations_ = n; }
  // output_allocate calls refused by injection so far.
  int64_t injected_failures() const { return injected_failures_; }

  // Internal: the registrar and allocation hooks reach these.
  std::vector<KernelInfo>* mutable_kernels() { return &kernels_; }
  bool TakeInjectedFailure();

 private:
  HarnessPlugin() = default;

  std::string path_;
  HostOptions options_;
  void* handle_ = nullptr;
  bool initialized_ = false;
  PX_PluginProbeInfo probe_{};
  PX_HostServices services_{};
  std::vector<unsigned char> table_bytes_;
  PX_PluginTable* table_ = nullptr;
  std::vector<KernelInfo> kernels_;
  bool registered_ = false;
  std::atomic<int> fail_output_allocations_{0};
  std::atomic<int64_t> injected_failures_{0};
};

// Takes ownership of a plugin-returned status (OK for null).
absl::Status TakeStatus(const PX_HostServices* services, PX_Status* status);

// An opened device with helpers for memory, streams and kernels. Owns what
// it allocates through its helpers and frees it at destruction.
class HarnessDevice {
 public:
  static absl::StatusOr<std::unique_ptr<HarnessDevice>> Open(HarnessPlugin* plugin, int ordinal);
  ~HarnessDevice();

  HarnessPlugin& plugin() const { return *plugin_; }
  const PX_PluginTable& table() const { return plugin_->table(); }
  PX_Device* handle() const { return device_; }
  int ordinal() const { return ordinal_; }
  DLDevice dl_device() const;

  absl::Status Check(PX_Status* status) const { return TakeStatus(plugin_->services(), status); }

 private:
  HarnessDevice() = default;
  HarnessPlugin* plugin_ = nullptr;
  PX_Device* device_ = nullptr;
  int ordinal_ = 0;
};

// How outputs are presented to the kernel.
enum class OutputMode {
  kHostAllocated,    // as the core does: allocated when the shape function knows the shape
  kKernelAllocated,  // every output has ndim == -1: the kernel allocates it
};

// A kernel instance for one node, created through the plugin.
class KernelInstance {
 public:
  static absl::StatusOr<std::unique_ptr<KernelInstance>> Create(HarnessDevice* device,
                                                                const KernelInfo* kernel,
                                                                const Node* node);
  ~KernelInstance();

  // Runs the kernel once on `stream`: infers output shapes with the op's
  // shape function, stages inputs on the device (host-memory inputs stay on
  // the host), computes, synchronizes the stream (unless `skip_sync`, for the
  // synchronous debug mode) and copies every output back to the host.
  // Safe to call from several threads with different streams.
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& inputs, PX_Stream* stream,
                                          OutputMode mode, bool skip_sync = false) const;

  // Set when the last failure of Run came from the shape function (the core
  // would refuse the inputs before any kernel runs).
  static bool IsShapeRefusal(const absl::Status& status);

  const KernelInfo& kernel() const { return *kernel_; }

 private:
  KernelInstance() = default;
  HarnessDevice* device_ = nullptr;
  const KernelInfo* kernel_ = nullptr;
  const Node* node_ = nullptr;
  void* instance_ = nullptr;
};

// Builds a graph of Placeholders feeding one node of `op` with `attrs`;
// defaults are filled and output types resolved by the core's importer.
absl::StatusOr<std::unique_ptr<Graph>> OneNodeGraph(
    const std::string& op, const std::vector<Tensor>& inputs,
    const std::vector<std::pair<std::string, tf::AttrValue>>& attrs);

// The node named "op" of a graph from OneNodeGraph.
const Node* OpNode(const Graph& graph);

}  // namespace plexus::conformance

#endif  // PLEXUS_SDK_CONFORMANCE_HARNESS_HOST_H_

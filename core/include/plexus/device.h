// A device of a loaded plugin: its description, memory, default stream and
// copies to and from the host. A Device keeps its plugin loaded; buffers keep
// their device. Devices open lazily, on first use.
#ifndef PLEXUS_DEVICE_H_
#define PLEXUS_DEVICE_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "plexus/plugin_api.h"
#include "plexus/tensor.h"

namespace plexus {

class Plugin;
class MemoryPool;

// Statistics of a device's memory pool (core/src/devices/memory_pool.h). Sizes are
// bytes; "blocks" are what callers get, "regions" what the plugin gave.
struct MemoryPoolStats {
  uint64_t num_allocations = 0;         // Allocate calls that succeeded
  uint64_t num_frees = 0;
  uint64_t bytes_in_use = 0;            // blocks handed out, rounded sizes
  uint64_t peak_bytes_in_use = 0;
  uint64_t bytes_requested_in_use = 0;  // what callers asked for
  uint64_t bytes_reserved = 0;          // sum of the regions held
  uint64_t peak_bytes_reserved = 0;
  uint64_t num_regions = 0;             // regions held now
  uint64_t region_allocations = 0;      // regions ever obtained
  uint64_t region_frees = 0;            // regions given back
  uint64_t num_splits = 0;
  uint64_t num_coalesces = 0;
  uint64_t largest_free_block = 0;
  uint64_t free_bytes = 0;              // bytes_reserved - bytes_in_use
  // One line, human-readable.
  std::string ToString() const;
};

class Device : public std::enable_shared_from_this<Device> {
 public:
  Device(std::shared_ptr<Plugin> plugin, int ordinal, const PX_DeviceInfo& info);
  ~Device();  // destroys the stream and closes the device
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  // "CPU:0", "CUDA:1".
  const std::string& name() const { return name_; }
  const std::string& type() const { return type_; }
  int ordinal() const { return ordinal_; }
  const PX_DeviceInfo& info() const { return info_; }
  bool host_accessible() const { return info_.host_accessible != 0; }
  // Where DLPack says this device's tensors live (the plugin's type code).
  const DLDevice& dl_device() const { return dl_device_; }
  Plugin& plugin() const { return *plugin_; }
  const std::shared_ptr<Plugin>& plugin_ref() const { return plugin_; }

  // Opens the device and creates its stream (thread-safe; after a failure
  // the next call tries again).
  absl::Status Open();
  PX_Device* handle() const { return handle_; }

  // Device memory from the device's memory pool (see MemoryPoolStats),
  // returned to the pool when the last reference drops. Out of memory is
  // RESOURCE_EXHAUSTED naming the device and size (after the pool has given
  // its wholly free regions back to the plugin and tried once more).
  // With PLEXUS_DEVICE_POOL=off in the environment (read when the device is
  // created) every buffer is allocated and freed by the plugin directly, so
  // memory checkers (ASan, compute-sanitizer) see each one.
  absl::StatusOr<std::shared_ptr<Buffer>> Allocate(size_t bytes);

  // Statistics of the memory pool (or, with the pool off, of the direct
  // allocations: each buffer then counts as one region).
  using MemoryStats = MemoryPoolStats;
  MemoryStats memory_stats() const;
  // True unless PLEXUS_DEVICE_POOL=off.
  bool pool_enabled() const { return pool_ != nullptr; }
  // Gives the pool's wholly free regions back to the plugin.
  void ReleaseCache();
  // For Buffer: the block at `ptr` (`size` bytes asked for, `block_size`
  // rounded) is free again.
  void ReturnBlock(void* ptr, size_t size, size_t block_size);
  // A tensor of the given dtype and shape in this device's memory.
  absl::StatusOr<Tensor> AllocateTensor(DataType dtype, const Shape& shape);

  absl::Status CopyHostToDevice(void* dst, const void* src, size_t bytes);
  absl::Status CopyDeviceToHost(void* dst, const void* src, size_t bytes);
  absl::Status CopyDeviceToDevice(void* dst, const void* src, size_t bytes);
  // Waits for the default stream; returns its sticky error, if any.
  absl::Status Synchronize();

  // Streams for one run each, so concurrent runs never share a stream (the
  // ABI serializes calls per stream) and a failed run's sticky error does not
  // leak into the next. A stream released as unhealthy is destroyed.
  absl::StatusOr<PX_Stream*> AcquireStream();
  void ReleaseStream(PX_Stream* stream, bool healthy);
  absl::Status SynchronizeStream(PX_Stream* stream);
  // Queues a copy on `stream` (the plugin's async copy, or a synchronous one
  // after waiting for the stream where the plugin has none).
  absl::Status CopyHostToDeviceAsync(PX_Stream* stream, void* dst, const void* src, size_t bytes);
  absl::Status CopyDeviceToDeviceAsync(PX_Stream* stream, void* dst, const void* src, size_t bytes);

  // Stream capture (ABI 0.5, optional): work queued on a stream between
  // BeginCapture and EndCapture is recorded as a graph that LaunchGraph
  // replays. See PX_PluginTable::stream_capture_begin.
  bool supports_capture() const;
  absl::Status BeginCapture(PX_Stream* stream);
  absl::StatusOr<PX_Graph*> EndCapture(PX_Stream* stream);
  absl::Status LaunchGraph(PX_Stream* stream, PX_Graph* graph);
  void DestroyGraph(PX_Graph* graph);

  // Stream interop (ABI 0.8, optional; PX_PluginTable::stream_native_handle):
  // the platform's handle of `stream` (a cudaStream_t as an integer), and
  // another library's stream (by its native handle; DLPack's 1 and 2 are the
  // legacy and per-thread default streams) made to wait on the device for
  // the work queued on `stream` so far. UNIMPLEMENTED without the slots.
  bool supports_stream_interop() const;
  absl::StatusOr<uint64_t> NativeStreamHandle(PX_Stream* stream);
  absl::Status NativeStreamWait(uint64_t native_stream, PX_Stream* stream);

  // The collectives extension of this device's plugin (ABI 0.7), or null:
  // Plugin::collectives(). Pass handle() (after Open) to its comm_create.
  const PX_CollectivesExt* collectives() const;

  // Converts a plugin status to absl::Status (and frees it), prefixing the
  // device's name and `what`.
  absl::Status Check(PX_Status* status, absl::string_view what) const;

 private:
  std::shared_ptr<Plugin> plugin_;
  int ordinal_;
  PX_DeviceInfo info_;
  DLDevice dl_device_{};
  std::string type_;
  std::string name_;
  std::mutex open_mu_;               // serializes Open
  std::atomic<bool> opened_{false};  // the device and its stream are made
  PX_Device* handle_ = nullptr;
  PX_Stream* stream_ = nullptr;
  std::mutex pool_mu_;
  std::vector<PX_Stream*> stream_pool_;
  std::unique_ptr<MemoryPool> pool_;  // null with PLEXUS_DEVICE_POOL=off
  mutable std::mutex direct_mu_;      // with the pool off:
  MemoryStats direct_stats_;          //   counts of direct allocations
};

// Copies `tensor` to `device` (null = host memory). Returns the same tensor
// when no copy is needed (already there, or both sides host-accessible).
absl::StatusOr<Tensor> CopyTensorTo(const Tensor& tensor, Device* device);

}  // namespace plexus

#endif  // PLEXUS_DEVICE_H_

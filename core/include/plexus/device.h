// A device of a loaded plugin: its description, memory, default stream and
// copies to and from the host. A Device keeps its plugin loaded; buffers keep
// their device. Devices open lazily, on first use.
#ifndef PLEXUS_DEVICE_H_
#define PLEXUS_DEVICE_H_

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
  Plugin& plugin() const { return *plugin_; }
  const std::shared_ptr<Plugin>& plugin_ref() const { return plugin_; }

  // Opens the device and creates its stream (once; thread-safe).
  absl::Status Open();
  PX_Device* handle() const { return handle_; }

  // Device memory, returned to the device's cache when the last reference
  // drops. Out of memory is RESOURCE_EXHAUSTED naming the device and size
  // (after the cache has been given back to the plugin and the allocation
  // tried again).
  absl::StatusOr<std::shared_ptr<Buffer>> Allocate(size_t bytes);

  // The cache over the plugin's allocator: freed blocks are kept by size
  // class (sizes rounded up by at most an eighth) and reused, up to
  // kMaxCachedBytes, so steady-state runs do not call the plugin per tensor.
  struct MemoryStats {
    uint64_t allocations = 0;    // Allocate calls
    uint64_t cache_hits = 0;     // served from the cache
    uint64_t plugin_allocations = 0;
    uint64_t bytes_in_use = 0;   // handed out, rounded
    uint64_t peak_bytes_in_use = 0;
    uint64_t bytes_cached = 0;   // free blocks kept
  };
  static constexpr size_t kMaxCachedBytes = size_t{256} << 20;
  MemoryStats memory_stats() const;
  // Gives every cached block back to the plugin.
  void ReleaseCache();
  // For Buffer: a block of size class `rounded` is free again.
  void ReturnToCache(void* ptr, size_t rounded);
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

  // Converts a plugin status to absl::Status (and frees it), prefixing the
  // device's name and `what`.
  absl::Status Check(PX_Status* status, absl::string_view what) const;

 private:
  std::shared_ptr<Plugin> plugin_;
  int ordinal_;
  PX_DeviceInfo info_;
  std::string type_;
  std::string name_;
  std::once_flag open_once_;
  absl::Status open_status_;
  PX_Device* handle_ = nullptr;
  PX_Stream* stream_ = nullptr;
  std::mutex pool_mu_;
  std::vector<PX_Stream*> stream_pool_;
  mutable std::mutex cache_mu_;
  std::map<size_t, std::vector<void*>> cache_;  // rounded size -> free blocks
  MemoryStats stats_;
};

// Copies `tensor` to `device` (null = host memory). Returns the same tensor
// when no copy is needed (already there, or both sides host-accessible).
absl::StatusOr<Tensor> CopyTensorTo(const Tensor& tensor, Device* device);

}  // namespace plexus

#endif  // PLEXUS_DEVICE_H_

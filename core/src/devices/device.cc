#include "plexus/device.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "devices/host_services.h"
#include "devices/memory_pool.h"
#include "plexus/plugin_host.h"
#include "plexus/status.h"

namespace plexus {

namespace {

// Every block of device memory starts at a multiple of this.
constexpr size_t kDeviceAlignment = 256;

// PLEXUS_DEVICE_POOL=off (or 0, false, no): no pool, the plugin per buffer.
bool DevicePoolEnabled() {
  const char* value = std::getenv("PLEXUS_DEVICE_POOL");
  if (value == nullptr) return true;
  std::string v = absl::AsciiStrToLower(value);
  return !(v == "off" || v == "0" || v == "false" || v == "no");
}

}  // namespace

Device::Device(std::shared_ptr<Plugin> plugin, int ordinal, const PX_DeviceInfo& info)
    : plugin_(std::move(plugin)), ordinal_(ordinal), info_(info) {
  type_ = plugin_->device_type();
  name_ = absl::StrCat(type_, ":", ordinal_);
  dl_device_.device_type = static_cast<DLDeviceType>(plugin_->table().dlpack_device_type);
  dl_device_.device_id = ordinal_;
  if (DevicePoolEnabled()) {
    // Regions come from the plugin, which the device keeps loaded; the pool
    // is only used once the device is open (Allocate opens it).
    MemoryPool::RegionAllocator regions;
    regions.allocate_region = [this](size_t bytes) -> absl::StatusOr<void*> {
      void* ptr = nullptr;
      absl::Status status =
          TakePluginStatus(plugin_->table().allocate(handle_, bytes, kDeviceAlignment, &ptr));
      if (!status.ok()) return status;
      if (ptr == nullptr) {
        return absl::InternalError(absl::StrCat("plugin '", plugin_->name(), "': allocate returned OK with a null "
                                                "pointer for ", bytes, " bytes (a fault of the plugin, not a lack "
                                                "of memory)"));
      }
      return ptr;
    };
    regions.free_region = [this](void* ptr, size_t) { plugin_->table().deallocate(handle_, ptr); };
    MemoryPool::Options options;
    options.alignment = kDeviceAlignment;
    pool_ = std::make_unique<MemoryPool>(std::move(regions), options);
  }
}

Device::~Device() {
  // Buffers keep their device, so no block is in use any more: the pool
  // gives its regions back while the device is still open.
  pool_.reset();
  const PX_PluginTable& t = plugin_->table();
  std::lock_guard<std::mutex> lock(plugin_->device_mutex());
  for (PX_Stream* s : stream_pool_) t.stream_destroy(handle_, s);
  if (stream_ != nullptr) t.stream_destroy(handle_, stream_);
  if (handle_ != nullptr) t.device_close(t.plugin_state, handle_);
}

absl::Status Device::Check(PX_Status* status, absl::string_view what) const {
  absl::Status s = TakePluginStatus(status);
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat("device ", name_, ": ", what, ": ", s.message()));
}

absl::Status Device::Open() {
  if (opened_.load(std::memory_order_acquire)) return absl::OkStatus();
  // A failed open (the device, or its stream) is tried again by the next
  // call, so that a transient fault does not leave the device unusable.
  std::lock_guard<std::mutex> open_lock(open_mu_);
  if (opened_.load(std::memory_order_relaxed)) return absl::OkStatus();
  std::lock_guard<std::mutex> lock(plugin_->device_mutex());
  const PX_PluginTable& t = plugin_->table();
  if (handle_ == nullptr) {
    PX_Device* handle = nullptr;
    PX_RETURN_IF_ERROR(Check(t.device_open(t.plugin_state, ordinal_, &handle), "open"));
    handle_ = handle;
  }
  if (stream_ == nullptr) {
    PX_Stream* stream = nullptr;
    PX_RETURN_IF_ERROR(Check(t.stream_create(handle_, &stream), "create stream"));
    stream_ = stream;
  }
  opened_.store(true, std::memory_order_release);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<Buffer>> Device::Allocate(size_t bytes) {
  absl::Status open = Open();
  if (!open.ok()) return open;
  if (bytes > (size_t{1} << 62)) {
    return absl::ResourceExhaustedError(absl::StrCat("device ", name_, ": cannot allocate ", bytes, " bytes"));
  }
  const size_t rounded = std::max<size_t>(1, (bytes + kDeviceAlignment - 1) / kDeviceAlignment) *
                         kDeviceAlignment;
  if (pool_ != nullptr) {
    absl::StatusOr<void*> ptr = pool_->Allocate(bytes);
    if (!ptr.ok()) {
      return absl::Status(ptr.status().code(), absl::StrCat("device ", name_, ": allocating ", bytes,
                                                            " bytes: ", ptr.status().message()));
    }
    return std::make_shared<Buffer>(*ptr, bytes, shared_from_this(), rounded);
  }
  // No pool: one plugin allocation per buffer.
  void* ptr = nullptr;
  absl::Status status = Check(plugin_->table().allocate(handle_, rounded, kDeviceAlignment, &ptr),
                              absl::StrCat("allocating ", bytes, " bytes"));
  if (!status.ok()) return status;
  if (ptr == nullptr) {
    return absl::InternalError(absl::StrCat("device ", name_, ": plugin '", plugin_->name(),
                                            "': allocate returned OK with a null pointer for ", bytes,
                                            " bytes (a fault of the plugin, not a lack of memory)"));
  }
  {
    std::lock_guard<std::mutex> lock(direct_mu_);
    MemoryStats& s = direct_stats_;
    s.num_allocations++;
    s.region_allocations++;
    s.num_regions++;
    s.bytes_in_use += rounded;
    s.bytes_requested_in_use += bytes;
    s.bytes_reserved += rounded;
    s.peak_bytes_in_use = std::max(s.peak_bytes_in_use, s.bytes_in_use);
    s.peak_bytes_reserved = std::max(s.peak_bytes_reserved, s.bytes_reserved);
  }
  return std::make_shared<Buffer>(ptr, bytes, shared_from_this(), rounded);
}

void Device::ReturnBlock(void* ptr, size_t size, size_t block_size) {
  if (pool_ != nullptr) {
    pool_->Free(ptr);
    return;
  }
  plugin_->table().deallocate(handle_, ptr);
  std::lock_guard<std::mutex> lock(direct_mu_);
  MemoryStats& s = direct_stats_;
  s.num_frees++;
  s.region_frees++;
  s.num_regions--;
  s.bytes_in_use -= block_size;
  s.bytes_requested_in_use -= size;
  s.bytes_reserved -= block_size;
}

void Device::ReleaseCache() {
  if (pool_ != nullptr) pool_->ReleaseFree();
}

Device::MemoryStats Device::memory_stats() const {
  if (pool_ != nullptr) return pool_->stats();
  std::lock_guard<std::mutex> lock(direct_mu_);
  return direct_stats_;
}

absl::StatusOr<Tensor> Device::AllocateTensor(DataType dtype, const Shape& shape) {
  size_t element_size = DataTypeSize(dtype);
  if (element_size == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "device ", name_, ": cannot hold tensors of type ", DataTypeName(dtype)));
  }
  auto bytes = CheckedByteSize(dtype, shape);
  if (!bytes.ok()) return Annotate(bytes.status(), absl::StrCat("device ", name_));
  auto buffer = Allocate(*bytes);
  if (!buffer.ok()) return buffer.status();
  return Tensor(dtype, shape, *std::move(buffer));
}

absl::Status Device::CopyHostToDevice(void* dst, const void* src, size_t bytes) {
  absl::Status open = Open();
  if (!open.ok()) return open;
  return Check(plugin_->table().memcpy_h2d(handle_, dst, src, bytes), "copy host to device");
}

absl::Status Device::CopyDeviceToHost(void* dst, const void* src, size_t bytes) {
  absl::Status open = Open();
  if (!open.ok()) return open;
  return Check(plugin_->table().memcpy_d2h(handle_, dst, src, bytes), "copy device to host");
}

absl::Status Device::CopyDeviceToDevice(void* dst, const void* src, size_t bytes) {
  absl::Status open = Open();
  if (!open.ok()) return open;
  return Check(plugin_->table().memcpy_d2d(handle_, dst, src, bytes), "copy on device");
}

absl::Status Device::Synchronize() {
  absl::Status open = Open();
  if (!open.ok()) return open;
  return Check(plugin_->table().stream_synchronize(handle_, stream_), "stream");
}

absl::StatusOr<PX_Stream*> Device::AcquireStream() {
  PX_RETURN_IF_ERROR(Open());
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (!stream_pool_.empty()) {
      PX_Stream* s = stream_pool_.back();
      stream_pool_.pop_back();
      return s;
    }
  }
  PX_Stream* stream = nullptr;
  PX_RETURN_IF_ERROR(Check(plugin_->table().stream_create(handle_, &stream), "create stream"));
  return stream;
}

void Device::ReleaseStream(PX_Stream* stream, bool healthy) {
  if (stream == nullptr) return;
  if (!healthy) {
    plugin_->table().stream_destroy(handle_, stream);
    return;
  }
  std::lock_guard<std::mutex> lock(pool_mu_);
  stream_pool_.push_back(stream);
}

absl::Status Device::SynchronizeStream(PX_Stream* stream) {
  return Check(plugin_->table().stream_synchronize(handle_, stream), "stream");
}

absl::Status Device::CopyHostToDeviceAsync(PX_Stream* stream, void* dst, const void* src, size_t bytes) {
  const PX_PluginTable& t = plugin_->table();
  if (t.memcpy_h2d_async == nullptr) {
    PX_RETURN_IF_ERROR(SynchronizeStream(stream));
    return CopyHostToDevice(dst, src, bytes);
  }
  return Check(t.memcpy_h2d_async(handle_, stream, dst, src, bytes), "memcpy_h2d_async");
}

absl::Status Device::CopyDeviceToDeviceAsync(PX_Stream* stream, void* dst, const void* src,
                                             size_t bytes) {
  const PX_PluginTable& t = plugin_->table();
  if (t.memcpy_d2d_async == nullptr) {
    PX_RETURN_IF_ERROR(SynchronizeStream(stream));
    return CopyDeviceToDevice(dst, src, bytes);
  }
  return Check(t.memcpy_d2d_async(handle_, stream, dst, src, bytes), "memcpy_d2d_async");
}

bool Device::supports_capture() const {
  const PX_PluginTable& t = plugin_->table();
  return t.abi_minor >= 5 && PX_STRUCT_HAS(&t, PX_PluginTable, graph_destroy) &&
         t.stream_capture_begin != nullptr && t.stream_capture_end != nullptr &&
         t.graph_launch != nullptr && t.graph_destroy != nullptr;
}

const PX_CollectivesExt* Device::collectives() const { return plugin_->collectives(); }

bool Device::supports_stream_interop() const {
  const PX_PluginTable& t = plugin_->table();
  return t.abi_minor >= 8 && PX_STRUCT_HAS(&t, PX_PluginTable, native_stream_wait) &&
         t.stream_native_handle != nullptr && t.native_stream_wait != nullptr;
}

absl::StatusOr<uint64_t> Device::NativeStreamHandle(PX_Stream* stream) {
  if (!supports_stream_interop()) {
    return absl::UnimplementedError(absl::StrCat(name_, ": the plugin has no native stream handles"));
  }
  uint64_t handle = 0;
  PX_RETURN_IF_ERROR(
      Check(plugin_->table().stream_native_handle(handle_, stream, &handle), "stream_native_handle"));
  return handle;
}

absl::Status Device::NativeStreamWait(uint64_t native_stream, PX_Stream* stream) {
  if (!supports_stream_interop()) {
    return absl::UnimplementedError(absl::StrCat(name_, ": the plugin cannot order other streams"));
  }
  return Check(plugin_->table().native_stream_wait(handle_, native_stream, stream),
               absl::StrCat("native_stream_wait(", native_stream, ")"));
}

absl::Status Device::BeginCapture(PX_Stream* stream) {
  if (!supports_capture()) {
    return absl::UnimplementedError(absl::StrCat(name_, ": the plugin cannot capture streams"));
  }
  return Check(plugin_->table().stream_capture_begin(handle_, stream), "stream_capture_begin");
}

absl::StatusOr<PX_Graph*> Device::EndCapture(PX_Stream* stream) {
  PX_Graph* graph = nullptr;
  PX_RETURN_IF_ERROR(Check(plugin_->table().stream_capture_end(handle_, stream, &graph), "stream_capture_end"));
  if (graph == nullptr) return absl::InternalError(absl::StrCat(name_, ": stream_capture_end returned no graph"));
  return graph;
}

absl::Status Device::LaunchGraph(PX_Stream* stream, PX_Graph* graph) {
  return Check(plugin_->table().graph_launch(handle_, stream, graph), "graph_launch");
}

void Device::DestroyGraph(PX_Graph* graph) {
  if (graph != nullptr) plugin_->table().graph_destroy(handle_, graph);
}

absl::StatusOr<Tensor> CopyTensorTo(const Tensor& tensor, Device* device) {
  Device* from = tensor.device();
  if (from == device) return tensor;
  bool target_host = device == nullptr || device->host_accessible();
  if (tensor.host_readable() && target_host) return tensor;
  if (tensor.dtype() == DataType::kString || tensor.dtype() == DataType::kVariant) {
    return absl::InvalidArgumentError(absl::StrCat(DataTypeName(tensor.dtype()),
        " tensors cannot be copied to device ", device->name()));
  }
  const size_t bytes = tensor.nbytes();
  if (device == nullptr || device->host_accessible()) {
    // Device to host.
    absl::StatusOr<Tensor> out = device == nullptr
        ? Tensor::AllocateHost(tensor.dtype(), tensor.shape())
        : device->AllocateTensor(tensor.dtype(), tensor.shape());
    if (!out.ok()) return out.status();
    absl::Status sync = from->Synchronize();
    if (!sync.ok()) return sync;
    absl::Status copy = from->CopyDeviceToHost(out->raw_data(), tensor.raw_data(), bytes);
    if (!copy.ok()) return copy;
    return out;
  }
  auto out = device->AllocateTensor(tensor.dtype(), tensor.shape());
  if (!out.ok()) return out.status();
  if (tensor.host_readable()) {
    absl::Status copy = device->CopyHostToDevice(out->raw_data(), tensor.raw_data(), bytes);
    if (!copy.ok()) return copy;
    return out;
  }
  // Between two devices that are not host-accessible: stage through the host.
  auto staged = CopyTensorTo(tensor, nullptr);
  if (!staged.ok()) return staged.status();
  absl::Status copy = device->CopyHostToDevice(out->raw_data(), staged->raw_data(), bytes);
  if (!copy.ok()) return copy;
  return out;
}

}  // namespace plexus

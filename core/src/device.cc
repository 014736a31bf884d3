#include "plexus/device.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "host_services.h"
#include "plexus/plugin_host.h"
#include "plexus/status.h"

namespace plexus {

Device::Device(std::shared_ptr<Plugin> plugin, int ordinal, const PX_DeviceInfo& info)
    : plugin_(std::move(plugin)), ordinal_(ordinal), info_(info) {
  type_ = plugin_->device_type();
  name_ = absl::StrCat(type_, ":", ordinal_);
}

Device::~Device() {
  ReleaseCache();
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
  std::call_once(open_once_, [this] {
    std::lock_guard<std::mutex> lock(plugin_->device_mutex());
    const PX_PluginTable& t = plugin_->table();
    open_status_ = Check(t.device_open(t.plugin_state, ordinal_, &handle_), "open");
    if (open_status_.ok()) {
      open_status_ = Check(t.stream_create(handle_, &stream_), "create stream");
    }
  });
  return open_status_;
}

namespace {

// The size class of a request: a multiple of 64 bytes, and above 512 bytes
// a multiple of an eighth of its power of two (at most 12.5% more).
size_t SizeClass(size_t bytes) {
  if (bytes <= 512) return bytes <= 64 ? 64 : (bytes + 63) / 64 * 64;
  size_t top = size_t{1} << (63 - __builtin_clzll(bytes));
  size_t step = top / 8;
  return (bytes + step - 1) / step * step;
}

}  // namespace

absl::StatusOr<std::shared_ptr<Buffer>> Device::Allocate(size_t bytes) {
  absl::Status open = Open();
  if (!open.ok()) return open;
  if (bytes > (size_t{1} << 62)) {
    return absl::ResourceExhaustedError(absl::StrCat("device ", name_, ": cannot allocate ", bytes, " bytes"));
  }
  const size_t rounded = SizeClass(bytes);
  void* ptr = nullptr;
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    stats_.allocations++;
    auto it = cache_.find(rounded);
    if (it != cache_.end() && !it->second.empty()) {
      ptr = it->second.back();
      it->second.pop_back();
      stats_.cache_hits++;
      stats_.bytes_cached -= rounded;
    }
  }
  if (ptr == nullptr) {
    absl::Status status = Check(plugin_->table().allocate(handle_, rounded, 64, &ptr),
                                absl::StrCat("allocating ", bytes, " bytes"));
    if (status.code() == absl::StatusCode::kResourceExhausted) {
      // Out of memory: give the cache back and try once more.
      ReleaseCache();
      status = Check(plugin_->table().allocate(handle_, rounded, 64, &ptr),
                     absl::StrCat("allocating ", bytes, " bytes"));
    }
    if (!status.ok()) return status;
    if (ptr == nullptr) {
      return absl::InternalError(absl::StrCat("device ", name_, ": allocate returned null for ",
                                              bytes, " bytes"));
    }
    std::lock_guard<std::mutex> lock(cache_mu_);
    stats_.plugin_allocations++;
  }
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    stats_.bytes_in_use += rounded;
    stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  }
  return std::make_shared<Buffer>(ptr, bytes, shared_from_this(), rounded);
}

void Device::ReturnToCache(void* ptr, size_t rounded) {
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    stats_.bytes_in_use -= rounded;
    if (stats_.bytes_cached + rounded <= kMaxCachedBytes) {
      cache_[rounded].push_back(ptr);
      stats_.bytes_cached += rounded;
      return;
    }
  }
  plugin_->table().deallocate(handle_, ptr);
}

void Device::ReleaseCache() {
  std::map<size_t, std::vector<void*>> blocks;
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    blocks.swap(cache_);
    stats_.bytes_cached = 0;
  }
  for (const auto& [size, list] : blocks) {
    for (void* p : list) plugin_->table().deallocate(handle_, p);
  }
}

Device::MemoryStats Device::memory_stats() const {
  std::lock_guard<std::mutex> lock(cache_mu_);
  return stats_;
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

absl::StatusOr<Tensor> CopyTensorTo(const Tensor& tensor, Device* device) {
  Device* from = tensor.device();
  if (from == device) return tensor;
  bool target_host = device == nullptr || device->host_accessible();
  if (tensor.host_readable() && target_host) return tensor;
  if (tensor.dtype() == DataType::kString) {
    return absl::InvalidArgumentError(absl::StrCat(
        "string tensors cannot be copied to device ", device->name()));
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

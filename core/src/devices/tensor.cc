#include "plexus/tensor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "devices/host_allocation.h"
#include "devices/tensor_copy.h"
#include "plexus/device.h"
#include "plexus/status.h"

namespace plexus {
namespace {

// PLEXUS_HOST_ALLOCATION_LIMIT (bytes, read at each allocation): the largest
// host buffer a process may ask for, so that a service can refuse a request
// whose output would be gigabytes with an error instead of being killed for
// memory. Unset, empty or not a positive number: no limit but the tensor's.
size_t HostAllocationLimit() {
  const char* env = std::getenv("PLEXUS_HOST_ALLOCATION_LIMIT");
  if (env == nullptr || *env == '\0') return kMaxTensorBytes;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(env, &end, 10);
  return (*end == '\0' && v > 0) ? std::min<size_t>(v, kMaxTensorBytes) : kMaxTensorBytes;
}

absl::Status CheckHostBytes(size_t bytes) {
  if (bytes > kMaxTensorBytes) {
    return absl::ResourceExhaustedError(absl::StrCat("host allocation of ", bytes,
                                                     " bytes is too large"));
  }
  if (const size_t limit = HostAllocationLimit(); bytes > limit) {
    return absl::ResourceExhaustedError(absl::StrCat("host allocation of ", bytes, " bytes is over ",
                                                     "PLEXUS_HOST_ALLOCATION_LIMIT=", limit));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckHostAllocation(int64_t count, size_t element_bytes) {
  if (count < 0) return absl::InvalidArgumentError(absl::StrCat("a host buffer of ", count, " elements"));
  const uint64_t n = static_cast<uint64_t>(count);
  if (element_bytes != 0 && n > kMaxTensorBytes / element_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("host allocation of ", count, " elements of ",
                                                     element_bytes, " bytes is too large"));
  }
  return CheckHostBytes(static_cast<size_t>(n * element_bytes));
}

absl::StatusOr<std::shared_ptr<Buffer>> Buffer::AllocateHost(size_t bytes) {
  constexpr size_t kAlignment = 64;
  PX_RETURN_IF_ERROR(CheckHostBytes(bytes));
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0) rounded = kAlignment;
  void* data = std::aligned_alloc(kAlignment, rounded);
  if (data == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("out of host memory allocating ", bytes, " bytes"));
  }
  std::memset(data, 0, rounded);
  return std::make_shared<Buffer>(data, bytes, nullptr,
                                  [](void* p) { std::free(p); });
}

Buffer::Buffer(void* data, size_t size, std::shared_ptr<Device> device,
               std::function<void(void*)> release)
    : data_(data), size_(size), device_(std::move(device)),
      release_(std::move(release)) {}

Buffer::Buffer(void* data, size_t size, std::shared_ptr<Device> device, size_t block_size)
    : data_(data), size_(size), device_(std::move(device)), block_size_(block_size) {}

Buffer::Buffer(void* data, size_t size, std::shared_ptr<Buffer> parent)
    : data_(data), size_(size), device_(parent->device_ref()), parent_(std::move(parent)) {}

Buffer::~Buffer() {
  if (block_size_ != 0) {
    device_->ReturnBlock(data_, size_, block_size_);
  } else if (release_) {
    release_(data_);
  }
}

bool Buffer::host_accessible() const {
  return device_ == nullptr || device_->host_accessible();
}

Tensor::Tensor(DataType dtype, Shape shape, std::shared_ptr<Buffer> buffer)
    : dtype_(dtype), shape_(std::move(shape)), buffer_(std::move(buffer)) {}

absl::StatusOr<Tensor> Tensor::AllocateHost(DataType dtype, Shape shape) {
  size_t element_size = DataTypeSize(dtype);
  if (element_size == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot allocate a host tensor of type ", DataTypeName(dtype)));
  }
  auto bytes = CheckedByteSize(dtype, shape);
  if (!bytes.ok()) return bytes.status();
  auto buffer = Buffer::AllocateHost(*bytes);
  if (!buffer.ok()) return buffer.status();
  return Tensor(dtype, std::move(shape), *std::move(buffer));
}

Tensor Tensor::FromStrings(Shape shape, std::vector<std::string> values) {
  Tensor t;
  t.dtype_ = DataType::kString;
  t.shape_ = std::move(shape);
  t.strings_ = std::make_shared<std::vector<std::string>>(std::move(values));
  return t;
}

Tensor Tensor::FromResource(std::shared_ptr<ResourceBase> resource) {
  Tensor t;
  t.dtype_ = DataType::kResource;
  t.resource_ = std::move(resource);
  return t;
}

Tensor Tensor::MakeRef(std::shared_ptr<ResourceBase> variable, DataType dtype) {
  Tensor t;
  t.dtype_ = dtype;
  t.resource_ = std::move(variable);
  t.is_ref_ = true;
  return t;
}

size_t Tensor::nbytes() const {
  return static_cast<size_t>(num_elements()) * DataTypeSize(dtype_);
}

const std::vector<std::string>& Tensor::strings() const {
  static const std::vector<std::string> kEmpty;
  return strings_ ? *strings_ : kEmpty;
}

bool Tensor::host_readable() const {
  if (dtype_ == DataType::kString || dtype_ == DataType::kResource || is_ref_) return true;
  return buffer_ != nullptr && buffer_->host_accessible();
}

absl::StatusOr<Tensor> Tensor::ShareForWriting() const {
  if (buffer_ == nullptr) return *this;
  if (!buffer_->pinned()) {
    buffer_->MarkExposed();
    return *this;
  }
  // A variable's value: a copy in the same memory (host, or its device).
  PX_ASSIGN_OR_RETURN(Tensor copy, CopyInSameMemory(*this));
  copy.buffer_->MarkExposed();
  return copy;
}

absl::StatusOr<Tensor> CopyInSameMemory(const Tensor& tensor) {
  Tensor copy;
  if (tensor.host_readable()) {
    PX_ASSIGN_OR_RETURN(copy, Tensor::AllocateHost(tensor.dtype(), tensor.shape()));
    if (tensor.nbytes() > 0) std::memcpy(copy.raw_data(), tensor.raw_data(), tensor.nbytes());
  } else {
    Device* device = tensor.device();
    PX_ASSIGN_OR_RETURN(copy, device->AllocateTensor(tensor.dtype(), tensor.shape()));
    if (tensor.nbytes() > 0) {
      PX_RETURN_IF_ERROR(device->CopyDeviceToDevice(copy.raw_data(), tensor.raw_data(), tensor.nbytes()));
    }
  }
  return copy;
}

DLTensor Tensor::ToDLTensor() const {
  DLTensor t{};
  t.data = raw_data();
  if (device() != nullptr) {
    t.device = device()->dl_device();
  } else {
    t.device.device_type = kDLCPU;
    t.device.device_id = 0;
  }
  t.ndim = static_cast<int>(shape_.size());
  auto dl = ToDLDataType(dtype_);
  if (dl.ok()) t.dtype = *dl;
  t.shape = const_cast<int64_t*>(shape_.data());
  t.strides = nullptr;
  t.byte_offset = 0;
  return t;
}

namespace {

template <typename T>
void AppendValues(std::string* out, const void* data, int64_t n, int max_values) {
  const T* values = static_cast<const T*>(data);
  for (int64_t i = 0; i < n && i < max_values; ++i) {
    if (i > 0) absl::StrAppend(out, ", ");
    if constexpr (sizeof(T) == 1) {
      absl::StrAppend(out, static_cast<int>(values[i]));
    } else {
      absl::StrAppend(out, values[i]);
    }
  }
  if (n > max_values) absl::StrAppend(out, ", ...");
}

}  // namespace

std::string Tensor::DebugString(int max_values) const {
  if (!valid()) return "<invalid tensor>";
  if (resource_ != nullptr) {
    return absl::StrCat(is_ref_ ? "ref " : "resource ", resource_->DebugString());
  }
  std::string out = absl::StrCat(DataTypeName(dtype_), " ", ShapeToString(shape_));
  if (!host_readable()) return absl::StrCat(out, " (on ", device()->name(), ")");
  absl::StrAppend(&out, " {");
  int64_t n = num_elements();
  switch (dtype_) {
    case DataType::kFloat: AppendValues<float>(&out, raw_data(), n, max_values); break;
    case DataType::kDouble: AppendValues<double>(&out, raw_data(), n, max_values); break;
    case DataType::kInt32: AppendValues<int32_t>(&out, raw_data(), n, max_values); break;
    case DataType::kInt64: AppendValues<int64_t>(&out, raw_data(), n, max_values); break;
    case DataType::kInt16: AppendValues<int16_t>(&out, raw_data(), n, max_values); break;
    case DataType::kInt8: AppendValues<int8_t>(&out, raw_data(), n, max_values); break;
    case DataType::kUInt8:
    case DataType::kBool: AppendValues<uint8_t>(&out, raw_data(), n, max_values); break;
    case DataType::kString:
      for (int64_t i = 0; i < n && i < max_values; ++i) {
        absl::StrAppend(&out, i ? ", " : "", "\"", strings()[i], "\"");
      }
      break;
    default: absl::StrAppend(&out, "..."); break;
  }
  absl::StrAppend(&out, "}");
  return out;
}

}  // namespace plexus

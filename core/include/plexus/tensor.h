// Tensors: a dtype, a shape and a reference-counted buffer that lives either
// in host memory (allocated by the core) or in a device's memory (allocated by
// its plugin). Copying a Tensor shares the buffer.
#ifndef PLEXUS_TENSOR_H_
#define PLEXUS_TENSOR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "dlpack/dlpack.h"
#include "plexus/dtype.h"
#include "plexus/shape.h"

namespace plexus {

class Device;

// A block of memory. device() is null for host memory owned by the core;
// otherwise the buffer keeps its device (and so its plugin) alive and frees
// itself through it.
class Buffer {
 public:
  static absl::StatusOr<std::shared_ptr<Buffer>> AllocateHost(size_t bytes);
  // Wraps memory owned elsewhere; `release` runs when the buffer dies.
  Buffer(void* data, size_t size, std::shared_ptr<Device> device,
         std::function<void(void*)> release);
  // A block of the device's memory (rounded to `block_size` bytes), given
  // back to the device (its memory pool) when the buffer dies.
  Buffer(void* data, size_t size, std::shared_ptr<Device> device, size_t block_size);
  // `size` bytes at `data` inside `parent`, which the view keeps alive.
  Buffer(void* data, size_t size, std::shared_ptr<Buffer> parent);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  Device* device() const { return device_.get(); }
  const std::shared_ptr<Device>& device_ref() const { return device_; }
  // True when the CPU can read and write the memory directly.
  bool host_accessible() const;

  // Who may write the memory. Tensors are immutable inside Plexus (the
  // executor never writes a buffer it did not just allocate), but memory can
  // be written from outside: memory imported from another framework, and
  // memory handed out for writing (DLPack export, px_tensor_data) is
  // "exposed". A variable keeps its value in a "pinned" buffer, which it
  // shares with its readers instead of copying; an exporter that would hand
  // a pinned buffer out for writing hands out a copy instead.
  void MarkExposed() { exposed_.store(true, std::memory_order_relaxed); }
  bool exposed() const { return exposed_.load(std::memory_order_relaxed); }
  void Pin() { pinned_.store(true, std::memory_order_relaxed); }
  bool pinned() const { return pinned_.load(std::memory_order_relaxed); }
  // True for a view into another buffer.
  bool is_view() const { return parent_ != nullptr; }

 private:
  void* data_;
  size_t size_;
  std::shared_ptr<Device> device_;
  std::function<void(void*)> release_;
  size_t block_size_ = 0;  // nonzero for a block of the device's memory
  std::shared_ptr<Buffer> parent_;  // for a view
  std::atomic<bool> exposed_{false};
  std::atomic<bool> pinned_{false};
};

// Runtime state a tensor can stand for: a variable, a TensorArray. A
// DT_RESOURCE tensor holds one (a handle), and so does a reference tensor
// (the output of a TensorFlow 1 VariableV2).
class ResourceBase {
 public:
  virtual ~ResourceBase() = default;
  virtual std::string DebugString() const = 0;
};

class Tensor {
 public:
  Tensor() = default;  // an invalid (empty) tensor
  Tensor(DataType dtype, Shape shape, std::shared_ptr<Buffer> buffer);

  // A zero-initialized host tensor. Fails for non-numeric dtypes.
  static absl::StatusOr<Tensor> AllocateHost(DataType dtype, Shape shape);
  // A host tensor of strings (DT_STRING).
  static Tensor FromStrings(Shape shape, std::vector<std::string> values);
  // A DT_RESOURCE scalar handle to `resource`.
  static Tensor FromResource(std::shared_ptr<ResourceBase> resource);
  // A reference to a variable whose value has dtype `dtype` (TensorFlow's
  // ref types): consumers read the variable's current value.
  static Tensor MakeRef(std::shared_ptr<ResourceBase> variable, DataType dtype);
  // A host scalar or vector, for tests and small constants.
  template <typename T>
  static Tensor FromVector(DataType dtype, Shape shape,
                           const std::vector<T>& values);

  bool valid() const { return dtype_ != DataType::kInvalid; }
  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t dims() const { return static_cast<int64_t>(shape_.size()); }
  int64_t num_elements() const { return NumElements(shape_); }
  size_t nbytes() const;

  void* raw_data() const { return buffer_ ? buffer_->data() : nullptr; }
  template <typename T>
  T* data() const { return static_cast<T*>(raw_data()); }
  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
  const std::vector<std::string>& strings() const;

  // The resource of a handle or reference tensor, else null.
  const std::shared_ptr<ResourceBase>& resource() const { return resource_; }
  template <typename R>
  R* resource_as() const { return dynamic_cast<R*>(resource_.get()); }
  bool is_ref() const { return is_ref_; }

  // Null for host memory.
  Device* device() const { return buffer_ ? buffer_->device() : nullptr; }
  // True when the CPU can read the data directly (host memory, or a device
  // whose memory is host memory).
  bool host_readable() const;

  // A DLPack descriptor borrowing this tensor's shape and data.
  DLTensor ToDLTensor() const;

  // This tensor, to be handed to someone who may write its memory (see
  // Buffer::MarkExposed): the buffer is marked exposed, or, when it is
  // pinned (a variable's value), a copy in the same memory (host or the
  // same device) is returned instead.
  absl::StatusOr<Tensor> ShareForWriting() const;

  // "float [2,3] {1, 2, 3, ...}" (values only when host_readable()).
  std::string DebugString(int max_values = 8) const;

 private:
  DataType dtype_ = DataType::kInvalid;
  Shape shape_;
  std::shared_ptr<Buffer> buffer_;
  std::shared_ptr<std::vector<std::string>> strings_;
  std::shared_ptr<ResourceBase> resource_;
  bool is_ref_ = false;
};

template <typename T>
Tensor Tensor::FromVector(DataType dtype, Shape shape,
                          const std::vector<T>& values) {
  Tensor t = AllocateHost(dtype, std::move(shape)).value();
  T* out = t.data<T>();
  for (size_t i = 0; i < values.size() && i < static_cast<size_t>(t.num_elements()); ++i) {
    out[i] = values[i];
  }
  return t;
}

}  // namespace plexus

#endif  // PLEXUS_TENSOR_H_

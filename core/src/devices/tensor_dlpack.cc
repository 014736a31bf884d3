#include "plexus/tensor_dlpack.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "plexus/device.h"
#include "plexus/status.h"

namespace plexus {
namespace {

// The heap copy of the tensor keeps the buffer (and the shape the
// descriptor points at) alive until the consumer calls the deleter.
struct Export {
  Tensor tensor;
  DLManagedTensor managed;
};

void DeleteExport(DLManagedTensor* self) { delete static_cast<Export*>(self->manager_ctx); }

}  // namespace

absl::StatusOr<DLManagedTensor*> ExportDLPack(const Tensor& tensor) {
  if (!tensor.valid()) return absl::InvalidArgumentError("cannot export an empty tensor to DLPack");
  if (tensor.dtype() == DataType::kString || tensor.resource() != nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("DLPack cannot carry ", DataTypeName(tensor.dtype()),
                                                   " tensors"));
  }
  PX_RETURN_IF_ERROR(ToDLDataType(tensor.dtype()).status());
  auto holder = std::make_unique<Export>();
  // Shares the buffer (the consumer may write it), or copies a variable's value.
  PX_ASSIGN_OR_RETURN(holder->tensor, tensor.ShareForWriting());
  holder->managed.dl_tensor = holder->tensor.ToDLTensor();  // borrows the copy's shape
  holder->managed.manager_ctx = holder.get();
  holder->managed.deleter = &DeleteExport;
  return &holder.release()->managed;
}

std::shared_ptr<Device> DeviceForDLPack(DLDevice dl, const Runtime* runtime) {
  const int type = static_cast<int>(dl.device_type);
  if (runtime == nullptr || type == kDLCPU || type == kDLCUDAHost || type == kDLROCMHost) return nullptr;
  for (const auto& d : runtime->devices()) {
    if (static_cast<int>(d->dl_device().device_type) == type && d->dl_device().device_id == dl.device_id) {
      return d;
    }
  }
  return nullptr;
}

absl::StatusOr<Tensor> ImportDLPack(DLManagedTensor* managed, const Runtime* runtime) {
  if (managed == nullptr) return absl::InvalidArgumentError("DLPack import: no tensor");
  const DLTensor& dl = managed->dl_tensor;
  auto refuse = [](std::string why) { return absl::InvalidArgumentError(absl::StrCat("DLPack import: ", why)); };
  std::shared_ptr<Device> device;
  const int type = static_cast<int>(dl.device.device_type);
  const bool host = type == kDLCPU || type == kDLCUDAHost || type == kDLROCMHost;
  if (!host) {
    device = DeviceForDLPack(dl.device, runtime);
    if (device == nullptr) {
      return refuse(absl::StrCat("no loaded device holds memory of DLPack device type ", type, " id ",
                                 dl.device.device_id));
    }
  }
  if (dl.dtype.lanes != 1) return refuse(absl::StrCat("vector types are not supported (lanes = ", dl.dtype.lanes, ")"));
  auto dtype = FromDLDataType(dl.dtype);
  if (!dtype.ok()) return Annotate(dtype.status(), "DLPack import");
  if (dl.ndim < 0) return refuse(absl::StrCat("ndim is ", dl.ndim));
  if (dl.ndim > 0 && dl.shape == nullptr) return refuse("shape is NULL but ndim > 0");
  Shape shape(dl.shape, dl.shape + dl.ndim);
  auto bytes = CheckedByteSize(*dtype, shape);
  if (!bytes.ok()) return refuse(std::string(bytes.status().message()));
  const int64_t n = NumElements(shape);
  if (dl.strides != nullptr && n > 0) {
    int64_t expected = 1;
    for (int i = dl.ndim - 1; i >= 0; --i) {
      if (shape[i] != 1 && dl.strides[i] != expected) {
        return refuse(absl::StrCat("only compact row-major tensors can be imported; shape ",
                                   ShapeToString(shape), " has stride ", dl.strides[i], " in dimension ",
                                   i, " (expected ", expected, ")"));
      }
      expected *= shape[i];
    }
  }
  if (dl.data == nullptr && n > 0) return refuse("data is NULL");
  void* data = static_cast<char*>(dl.data) + dl.byte_offset;
  // Nothing below may fail once the buffer owns `managed`.
  auto buffer = std::make_shared<Buffer>(data, *bytes, std::move(device), [managed](void*) {
    if (managed->deleter != nullptr) managed->deleter(managed);
  });
  buffer->MarkExposed();  // its producer may still write it
  return Tensor(*dtype, std::move(shape), std::move(buffer));
}

}  // namespace plexus

// Host kernels of the TensorArray V3 ops (schemas in
// ops/tensor_array_ops.cc) and the TensorArray resource they share: a list
// of same-dtype tensors, written and read by index, owned by the handle
// tensor that refers to it.
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "exec/session_state.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

constexpr int64_t kMaxTensorArraySize = int64_t{1} << 24;

class TensorArray : public ResourceBase {
 public:
  TensorArray(std::string name, DataType dtype, int64_t size, bool dynamic)
      : name_(std::move(name)), dtype_(dtype), dynamic_(dynamic), elements_(size) {}
  std::string DebugString() const override {
    return absl::StrCat("TensorArray '", name_, "' (", DataTypeName(dtype_), ", size ", size(), ")");
  }
  DataType dtype() const { return dtype_; }
  int64_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int64_t>(elements_.size());
  }
  absl::Status Write(int64_t index, Tensor value) {
    std::lock_guard<std::mutex> lock(mu_);
    if (index < 0) return absl::InvalidArgumentError(absl::StrCat("index ", index, " is negative"));
    if (index >= static_cast<int64_t>(elements_.size())) {
      if (!dynamic_ || index >= kMaxTensorArraySize) {
        return absl::InvalidArgumentError(absl::StrCat("index ", index, " is out of range for ",
                                                       "a TensorArray of size ", elements_.size()));
      }
      elements_.resize(index + 1);
    }
    elements_[index] = std::move(value);
    return absl::OkStatus();
  }
  absl::StatusOr<Tensor> Read(int64_t index) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (index < 0 || index >= static_cast<int64_t>(elements_.size())) {
      return absl::InvalidArgumentError(absl::StrCat("index ", index, " is out of range for a ",
                                                     "TensorArray of size ", elements_.size()));
    }
    if (!elements_[index].valid()) {
      return absl::InvalidArgumentError(absl::StrCat("element ", index, " was never written"));
    }
    return elements_[index];
  }

 private:
  std::string name_;
  DataType dtype_;
  bool dynamic_;
  mutable std::mutex mu_;
  std::vector<Tensor> elements_;
};

absl::StatusOr<Tensor> FloatScalar(float v) {
  PX_ASSIGN_OR_RETURN(Tensor t, Tensor::AllocateHost(DataType::kFloat, {}));
  t.data<float>()[0] = v;
  return t;
}

absl::StatusOr<TensorArray*> ArrayOf(HostOpContext& ctx) {
  auto* ta = ctx.input(0).resource_as<TensorArray>();
  if (ta == nullptr) return ctx.InvalidArgument("input 0 is not a TensorArray handle");
  return ta;
}

absl::Status Create(HostOpContext& ctx) {
  const Tensor& size = ctx.input(0);
  if (size.num_elements() != 1) return ctx.InvalidArgument("size must be a scalar");
  int32_t n = size.data<int32_t>()[0];
  if (n < 0) return ctx.InvalidArgument(absl::StrCat("size must be non-negative, got ", n));
  PX_ASSIGN_OR_RETURN(DataType dtype, GetAttrType(ctx.node(), "dtype"));
  PX_ASSIGN_OR_RETURN(bool dynamic, GetAttrBool(ctx.node(), "dynamic_size"));
  if (n > kMaxTensorArraySize) {
    return ctx.Error(absl::StatusCode::kResourceExhausted,
                     absl::StrCat("size ", n, " exceeds the TensorArray limit of ", kMaxTensorArraySize));
  }
  // The handle owns the array: it lives while a tensor refers to it.
  auto ta = std::make_shared<TensorArray>(ctx.node().name, dtype, n, dynamic);
  ctx.set_output(0, Tensor::FromResource(ta));
  PX_ASSIGN_OR_RETURN(Tensor flow, FloatScalar(0));
  ctx.set_output(1, flow);
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("TensorArrayV3", Create);

absl::Status Scatter(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(TensorArray * ta, ArrayOf(ctx));
  const Tensor& indices = ctx.input(1);
  const Tensor& value = ctx.input(2);
  if (value.dtype() != ta->dtype()) {
    return ctx.InvalidArgument(absl::StrCat("value is ", DataTypeName(value.dtype()), ", ",
                                            ta->DebugString(), " holds ", DataTypeName(ta->dtype())));
  }
  if (indices.dims() != 1 || value.dims() < 1 || value.shape()[0] != indices.num_elements()) {
    return ctx.InvalidArgument(absl::StrCat("indices ", ShapeToString(indices.shape()),
                                            " do not match the first dimension of value ",
                                            ShapeToString(value.shape())));
  }
  Shape element(value.shape().begin() + 1, value.shape().end());
  size_t bytes = static_cast<size_t>(NumElements(element)) * DataTypeSize(value.dtype());
  for (int64_t i = 0; i < indices.num_elements(); ++i) {
    PX_ASSIGN_OR_RETURN(Tensor slice, Tensor::AllocateHost(value.dtype(), element));
    if (bytes) std::memcpy(slice.raw_data(), static_cast<const char*>(value.raw_data()) + i * bytes, bytes);
    absl::Status s = ta->Write(indices.data<int32_t>()[i], std::move(slice));
    if (!s.ok()) return ctx.InvalidArgument(s.message());
  }
  PX_ASSIGN_OR_RETURN(Tensor flow, FloatScalar(0));
  ctx.set_output(0, flow);
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("TensorArrayScatterV3", Scatter);

absl::Status Write(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(TensorArray * ta, ArrayOf(ctx));
  if (ctx.input(1).num_elements() != 1) return ctx.InvalidArgument("index must be a scalar");
  if (ctx.input(2).dtype() != ta->dtype()) return ctx.InvalidArgument("value has the wrong dtype");
  absl::Status s = ta->Write(ctx.input(1).data<int32_t>()[0], ctx.input(2));
  if (!s.ok()) return ctx.InvalidArgument(s.message());
  PX_ASSIGN_OR_RETURN(Tensor flow, FloatScalar(0));
  ctx.set_output(0, flow);
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("TensorArrayWriteV3", Write);

absl::Status Read(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(TensorArray * ta, ArrayOf(ctx));
  if (ctx.input(1).num_elements() != 1) return ctx.InvalidArgument("index must be a scalar");
  auto value = ta->Read(ctx.input(1).data<int32_t>()[0]);
  if (!value.ok()) return ctx.InvalidArgument(absl::StrCat(ta->DebugString(), ": ", value.status().message()));
  ctx.set_output(0, *value);
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("TensorArrayReadV3", Read);

absl::Status Gather(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(TensorArray * ta, ArrayOf(ctx));
  const Tensor& indices = ctx.input(1);
  std::vector<Tensor> parts;
  for (int64_t i = 0; i < indices.num_elements(); ++i) {
    auto value = ta->Read(indices.data<int32_t>()[i]);
    if (!value.ok()) return ctx.InvalidArgument(absl::StrCat(ta->DebugString(), ": ", value.status().message()));
    if (!parts.empty() && value->shape() != parts[0].shape()) {
      return ctx.InvalidArgument("elements of different shapes cannot be gathered");
    }
    parts.push_back(*value);
  }
  Shape shape{static_cast<int64_t>(parts.size())};
  if (!parts.empty()) shape.insert(shape.end(), parts[0].shape().begin(), parts[0].shape().end());
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(ta->dtype(), shape));
  size_t offset = 0;
  for (const Tensor& p : parts) {
    PX_ASSIGN_OR_RETURN(Tensor host, CopyTensorTo(p, nullptr));
    if (host.nbytes()) std::memcpy(static_cast<char*>(out.raw_data()) + offset, host.raw_data(), host.nbytes());
    offset += host.nbytes();
  }
  ctx.set_output(0, out);
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("TensorArrayGatherV3", Gather);

absl::Status Size(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(TensorArray * ta, ArrayOf(ctx));
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(DataType::kInt32, {}));
  out.data<int32_t>()[0] = static_cast<int32_t>(ta->size());
  ctx.set_output(0, out);
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("TensorArraySizeV3", Size);

absl::Status Close(HostOpContext&) { return absl::OkStatus(); }
PX_REGISTER_HOST_OP("TensorArrayCloseV3", Close);

}  // namespace
}  // namespace plexus

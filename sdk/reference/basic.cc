// Reference kernels for Const, Placeholder and NoOp.
#include <vector>

#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

// Keeps the "value" attribute's bytes (borrowed only during create) and
// writes them out element by element on each launch.
class Const : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    const DLTensor& value = attrs.Tensor("value");
    PX_SDK_CHECK(sdk::DtypeOf(value) == attrs.Type("dtype"),
                 "the \"value\" attribute does not have the node's dtype");
    PX_SDK_CHECK(px_sdk_is_contiguous(&value), "the \"value\" attribute is not dense");
    for (int i = 0; i < value.ndim; ++i) shape_.push_back(value.shape[i]);
    element_bytes_ = (value.dtype.bits * value.dtype.lanes + 7) / 8;
    const auto* src = static_cast<const unsigned char*>(px_sdk_data(&value));
    for (size_t i = 0; i < px_sdk_nbytes(&value); ++i) bytes_.push_back(src[i]);
  }
  void Compute(sdk::Call& call) override {
    auto* out = static_cast<unsigned char*>(call.AllocateOutputRaw(0, shape_));
    const size_t elements = element_bytes_ == 0 ? 0 : bytes_.size() / element_bytes_;
    for (size_t e = 0; e < elements; ++e) {
      for (size_t b = 0; b < element_bytes_; ++b) out[e * element_bytes_ + b] = bytes_[e * element_bytes_ + b];
    }
  }

 private:
  sdk::Shape shape_;
  size_t element_bytes_ = 0;
  std::vector<unsigned char> bytes_;
};

class Placeholder : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    PX_SDK_CHECK(false, "placeholder was not fed: a Placeholder must be given a value");
  }
};

class NoOp : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {}
};

}  // namespace

PX_Status* RegisterBasicKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  if (PX_Status* s =
          sdk::RegisterKernel<Const>(info, registrar, sdk::sig::kConst, {sdk::AllTypes()})) {
    return s;
  }
  if (PX_Status* s = sdk::RegisterKernel<Placeholder>(info, registrar, sdk::sig::kPlaceholder,
                                                      {sdk::AllTypes()})) {
    return s;
  }
  return sdk::RegisterKernel<NoOp>(info, registrar, sdk::sig::kNoOp);
}

}  // namespace plexus::reference

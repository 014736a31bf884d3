// Const, Placeholder and NoOp. (Identity and the other forwarding ops need no
// kernel: the executor hands their input on.)
#include <cstring>
#include <vector>

#include "kernels/register_kernels.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

// Copies the "value" attribute once, at create time (the host lends it only
// for the duration of create), and writes it out on every launch.
class ConstKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    const PX_DataType type = attrs.Type("dtype");
    const DLTensor& value = attrs.Tensor("value");
    PX_SDK_CHECK(value.ndim >= 0 && px_sdk_is_contiguous(&value),
                 "the \"value\" attribute is not a dense tensor");
    PX_SDK_CHECK(sdk::DtypeOf(value) == type,
                 "the \"value\" attribute has dtype %s, which does not match the \"dtype\" "
                 "attribute (%s)",
                 sdk::DtypeName(sdk::DtypeOf(value)), sdk::DtypeName(type));
    shape_.assign(value.shape, value.shape + value.ndim);
    const auto* src = static_cast<const unsigned char*>(px_sdk_data(&value));
    bytes_.assign(src, src + px_sdk_nbytes(&value));
  }
  void Compute(sdk::Call& call) override {
    void* out = call.AllocateOutputRaw(0, shape_);
    if (!bytes_.empty()) std::memcpy(out, bytes_.data(), bytes_.size());
  }

 private:
  sdk::Shape shape_;
  std::vector<unsigned char> bytes_;
};

// Runs only when the node was not fed.
class PlaceholderKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    PX_SDK_CHECK(false,
                 "placeholder was not fed: every Placeholder must be given a value in the feeds");
  }
};

class NoOpKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {}
};

}  // namespace

PX_Status* RegisterBasicFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  // String constants are made by the core (plugins cannot produce strings).
  if (PX_Status* s =
          sdk::RegisterKernel<ConstKernel>(info, registrar, sdk::sig::kConst, {sdk::AllTypes()})) {
    return s;
  }
  if (PX_Status* s = sdk::RegisterKernel<PlaceholderKernel>(info, registrar, sdk::sig::kPlaceholder,
                                                            {sdk::AllTypes()})) {
    return s;
  }
  return sdk::RegisterKernel<NoOpKernel>(info, registrar, sdk::sig::kNoOp);
}

}  // namespace plexus::cpu

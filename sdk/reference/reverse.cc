// Reference kernels: ReverseV2 (see reference_kernels.h). Each output
// element is copied from the input element whose coordinates are mirrored
// (d -> n - 1 - d) along the reversed axes; elements move as bytes, so every
// fixed-size dtype works the same.
#include <cstring>
#include <string>
#include <vector>

#include "plexus/sdk/array_shapes.h"
#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

using sdk::Shape;

// TensorFlow's kernels stop at 8 dimensions.
constexpr int64_t kMaxReverseRank = 8;

class ReverseV2Kernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const Shape shape = call.input_shape(0);
    const int64_t rank = static_cast<int64_t>(shape.size());
    const int64_t n = sdk::NumElements(shape);
    const size_t es = sdk::DtypeSize(call.input_dtype(0));
    PX_SDK_CHECK(es > 0, "ReverseV2: unsupported dtype %s", sdk::DtypeName(call.input_dtype(0)));
    const char* x = static_cast<const char*>(call.input_data(0));
    char* y = static_cast<char*>(call.AllocateOutputRaw(0, shape));
    // A scalar or an empty tensor comes back as it is, whatever the axes.
    if (rank == 0 || n == 0) {
      if (n > 0) std::memcpy(y, x, es);
      return;
    }
    std::vector<bool> reversed;
    const std::string error = array_shapes::ReverseAxes(rank, call.input_shape(1),
                                                        call.input_int_values(1), &reversed);
    PX_SDK_CHECK(error.empty(), "%s", error.c_str());
    if (rank > kMaxReverseRank) {
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED,
                             "reverse is not implemented for tensors of rank > 8.");
    }
    std::vector<int64_t> index(static_cast<size_t>(rank), 0);
    for (int64_t k = 0; k < n; ++k) {
      int64_t source = 0;
      for (int64_t d = 0; d < rank; ++d) {
        source = source * shape[d] + (reversed[d] ? shape[d] - 1 - index[d] : index[d]);
      }
      std::memcpy(y + k * es, x + source * es, es);
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++index[d] < shape[d]) break;
        index[d] = 0;
      }
    }
  }
};

}  // namespace

PX_Status* RegisterReverseKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  return sdk::RegisterKernel<ReverseV2Kernel>(info, registrar, sdk::sig::kReverseV2,
                                              {sdk::AllTypes(), {PX_DT_INT32, PX_DT_INT64}});
}

}  // namespace plexus::reference

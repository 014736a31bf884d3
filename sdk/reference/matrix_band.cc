// Reference kernels: MatrixBandPart (see reference_kernels.h). Element
// (..., m, n) of the innermost matrices is kept when it lies in the band,
// (num_lower < 0 || m - n <= num_lower) && (num_upper < 0 || n - m <=
// num_upper), and is zero otherwise. Elements move as bytes (zero is all
// zero bytes in every fixed-size dtype, false for bool).
#include <cstring>
#include <string>

#include "plexus/sdk/array_shapes.h"
#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

using sdk::Shape;

class MatrixBandPartKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const Shape shape = call.input_shape(0);
    const Shape lower_shape = call.input_shape(1), upper_shape = call.input_shape(2);
    // Read the widths only when they are scalars; the check names the others.
    const int64_t lower = lower_shape.empty() ? call.input_int_values(1)[0] : 0;
    const int64_t upper = upper_shape.empty() ? call.input_int_values(2)[0] : 0;
    const std::string error =
        array_shapes::MatrixBandPart(shape, lower_shape, upper_shape, &lower, &upper);
    PX_SDK_CHECK(error.empty(), "%s", error.c_str());
    const size_t es = sdk::DtypeSize(call.input_dtype(0));
    PX_SDK_CHECK(es > 0, "MatrixBandPart: unsupported dtype %s",
                 sdk::DtypeName(call.input_dtype(0)));
    const int64_t rows = shape[shape.size() - 2], cols = shape[shape.size() - 1];
    const int64_t n = sdk::NumElements(shape);
    const char* x = static_cast<const char*>(call.input_data(0));
    char* y = static_cast<char*>(call.AllocateOutputRaw(0, shape));
    for (int64_t k = 0; k < n; ++k) {
      const int64_t m = k / cols % rows, c = k % cols;
      const bool in_band = (lower < 0 || m - c <= lower) && (upper < 0 || c - m <= upper);
      if (in_band) {
        std::memcpy(y + k * es, x + k * es, es);
      } else {
        std::memset(y + k * es, 0, es);
      }
    }
  }
};

}  // namespace

PX_Status* RegisterMatrixBandKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  return sdk::RegisterKernel<MatrixBandPartKernel>(info, registrar, sdk::sig::kMatrixBandPart,
                                                   {sdk::AllTypes(), {PX_DT_INT32, PX_DT_INT64}});
}

}  // namespace plexus::reference

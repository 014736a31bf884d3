// CPU kernels: MatrixBandPart, written with sdk::OpKernel. Row m of each
// innermost matrix keeps columns [m - num_lower, m + num_upper] (a negative
// width keeps the whole side) and is zero elsewhere: per row one memcpy of
// the band between two memsets. Elements move as bytes (zero is all zero
// bytes in every fixed-size dtype). Argument checks come from
// array_shapes::MatrixBandPart, shared with the core and the reference.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/register_kernels.h"
#include "plexus/sdk/array_shapes.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

using sdk::Shape;

class MatrixBandPartKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const Shape shape = call.input_shape(0);
    const Shape lower_shape = call.input_shape(1), upper_shape = call.input_shape(2);
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
    if (n == 0) return;
    const int64_t matrices = n / (rows * cols);
    for (int64_t b = 0; b < matrices * rows; ++b) {
      const int64_t m = b % rows;
      // Columns [first, last) of row m are in the band.
      const int64_t first = lower < 0 ? 0 : std::clamp<int64_t>(m - lower, 0, cols);
      const int64_t last = upper < 0 ? cols : std::clamp<int64_t>(m + upper + 1, 0, cols);
      const char* xr = x + b * cols * static_cast<int64_t>(es);
      char* yr = y + b * cols * static_cast<int64_t>(es);
      if (last <= first) {
        std::memset(yr, 0, cols * es);
        continue;
      }
      std::memset(yr, 0, first * es);
      std::memcpy(yr + first * es, xr + first * es, (last - first) * es);
      std::memset(yr + last * es, 0, (cols - last) * es);
    }
  }
};

}  // namespace

PX_Status* RegisterMatrixBandFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  return sdk::RegisterKernel<MatrixBandPartKernel>(info, registrar, sdk::sig::kMatrixBandPart,
                                                   {sdk::AllTypes(), {PX_DT_INT32, PX_DT_INT64}});
}

}  // namespace plexus::cpu

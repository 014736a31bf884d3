// Reference kernels: Cumsum and Cumprod (see reference_kernels.h).
//
// The tensor is seen as [outer, n, inner] around the scan axis; every
// (outer, inner) line is scanned on its own, front to back or back to front
// (reverse), writing the running value before (exclusive) or after adding
// each element. The running value is kept in T, rounded after every step as
// TensorFlow's kernels round it (a long half sum saturates as theirs does);
// integers wrap around.
#include <string>
#include <type_traits>
#include <vector>

#include "plexus/sdk/array_shapes.h"
#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

using sdk::Shape;

// a + b or a * b in T: integers in their unsigned type (wrapping, no signed
// overflow), the floats in their compute type.
template <typename T>
T Combine(bool product, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    // Promote the narrow types so that the product cannot overflow int.
    using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U>;
    const W x = static_cast<U>(a), y = static_cast<U>(b);
    return static_cast<T>(static_cast<U>(product ? x * y : x + y));
  } else {
    using C = sdk::ComputeType<T>;
    const C x = static_cast<C>(a), y = static_cast<C>(b);
    return static_cast<T>(product ? x * y : x + y);
  }
}

class ScanKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    product_ = std::string(attrs.op()) == "Cumprod";
    exclusive_ = attrs.Bool("exclusive", false);
    reverse_ = attrs.Bool("reverse", false);
  }

  void Compute(sdk::Call& call) override {
    const Shape shape = call.input_shape(0);
    const Shape axis_shape = call.input_shape(1);
    const int64_t rank = static_cast<int64_t>(shape.size());
    const int64_t axis_value = axis_shape.empty() ? call.input_int_values(1)[0] : 0;
    int64_t axis = 0;
    const std::string error = array_shapes::ScanAxis(rank, axis_shape, axis_value, &axis);
    PX_SDK_CHECK(error.empty(), "%s", error.c_str());
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= shape[d];
    const int64_t n = shape[axis];
    sdk::VisitNumeric(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      T* y = call.AllocateOutput<T>(0, shape);
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          T running = static_cast<T>(product_ ? 1 : 0);
          for (int64_t k = 0; k < n; ++k) {
            const int64_t at = (o * n + (reverse_ ? n - 1 - k : k)) * inner + i;
            if (exclusive_) y[at] = running;
            running = Combine<T>(product_, running, x[at]);
            if (!exclusive_) y[at] = running;
          }
        }
      }
    });
  }

 private:
  bool product_ = false;
  bool exclusive_ = false;
  bool reverse_ = false;
};

}  // namespace

PX_Status* RegisterScanKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> index = {PX_DT_INT32, PX_DT_INT64};
  for (const sdk::OpSignature* op : {&sdk::sig::kCumsum, &sdk::sig::kCumprod}) {
    if (PX_Status* s =
            sdk::RegisterKernel<ScanKernel>(info, registrar, *op, {sdk::NumericTypes(), index})) {
      return s;
    }
  }
  return nullptr;
}

}  // namespace plexus::reference

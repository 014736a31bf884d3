// CPU kernels: Cumsum and Cumprod, written with sdk::OpKernel.
//
// The tensor is seen as [outer, n, inner] around the scan axis. With inner
// 1 each line is one contiguous loop; otherwise the kernel walks the n rows
// of inner elements in scan order and carries a row of running values, so
// every pass reads and writes contiguous memory. Running values stay in T
// and are rounded after each step, as TensorFlow's kernels do (a long half
// sum saturates as theirs does); integers wrap around. The axis check is
// array_shapes::ScanAxis, shared with the core and the reference.
#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/register_kernels.h"
#include "plexus/sdk/array_shapes.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

using sdk::Shape;

template <typename T, bool kProduct>
inline T Combine(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    // Promote the narrow types so that the product cannot overflow int.
    using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U>;
    const W x = static_cast<U>(a), y = static_cast<U>(b);
    return static_cast<T>(static_cast<U>(kProduct ? x * y : x + y));
  } else {
    using C = sdk::ComputeType<T>;
    const C x = static_cast<C>(a), y = static_cast<C>(b);
    return static_cast<T>(kProduct ? x * y : x + y);
  }
}

template <typename T, bool kProduct>
void Scan(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, bool exclusive,
          bool reverse) {
  const T identity = static_cast<T>(kProduct ? 1 : 0);
  // Row k of the scan order, as an element offset within one outer block.
  auto row = [&](int64_t k) { return (reverse ? n - 1 - k : k) * inner; };
  if (inner == 1) {
    for (int64_t o = 0; o < outer; ++o) {
      const T* xl = x + o * n;
      T* yl = y + o * n;
      T running = identity;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t at = row(k);
        const T v = xl[at];
        if (exclusive) yl[at] = running;
        running = Combine<T, kProduct>(running, v);
        if (!exclusive) yl[at] = running;
      }
    }
    return;
  }
  std::vector<T> running(static_cast<size_t>(inner));
  for (int64_t o = 0; o < outer; ++o) {
    const T* xb = x + o * n * inner;
    T* yb = y + o * n * inner;
    std::fill(running.begin(), running.end(), identity);
    for (int64_t k = 0; k < n; ++k) {
      const T* xr = xb + row(k);
      T* yr = yb + row(k);
      if (exclusive) {
        for (int64_t i = 0; i < inner; ++i) {
          const T v = xr[i];
          yr[i] = running[i];
          running[i] = Combine<T, kProduct>(running[i], v);
        }
      } else {
        for (int64_t i = 0; i < inner; ++i) {
          running[i] = Combine<T, kProduct>(running[i], xr[i]);
          yr[i] = running[i];
        }
      }
    }
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
      if (outer * n * inner == 0) return;
      if (product_) {
        Scan<T, true>(x, y, outer, n, inner, exclusive_, reverse_);
      } else {
        Scan<T, false>(x, y, outer, n, inner, exclusive_, reverse_);
      }
    });
  }

 private:
  bool product_ = false;
  bool exclusive_ = false;
  bool reverse_ = false;
};

}  // namespace

PX_Status* RegisterScanFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> index = {PX_DT_INT32, PX_DT_INT64};
  for (const sdk::OpSignature* op : {&sdk::sig::kCumsum, &sdk::sig::kCumprod}) {
    if (PX_Status* s =
            sdk::RegisterKernel<ScanKernel>(info, registrar, *op, {sdk::NumericTypes(), index})) {
      return s;
    }
  }
  return nullptr;
}

}  // namespace plexus::cpu

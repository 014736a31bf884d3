// Reference kernels: Cast (see reference_kernels.h), every fixed-size dtype
// to every other, one element at a time.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

using sdk::Shape;

template <typename C>
constexpr bool kIsInt = std::is_integral_v<C> && !std::is_same_v<C, bool>;

// Zeroes the low `bits` bits of a float's mantissa: Truncate=true casts to a
// narrower float type truncate instead of rounding to nearest.
float ClearLowBits(float f, int bits) {
  if (std::isnan(f)) return f;
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  u &= ~((uint32_t{1} << bits) - 1);
  std::memcpy(&f, &u, sizeof(u));
  return f;
}
double ClearLowBits(double f, int bits) {
  if (std::isnan(f)) return f;
  uint64_t u;
  std::memcpy(&u, &f, sizeof(u));
  u &= ~((uint64_t{1} << bits) - 1);
  std::memcpy(&f, &u, sizeof(u));
  return f;
}

// One element. Floats to integers: NaN gives 0 and values out of range
// saturate; anything to bool is x != 0; bool is 0 or 1.
template <typename D, typename S>
D CastValue(S s, bool truncate) {
  using SC = sdk::ComputeType<S>;
  using DC = sdk::ComputeType<D>;
  SC v = static_cast<SC>(s);
  if constexpr (std::is_same_v<D, bool>) {
    return v != SC(0);
  } else if constexpr (std::is_floating_point_v<SC> && kIsInt<DC>) {
    if (std::isnan(v)) return D(0);
    if (v <= static_cast<SC>(std::numeric_limits<DC>::lowest())) {
      return std::numeric_limits<DC>::lowest();
    }
    if (v >= static_cast<SC>(std::numeric_limits<DC>::max())) {
      return std::numeric_limits<DC>::max();
    }
    return static_cast<D>(static_cast<DC>(v));
  } else if constexpr (std::is_floating_point_v<SC> && std::is_floating_point_v<DC>) {
    if (truncate) {
      // Bits the destination cannot hold: float 23 mantissa bits, double 52,
      // half 10, bfloat16 7.
      constexpr int src_bits = std::is_same_v<SC, double> ? 52 : 23;
      constexpr int dst_bits = std::is_same_v<D, double>   ? 52
                               : std::is_same_v<D, float>  ? 23
                               : std::is_same_v<D, sdk::half> ? 10
                                                              : 7;
      if constexpr (std::is_same_v<SC, double> && !std::is_same_v<D, double>) {
        // Through float: first drop what float cannot hold, then the rest.
        float f = static_cast<float>(ClearLowBits(v, 29));
        return static_cast<D>(ClearLowBits(f, 23 - dst_bits));
      } else if constexpr (src_bits > dst_bits) {
        return static_cast<D>(ClearLowBits(v, src_bits - dst_bits));
      }
    }
    return static_cast<D>(static_cast<DC>(v));
  } else {
    return static_cast<D>(static_cast<DC>(v));
  }
}

class CastKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { truncate_ = attrs.Bool("Truncate", false); }

  void Compute(sdk::Call& call) override {
    const Shape shape = call.input_shape(0);
    const int64_t n = sdk::NumElements(shape);
    sdk::VisitAll(call.input_dtype(0), [&](auto stag) {
      using S = typename decltype(stag)::type;
      const S* x = call.input<S>(0);
      sdk::VisitAll(call.output_dtype(0), [&](auto dtag) {
        using D = typename decltype(dtag)::type;
        D* y = call.AllocateOutput<D>(0, shape);
        for (int64_t i = 0; i < n; ++i) y[i] = CastValue<D, S>(x[i], truncate_);
      });
    });
  }

 private:
  bool truncate_ = false;
};

}  // namespace

PX_Status* RegisterCastKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  return sdk::RegisterKernel<CastKernel>(info, registrar, sdk::sig::kCast,
                                         {sdk::AllTypes(), sdk::AllTypes()});
}

}  // namespace plexus::reference

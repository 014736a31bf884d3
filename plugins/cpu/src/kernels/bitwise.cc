// CPU kernels: the bitwise ops, written with sdk::OpKernel. BitwiseAnd,
// BitwiseOr, BitwiseXor, LeftShift and RightShift broadcast with the
// elementwise family's plans (elementwise_impl.h); Invert and
// PopulationCount are flat loops. All eight integer types.
//
// Shifts follow TensorFlow: the count is clamped to [0, bits - 1], left
// shifts work on the unsigned bit pattern (no overflow), right shifts of
// signed values are arithmetic.
#include <bitset>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/elementwise_impl.h"
#include "kernels/register_kernels.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

using sdk::Shape;

enum class Bit { kAnd, kOr, kXor, kLeftShift, kRightShift };

Bit BitFromName(const std::string& op) {
  if (op == "BitwiseAnd") return Bit::kAnd;
  if (op == "BitwiseOr") return Bit::kOr;
  if (op == "BitwiseXor") return Bit::kXor;
  if (op == "LeftShift") return Bit::kLeftShift;
  PX_SDK_CHECK(op == "RightShift", "no cpu bitwise kernel for op %s", op.c_str());
  return Bit::kRightShift;
}

// y clamped to [0, bits - 1], as an unsigned shift count.
template <typename T>
inline unsigned ShiftCount(T y) {
  constexpr T kMax = static_cast<T>(sizeof(T) * 8 - 1);
  if constexpr (std::is_signed_v<T>) {
    if (y < 0) return 0;
  }
  return static_cast<unsigned>(y > kMax ? kMax : y);
}

template <typename T>
void RunBitwise(Bit op, const ew::Plan<2>& plan, const T* x, const T* y, T* z) {
  using U = std::make_unsigned_t<T>;
  switch (op) {
    case Bit::kAnd:
      return ew::RunPlan2(plan, x, y, z, [](T a, T b) { return static_cast<T>(a & b); });
    case Bit::kOr:
      return ew::RunPlan2(plan, x, y, z, [](T a, T b) { return static_cast<T>(a | b); });
    case Bit::kXor:
      return ew::RunPlan2(plan, x, y, z, [](T a, T b) { return static_cast<T>(a ^ b); });
    case Bit::kLeftShift:
      return ew::RunPlan2(plan, x, y, z, [](T a, T b) {
        return static_cast<T>(static_cast<U>(static_cast<U>(a) << ShiftCount(b)));
      });
    case Bit::kRightShift:
      // >> of a negative signed value is arithmetic with GCC and Clang (and
      // C++20).
      return ew::RunPlan2(plan, x, y, z, [](T a, T b) { return static_cast<T>(a >> ShiftCount(b)); });
  }
}

class BitwiseBinaryKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { op_ = BitFromName(attrs.op()); }

  void Compute(sdk::Call& call) override {
    const Shape shapes[2] = {call.input_shape(0), call.input_shape(1)};
    ew::Plan<2> plan;
    if (!ew::MakePlan<2>(shapes, &plan)) {
      throw sdk::KernelError(PX_CODE_INVALID_ARGUMENT, "Incompatible shapes: " +
                                                           sdk::ShapeString(shapes[0]) + " vs. " +
                                                           sdk::ShapeString(shapes[1]));
    }
    sdk::VisitInteger(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      RunBitwise<T>(op_, plan, call.input<T>(0), call.input<T>(1),
                    call.AllocateOutput<T>(0, plan.out_shape));
    });
  }

 private:
  Bit op_ = Bit::kAnd;
};

class InvertKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const int64_t n = call.input_size(0);
    sdk::VisitInteger(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      T* y = call.AllocateOutputLike<T>(0, 0);
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(~x[i]);
    });
  }
};

class PopulationCountKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const int64_t n = call.input_size(0);
    sdk::VisitInteger(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using U = std::make_unsigned_t<T>;
      const T* x = call.input<T>(0);
      uint8_t* y = call.AllocateOutputLike<uint8_t>(0, 0);
      for (int64_t i = 0; i < n; ++i) {
        y[i] = static_cast<uint8_t>(std::bitset<sizeof(T) * 8>(static_cast<U>(x[i])).count());
      }
    });
  }
};

}  // namespace

PX_Status* RegisterBitwiseFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> ints = sdk::IntegerTypes();
  for (const sdk::OpSignature* op : {&sdk::sig::kBitwiseAnd, &sdk::sig::kBitwiseOr,
                                     &sdk::sig::kBitwiseXor, &sdk::sig::kLeftShift,
                                     &sdk::sig::kRightShift}) {
    if (PX_Status* s = sdk::RegisterKernel<BitwiseBinaryKernel>(info, registrar, *op, {ints})) {
      return s;
    }
  }
  if (PX_Status* s = sdk::RegisterKernel<InvertKernel>(info, registrar, sdk::sig::kInvert, {ints})) {
    return s;
  }
  return sdk::RegisterKernel<PopulationCountKernel>(info, registrar, sdk::sig::kPopulationCount,
                                                    {ints});
}

}  // namespace plexus::cpu

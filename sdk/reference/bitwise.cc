// Reference kernels: the bitwise ops (see reference_kernels.h). BitwiseAnd,
// BitwiseOr, BitwiseXor, LeftShift and RightShift with NumPy broadcasting,
// Invert and PopulationCount, for the eight integer types, one element at a
// time.
//
// Shifts follow TensorFlow: the count is clamped to [0, bits - 1] (so a
// negative count leaves x as it is and a count of bits or more shifts by
// bits - 1); left shifts work on the unsigned bit pattern (no overflow),
// right shifts of signed values are arithmetic (they keep the sign).
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "broadcast.h"
#include "plexus/sdk/op_signatures.h"
#include "reference_kernels.h"

namespace plexus::reference {
namespace {

using sdk::Shape;

enum class Bit { kAnd, kOr, kXor, kLeftShift, kRightShift };

Bit BitFromName(const std::string& op) {
  if (op == "BitwiseAnd") return Bit::kAnd;
  if (op == "BitwiseOr") return Bit::kOr;
  if (op == "BitwiseXor") return Bit::kXor;
  if (op == "LeftShift") return Bit::kLeftShift;
  PX_SDK_CHECK(op == "RightShift", "no reference bitwise kernel for op %s", op.c_str());
  return Bit::kRightShift;
}

// The shift count y clamped to [0, bits - 1].
template <typename T>
unsigned ShiftCount(T y) {
  constexpr int kBits = static_cast<int>(sizeof(T) * 8);
  if constexpr (std::is_signed_v<T>) {
    if (y < 0) return 0;
  }
  return y > static_cast<T>(kBits - 1) ? kBits - 1 : static_cast<unsigned>(y);
}

template <typename T>
T Apply(Bit op, T x, T y) {
  using U = std::make_unsigned_t<T>;
  switch (op) {
    case Bit::kAnd: return static_cast<T>(x & y);
    case Bit::kOr: return static_cast<T>(x | y);
    case Bit::kXor: return static_cast<T>(x ^ y);
    case Bit::kLeftShift: return static_cast<T>(static_cast<U>(static_cast<U>(x) << ShiftCount(y)));
    case Bit::kRightShift:
      if constexpr (std::is_signed_v<T>) {
        // Arithmetic: the complement of the shifted complement for negatives.
        return x < 0 ? static_cast<T>(~(static_cast<U>(~x) >> ShiftCount(y)))
                     : static_cast<T>(static_cast<U>(x) >> ShiftCount(y));
      } else {
        return static_cast<T>(x >> ShiftCount(y));
      }
  }
  return 0;
}

class BitwiseBinaryKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override { op_ = BitFromName(attrs.op()); }

  void Compute(sdk::Call& call) override {
    const Shape a = call.input_shape(0), b = call.input_shape(1);
    const Shape out = BroadcastShape(a, b);
    const int64_t n = sdk::NumElements(out);
    sdk::VisitInteger(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      const T* y = call.input<T>(1);
      T* z = call.AllocateOutput<T>(0, out);
      for (int64_t i = 0; i < n; ++i) {
        z[i] = Apply<T>(op_, x[SourceIndex(a, out, i)], y[SourceIndex(b, out, i)]);
      }
    });
  }

 private:
  Bit op_ = Bit::kAnd;
};

class InvertKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const Shape shape = call.input_shape(0);
    const int64_t n = sdk::NumElements(shape);
    sdk::VisitInteger(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = call.input<T>(0);
      T* y = call.AllocateOutput<T>(0, shape);
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(~x[i]);
    });
  }
};

// The bits of the value's two's-complement pattern, counted one by one.
class PopulationCountKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call& call) override {
    const Shape shape = call.input_shape(0);
    const int64_t n = sdk::NumElements(shape);
    sdk::VisitInteger(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using U = std::make_unsigned_t<T>;
      const T* x = call.input<T>(0);
      uint8_t* y = call.AllocateOutput<uint8_t>(0, shape);
      for (int64_t i = 0; i < n; ++i) {
        uint8_t count = 0;
        for (U v = static_cast<U>(x[i]); v != 0; v = static_cast<U>(v >> 1)) count += v & 1;
        y[i] = count;
      }
    });
  }
};

}  // namespace

PX_Status* RegisterBitwiseKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const std::vector<PX_DataType> ints = {PX_DT_INT8,  PX_DT_INT16,  PX_DT_INT32,  PX_DT_INT64,
                                         PX_DT_UINT8, PX_DT_UINT16, PX_DT_UINT32, PX_DT_UINT64};
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

}  // namespace plexus::reference

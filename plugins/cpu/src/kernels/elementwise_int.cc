// Elementwise compute for the integer types and bool: plain loops (the
// compiler vectorizes them), no Eigen.
#include "kernels/elementwise_impl.h"

namespace plexus::cpu::ew {

namespace {

// Integer unary ops; Reciprocal's divisors were checked non-zero.
template <typename T>
void UnaryInt(Un op, const T* x, T* y, int64_t n) {
  switch (op) {
    case Un::kNeg:
      for (int64_t i = 0; i < n; ++i) y[i] = WrapSub(T(0), x[i]);
      return;
    case Un::kAbs:
      for (int64_t i = 0; i < n; ++i) y[i] = IsNeg(x[i]) ? WrapSub(T(0), x[i]) : x[i];
      return;
    case Un::kSign:
      for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>((x[i] > 0) - IsNeg(x[i]));
      return;
    case Un::kSquare:
      for (int64_t i = 0; i < n; ++i) y[i] = WrapMul(x[i], x[i]);
      return;
    case Un::kReciprocal:
      for (int64_t i = 0; i < n; ++i) y[i] = IntDiv(T(1), x[i]);
      return;
    case Un::kRound:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i];
      return;
    default:
      throw sdk::KernelError(PX_CODE_UNIMPLEMENTED, "unary op not available for integers");
  }
}

}  // namespace

#define PX_EW_DEFINE(T)                                                           \
  void RunBinary(Bin op, const Plan<2>& plan, const T* a, const T* b, void* out) { \
    RunBinaryImpl<T>(op, plan, a, b, out);                                        \
  }                                                                               \
  void RunUnary(Un op, const T* x, T* y, int64_t n) { UnaryInt<T>(op, x, y, n); }

PX_EW_DEFINE(int8_t)
PX_EW_DEFINE(int16_t)
PX_EW_DEFINE(int32_t)
PX_EW_DEFINE(int64_t)
PX_EW_DEFINE(uint8_t)
PX_EW_DEFINE(uint16_t)
PX_EW_DEFINE(uint32_t)
PX_EW_DEFINE(uint64_t)
void RunBinary(Bin op, const Plan<2>& plan, const bool* a, const bool* b, void* out) {
  RunBinaryImpl<bool>(op, plan, a, b, out);
}

}  // namespace plexus::cpu::ew

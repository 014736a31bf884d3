// Elementwise compute for float, half and bfloat16 (the 16-bit floats compute
// in float), in a TU of its own to keep Eigen compile times short.
#include "kernels/elementwise_eigen.h"
#include "kernels/vector_math.h"

namespace plexus::cpu::ew {

void RunBinary(Bin op, const Plan<2>& plan, const float* a, const float* b, void* out) {
  RunBinaryImpl<float>(op, plan, a, b, out);
}
void RunFlatBinary(Bin op, int64_t n, bool va, bool vb, const float* a, const float* b, void* out) {
  RunFlatBinaryImpl<float>(op, n, va, vb, a, b, out);
}
void RunBinary(Bin op, const Plan<2>& plan, const sdk::half* a, const sdk::half* b, void* out) {
  RunBinaryImpl<sdk::half>(op, plan, a, b, out);
}
void RunBinary(Bin op, const Plan<2>& plan, const sdk::bfloat16* a, const sdk::bfloat16* b,
               void* out) {
  RunBinaryImpl<sdk::bfloat16>(op, plan, a, b, out);
}

void RunUnary(Un op, const float* x, float* y, int64_t n) {
  // The transcendental functions models spend time in go to SLEEF's vector
  // code when the plugin has it (vector_math.h).
  if (vmath::Available()) {
    switch (op) {
      case Un::kExp: return vmath::Apply(vmath::Fn::kExp, x, y, n);
      case Un::kLog: return vmath::Apply(vmath::Fn::kLog, x, y, n);
      case Un::kExpm1: return vmath::Apply(vmath::Fn::kExpm1, x, y, n);
      case Un::kTanh: return vmath::Apply(vmath::Fn::kTanh, x, y, n);
      case Un::kSigmoid: return vmath::Apply(vmath::Fn::kSigmoid, x, y, n);
      default: break;
    }
  }
  UnaryFloating<float>(op, x, y, n);
}
void RunUnary(Un op, const sdk::half* x, sdk::half* y, int64_t n) { UnaryHalfLike(op, x, y, n); }
void RunUnary(Un op, const sdk::bfloat16* x, sdk::bfloat16* y, int64_t n) {
  UnaryHalfLike(op, x, y, n);
}

}  // namespace plexus::cpu::ew

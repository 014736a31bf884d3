// The float loops of the fused kernels, built for wider vectors than the
// plugin's baseline x86-64 (SSE2, four floats): the simple steps of the
// fused elementwise kernel (fused_elementwise.cc) and the rows of
// _PlexusLayerNorm (layer_norm.cc). The same source (fused_steps_isa.inc)
// is compiled for AVX-512 and for AVX2 in translation units of their own
// (fused_steps_avx512.cc, fused_steps_avx2.cc) and for the baseline
// (fused_steps.cc), and the widest the CPU runs is chosen once at run
// time. An elementwise step is one IEEE operation per element (no
// contraction into FMA), so every width gives the same bits as the
// separate kernels.
#ifndef PLEXUS_PLUGINS_CPU_KERNELS_FUSED_STEPS_H_
#define PLEXUS_PLUGINS_CPU_KERNELS_FUSED_STEPS_H_

#include <cstdint>

namespace plexus::cpu::fused_steps {

enum class Op : uint8_t { kNeg, kAbs, kSquare, kRelu, kRelu6, kAdd, kSub, kMul, kDiv, kMax, kMin, kSqDiff };

// out[i] = op(a[i], b[i]) for i < len, where a repeated operand (ra, rb) is
// the one value *a or *b; unary ops ignore b.
using StepFn = void (*)(Op op, const float* a, bool ra, const float* b, bool rb, float* out, int64_t len);

// The widest version this CPU runs (the baseline one at least).
StepFn WidestSteps();

// y[r, :] = (x[r, :] - mean) / sqrt(variance + epsilon) * gamma + beta for
// rows [r0, r1) of a [rows, c] matrix, mean and (biased) variance over the
// row, accumulated in float over 16 lanes.
using LayerNormFn = void (*)(const float* x, const float* gamma, const float* beta, float epsilon, int64_t c,
                             int64_t r0, int64_t r1, float* y);
// The widest version this CPU runs (the baseline one at least).
LayerNormFn WidestLayerNorm();

// The per-width versions (only the Widest* functions refer to the wide
// ones, after checking the CPU).
void StepAvx512(Op op, const float* a, bool ra, const float* b, bool rb, float* out, int64_t len);
void StepAvx2(Op op, const float* a, bool ra, const float* b, bool rb, float* out, int64_t len);
void StepBase(Op op, const float* a, bool ra, const float* b, bool rb, float* out, int64_t len);
void LayerNormAvx512(const float* x, const float* gamma, const float* beta, float epsilon, int64_t c, int64_t r0,
                     int64_t r1, float* y);
void LayerNormAvx2(const float* x, const float* gamma, const float* beta, float epsilon, int64_t c, int64_t r0,
                   int64_t r1, float* y);
void LayerNormBase(const float* x, const float* gamma, const float* beta, float epsilon, int64_t c, int64_t r0,
                   int64_t r1, float* y);

}  // namespace plexus::cpu::fused_steps

#endif  // PLEXUS_PLUGINS_CPU_KERNELS_FUSED_STEPS_H_

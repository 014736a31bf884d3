// fused_steps (fused_steps.h): the CPU check, and the baseline loops, built
// for the baseline like the rest of the plugin.
#define PX_FUSED_STEP_NAME StepBase
#define PX_LAYER_NORM_NAME LayerNormBase
#include "kernels/fused_steps_isa.inc"

namespace plexus::cpu::fused_steps {
namespace {

enum class Width { kBase, kAvx2, kAvx512 };

Width Detect() {
#if defined(PX_CPU_WIDE_STEPS)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return Width::kAvx512;
  if (__builtin_cpu_supports("avx2")) return Width::kAvx2;
#endif
  return Width::kBase;
}

}  // namespace

StepFn WidestSteps() {
#if defined(PX_CPU_WIDE_STEPS)
  static const Width width = Detect();
  if (width == Width::kAvx512) return StepAvx512;
  if (width == Width::kAvx2) return StepAvx2;
#endif
  return StepBase;
}

LayerNormFn WidestLayerNorm() {
#if defined(PX_CPU_WIDE_STEPS)
  static const Width width = Detect();
  if (width == Width::kAvx512) return LayerNormAvx512;
  if (width == Width::kAvx2) return LayerNormAvx2;
#endif
  return LayerNormBase;
}

}  // namespace plexus::cpu::fused_steps

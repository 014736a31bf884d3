// fused_steps::StepAvx512 and LayerNormAvx512 (fused_steps.h), built with -mavx512f.
#define PX_FUSED_STEP_NAME StepAvx512
#define PX_LAYER_NORM_NAME LayerNormAvx512
#include "kernels/fused_steps_isa.inc"

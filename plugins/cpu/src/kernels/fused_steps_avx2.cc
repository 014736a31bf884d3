// fused_steps::StepAvx2 and LayerNormAvx2 (fused_steps.h), built with -mavx2.
#define PX_FUSED_STEP_NAME StepAvx2
#define PX_LAYER_NORM_NAME LayerNormAvx2
#include "kernels/fused_steps_isa.inc"

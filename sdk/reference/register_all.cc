#include "reference_kernels.h"

namespace plexus::reference {

PX_Status* RegisterAllKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  const RegisterFamilyFn families[] = {
      RegisterElementwiseKernels, RegisterActivationKernels, RegisterReductionKernels,
      RegisterLinalgKernels,      RegisterNnKernels,         RegisterArrayKernels,
      RegisterAudioKernels,       RegisterBasicKernels,      RegisterFusedKernels,
      RegisterActivationGradKernels, RegisterConvGradKernels, RegisterNnGradKernels,
      RegisterOptimizerKernels, RegisterArrayGradKernels, RegisterSelectionKernels,
      RegisterSegmentKernels,   RegisterScatterKernels,  RegisterCastKernels,
      RegisterScanKernels,      RegisterReverseKernels,  RegisterMatrixBandKernels,
      RegisterImageKernels,     RegisterImageBoxKernels, RegisterNn3dKernels,
      RegisterImageTransformKernels, RegisterImageColorKernels, RegisterDepthSpaceKernels,
      RegisterLrnKernels,
      RegisterBitwiseKernels,   RegisterMatrixDiagKernels, RegisterMatrixSolveKernels,
      RegisterNn3dGradKernels,
  };
  for (RegisterFamilyFn family : families) {
    if (PX_Status* s = family(info, registrar)) return s;
  }
  return nullptr;
}

}  // namespace plexus::reference

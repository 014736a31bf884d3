// The reference kernels: plain, obviously-correct loops for every op (no
// Eigen, no threads, no tricks), one family a file. They are the yardstick
// the cpu plugin's tests and the conformance tool compare vendor kernels
// against, and they are built into the "reference" plugin
// (plexus_plugin_reference, device type REF, host memory).
//
// Conventions for every family file:
// - kernels derive from sdk::OpKernel (plexus/sdk/kernel.h);
// - half and bfloat16 are computed in float, everything else in its own type
//   (accumulations in double for floats, as a reference should);
// - small integer arguments (axis, shape, paddings, ...) are host-memory
//   inputs, listed in the registration.
#ifndef PLEXUS_SDK_REFERENCE_REFERENCE_KERNELS_H_
#define PLEXUS_SDK_REFERENCE_REFERENCE_KERNELS_H_

#include "plexus/plugin_api.h"
#include "plexus/sdk/kernel.h"

namespace plexus::reference {

using RegisterFamilyFn = PX_Status* (*)(sdk::RegistrationInfo*, PX_KernelRegistrar*);

// One function per family file.
PX_Status* RegisterElementwiseKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterCastKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
// BitwiseAnd/Or/Xor, LeftShift, RightShift, Invert, PopulationCount (bitwise.cc).
PX_Status* RegisterBitwiseKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
// MatrixDiag, MatrixDiagPart and MatrixSetDiag, V1 to V3 (matrix_diag.cc).
PX_Status* RegisterMatrixDiagKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
// Cumsum and Cumprod (scan.cc), ReverseV2 (reverse.cc), MatrixBandPart
// (matrix_band.cc).
PX_Status* RegisterScanKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterReverseKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterMatrixBandKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterActivationKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterReductionKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterLinalgKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterNnKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterArrayKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterAudioKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
// Image resizing and its gradients (image.cc).
PX_Status* RegisterImageKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
// CropAndResize and non-max suppression (image_boxes.cc).
PX_Status* RegisterImageBoxKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
// ImageProjectiveTransformV2/V3, ResizeArea, ScaleAndTranslate(Grad)
// (image_transform.cc); RGBToHSV, HSVToRGB and the colour adjustments
// (image_color.cc); DepthToSpace, SpaceToDepth (depth_space.cc); LRN,
// LRNGrad (lrn.cc).
PX_Status* RegisterImageTransformKernels(sdk::RegistrationInfo* info,
                                         PX_KernelRegistrar* registrar);
PX_Status* RegisterImageColorKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterDepthSpaceKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterLrnKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
// Conv3D, MaxPool3D and AvgPool3D (nn3d.cc); Conv3DBackpropInputV2 and
// Conv3DBackpropFilterV2 (nn3d.cc).
PX_Status* RegisterNn3dKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterNn3dGradKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
// MatrixSolve (matrix_solve.cc).
PX_Status* RegisterMatrixSolveKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterBasicKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
// _FusedMatMul, _FusedConv2D and _FusedDepthwiseConv2dNative (fused.cc).
PX_Status* RegisterFusedKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
// Gradient kernels and optimizer updates (training).
PX_Status* RegisterActivationGradKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterConvGradKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterNnGradKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterOptimizerKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterArrayGradKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterSelectionKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterSegmentKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterScatterKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

// Every family above.
PX_Status* RegisterAllKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

}  // namespace plexus::reference

#endif  // PLEXUS_SDK_REFERENCE_REFERENCE_KERNELS_H_

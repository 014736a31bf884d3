// One register function per op family; cpu_plugin.cc calls each from the
// plugin's register_kernels slot.
#ifndef PLEXUS_PLUGINS_CPU_KERNELS_REGISTER_KERNELS_H_
#define PLEXUS_PLUGINS_CPU_KERNELS_REGISTER_KERNELS_H_

#include "plexus/plugin_api.h"
#include "plexus/sdk/kernel.h"

namespace plexus::cpu {

// Families written with sdk::OpKernel (plexus/sdk/kernel.h), one file each
// under kernels/ (Eigen-heavy parts split into small per-dtype files).
using FamilyFn = PX_Status* (*)(sdk::RegistrationInfo*, PX_KernelRegistrar*);
// Const, Placeholder, NoOp.
PX_Status* RegisterBasicFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterElementwiseFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterActivationFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterReductionFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterLinalgFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterNnFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterArrayFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterAudioFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
// Cumsum and Cumprod (scan.cc); MatrixBandPart (matrix_band.cc).
PX_Status* RegisterScanFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterMatrixBandFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
// Image resizing and its gradients (image.cc).
PX_Status* RegisterImageFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
// CropAndResize and non-max suppression (image_boxes.cc).
PX_Status* RegisterImageBoxFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
// ImageProjectiveTransformV2/V3, ResizeArea, ScaleAndTranslate(Grad)
// (image_transform.cc); RGBToHSV, HSVToRGB and the colour adjustments
// (image_color.cc); DepthToSpace and SpaceToDepth (depth_space.cc); LRN and
// LRNGrad (lrn.cc).
PX_Status* RegisterImageTransformFamily(sdk::RegistrationInfo* info,
                                        PX_KernelRegistrar* registrar);
PX_Status* RegisterImageColorFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterDepthSpaceFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterLrnFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
// Conv3D, MaxPool3D and AvgPool3D (nn3d.cc).
PX_Status* RegisterNn3dFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
// Conv3DBackpropInputV2 and Conv3DBackpropFilterV2 (nn3d.cc).
PX_Status* RegisterNn3dGradFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
// BitwiseAnd/Or/Xor, LeftShift, RightShift, Invert, PopulationCount (bitwise.cc).
PX_Status* RegisterBitwiseFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
// MatrixDiag, MatrixDiagPart, MatrixSetDiag, V1 to V3 (matrix_diag.cc).
PX_Status* RegisterMatrixDiagFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
// MatrixSolve (matrix_solve.cc).
PX_Status* RegisterMatrixSolveFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
// _FusedMatMul and _FusedConv2D (fused_matmul.cc, fused_conv.cc).
PX_Status* RegisterFusedFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
// Gradient kernels and optimizer updates (training).
PX_Status* RegisterActivationGradFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterConvGradFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterNnGradFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterOptimizerFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterArrayGradFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterSelectionFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterSegmentFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);
PX_Status* RegisterTensorScatterFamily(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar);

}  // namespace plexus::cpu

#endif  // PLEXUS_PLUGINS_CPU_KERNELS_REGISTER_KERNELS_H_

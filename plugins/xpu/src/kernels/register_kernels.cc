// RegisterXpuKernels: every kernel family of the XPU plugin (families.h).
#include "kernels/families.h"
#include "kernels/register_kernels.h"

namespace plexus::xpu {

PX_Status* RegisterXpuKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  PX_Status* s = RegisterXpuElementwiseKernels(info, registrar);
  if (s == nullptr) s = RegisterXpuReductionKernels(info, registrar);
  if (s == nullptr) s = RegisterXpuMatMulKernels(info, registrar);
  if (s == nullptr) s = RegisterXpuConvKernels(info, registrar);
  if (s == nullptr) s = RegisterXpuMovementKernels(info, registrar);
  return s;
}

}  // namespace plexus::xpu

// The ROCm plugin: the AMD GPUs the HIP runtime sees, device "ROCM", DLPack
// kDLROCM. Everything below the plugin object is shared with the CUDA
// plugin and built from plugins/gpu/src with PX_GPU_HIP defined: the device
// layer (gpu_device.cc), the kernel classes (kernels/*.cc) and the device
// code (kernels/*.cu, compiled by hipcc through gpu_portability.h). Debian's
// HIP has no rocBLAS or MIOpen, so matrix products and convolutions are the
// native kernels (kernels/native_kernels.h), which the CUDA plugin can
// select too (PX_CUDA_KERNELS=native).
//
// Without an AMD GPU (or without the amdgpu kernel driver), hipGetDeviceCount
// fails (error 100, no device) and the plugin reports 0 devices, logging why
// once at info level (PLEXUS_LOG_LEVEL=info plexus devices shows it).
#include <dlfcn.h>
#include <hip/hip_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "gpu_device.h"
#include "gpu_error.h"
#include "kernels/native_kernels.h"
#include "kernels/register_kernels.h"
#include "plexus/plugin_api.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/plugin.h"

namespace plexus::rocm {
namespace {

using cuda::GpuDevice;

constexpr sdk::PluginInfo kInfo{
    /*name=*/"rocm",
    /*version=*/"0.1.0",
    /*platform=*/"ROCm",
    /*device_type=*/"ROCM",
    /*dlpack_device_type=*/kDLROCM,
    // As the CUDA plugin's: on a tie the host prefers the device with its
    // own memory, so a GPU, when there is one, is the default device.
    /*score=*/0,
};

// HIP 5.2's runtime keeps what it allocates to register this library's GPU
// code (__hipRegisterFatBinary, in the constructor hipcc adds; about 19 KiB)
// when the library is unloaded, so a host that loads and unloads the plugin
// again and again (a runtime made and destroyed each time) would lose that
// much at every load. The first initialization pins the library in memory
// (RTLD_NODELETE): later loads find it mapped and run no constructor again.
// Nothing the plugin builds in PX_PluginInitialize outlives plugin_shutdown,
// so a later initialization starts as on a fresh load.
void PinThisLibrary() {
  static const bool pinned = [] {
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&PinThisLibrary), &info) == 0 || info.dli_fname == nullptr) {
      return false;
    }
    return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) != nullptr;
  }();
  (void)pinned;
}

class RocmPlugin : public sdk::Plugin {
 public:
  using Device = GpuDevice;

  explicit RocmPlugin(const sdk::PluginContext& context)
      : sdk::Plugin(context), kernel_info_{host(), name()} {
    PinThisLibrary();
  }

  PX_Status* RegisterKernels(PX_KernelRegistrar* registrar) {
    PX_Status* s = cuda::RegisterSharedGpuKernels(&kernel_info_, registrar);
    if (s == nullptr) s = cuda::RegisterNativeMatMulKernels(&kernel_info_, registrar);
    if (s == nullptr) s = cuda::RegisterNativeConvKernels(&kernel_info_, registrar);
    return s;
  }

  // Asked once: the answer does not change while the process runs. Any error
  // means no device.
  PX_Status* DeviceCount(int32_t* count) {
    std::call_once(count_once_, [this] {
      int n = 0;
      const hipError_t error = hipGetDeviceCount(&n);
      if (error != hipSuccess) {
        (void)hipGetLastError();
        device_count_ = 0;
        Log(PX_LOG_INFO, "no ROCm device: %s",
            cuda::GpuErrorMessage(error, "hipGetDeviceCount(&n)", __FILE__, __LINE__).c_str());
      } else {
        device_count_ = n;
        if (n == 0) Log(PX_LOG_INFO, "no ROCm device: the HIP runtime sees none");
      }
    });
    *count = device_count_;
    return nullptr;
  }

  PX_Status* GetDeviceInfo(int32_t ordinal, PX_DeviceInfo* info) {
    hipDeviceProp_t props{};
    PX_GPU_CHECK(hipGetDeviceProperties(&props, ordinal));
    // "AMD Instinct MI210 (gfx90a:sramecc+:xnack-)": the marketing name and
    // the architecture the kernels must have been built for.
    char name[sizeof(props.name) + sizeof(props.gcnArchName) + 4];
    std::snprintf(name, sizeof(name), "%s (%s)", props.name, props.gcnArchName);
    sdk::CopyString(info->name, name);
    sdk::CopyString(info->vendor, "AMD");
    PX_GPU_CHECK(hipSetDevice(ordinal));
    size_t free_bytes = 0, total_bytes = 0;
    PX_GPU_CHECK(hipMemGetInfo(&free_bytes, &total_bytes));
    info->total_memory_bytes = total_bytes;
    info->free_memory_bytes = free_bytes;
    info->host_accessible = 0;  // device memory: the host copies in and out
    if (PX_STRUCT_HAS(info, PX_DeviceInfo, preferred_layout)) {
      info->preferred_layout = PX_LAYOUT_NHWC;
    }
    return nullptr;
  }

  PX_Status* OpenDevice(int32_t ordinal, std::unique_ptr<GpuDevice>* out) {
    cuda::DeviceOptions options;
    options.set_device = device_count_ > 1;
    options.synchronous_debug = context().synchronous_debug;
    const char* allocator = std::getenv("PX_ROCM_ALLOCATOR");
    options.stream_ordered_allocator = allocator != nullptr && std::strcmp(allocator, "async") == 0;
    auto device = std::make_unique<GpuDevice>(*this, ordinal, options);
    PX_SDK_RETURN_IF_ERROR(device->Open());
    *out = std::move(device);
    return nullptr;
  }

 private:
  sdk::RegistrationInfo kernel_info_;  // user_data of every kernel
  std::once_flag count_once_;
  int32_t device_count_ = 0;
};

}  // namespace
}  // namespace plexus::rocm

PX_SDK_DEFINE_PLUGIN(plexus::rocm::RocmPlugin, plexus::rocm::kInfo)

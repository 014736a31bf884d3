// The CUDA plugin: the NVIDIA GPUs the CUDA runtime sees, device "CUDA",
// DLPack kDLCUDA. Written on the SDK's C++ helpers (plexus/sdk/plugin.h),
// which fill the plugin table and export the two entry symbols.
//
// The plugin links the static CUDA runtime and not the driver library, so it
// loads where no driver is installed; there cudaGetDeviceCount fails (error
// 35, insufficient driver; 100, no device, with a driver and no GPU) and the
// plugin reports 0 devices, logging why once at info level
// (PLEXUS_LOG_LEVEL=info plexus devices shows it).
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "collectives.h"
#include "gpu_device.h"
#include "gpu_error.h"
#include "fused/fused_elementwise.h"
#include "kernels/native_kernels.h"
#include "kernels/register_kernels.h"
#include "kernels/vendor_kernels.h"
#include "plexus/plugin_api.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/plugin.h"

namespace plexus::cuda {
namespace {

constexpr sdk::PluginInfo kInfo{
    /*name=*/"cuda",
    /*version=*/"0.1.0",
    /*platform=*/"CUDA",
    /*device_type=*/"CUDA",
    /*dlpack_device_type=*/kDLCUDA,
    // As the cpu plugin's: on a tie the host prefers the device with its own
    // memory, so a GPU, when there is one, is the default device.
    /*score=*/0,
};

class CudaPlugin : public sdk::Plugin {
 public:
  using Device = GpuDevice;

  explicit CudaPlugin(const sdk::PluginContext& context)
      : sdk::Plugin(context), kernel_info_{host(), name()} {}

  // Matrix products and convolutions come from cuBLASLt and cuDNN, or, with
  // PX_CUDA_KERNELS=native, from the native kernels (those of the ROCm
  // plugin), so that those run on NVIDIA GPUs too; "plexus", their name
  // before, still selects them. Without cuDNN's header at build time the
  // convolutions are always the native ones.
  PX_Status* RegisterKernels(PX_KernelRegistrar* registrar) {
    const char* choice = std::getenv("PX_CUDA_KERNELS");
    const bool native_kernels =
        choice != nullptr && (std::strcmp(choice, "native") == 0 || std::strcmp(choice, "plexus") == 0);
    if (choice != nullptr && *choice != '\0' && !native_kernels && std::strcmp(choice, "vendor") != 0) {
      Log(PX_LOG_WARNING, "PX_CUDA_KERNELS=%s is neither 'native' nor 'vendor': using cuBLASLt and cuDNN",
          choice);
    }
    PX_Status* s = RegisterSharedGpuKernels(&kernel_info_, registrar);
    if (s == nullptr) {
      s = native_kernels ? RegisterNativeMatMulKernels(&kernel_info_, registrar)
                         : RegisterMatMulKernels(&kernel_info_, registrar);
    }
#if defined(PX_CUDA_HAVE_CUDNN)
    if (s == nullptr) {
      s = native_kernels ? RegisterNativeConvKernels(&kernel_info_, registrar)
                         : RegisterConvKernels(&kernel_info_, registrar);
    }
    // The convolution gradients exist on cuDNN only.
    if (s == nullptr && !native_kernels) s = RegisterConvBackpropKernels(&kernel_info_, registrar);
#else
    if (s == nullptr) s = RegisterNativeConvKernels(&kernel_info_, registrar);
#endif
    // The fused elementwise kernel, compiled at run time with NVRTC.
    return s != nullptr ? s : RegisterFusedElementwise(&kernel_info_, registrar);
  }

  // Collectives (ABI 0.7) on NCCL, opened at run time (collectives.h). The
  // extension is offered even without NCCL, so that comm_create can say
  // why it is missing and how to install it.
  const PX_CollectivesExt* Collectives() { return NcclCollectives(host()); }

  // Asked once: the answer does not change while the process runs. Any error
  // means no device.
  PX_Status* DeviceCount(int32_t* count) {
    std::call_once(count_once_, [this] {
      int n = 0;
      const cudaError_t error = cudaGetDeviceCount(&n);
      if (error != cudaSuccess) {
        (void)cudaGetLastError();
        device_count_ = 0;
        Log(PX_LOG_INFO, "no CUDA device: %s",
            GpuErrorMessage(error, "cudaGetDeviceCount(&n)", __FILE__, __LINE__).c_str());
      } else {
        device_count_ = n;
        if (n == 0) Log(PX_LOG_INFO, "no CUDA device: the CUDA runtime sees none");
      }
    });
    *count = device_count_;
    return nullptr;
  }

  PX_Status* GetDeviceInfo(int32_t ordinal, PX_DeviceInfo* info) {
    cudaDeviceProp props{};
    PX_GPU_CHECK(cudaGetDeviceProperties(&props, ordinal));
    sdk::CopyString(info->name, props.name);
    sdk::CopyString(info->vendor, "NVIDIA");
    info->total_memory_bytes = props.totalGlobalMem;
    PX_GPU_CHECK(cudaSetDevice(ordinal));
    size_t free_bytes = 0, total_bytes = 0;
    PX_GPU_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    info->total_memory_bytes = total_bytes;
    info->free_memory_bytes = free_bytes;
    info->host_accessible = 0;  // device memory: the host copies in and out
    // The kernels' layout until the convolution kernels say otherwise.
    if (PX_STRUCT_HAS(info, PX_DeviceInfo, preferred_layout)) {
      info->preferred_layout = PX_LAYOUT_NHWC;
    }
    return nullptr;
  }

  PX_Status* OpenDevice(int32_t ordinal, std::unique_ptr<GpuDevice>* out) {
    DeviceOptions options;
    options.set_device = device_count_ > 1;
    options.synchronous_debug = context().synchronous_debug;
    const char* allocator = std::getenv("PX_CUDA_ALLOCATOR");
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
}  // namespace plexus::cuda

PX_SDK_DEFINE_PLUGIN(plexus::cuda::CudaPlugin, plexus::cuda::kInfo)

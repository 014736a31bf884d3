// The XPU plugin: Intel GPUs through Level Zero, device "XPU", DLPack
// kDLOneAPI. Written on the SDK's C++ helpers (plexus/sdk/plugin.h), which
// fill the plugin table and export the two entry symbols.
//
// The plugin never links the Level Zero loader: ze_loader.cc opens it with
// dlopen when the devices are first counted. Where the loader, a Level Zero
// GPU driver or an Intel GPU is missing, the plugin reports 0 devices and
// logs why once at info level (PLEXUS_LOG_LEVEL=info plexus devices shows it).
#include <level_zero/ze_api.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/register_kernels.h"
#include "plexus/plugin_api.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/plugin.h"
#include "xpu_device.h"
#include "xpu_error.h"
#include "ze_loader.h"

namespace plexus::xpu {
namespace {

// DLPack's device type for oneAPI (SYCL / Level Zero USM) memory. Debian's
// dlpack 0.6 header predates it (kDLOneAPI = 14 arrived in DLPack 0.7), so it
// is spelled here with the value of the DLPack headers that have it.
constexpr int32_t kDLOneAPIDeviceType = 14;

constexpr sdk::PluginInfo kInfo{
    /*name=*/"xpu",
    /*version=*/"0.1.0",
    /*platform=*/"LevelZero",
    /*device_type=*/"XPU",
    /*dlpack_device_type=*/kDLOneAPIDeviceType,
    // As the cpu and cuda plugins': on a tie the host prefers the device
    // with its own memory, so a GPU, when there is one, is the default.
    /*score=*/0,
};

// What enumeration ran into, for the log line.
std::string Failure(ze_result_t r, const char* expr) {
  return ZeErrorMessage(r, expr, __FILE__, __LINE__);
}

class XpuPlugin : public sdk::Plugin {
 public:
  using Device = XpuDevice;

  explicit XpuPlugin(const sdk::PluginContext& context)
      : sdk::Plugin(context), kernel_info_{host(), name()} {}

  // The contexts, once every device is closed (the host closes devices
  // before it shuts the plugin down).
  ~XpuPlugin() {
    if (contexts_.empty()) return;
    const ZeApi& ze = Ze();
    for (ze_context_handle_t c : contexts_) (void)ze.zeContextDestroy(c);
  }

  PX_Status* RegisterKernels(PX_KernelRegistrar* registrar) {
    return RegisterXpuKernels(&kernel_info_, registrar);
  }

  // Asked once: the answer does not change while the process runs. Any
  // failure means no device (or fewer), never an error.
  PX_Status* DeviceCount(int32_t* count) {
    std::call_once(count_once_, [this] { Enumerate(); });
    *count = static_cast<int32_t>(devices_.size());
    return nullptr;
  }

  PX_Status* GetDeviceInfo(int32_t ordinal, PX_DeviceInfo* info) {
    const XpuDeviceHandles& d = devices_.at(static_cast<size_t>(ordinal));
    sdk::CopyString(info->name, d.name.c_str());
    sdk::CopyString(info->vendor, "Intel");
    info->total_memory_bytes = d.total_memory_bytes;
    info->free_memory_bytes = 0;  // unknown without Sysman (zes) or an extension
    info->host_accessible = 0;    // device memory: the host copies in and out
    return nullptr;
  }

  PX_Status* OpenDevice(int32_t ordinal, std::unique_ptr<XpuDevice>* out) {
    auto device = std::make_unique<XpuDevice>(*this, ordinal,
                                              devices_.at(static_cast<size_t>(ordinal)),
                                              context().synchronous_debug);
    PX_SDK_RETURN_IF_ERROR(device->Open());
    *out = std::move(device);
    return nullptr;
  }

 private:
  // Every GPU of every Level Zero driver, one context per driver that has
  // one. UNVERIFIED ON HARDWARE beyond the loader's failure paths.
  void Enumerate() {
    const ZeLoader& loader = ZeLoader::Get();
    if (!loader.ok()) {
      // Nothing else of the loader may be called.
      Log(PX_LOG_INFO, "no XPU device: %s", loader.error().c_str());
      return;
    }
    const ZeApi& ze = loader.api();
    uint32_t driver_count = 0;
    ze_result_t r = ze.zeDriverGet(&driver_count, nullptr);
    if (r != ZE_RESULT_SUCCESS) {
      Log(PX_LOG_INFO, "no XPU device: %s",
          Failure(r, "zeDriverGet(&count, nullptr)").c_str());
      return;
    }
    std::vector<ze_driver_handle_t> drivers(driver_count);
    if (driver_count > 0) {
      r = ze.zeDriverGet(&driver_count, drivers.data());
      if (r != ZE_RESULT_SUCCESS) {
        Log(PX_LOG_INFO, "no XPU device: %s", Failure(r, "zeDriverGet(&count, drivers)").c_str());
        return;
      }
      drivers.resize(driver_count);
    }
    for (ze_driver_handle_t driver : drivers) AddDriver(ze, driver);
    if (devices_.empty()) {
      Log(PX_LOG_INFO, "no XPU device: the Level Zero loader (%s) sees %u driver(s) and no GPU",
          loader.library().c_str(), static_cast<unsigned>(drivers.size()));
    }
  }

  void AddDriver(const ZeApi& ze, ze_driver_handle_t driver) {
    uint32_t n = 0;
    ze_result_t r = ze.zeDeviceGet(driver, &n, nullptr);
    if (r != ZE_RESULT_SUCCESS) {
      Log(PX_LOG_WARNING, "XPU: skipping a Level Zero driver: %s",
          Failure(r, "zeDeviceGet(driver, &count, nullptr)").c_str());
      return;
    }
    std::vector<ze_device_handle_t> handles(n);
    if (n > 0) {
      r = ze.zeDeviceGet(driver, &n, handles.data());
      if (r != ZE_RESULT_SUCCESS) {
        Log(PX_LOG_WARNING, "XPU: skipping a Level Zero driver: %s",
            Failure(r, "zeDeviceGet(driver, &count, devices)").c_str());
        return;
      }
      handles.resize(n);
    }
    std::vector<XpuDeviceHandles> found;
    for (ze_device_handle_t device : handles) {
      ze_device_properties_t props{};
      props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
      props.pNext = nullptr;
      r = ze.zeDeviceGetProperties(device, &props);
      if (r != ZE_RESULT_SUCCESS) {
        Log(PX_LOG_WARNING, "XPU: skipping a device: %s",
            Failure(r, "zeDeviceGetProperties(device, &props)").c_str());
        continue;
      }
      if (props.type != ZE_DEVICE_TYPE_GPU) continue;
      XpuDeviceHandles d;
      d.driver = driver;
      d.device = device;
      d.name.assign(props.name, strnlen(props.name, sizeof(props.name)));
      // Total memory: the sum of the device's memories (HBM, say, may be
      // reported as more than one).
      uint32_t mem_count = 0;
      if (ze.zeDeviceGetMemoryProperties(device, &mem_count, nullptr) == ZE_RESULT_SUCCESS &&
          mem_count > 0) {
        std::vector<ze_device_memory_properties_t> mems(mem_count);
        for (auto& m : mems) {
          m = ze_device_memory_properties_t{};
          m.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES;
          m.pNext = nullptr;
        }
        if (ze.zeDeviceGetMemoryProperties(device, &mem_count, mems.data()) == ZE_RESULT_SUCCESS) {
          for (uint32_t i = 0; i < mem_count && i < mems.size(); ++i) {
            d.total_memory_bytes += mems[i].totalSize;
          }
        }
      }
      // A command queue group that runs compute work (the first one).
      uint32_t group_count = 0;
      bool have_compute = false;
      if (ze.zeDeviceGetCommandQueueGroupProperties(device, &group_count, nullptr) ==
              ZE_RESULT_SUCCESS &&
          group_count > 0) {
        std::vector<ze_command_queue_group_properties_t> groups(group_count);
        for (auto& g : groups) {
          g = ze_command_queue_group_properties_t{};
          g.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
          g.pNext = nullptr;
        }
        if (ze.zeDeviceGetCommandQueueGroupProperties(device, &group_count, groups.data()) ==
            ZE_RESULT_SUCCESS) {
          for (uint32_t i = 0; i < group_count && i < groups.size(); ++i) {
            if (groups[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) {
              d.compute_ordinal = i;
              have_compute = true;
              break;
            }
          }
        }
      }
      if (!have_compute) {
        Log(PX_LOG_WARNING, "XPU: skipping %s: no command queue group with compute",
            d.name.c_str());
        continue;
      }
      found.push_back(std::move(d));
    }
    if (found.empty()) return;
    ze_context_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC;
    desc.pNext = nullptr;
    desc.flags = 0;
    ze_context_handle_t context = nullptr;
    r = ze.zeContextCreate(driver, &desc, &context);
    if (r != ZE_RESULT_SUCCESS) {
      Log(PX_LOG_WARNING, "XPU: skipping %zu GPU(s) of a Level Zero driver: %s", found.size(),
          Failure(r, "zeContextCreate(driver, &desc, &context)").c_str());
      return;
    }
    contexts_.push_back(context);
    for (XpuDeviceHandles& d : found) {
      d.context = context;
      devices_.push_back(std::move(d));
    }
  }

  sdk::RegistrationInfo kernel_info_;  // user_data of every kernel
  std::once_flag count_once_;
  std::vector<XpuDeviceHandles> devices_;  // ordinal -> the GPU
  std::vector<ze_context_handle_t> contexts_;
};

}  // namespace
}  // namespace plexus::xpu

PX_SDK_DEFINE_PLUGIN(plexus::xpu::XpuPlugin, plexus::xpu::kInfo)

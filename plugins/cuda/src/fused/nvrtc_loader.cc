// Run-time loading of NVRTC (nvrtc_loader.h).
#include "fused/nvrtc_loader.h"

#include <cuda.h>  // CUDA_VERSION only: nothing of the driver is called

#include <mutex>
#include <string>
#include <vector>

#include "dynamic_library.h"
#include "plexus/sdk/error.h"

namespace plexus::cuda {
namespace {

constexpr const char* kHint = "install the CUDA toolkit's NVRTC library";

struct Loaded {
  NvrtcApi api;
  std::string error;  // empty when loaded
};

}  // namespace

// The soname of the toolkit built against (libnvrtc.so.<CUDA major>, e.g.
// libnvrtc.so.13), then the development link.
std::vector<std::string> DefaultNvrtcLibraryNames() {
  return {"libnvrtc.so." + std::to_string(CUDA_VERSION / 1000), "libnvrtc.so"};
}

std::string LoadNvrtc(const std::vector<std::string>& candidates, NvrtcApi* api) {
  std::string error, opened;
  void* handle = OpenFirstLibrary(candidates, kHint, &opened, &error);
  if (handle == nullptr) return error;
  NvrtcApi table;
#define PX_NVRTC_RESOLVE(name)                                                \
  if (!ResolveFunction(handle, opened, #name, kHint, &table.name, &error)) {  \
    dlclose(handle);                                                          \
    return error;                                                             \
  }
  PX_NVRTC_FUNCTIONS(PX_NVRTC_RESOLVE)
#undef PX_NVRTC_RESOLVE
  *api = table;
  return std::string();
}

const NvrtcApi& Nvrtc() {
  static std::once_flag once;
  static Loaded* loaded = nullptr;  // never destroyed: used until the process ends
  std::call_once(once, [] {
    auto* l = new Loaded;
    l->error = LoadNvrtc(DefaultNvrtcLibraryNames(), &l->api);
    loaded = l;
  });
  if (!loaded->error.empty()) throw sdk::Error(PX_CODE_UNAVAILABLE, loaded->error);
  return loaded->api;
}

}  // namespace plexus::cuda

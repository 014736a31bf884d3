// Run-time loading of cuDNN (cudnn_loader.h).
#include "cudnn_loader.h"

#include <cuda_runtime_api.h>

#include <mutex>
#include <string>
#include <vector>

#include "dynamic_library.h"
#include "plexus/sdk/error.h"

namespace plexus::cuda {
namespace {

// "install cuDNN 9 for CUDA 13 ...".
const char* Hint() {
  static const std::string hint = "install cuDNN " + std::to_string(CUDNN_MAJOR) + " for CUDA " +
                                  std::to_string(CUDART_VERSION / 1000) +
                                  " where the dynamic linker finds it (ld.so.conf, LD_LIBRARY_PATH)";
  return hint.c_str();
}

struct Loaded {
  CudnnApi api;
  std::string error;  // empty when loaded
};

}  // namespace

std::vector<std::string> DefaultCudnnLibraryNames() {
  return {"libcudnn.so." + std::to_string(CUDNN_MAJOR), "libcudnn.so"};
}

std::string LoadCudnn(const std::vector<std::string>& candidates, CudnnApi* api) {
  std::string error, opened;
  const char* hint = Hint();
  void* handle = OpenFirstLibrary(candidates, hint, &opened, &error);
  if (handle == nullptr) return error;
  CudnnApi table;
#define PX_CUDNN_RESOLVE(name)                                                \
  if (!ResolveFunction(handle, opened, #name, hint, &table.name, &error)) {  \
    dlclose(handle);                                                          \
    return error;                                                             \
  }
  PX_CUDNN_FUNCTIONS(PX_CUDNN_RESOLVE)
#undef PX_CUDNN_RESOLVE
  // cuDNN's version is major * 10000 + minor * 100 + patch since 9.0; the
  // legacy API used here is stable within a major version only.
  const size_t version = table.cudnnGetVersion();
  if (version / 10000 != static_cast<size_t>(CUDNN_MAJOR)) {
    dlclose(handle);
    return opened + " is cuDNN version " + std::to_string(version) + ", the plugin needs major version " +
           std::to_string(CUDNN_MAJOR) + ": " + hint;
  }
  *api = table;
  return std::string();
}

const CudnnApi& Cudnn() {
  static std::once_flag once;
  static Loaded* loaded = nullptr;  // never destroyed: used until the process ends
  std::call_once(once, [] {
    auto* l = new Loaded;
    l->error = LoadCudnn(DefaultCudnnLibraryNames(), &l->api);
    loaded = l;
  });
  if (!loaded->error.empty()) throw sdk::Error(PX_CODE_UNAVAILABLE, loaded->error);
  return loaded->api;
}

}  // namespace plexus::cuda

// Run-time loading of NCCL (nccl_loader.h).
#include "nccl_loader.h"

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "dynamic_library.h"

// Where NCCL's header is at hand, check the declarations of nccl_loader.h
// against it (the build does not otherwise need it).
#if __has_include(<nccl.h>)
#include <nccl.h>

#include <cstddef>

namespace plexus::cuda::nccl {
static_assert(ncclSuccess == kSuccess && ncclUnhandledCudaError == kUnhandledCudaError &&
              ncclSystemError == kSystemError && ncclInternalError == kInternalError &&
              ncclInvalidArgument == kInvalidArgument && ncclInvalidUsage == kInvalidUsage &&
              ncclRemoteError == kRemoteError && ncclInProgress == kInProgress);
static_assert(ncclInt8 == kInt8 && ncclUint8 == kUint8 && ncclInt32 == kInt32 && ncclUint32 == kUint32 &&
              ncclInt64 == kInt64 && ncclUint64 == kUint64 && ncclFloat16 == kFloat16 &&
              ncclFloat32 == kFloat32 && ncclFloat64 == kFloat64 && ncclBfloat16 == kBfloat16);
static_assert(ncclSum == kSum && ncclProd == kProd && ncclMax == kMax && ncclMin == kMin && ncclAvg == kAvg);
static_assert(sizeof(ncclUniqueId) == sizeof(UniqueId));
static_assert(offsetof(ncclConfig_t, magic) == offsetof(Config, magic) &&
              offsetof(ncclConfig_t, version) == offsetof(Config, version) &&
              offsetof(ncclConfig_t, blocking) == offsetof(Config, blocking));
static_assert(NCCL_CONFIG_UNDEF_INT == INT_MIN);
}  // namespace plexus::cuda::nccl
#endif

namespace plexus::cuda::nccl {
namespace {

constexpr const char* kHint =
    "NCCL was not found: install it (pip install nvidia-nccl-cu13, then put the package's "
    "nvidia/nccl/lib folder on LD_LIBRARY_PATH or set PX_CUDA_NCCL_LIBRARY to the libnccl.so.2 there) "
    "or use the CUDA toolkit's NCCL (the libnccl2 package)";

struct LoadedApi {
  Api api;
  std::string error;  // empty when loaded
};

}  // namespace

std::vector<std::string> DefaultLibraryNames() {
  std::vector<std::string> names;
  const char* path = std::getenv("PX_CUDA_NCCL_LIBRARY");
  if (path != nullptr && *path != '\0') names.emplace_back(path);
  names.emplace_back("libnccl.so.2");
  return names;
}

std::string VersionString(int code) {
  // Codes below 2.9 were major * 1000 + minor * 100 + patch.
  const int major = code >= 10000 ? code / 10000 : code / 1000;
  const int minor = code >= 10000 ? code / 100 % 100 : code / 100 % 10;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

std::string Load(const std::vector<std::string>& candidates, Api* api) {
  std::string error, opened;
  void* handle = OpenFirstLibrary(candidates, kHint, &opened, &error);
  if (handle == nullptr) return error;
  Api table;
  const char* old_hint = "NCCL 2.14 or newer is needed: install a newer one (pip install nvidia-nccl-cu13)";
#define PX_NCCL_RESOLVE(name, result, params)                                   \
  if (!ResolveFunction(handle, opened, #name, old_hint, &table.name, &error)) { \
    dlclose(handle);                                                            \
    return error;                                                               \
  }
  PX_NCCL_FUNCTIONS(PX_NCCL_RESOLVE)
#undef PX_NCCL_RESOLVE
#define PX_NCCL_RESOLVE_OPTIONAL(name, result, params) \
  dlerror();                                           \
  table.name = reinterpret_cast<decltype(table.name)>(dlsym(handle, #name));
  PX_NCCL_OPTIONAL_FUNCTIONS(PX_NCCL_RESOLVE_OPTIONAL)
#undef PX_NCCL_RESOLVE_OPTIONAL
  if (table.ncclGetVersion(&table.version) != kSuccess || table.version < kMinimumVersion) {
    error = opened + " is NCCL " + VersionString(table.version) + "; " + old_hint;
    dlclose(handle);
    return error;
  }
  table.library = opened;
  *api = table;
  return std::string();
}

const Api* Loaded(std::string* error) {
  static std::once_flag once;
  static LoadedApi* loaded = nullptr;  // never destroyed: used until the process ends
  std::call_once(once, [] {
    auto* l = new LoadedApi;
    l->error = Load(DefaultLibraryNames(), &l->api);
    loaded = l;
  });
  if (!loaded->error.empty()) {
    if (error != nullptr) *error = loaded->error;
    return nullptr;
  }
  return &loaded->api;
}

}  // namespace plexus::cuda::nccl

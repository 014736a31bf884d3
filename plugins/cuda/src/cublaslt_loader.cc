// Run-time loading of cuBLASLt (cublaslt_loader.h).
#include "cublaslt_loader.h"

#include <mutex>
#include <string>
#include <vector>

#include "dynamic_library.h"
#include "plexus/sdk/error.h"

namespace plexus::cuda {
namespace {

constexpr const char* kHint = "install the CUDA toolkit's cuBLAS libraries";

struct Loaded {
  CublasLtApi api;
  std::string error;  // empty when loaded
};

}  // namespace

// The soname of the cuBLAS built against (e.g. libcublasLt.so.13), then the
// development link.
std::vector<std::string> DefaultCublasLtLibraryNames() {
  return {"libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR), "libcublasLt.so"};
}

std::string LoadCublasLt(const std::vector<std::string>& candidates, CublasLtApi* api) {
  std::string error, opened;
  void* handle = OpenFirstLibrary(candidates, kHint, &opened, &error);
  if (handle == nullptr) return error;
  CublasLtApi table;
#define PX_CUBLASLT_RESOLVE(name)                                             \
  if (!ResolveFunction(handle, opened, #name, kHint, &table.name, &error)) {  \
    dlclose(handle);                                                          \
    return error;                                                             \
  }
  PX_CUBLASLT_FUNCTIONS(PX_CUBLASLT_RESOLVE)
#undef PX_CUBLASLT_RESOLVE
  *api = table;
  return std::string();
}

const CublasLtApi& CublasLt() {
  static std::once_flag once;
  static Loaded* loaded = nullptr;  // never destroyed: used until the process ends
  std::call_once(once, [] {
    auto* l = new Loaded;
    l->error = LoadCublasLt(DefaultCublasLtLibraryNames(), &l->api);
    loaded = l;
  });
  if (!loaded->error.empty()) throw sdk::Error(PX_CODE_UNAVAILABLE, loaded->error);
  return loaded->api;
}

}  // namespace plexus::cuda

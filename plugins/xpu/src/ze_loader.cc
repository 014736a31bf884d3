#include "ze_loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "xpu_error.h"

namespace plexus::xpu {
namespace {

constexpr const char* kDefaultLibrary = "libze_loader.so.1";

std::string DlErrorText() {
  const char* e = dlerror();
  return e != nullptr ? std::string(e) : std::string("unknown error");
}

}  // namespace

const ZeLoader& ZeLoader::Get() {
  // A function-local static: constructed once, thread-safely; never
  // destroyed before exit (the library stays open for the process).
  static const ZeLoader* loader = new ZeLoader();
  return *loader;
}

ZeLoader::ZeLoader() {
  const char* override_path = std::getenv("PX_XPU_LOADER");
  library_ = override_path != nullptr && override_path[0] != '\0' ? override_path : kDefaultLibrary;

  dlerror();  // clears an earlier error
  void* handle = dlopen(library_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    error_ = "the Level Zero loader " + library_ + " could not be opened (" + DlErrorText() +
             "); install libze1 and an Intel GPU driver (intel-level-zero-gpu)";
    return;
  }
  // The handle is never closed: the functions are used until the process
  // exits, and a failed loader is simply left alone.

  // Resolving only looks the names up; nothing is called before zeInit.
  std::string missing;  // the first few missing names
  int missing_count = 0;
#define PX_ZE_RESOLVE(name)                                             \
  {                                                                     \
    dlerror();                                                          \
    void* p = dlsym(handle, #name);                                     \
    if (p == nullptr) {                                                 \
      if (++missing_count <= 3) {                                       \
        if (!missing.empty()) missing += ", ";                          \
        missing += #name;                                               \
      }                                                                 \
    } else {                                                            \
      api_.name = reinterpret_cast<decltype(api_.name)>(p);             \
    }                                                                   \
  }
  PX_ZE_FUNCTIONS(PX_ZE_RESOLVE)
#undef PX_ZE_RESOLVE
  if (missing_count > 0) {
    if (missing_count > 3) missing += " and " + std::to_string(missing_count - 3) + " more";
    error_ = "the Level Zero loader " + library_ + " lacks " + missing +
             " (Level Zero 1.0 or later is needed)";
    api_ = ZeApi();
    return;
  }

  // zeInit exactly once per process (this constructor runs once).
  const ze_result_t result = api_.zeInit(ZE_INIT_FLAG_GPU_ONLY);
  if (result != ZE_RESULT_SUCCESS) {
    error_ = "zeInit(ZE_INIT_FLAG_GPU_ONLY) in " + library_ + " returned " +
             ZeResultDescription(result) +
             " (no Level Zero GPU driver, or no Intel GPU it can use)";
    // Nothing of the library may be called again.
    api_ = ZeApi();
    return;
  }
  ok_ = true;
}

}  // namespace plexus::xpu

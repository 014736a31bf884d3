// The Level Zero loader (libze_loader.so.1), opened at run time with dlopen
// and never linked, so the XPU plugin loads on any machine and reports no
// device where the loader, a driver or an Intel GPU is missing.
//
// One loader per process (ZeLoader::Get): the first call opens the library
// (the environment variable PX_XPU_LOADER names another file, for tests),
// resolves every entry point of ze_functions.h by name, and calls
// zeInit(ZE_INIT_FLAG_GPU_ONLY) exactly once. If any step fails, the loader
// remembers why and is unusable for the rest of the process: nothing else of
// the library is ever called (with intel-opencl-icd installed and no GPU,
// zeDriverGet after a failed zeInit crashes inside the loader).
#ifndef PLEXUS_PLUGINS_XPU_ZE_LOADER_H_
#define PLEXUS_PLUGINS_XPU_ZE_LOADER_H_

#include <level_zero/ze_api.h>

#include <string>

#include "ze_functions.h"

namespace plexus::xpu {

// The resolved entry points, each with the exact type of the header's
// declaration (decltype is unevaluated: no reference to the symbol itself).
struct ZeApi {
#define PX_ZE_DECLARE_POINTER(name) decltype(&::name) name = nullptr;
  PX_ZE_FUNCTIONS(PX_ZE_DECLARE_POINTER)
#undef PX_ZE_DECLARE_POINTER
};

class ZeLoader {
 public:
  // The process's loader, opened (and zeInit called) on the first call;
  // thread-safe.
  static const ZeLoader& Get();

  // True when the library opened, every entry point resolved and zeInit
  // succeeded. Only then may api() be used.
  bool ok() const { return ok_; }
  // Why the loader is unusable ("" when ok()), e.g.
  // "zeInit(ZE_INIT_FLAG_GPU_ONLY) returned ZE_RESULT_ERROR_UNINITIALIZED ...".
  const std::string& error() const { return error_; }
  // The file that was opened (or tried).
  const std::string& library() const { return library_; }
  const ZeApi& api() const { return api_; }

  ZeLoader(const ZeLoader&) = delete;
  ZeLoader& operator=(const ZeLoader&) = delete;

 private:
  ZeLoader();

  bool ok_ = false;
  std::string error_;
  std::string library_;
  ZeApi api_;
};

// The entry points of the process's loader; only for code that runs after
// ZeLoader::Get().ok() was seen to be true (every device exists only then).
inline const ZeApi& Ze() { return ZeLoader::Get().api(); }

}  // namespace plexus::xpu

#endif  // PLEXUS_PLUGINS_XPU_ZE_LOADER_H_

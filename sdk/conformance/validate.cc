#include "validate.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "absl/strings/ascii.h"
#include "validation_layer.h"

namespace plexus::conformance {
namespace {

// 0: off, else PX_VALIDATION_MODE_*.
int32_t Mode() {
  const char* env = std::getenv("PLEXUS_VALIDATE");
  if (env == nullptr) return 0;
  const std::string v = absl::AsciiStrToLower(env);
  if (v.empty() || v == "0" || v == "off" || v == "false" || v == "no") return 0;
  return v == "warn" ? PX_VALIDATION_MODE_WARN : PX_VALIDATION_MODE_ERROR;
}

}  // namespace

std::string ExeDir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  std::string path(buf, static_cast<size_t>(n));
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string ValidationLayerPath() {
  const char* env = std::getenv("PLEXUS_VALIDATION_LAYER");
  if (env != nullptr && env[0] != '\0') return env;
  return ExeDir() + "/../lib/plexus-plugins/" PX_VALIDATION_LAYER_FILE;
}

PX_Status* InitializePlugin(PX_PluginInitializeFn initialize, const char* plugin_name,
                            const PX_HostInitArgs* args, PX_PluginTable* table) {
  const int32_t mode = Mode();
  if (mode == 0) return initialize(args, table);
  // Opened once and never closed: wrapped tables point into it.
  static std::mutex mu;
  static PX_ValidationWrapFn wrap = nullptr;
  static std::string error;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (wrap == nullptr && error.empty()) {
      const std::string path = ValidationLayerPath();
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle != nullptr) wrap = reinterpret_cast<PX_ValidationWrapFn>(dlsym(handle, PX_VALIDATION_WRAP_SYMBOL));
      if (wrap == nullptr) {
        const char* why = dlerror();
        error = "the validation layer '" + path + "' cannot be loaded: " + (why ? why : "no " PX_VALIDATION_WRAP_SYMBOL) +
                " (set PLEXUS_VALIDATION_LAYER to its path)";
      }
    }
  }
  if (wrap == nullptr) {
    return args->services->status_create(PX_CODE_FAILED_PRECONDITION, error.c_str());
  }
  PX_ValidationArgs v;
  std::memset(&v, 0, sizeof(v));
  v.struct_size = sizeof(v);
  v.plugin_name = plugin_name != nullptr ? plugin_name : "?";
  v.plugin_initialize = initialize;
  v.mode = mode;
  return wrap(&v, args, table);
}

}  // namespace plexus::conformance

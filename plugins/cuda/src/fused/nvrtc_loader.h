// NVRTC (libnvrtc) opened at run time rather than linked, so the plugin loads
// on machines without it and only the fused kernel fails there (with
// UNAVAILABLE naming the library). nvrtc.h is included for its types only:
// every call goes through the table below (nvrtc::Name(...) wrappers).
#ifndef PLEXUS_PLUGINS_CUDA_FUSED_NVRTC_LOADER_H_
#define PLEXUS_PLUGINS_CUDA_FUSED_NVRTC_LOADER_H_

#include <nvrtc.h>

#include <string>
#include <vector>

namespace plexus::cuda {

// The NVRTC functions the plugin uses.
#define PX_NVRTC_FUNCTIONS(X)  \
  X(nvrtcGetErrorString)       \
  X(nvrtcGetNumSupportedArchs) \
  X(nvrtcGetSupportedArchs)    \
  X(nvrtcCreateProgram)        \
  X(nvrtcCompileProgram)       \
  X(nvrtcDestroyProgram)       \
  X(nvrtcGetProgramLogSize)    \
  X(nvrtcGetProgramLog)        \
  X(nvrtcGetPTXSize)           \
  X(nvrtcGetPTX)               \
  X(nvrtcGetCUBINSize)         \
  X(nvrtcGetCUBIN)

// Pointers of the exact types nvrtc.h declares.
struct NvrtcApi {
#define PX_NVRTC_MEMBER(name) decltype(&::name) name = nullptr;
  PX_NVRTC_FUNCTIONS(PX_NVRTC_MEMBER)
#undef PX_NVRTC_MEMBER
};

// The library names tried, in order: the toolkit's soname, then the
// unversioned development link.
std::vector<std::string> DefaultNvrtcLibraryNames();

// Opens the first of `candidates` and resolves every function into *api.
// Returns "" on success, else the reason ("libnvrtc.so.13 not found (...):
// install the CUDA toolkit's NVRTC library"). Does not cache: see Nvrtc().
std::string LoadNvrtc(const std::vector<std::string>& candidates, NvrtcApi* api);

// The process-wide table, loaded from DefaultNvrtcLibraryNames() on the first
// call (thread-safe, once). Throws sdk::Error (UNAVAILABLE) with LoadNvrtc's
// message when NVRTC cannot be loaded; every later call throws the same.
const NvrtcApi& Nvrtc();

// Call-site wrappers: nvrtc::nvrtcCompileProgram(...) calls the loaded
// function (loading NVRTC first if needed). Arguments are scalars and
// pointers, passed on unchanged.
namespace nvrtc {
#define PX_NVRTC_WRAPPER(name)                   \
  template <typename... Args>                    \
  inline auto name(Args... args) {               \
    return ::plexus::cuda::Nvrtc().name(args...); \
  }
PX_NVRTC_FUNCTIONS(PX_NVRTC_WRAPPER)
#undef PX_NVRTC_WRAPPER
}  // namespace nvrtc

}  // namespace plexus::cuda

#endif  // PLEXUS_PLUGINS_CUDA_FUSED_NVRTC_LOADER_H_

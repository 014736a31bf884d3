// Opening a shared library at run time and resolving its functions, for the
// CUDA libraries the plugin must not link (cuBLASLt, NVRTC): linked, they
// would make the plugin itself fail to load on a machine without them;
// opened on first use, only the kernel that needs one fails, with a clear
// message. Handles are never closed (the functions are used until the
// process exits).
#ifndef PLEXUS_PLUGINS_CUDA_DYNAMIC_LIBRARY_H_
#define PLEXUS_PLUGINS_CUDA_DYNAMIC_LIBRARY_H_

#include <dlfcn.h>

#include <string>
#include <vector>

namespace plexus::cuda {

// dlopen's last error, or a fallback text when it has none.
inline std::string DlErrorText() {
  const char* e = dlerror();
  return e != nullptr ? std::string(e) : std::string("unknown error");
}

// Opens the first of `candidates` that dlopen finds. Without one, returns
// nullptr and sets *error to "<first candidate> not found (<dlerror of each
// try>): <hint>". *opened receives the name that was opened.
inline void* OpenFirstLibrary(const std::vector<std::string>& candidates, const char* hint, std::string* opened,
                              std::string* error) {
  std::string tried;
  for (const std::string& name : candidates) {
    dlerror();  // clears an earlier error
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      *opened = name;
      return handle;
    }
    if (!tried.empty()) tried += "; ";
    tried += DlErrorText();
  }
  *error = (candidates.empty() ? std::string("(no library name)") : candidates.front()) + " not found (" +
           (tried.empty() ? std::string("no candidates") : tried) + "): " + hint;
  return nullptr;
}

// Resolves `name` in `handle` into *fn (a pointer of the function's exact
// type). Without it, returns false and sets *error.
template <typename Fn>
bool ResolveFunction(void* handle, const std::string& library, const char* name, const char* hint, Fn* fn,
                     std::string* error) {
  dlerror();
  void* p = dlsym(handle, name);
  if (p == nullptr) {
    *error = library + " lacks " + name + " (" + DlErrorText() + "): " + hint;
    return false;
  }
  *fn = reinterpret_cast<Fn>(p);
  return true;
}

}  // namespace plexus::cuda

#endif  // PLEXUS_PLUGINS_CUDA_DYNAMIC_LIBRARY_H_

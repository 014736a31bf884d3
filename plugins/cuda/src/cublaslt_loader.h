// cuBLASLt (libcublasLt) opened at run time rather than linked, so the plugin
// loads on machines without it and only the matrix products fail there (with
// UNAVAILABLE naming the library). cublasLt.h is included for its types
// only: every call goes through the table below (cublaslt::Name(...)
// wrappers).
#ifndef PLEXUS_PLUGINS_CUDA_CUBLASLT_LOADER_H_
#define PLEXUS_PLUGINS_CUDA_CUBLASLT_LOADER_H_

#include <cublasLt.h>

#include <string>
#include <vector>

namespace plexus::cuda {

// The cuBLASLt functions the plugin uses.
#define PX_CUBLASLT_FUNCTIONS(X)          \
  X(cublasLtGetStatusString)              \
  X(cublasLtCreate)                       \
  X(cublasLtMatmulDescCreate)             \
  X(cublasLtMatmulDescDestroy)            \
  X(cublasLtMatmulDescSetAttribute)       \
  X(cublasLtMatrixLayoutCreate)           \
  X(cublasLtMatrixLayoutDestroy)          \
  X(cublasLtMatrixLayoutSetAttribute)     \
  X(cublasLtMatmulPreferenceCreate)       \
  X(cublasLtMatmulPreferenceDestroy)      \
  X(cublasLtMatmulPreferenceSetAttribute) \
  X(cublasLtMatmulAlgoGetHeuristic)       \
  X(cublasLtMatmul)

// Pointers of the exact types cublasLt.h declares.
struct CublasLtApi {
#define PX_CUBLASLT_MEMBER(name) decltype(&::name) name = nullptr;
  PX_CUBLASLT_FUNCTIONS(PX_CUBLASLT_MEMBER)
#undef PX_CUBLASLT_MEMBER
};

// The library names tried, in order: the toolkit's soname, then the
// unversioned development link.
std::vector<std::string> DefaultCublasLtLibraryNames();

// Opens the first of `candidates` and resolves every function into *api.
// Returns "" on success, else the reason ("libcublasLt.so.13 not found
// (...): install the CUDA toolkit's cuBLAS libraries"). Does not cache: see
// CublasLt().
std::string LoadCublasLt(const std::vector<std::string>& candidates, CublasLtApi* api);

// The process-wide table, loaded from DefaultCublasLtLibraryNames() on the
// first call (thread-safe, once). Throws sdk::Error (UNAVAILABLE) with
// LoadCublasLt's message when cuBLASLt cannot be loaded; every later call
// throws the same.
const CublasLtApi& CublasLt();

// Call-site wrappers: cublaslt::cublasLtMatmul(...) calls the loaded function
// (loading cuBLASLt first if needed). Arguments are scalars and pointers,
// passed on unchanged.
namespace cublaslt {
#define PX_CUBLASLT_WRAPPER(name)                   \
  template <typename... Args>                       \
  inline auto name(Args... args) {                  \
    return ::plexus::cuda::CublasLt().name(args...); \
  }
PX_CUBLASLT_FUNCTIONS(PX_CUBLASLT_WRAPPER)
#undef PX_CUBLASLT_WRAPPER
}  // namespace cublaslt

}  // namespace plexus::cuda

#endif  // PLEXUS_PLUGINS_CUDA_CUBLASLT_LOADER_H_

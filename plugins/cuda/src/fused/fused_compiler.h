// Run-time compilation of generated kernels (fused_codegen.h) with NVRTC,
// cached process-wide by (source text, target), so each distinct program is
// compiled once per process. Needs libnvrtc only (no CUDA runtime, no GPU),
// opened at run time (nvrtc_loader.h): compiling for sm_90 works on machines
// without a device.
#ifndef PLEXUS_PLUGINS_CUDA_FUSED_COMPILER_H_
#define PLEXUS_PLUGINS_CUDA_FUSED_COMPILER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace plexus::cuda {

// The compute capability compiled for when there is no device to ask.
inline constexpr int kFusedDefaultComputeCapability = 90;

// One compiled program: a CUBIN for "sm_XY", or, when NVRTC cannot make a
// CUBIN for the device (an architecture newer than the toolkit), PTX for the
// newest "compute_XY" it knows, which the driver compiles when loading.
struct FusedImage {
  std::string target;       // "sm_90" or "compute_90"
  bool ptx = false;
  std::vector<char> data;   // the CUBIN, or the PTX text with its final NUL
};

// The image of `source` for compute capability `compute_capability` (major *
// 10 + minor, e.g. 90). The first request for a (source, capability) pair
// compiles; later ones return the same object. Throws sdk::Error (INTERNAL)
// with NVRTC's log and the offending generated lines when compilation fails,
// and UNAVAILABLE ("libnvrtc.so.13 not found (...): install ...") when NVRTC
// cannot be loaded. Thread-safe.
std::shared_ptr<const FusedImage> CompileFusedSource(const std::string& source, int compute_capability);

// NVRTC compilations done by CompileFusedSource in this process (for tests
// and statistics).
int64_t FusedCompileCount();

}  // namespace plexus::cuda

#endif  // PLEXUS_PLUGINS_CUDA_FUSED_COMPILER_H_

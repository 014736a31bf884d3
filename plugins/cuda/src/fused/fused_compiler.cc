// NVRTC compilation and the process-wide image cache (fused_compiler.h).
#include "fused/fused_compiler.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>
#include <utility>

#include "fused/nvrtc_loader.h"
#include "plexus/sdk/kernel.h"

namespace plexus::cuda {
namespace {

// The file name NVRTC reports errors against.
constexpr const char* kSourceName = "px_fused.cu";
// How much of NVRTC's log an error message carries.
constexpr int kMaxLogLines = 12;

std::atomic<int64_t> g_compile_count{0};

struct Cache {
  std::mutex mu;
  std::map<std::pair<std::string, int>, std::shared_ptr<const FusedImage>> images;
};

Cache& TheCache() {
  static Cache* cache = new Cache;  // never destroyed: used until the process ends
  return *cache;
}

// Destroys an NVRTC program on every path out of a compilation.
struct Program {
  nvrtcProgram prog = nullptr;
  ~Program() {
    if (prog != nullptr) nvrtc::nvrtcDestroyProgram(&prog);
  }
};

[[noreturn]] void Fail(const char* what, nvrtcResult r) {
  throw sdk::Error(PX_CODE_INTERNAL, sdk::Format("_PlexusFusedElementwise: %s failed: %s (NVRTC code %d)", what,
                                                 nvrtc::nvrtcGetErrorString(r), static_cast<int>(r)));
}

// The architectures this NVRTC compiles for (e.g. 75, 80, ..., 120).
std::vector<int> SupportedArchs() {
  int count = 0;
  std::vector<int> archs;
  if (nvrtc::nvrtcGetNumSupportedArchs(&count) == NVRTC_SUCCESS && count > 0) {
    archs.resize(static_cast<size_t>(count));
    if (nvrtc::nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS) archs.clear();
  }
  std::sort(archs.begin(), archs.end());
  return archs;
}

// The first lines of NVRTC's log, each error followed by the generated line
// it names ("px_fused.cu(42): error: ..." then "  line 42: <text>").
std::string DescribeLog(const std::string& log, const std::string& source) {
  std::vector<std::string> lines;
  {
    std::istringstream in(source);
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
  }
  std::ostringstream out;
  std::istringstream in(log);
  std::string line;
  int shown = 0;
  while (std::getline(in, line) && shown < kMaxLogLines) {
    if (line.empty()) continue;
    out << "\n  " << line;
    ++shown;
    const std::string prefix = std::string(kSourceName) + "(";
    if (line.compare(0, prefix.size(), prefix) == 0) {
      const long n = std::strtol(line.c_str() + prefix.size(), nullptr, 10);
      if (n >= 1 && static_cast<size_t>(n) <= lines.size()) {
        out << "\n    generated line " << n << ": " << lines[static_cast<size_t>(n) - 1];
      }
    }
  }
  if (shown == kMaxLogLines) out << "\n  ...";
  return out.str();
}

// Compiles `source` for `target` ("sm_XY": CUBIN, "compute_XY": PTX). Returns
// false (and leaves *status) when NVRTC refuses the target itself; throws for
// errors in the source.
bool Compile(const std::string& source, const std::string& target, bool ptx, FusedImage* image,
             nvrtcResult* status) {
  Program p;
  nvrtcResult r = nvrtc::nvrtcCreateProgram(&p.prog, source.c_str(), kSourceName, 0, nullptr, nullptr);
  if (r != NVRTC_SUCCESS) Fail("nvrtcCreateProgram", r);
  const std::string arch = "--gpu-architecture=" + target;
  // No contraction into fused multiply-adds: each instruction rounds like
  // the separate op (and the cpu kernel) would.
  const char* options[] = {arch.c_str(), "--fmad=false", "--std=c++17"};
  r = nvrtc::nvrtcCompileProgram(p.prog, 3, options);
  g_compile_count.fetch_add(1);
  if (r == NVRTC_ERROR_INVALID_OPTION) {
    *status = r;
    return false;
  }
  if (r != NVRTC_SUCCESS) {
    size_t size = 0;
    std::string log;
    if (nvrtc::nvrtcGetProgramLogSize(p.prog, &size) == NVRTC_SUCCESS && size > 1) {
      log.resize(size);
      if (nvrtc::nvrtcGetProgramLog(p.prog, &log[0]) != NVRTC_SUCCESS) log.clear();
    }
    throw sdk::Error(PX_CODE_INTERNAL,
                     sdk::Format("_PlexusFusedElementwise: NVRTC could not compile the generated kernel for %s: %s%s",
                                 target.c_str(), nvrtc::nvrtcGetErrorString(r), DescribeLog(log, source).c_str()));
  }
  size_t size = 0;
  if (ptx) {
    r = nvrtc::nvrtcGetPTXSize(p.prog, &size);
    if (r == NVRTC_SUCCESS) {
      image->data.resize(size);
      r = nvrtc::nvrtcGetPTX(p.prog, image->data.data());
    }
    if (r != NVRTC_SUCCESS) Fail("nvrtcGetPTX", r);
  } else {
    r = nvrtc::nvrtcGetCUBINSize(p.prog, &size);
    if (r == NVRTC_SUCCESS && size > 0) {
      image->data.resize(size);
      r = nvrtc::nvrtcGetCUBIN(p.prog, image->data.data());
    } else if (r == NVRTC_SUCCESS) {
      r = NVRTC_ERROR_INVALID_OPTION;  // no CUBIN for this target
    }
    if (r != NVRTC_SUCCESS) {
      *status = r;
      return false;
    }
  }
  image->target = target;
  image->ptx = ptx;
  return true;
}

std::shared_ptr<const FusedImage> CompileUncached(const std::string& source, int cc) {
  const std::vector<int> archs = SupportedArchs();
  auto image = std::make_shared<FusedImage>();
  nvrtcResult status = NVRTC_SUCCESS;
  const bool known = archs.empty() || std::find(archs.begin(), archs.end(), cc) != archs.end();
  if (known && Compile(source, "sm_" + std::to_string(cc), /*ptx=*/false, image.get(), &status)) return image;
  // PTX for the newest virtual architecture not above the device's: the
  // driver compiles it for the device when the image is loaded.
  int virtual_arch = cc;
  for (int a : archs) {
    if (a <= cc) virtual_arch = a;
  }
  if (!archs.empty() && archs.front() > cc) {
    throw sdk::Error(PX_CODE_UNIMPLEMENTED,
                     sdk::Format("_PlexusFusedElementwise: NVRTC cannot compile for compute capability %d.%d "
                                 "(the oldest it knows is %d.%d)",
                                 cc / 10, cc % 10, archs.front() / 10, archs.front() % 10));
  }
  if (Compile(source, "compute_" + std::to_string(virtual_arch), /*ptx=*/true, image.get(), &status)) return image;
  Fail(("compiling for sm_" + std::to_string(cc)).c_str(), status);
}

}  // namespace

std::shared_ptr<const FusedImage> CompileFusedSource(const std::string& source, int compute_capability) {
  Cache& cache = TheCache();
  // Compiling under the lock keeps each program to one compilation even
  // when several threads ask for it at once; compilations are rare.
  std::lock_guard<std::mutex> lock(cache.mu);
  auto key = std::make_pair(source, compute_capability);
  auto it = cache.images.find(key);
  if (it != cache.images.end()) return it->second;
  std::shared_ptr<const FusedImage> image = CompileUncached(source, compute_capability);
  cache.images.emplace(std::move(key), image);
  return image;
}

int64_t FusedCompileCount() { return g_compile_count.load(); }

}  // namespace plexus::cuda

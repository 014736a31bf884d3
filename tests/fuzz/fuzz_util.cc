#include "fuzz_util.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include "absl/strings/match.h"
#include "plexus/runtime.h"

namespace plexus {
namespace fuzz {

void QuietLogs() { setenv("PLEXUS_LOG_LEVEL", "error", /*overwrite=*/0); }

namespace {
std::string* temp_dir = nullptr;
void RemoveTempDir() {
  std::error_code ignored;
  if (temp_dir != nullptr) std::filesystem::remove_all(*temp_dir, ignored);
}
}  // namespace

const std::string& TempDir() {
  if (temp_dir == nullptr) {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") +
                          "/plexus_fuzz_XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      std::perror("plexus fuzz: mkdtemp");
      std::abort();
    }
    temp_dir = new std::string(pattern);
    std::atexit(RemoveTempDir);
  }
  return *temp_dir;
}

void WriteFile(const std::string& path, absl::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) {
    std::fprintf(stderr, "plexus fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
}

std::vector<absl::string_view> SplitInput(absl::string_view input, size_t max_parts) {
  std::vector<absl::string_view> parts;
  while (parts.size() + 1 < max_parts) {
    size_t at = input.find(kSplit);
    if (at == absl::string_view::npos) break;
    parts.push_back(input.substr(0, at));
    input.remove_prefix(at + kSplit.size());
  }
  parts.push_back(input);
  return parts;
}

Runtime* FuzzRuntime() {
#ifdef PX_CPU_PLUGIN_PATH
  static Runtime* runtime = [] {
    RuntimeOptions options;
    options.discover_plugins = false;
    options.plugin_paths = {PX_CPU_PLUGIN_PATH, PX_REFERENCE_PLUGIN_PATH};
    // Both plugins run under the validation layer: its guard bytes and
    // poison fill catch what ASan cannot see inside the memory pool's
    // regions (IsValidationBreach), and its allocation budget turns an op
    // asked for an output of gigabytes into RESOURCE_EXHAUSTED, as on a
    // device that has no more memory, instead of libFuzzer's out-of-memory.
    options.validation = ValidationMode::kError;
    setenv("PLEXUS_FAULT_ALLOC_BUDGET", "1073741824", /*overwrite=*/0);
    // The same for the core's host kernels, whose buffers are the host's.
    setenv("PLEXUS_HOST_ALLOCATION_LIMIT", "1073741824", /*overwrite=*/0);
    auto created = Runtime::Create(options);
    if (!created.ok() || (*created)->plugins().size() != 2) {
      std::fprintf(stderr, "plexus fuzz: the cpu and reference plugins did not load from %s and %s\n",
                   PX_CPU_PLUGIN_PATH, PX_REFERENCE_PLUGIN_PATH);
      std::abort();
    }
    // At exit the plugin's worker threads are still alive, and
    // LeakSanitizer's final check, run from the program's destructors,
    // crashed in its thread tracer stopping them (after a clean run).
    // Leave without it: libFuzzer still checks for leaks after each input.
    std::atexit([] {
      std::fflush(nullptr);
      std::_Exit(0);
    });
    return created->release();  // lives as long as the process
  }();
  return runtime;
#else
  std::fprintf(stderr, "plexus fuzz: this target was built without the cpu plugin\n");
  std::abort();
#endif
}

void AbortOnValidationBreach(const absl::Status& status) {
  if (absl::StrContains(status.message(), "validation layer: ")) {
    std::fprintf(stderr, "plexus fuzz: a plugin broke the ABI: %s\n", std::string(status.message()).c_str());
    std::abort();
  }
}

}  // namespace fuzz
}  // namespace plexus

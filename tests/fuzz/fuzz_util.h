// Helpers the fuzz targets share: quiet logs, a private temporary folder for
// targets whose entry point reads files, a split of one input into several
// files, and one cpu-plugin runtime per process.
#ifndef PLEXUS_TESTS_FUZZ_FUZZ_UTIL_H_
#define PLEXUS_TESTS_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace plexus {
class Runtime;
namespace fuzz {

// Separates the parts of an input that stands for several files (a
// checkpoint's index and data, a batch of tf.Examples). In every dictionary.
inline constexpr absl::string_view kSplit = "PXFUZZSPLIT";

// Sets PLEXUS_LOG_LEVEL=error unless the caller set it: the fuzzers run
// millions of malformed inputs, and warnings about each would dominate.
void QuietLogs();

// A folder of this process's own under $TMPDIR (or /tmp), removed at exit.
const std::string& TempDir();

// Writes bytes to path (replacing it); aborts when the disk refuses, which is
// the harness's fault, not the input's.
void WriteFile(const std::string& path, absl::string_view bytes);

// The input's parts between kSplit markers; at least one, at most max_parts
// (the last one keeps any further markers).
std::vector<absl::string_view> SplitInput(absl::string_view input, size_t max_parts);

// A runtime with the cpu plugin (CPU:0) and the SDK's reference plugin
// (REF:0), both built with the fuzzers and run under the validation layer
// with a 1 GiB allocation budget, made once.
Runtime* FuzzRuntime();

// Aborts, so that libFuzzer keeps the input, when `status` reports a breach
// of the plugin ABI found by the validation layer: such an error is a
// plugin's bug, not a fine answer to a bad input.
void AbortOnValidationBreach(const absl::Status& status);

}  // namespace fuzz
}  // namespace plexus

#endif  // PLEXUS_TESTS_FUZZ_FUZZ_UTIL_H_

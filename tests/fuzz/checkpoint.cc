// A checkpoint bundle (TensorFlow's V2 format): the input is cut at a kSplit
// marker into PREFIX.index and PREFIX.data-00000-of-00001, opened the way a
// restore opens it, and every entry read back as a tensor and as raw bytes.
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "plexus/checkpoint.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  plexus::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string prefix = plexus::fuzz::TempDir() + "/ckpt";
  auto parts = plexus::fuzz::SplitInput(
      absl::string_view(reinterpret_cast<const char*>(data), size), 2);
  parts.resize(2);
  plexus::fuzz::WriteFile(plexus::CheckpointIndexFilename(prefix), parts[0]);
  plexus::fuzz::WriteFile(plexus::CheckpointDataFilename(prefix, 0, 1), parts[1]);
  auto reader = plexus::CheckpointReader::Open(prefix);
  if (!reader.ok()) return 0;
  for (const auto& entry : (*reader)->entries()) {
    (void)(*reader)->Read(entry.key);
    (void)(*reader)->RawEntry(entry.key);
  }
  return 0;
}

// saved_model.pb: the input is written to a folder as saved_model.pb and read
// the way SavedModelSession::Load and `plexus run` read a SavedModel (tags,
// signatures, saver, assets, init op), then its graph is imported. No
// variables: saved_model_split.cc adds the checkpoint.
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "plexus/saved_model.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  plexus::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = plexus::fuzz::TempDir();
  plexus::fuzz::WriteFile(dir + "/saved_model.pb",
                          absl::string_view(reinterpret_cast<const char*>(data), size));
  auto model = plexus::SavedModel::Read(dir);
  if (!model.ok()) return 0;
  for (const auto& [key, signature] : (*model)->signatures()) (void)(*model)->FindSignature(key);
  (void)(*model)->ImportGraph();
  return 0;
}

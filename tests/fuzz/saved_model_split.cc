// A SavedModel folder with variables: the input is cut at kSplit markers into
// saved_model.pb, variables/variables.index and
// variables/variables.data-00000-of-00001. The model is read and its graph
// imported as SavedModelSession::Load does, and every variable the
// checkpoint holds is read as a restore reads it. The init op and the graph
// are not run: a mutated While loop would legitimately run for ever (runs
// have deadlines for that), which is not what this target looks for.
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "fuzz_util.h"
#include "plexus/checkpoint.h"
#include "plexus/saved_model.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  plexus::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string dir = plexus::fuzz::TempDir() + "/model";
  std::filesystem::create_directories(dir + "/variables");
  auto parts = plexus::fuzz::SplitInput(
      absl::string_view(reinterpret_cast<const char*>(data), size), 3);
  parts.resize(3);
  plexus::fuzz::WriteFile(dir + "/saved_model.pb", parts[0]);
  plexus::fuzz::WriteFile(dir + "/variables/variables.index", parts[1]);
  plexus::fuzz::WriteFile(dir + "/variables/variables.data-00000-of-00001", parts[2]);
  auto model = plexus::SavedModel::Read(dir);
  if (!model.ok()) return 0;
  (void)(*model)->ImportGraph();
  if (!(*model)->has_variables()) return 0;
  auto reader = plexus::CheckpointReader::Open((*model)->variables_prefix());
  if (!reader.ok()) return 0;
  for (const auto& entry : (*reader)->entries()) (void)(*reader)->Read(entry.key);
  return 0;
}

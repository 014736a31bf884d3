// A .npy file as `plexus run --input x=file.npy` and ReadNpy parse it.
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "plexus/npy.h"
#include "plexus/tensor.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  plexus::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto tensor = plexus::ParseNpy(absl::string_view(reinterpret_cast<const char*>(data), size), "<fuzz>");
  if (tensor.ok()) (void)tensor->DebugString();
  return 0;
}

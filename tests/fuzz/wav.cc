// WAV decoding: DecodeWav run eagerly on the cpu plugin, as a keyword-spotting
// graph runs it on a file's contents. desired_channels and desired_samples
// come from the input's last bytes (FuzzedDataProvider takes integers from
// the end), mostly -1 (keep the file's), else small.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "plexus/eager.h"
#include "plexus/tensor.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  plexus::fuzz::QuietLogs();
  plexus::fuzz::FuzzRuntime();
  return 0;
}

namespace {
int64_t PickDesired(FuzzedDataProvider& provider) {
  const uint8_t choice = provider.ConsumeIntegral<uint8_t>();
  if (choice < 160) return -1;
  return static_cast<int64_t>(choice) - 200;  // -40 .. 55: zero and negatives included
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static plexus::EagerContext* eager = new plexus::EagerContext(plexus::fuzz::FuzzRuntime());
  FuzzedDataProvider provider(data, size);
  plexus::AttrMap attrs;
  attrs["desired_channels"].set_i(PickDesired(provider));
  attrs["desired_samples"].set_i(PickDesired(provider));
  plexus::Tensor contents =
      plexus::Tensor::FromStrings({}, {provider.ConsumeRemainingBytesAsString()});
  plexus::fuzz::AbortOnValidationBreach(eager->Execute("DecodeWav", {contents}, attrs, nullptr).status());
  return 0;
}

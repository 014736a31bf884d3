// TFRecord framing: the input is written to a file and read record by record
// with RecordReader, as the TFRecord dataset does, uncompressed, zlib or gzip
// (picked by the last byte, which FuzzedDataProvider takes first).
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "plexus/tfrecord.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  plexus::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider provider(data, size);
  static constexpr plexus::RecordCompression kCompressions[] = {
      plexus::RecordCompression::kNone, plexus::RecordCompression::kZlib,
      plexus::RecordCompression::kGzip};
  const auto compression = provider.PickValueInArray(kCompressions);
  const std::string path = plexus::fuzz::TempDir() + "/records.tfrecord";
  plexus::fuzz::WriteFile(path, provider.ConsumeRemainingBytesAsString());
  auto reader = plexus::RecordReader::Open(path, compression);
  if (!reader.ok()) return 0;
  std::string record;
  // Each record costs at least its 16 framing bytes, so the input bounds the
  // count; the cap only guards against a reader that stops advancing.
  for (int i = 0; i < 100000 && (*reader)->Next(&record).ok(); ++i) {
  }
  return 0;
}

// TFRecord files, TensorFlow's record framing, read and written with the
// CRCs verified:
//
//   uint64 length (little-endian)
//   uint32 masked CRC32C of the 8 length bytes
//   byte   data[length]
//   uint32 masked CRC32C of the data
//
// optionally inside a GZIP or ZLIB stream (the whole file compressed). A
// bad CRC, a length past the end or a truncated record is DATA_LOSS naming
// the file and the record's byte offset (in the uncompressed stream).
#ifndef PLEXUS_TFRECORD_H_
#define PLEXUS_TFRECORD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace plexus {

enum class RecordCompression { kNone, kZlib, kGzip };

// "" or "NONE", "ZLIB", "GZIP" (TensorFlow's compression_type names).
absl::StatusOr<RecordCompression> ParseRecordCompression(std::string_view name);

class RecordReader {
 public:
  static absl::StatusOr<std::unique_ptr<RecordReader>> Open(const std::string& path,
                                                            RecordCompression compression);
  virtual ~RecordReader() = default;
  // The next record into *record; OUT_OF_RANGE at the end of the file.
  virtual absl::Status Next(std::string* record) = 0;
  // The byte offset of the next record in the (uncompressed) stream.
  virtual uint64_t offset() const = 0;
};

class RecordWriter {
 public:
  static absl::StatusOr<std::unique_ptr<RecordWriter>> Open(const std::string& path,
                                                            RecordCompression compression);
  virtual ~RecordWriter() = default;
  virtual absl::Status Write(std::string_view record) = 0;
  virtual absl::Status Flush() = 0;
  // Finishes the file (the compressed stream's trailer); later writes fail.
  virtual absl::Status Close() = 0;
};

}  // namespace plexus

#endif  // PLEXUS_TFRECORD_H_

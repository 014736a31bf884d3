// TFRecord reading and writing (see plexus/tfrecord.h): a byte source (the
// file, or zlib inflating it) under the record framing; CRC32C from
// persist/checkpoint/crc32c.h (ISA-L).
#include "plexus/tfrecord.h"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "persist/checkpoint/crc32c.h"

namespace plexus {
namespace {

constexpr size_t kChunk = 256 << 10;

absl::Status IoError(const std::string& path, const char* what) {
  return absl::InternalError(absl::StrCat(path, ": ", what, ": ", std::strerror(errno)));
}

// Bytes of a file, inflated when compressed. Read() returns how many bytes
// it gave (fewer only at the end of the stream).
class Source {
 public:
  Source(std::string path, FILE* file, RecordCompression c) : path_(std::move(path)), file_(file), c_(c) {}
  ~Source() {
    if (c_ != RecordCompression::kNone && inflating_) inflateEnd(&z_);
    std::fclose(file_);
  }

  absl::Status Init() {
    if (c_ == RecordCompression::kNone) return absl::OkStatus();
    std::memset(&z_, 0, sizeof(z_));
    int bits = c_ == RecordCompression::kGzip ? 15 + 16 : 15;
    if (inflateInit2(&z_, bits) != Z_OK) return absl::InternalError(absl::StrCat(path_, ": zlib init failed"));
    inflating_ = true;
    in_.resize(kChunk);
    return absl::OkStatus();
  }

  absl::StatusOr<size_t> Read(char* out, size_t n) {
    if (c_ == RecordCompression::kNone) {
      size_t got = std::fread(out, 1, n, file_);
      if (got < n && std::ferror(file_)) return IoError(path_, "read failed");
      return got;
    }
    size_t done = 0;
    while (done < n && !ended_) {
      if (z_.avail_in == 0) {
        size_t got = std::fread(in_.data(), 1, in_.size(), file_);
        if (got == 0) {
          if (std::ferror(file_)) return IoError(path_, "read failed");
          return absl::DataLossError(absl::StrCat(path_, ": the compressed stream ends early (at byte ",
                                                  compressed_offset_, " of the file)"));
        }
        compressed_offset_ += got;
        z_.next_in = reinterpret_cast<Bytef*>(in_.data());
        z_.avail_in = static_cast<uInt>(got);
      }
      z_.next_out = reinterpret_cast<Bytef*>(out + done);
      z_.avail_out = static_cast<uInt>(n - done);
      int rc = inflate(&z_, Z_NO_FLUSH);
      done = n - z_.avail_out;
      if (rc == Z_STREAM_END) {
        ended_ = true;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return absl::DataLossError(absl::StrCat(path_, ": corrupt ",
                                                c_ == RecordCompression::kGzip ? "GZIP" : "ZLIB",
                                                " data: ", z_.msg ? z_.msg : "inflate failed"));
      }
    }
    return done;
  }

 private:
  std::string path_;
  FILE* file_;
  RecordCompression c_;
  z_stream z_{};
  bool inflating_ = false;
  bool ended_ = false;
  std::vector<char> in_;
  uint64_t compressed_offset_ = 0;
};

uint64_t DecodeU64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

uint32_t DecodeU32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void EncodeU64(uint64_t v, char* p) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

void EncodeU32(uint32_t v, char* p) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

class Reader : public RecordReader {
 public:
  Reader(std::string path, std::unique_ptr<Source> source) : path_(std::move(path)), source_(std::move(source)) {}

  absl::Status Next(std::string* record) override {
    char header[12];
    absl::StatusOr<size_t> got = source_->Read(header, sizeof(header));
    if (!got.ok()) return got.status();
    if (*got == 0) return absl::OutOfRangeError(absl::StrCat(path_, ": end of file"));
    if (*got < sizeof(header)) return Truncated("its header");
    if (crc32c::Unmask(DecodeU32(header + 8)) != crc32c::Value(header, 8)) {
      return absl::DataLossError(absl::StrCat(path_, ": corrupt record at byte offset ", offset_,
                                              ": the length's CRC does not match"));
    }
    uint64_t length = DecodeU64(header);
    if (length > (uint64_t{1} << 40)) {
      return absl::DataLossError(absl::StrCat(path_, ": corrupt record at byte offset ", offset_,
                                              ": a length of ", length, " bytes"));
    }
    record->resize(length + 4);
    got = source_->Read(record->data(), length + 4);
    if (!got.ok()) return got.status();
    if (*got < length + 4) return Truncated(absl::StrCat("its ", length, " bytes of data"));
    uint32_t stored = DecodeU32(record->data() + length);
    record->resize(length);
    if (crc32c::Unmask(stored) != crc32c::Value(record->data(), length)) {
      return absl::DataLossError(absl::StrCat(path_, ": corrupt record at byte offset ", offset_,
                                              ": the data's CRC does not match"));
    }
    offset_ += 12 + length + 4;
    return absl::OkStatus();
  }

  uint64_t offset() const override { return offset_; }

 private:
  absl::Status Truncated(const std::string& what) const {
    return absl::DataLossError(absl::StrCat(path_, ": truncated record at byte offset ", offset_,
                                            ": the file ends inside ", what));
  }

  std::string path_;
  std::unique_ptr<Source> source_;
  uint64_t offset_ = 0;
};

class Writer : public RecordWriter {
 public:
  Writer(std::string path, FILE* file, RecordCompression c) : path_(std::move(path)), file_(file), c_(c) {}
  ~Writer() override { (void)Close(); }

  absl::Status Init() {
    if (c_ == RecordCompression::kNone) return absl::OkStatus();
    std::memset(&z_, 0, sizeof(z_));
    int bits = c_ == RecordCompression::kGzip ? 15 + 16 : 15;
    if (deflateInit2(&z_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      return absl::InternalError(absl::StrCat(path_, ": zlib init failed"));
    }
    deflating_ = true;
    out_.resize(kChunk);
    return absl::OkStatus();
  }

  absl::Status Write(std::string_view record) override {
    if (file_ == nullptr) return absl::FailedPreconditionError(absl::StrCat(path_, ": the writer is closed"));
    char header[12];
    EncodeU64(record.size(), header);
    EncodeU32(crc32c::Mask(crc32c::Value(header, 8)), header + 8);
    char footer[4];
    EncodeU32(crc32c::Mask(crc32c::Value(record.data(), record.size())), footer);
    for (std::string_view part : {std::string_view(header, 12), record, std::string_view(footer, 4)}) {
      absl::Status s = Put(part.data(), part.size(), Z_NO_FLUSH);
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

  absl::Status Flush() override {
    if (file_ == nullptr) return absl::OkStatus();
    if (deflating_) {
      absl::Status s = Put(nullptr, 0, Z_SYNC_FLUSH);
      if (!s.ok()) return s;
    }
    if (std::fflush(file_) != 0) return IoError(path_, "flush failed");
    return absl::OkStatus();
  }

  absl::Status Close() override {
    if (file_ == nullptr) return absl::OkStatus();
    absl::Status s;
    if (deflating_) {
      s = Put(nullptr, 0, Z_FINISH);
      deflateEnd(&z_);
      deflating_ = false;
    }
    if (std::fclose(file_) != 0 && s.ok()) s = IoError(path_, "close failed");
    file_ = nullptr;
    return s;
  }

 private:
  absl::Status Put(const char* data, size_t n, int flush) {
    if (!deflating_) {
      if (n > 0 && std::fwrite(data, 1, n, file_) != n) return IoError(path_, "write failed");
      return absl::OkStatus();
    }
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
    z_.avail_in = static_cast<uInt>(n);
    do {
      z_.next_out = reinterpret_cast<Bytef*>(out_.data());
      z_.avail_out = static_cast<uInt>(out_.size());
      int rc = deflate(&z_, flush);
      if (rc == Z_STREAM_ERROR) return absl::InternalError(absl::StrCat(path_, ": zlib deflate failed"));
      size_t have = out_.size() - z_.avail_out;
      if (have > 0 && std::fwrite(out_.data(), 1, have, file_) != have) return IoError(path_, "write failed");
    } while (z_.avail_out == 0 || (flush == Z_FINISH && z_.avail_in > 0));
    return absl::OkStatus();
  }

  std::string path_;
  FILE* file_;
  RecordCompression c_;
  z_stream z_{};
  bool deflating_ = false;
  std::vector<char> out_;
};

}  // namespace

absl::StatusOr<RecordCompression> ParseRecordCompression(std::string_view name) {
  std::string upper = absl::AsciiStrToUpper(std::string(name));
  if (upper.empty() || upper == "NONE") return RecordCompression::kNone;
  if (upper == "ZLIB") return RecordCompression::kZlib;
  if (upper == "GZIP") return RecordCompression::kGzip;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown compression type '", std::string(name), "': use \"\", \"ZLIB\" or \"GZIP\""));
}

absl::StatusOr<std::unique_ptr<RecordReader>> RecordReader::Open(const std::string& path,
                                                                  RecordCompression compression) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    return IoError(path, "cannot open");
  }
  auto source = std::make_unique<Source>(path, f, compression);
  absl::Status s = source->Init();
  if (!s.ok()) return s;
  return std::unique_ptr<RecordReader>(new Reader(path, std::move(source)));
}

absl::StatusOr<std::unique_ptr<RecordWriter>> RecordWriter::Open(const std::string& path,
                                                                  RecordCompression compression) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return IoError(path, "cannot create");
  auto writer = std::make_unique<Writer>(path, f, compression);
  absl::Status s = writer->Init();
  if (!s.ok()) return s;
  return std::unique_ptr<RecordWriter>(std::move(writer));
}

}  // namespace plexus

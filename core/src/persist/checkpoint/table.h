// LevelDB-format sorted tables (SSTables), the format of a TensorFlow V2
// checkpoint's .index file. Layout: data blocks, a metaindex block and an
// index block, each followed by a 5-byte trailer (compression type, masked
// CRC32C), then a 48-byte footer (two block handles and a magic number).
// Inside a block, keys are prefix-compressed against the previous key, with
// uncompressed "restart points" listed at the block's end.
//
// The reader treats its input as untrusted: every handle, length and count
// is checked against the bytes that are there, every block's CRC is
// verified, and errors name the file.
#ifndef PLEXUS_CORE_SRC_CHECKPOINT_TABLE_H_
#define PLEXUS_CORE_SRC_CHECKPOINT_TABLE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace plexus {
namespace table {

inline constexpr uint64_t kTableMagicNumber = 0xdb4775248b80fb57ull;
inline constexpr size_t kFooterSize = 48;
inline constexpr size_t kBlockTrailerSize = 5;

enum CompressionType : uint8_t {
  kNoCompression = 0,
  kSnappyCompression = 1,
};

using Entries = std::vector<std::pair<std::string, std::string>>;

// Reads every (key, value) pair of the table whose whole file content is
// `contents`, in key order. `file` names the table in errors. Keys must be
// strictly increasing (a corrupt table fails).
absl::Status ReadTable(absl::string_view contents, absl::string_view file, Entries* entries);

struct BuilderOptions {
  // Compress blocks with Snappy when that saves at least 1/8 (LevelDB's
  // rule). TensorFlow writes uncompressed checkpoint indexes.
  bool snappy = false;
  size_t block_size = 256 * 1024;
  int restart_interval = 16;
};

// Builds a table in memory. Keys must be added in strictly increasing order.
class TableBuilder {
 public:
  explicit TableBuilder(BuilderOptions options = {});
  absl::Status Add(absl::string_view key, absl::string_view value);
  // The complete file content. The builder is spent afterwards.
  std::string Finish();

 private:
  class BlockBuilder {
   public:
    explicit BlockBuilder(int restart_interval) : restart_interval_(restart_interval) { Reset(); }
    void Reset();
    void Add(absl::string_view key, absl::string_view value);
    std::string Finish();
    size_t EstimatedSize() const { return buffer_.size() + restarts_.size() * 4 + 4; }
    bool empty() const { return entries_ == 0; }

   private:
    int restart_interval_;
    std::string buffer_;
    std::vector<uint32_t> restarts_;
    int counter_ = 0;
    int entries_ = 0;
    std::string last_key_;
  };

  // Appends a block with its trailer; returns its handle's encoding.
  std::string WriteBlock(const std::string& raw, bool allow_compression);
  void FlushDataBlock();

  BuilderOptions options_;
  std::string out_;
  BlockBuilder data_block_;
  BlockBuilder index_block_;
  std::string last_key_;
  bool has_key_ = false;
};

}  // namespace table
}  // namespace plexus

#endif  // PLEXUS_CORE_SRC_CHECKPOINT_TABLE_H_

#include "persist/checkpoint/table.h"

#include <snappy.h>

#include "absl/strings/str_cat.h"
#include "persist/checkpoint/coding.h"
#include "persist/checkpoint/crc32c.h"

namespace plexus {
namespace table {
namespace {

// Decompressed blocks larger than this are refused (a tensor bundle index
// holds one small proto per tensor; real blocks are well under 1 MiB).
constexpr size_t kMaxBlockBytes = size_t{1} << 30;

struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;
};

absl::Status Corrupt(absl::string_view file, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("checkpoint index '", file, "' is corrupt: ", what));
}

bool DecodeHandle(const char** p, const char* limit, BlockHandle* handle) {
  return coding::GetVarint64(p, limit, &handle->offset) &&
         coding::GetVarint64(p, limit, &handle->size);
}

void EncodeHandle(std::string* out, uint64_t offset, uint64_t size) {
  coding::PutVarint64(out, offset);
  coding::PutVarint64(out, size);
}

// Reads the block at `handle`: bounds, CRC and decompression.
absl::Status ReadBlock(absl::string_view contents, absl::string_view file, const BlockHandle& handle,
                       absl::string_view what, std::string* block) {
  // Blocks lie before the footer.
  const uint64_t limit = contents.size() - kFooterSize;
  if (handle.offset > limit || handle.size > limit - handle.offset ||
      kBlockTrailerSize > limit - handle.offset - handle.size) {
    return Corrupt(file, absl::StrCat(what, " block handle (offset ", handle.offset, ", size ",
                                      handle.size, ") lies outside the file's ", contents.size(),
                                      " bytes"));
  }
  const char* data = contents.data() + handle.offset;
  const size_t n = static_cast<size_t>(handle.size);
  const unsigned char type = static_cast<unsigned char>(data[n]);
  const uint32_t stored = crc32c::Unmask(coding::DecodeFixed32(data + n + 1));
  // The CRC covers the block contents and the type byte.
  const uint32_t actual = crc32c::Extend(crc32c::Value(data, n), data + n, 1);
  if (stored != actual) {
    return Corrupt(file, absl::StrCat(what, " block at offset ", handle.offset,
                                      " fails its CRC32C check"));
  }
  switch (type) {
    case kNoCompression:
      block->assign(data, n);
      return absl::OkStatus();
    case kSnappyCompression: {
      size_t length = 0;
      if (!snappy::GetUncompressedLength(data, n, &length)) {
        return Corrupt(file, absl::StrCat(what, " block at offset ", handle.offset,
                                          " has a bad Snappy header"));
      }
      if (length > kMaxBlockBytes) {
        return Corrupt(file, absl::StrCat(what, " block at offset ", handle.offset,
                                          " would decompress to ", length, " bytes"));
      }
      block->resize(length);
      if (!snappy::RawUncompress(data, n, block->data())) {
        return Corrupt(file, absl::StrCat(what, " block at offset ", handle.offset,
                                          " is not valid Snappy data"));
      }
      return absl::OkStatus();
    }
    default:
      return Corrupt(file, absl::StrCat(what, " block at offset ", handle.offset,
                                        " has unknown compression type ", static_cast<int>(type)));
  }
}

// Decodes every entry of a block, appending to `entries`.
absl::Status ParseBlock(const std::string& block, absl::string_view file, absl::string_view what,
                        Entries* entries) {
  if (block.size() < 4) return Corrupt(file, absl::StrCat(what, " block is shorter than 4 bytes"));
  const uint32_t num_restarts = coding::DecodeFixed32(block.data() + block.size() - 4);
  const size_t max_restarts = (block.size() - 4) / 4;
  if (num_restarts > max_restarts) {
    return Corrupt(file, absl::StrCat(what, " block claims ", num_restarts,
                                      " restart points but has room for ", max_restarts));
  }
  const size_t restarts_offset = block.size() - 4 - size_t{num_restarts} * 4;
  for (uint32_t i = 0; i < num_restarts; ++i) {
    uint32_t r = coding::DecodeFixed32(block.data() + restarts_offset + 4 * size_t{i});
    if (r > restarts_offset || (r == restarts_offset && restarts_offset != 0)) {
      return Corrupt(file, absl::StrCat(what, " block has restart point ", r,
                                        " outside its ", restarts_offset, " bytes of entries"));
    }
  }
  if (restarts_offset > 0 && num_restarts == 0) {
    return Corrupt(file, absl::StrCat(what, " block has entries but no restart points"));
  }
  const char* p = block.data();
  const char* limit = block.data() + restarts_offset;
  std::string key;
  bool first = true;
  while (p < limit) {
    uint32_t shared, non_shared, value_length;
    if (!coding::GetVarint32(&p, limit, &shared) || !coding::GetVarint32(&p, limit, &non_shared) ||
        !coding::GetVarint32(&p, limit, &value_length)) {
      return Corrupt(file, absl::StrCat(what, " block has a truncated entry header"));
    }
    if (shared > key.size() || (first && shared != 0)) {
      return Corrupt(file, absl::StrCat(what, " block entry shares ", shared,
                                        " bytes with a previous key of ", key.size()));
    }
    const size_t left = static_cast<size_t>(limit - p);
    if (non_shared > left || value_length > left - non_shared) {
      return Corrupt(file, absl::StrCat(what, " block entry runs past the block's end"));
    }
    key.resize(shared);
    key.append(p, non_shared);
    p += non_shared;
    entries->emplace_back(key, std::string(p, value_length));
    p += value_length;
    first = false;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadTable(absl::string_view contents, absl::string_view file, Entries* entries) {
  entries->clear();
  if (contents.size() < kFooterSize) {
    return Corrupt(file, absl::StrCat("file has ", contents.size(),
                                      " bytes, less than a table footer's ", kFooterSize));
  }
  const char* footer = contents.data() + contents.size() - kFooterSize;
  if (coding::DecodeFixed64(footer + kFooterSize - 8) != kTableMagicNumber) {
    return Corrupt(file, "bad magic number (not a LevelDB-format table)");
  }
  const char* p = footer;
  const char* handles_end = footer + kFooterSize - 8;
  BlockHandle metaindex, index;
  if (!DecodeHandle(&p, handles_end, &metaindex) || !DecodeHandle(&p, handles_end, &index)) {
    return Corrupt(file, "footer block handles cannot be decoded");
  }
  std::string index_block;
  absl::Status s = ReadBlock(contents, file, index, "index", &index_block);
  if (!s.ok()) return s;
  Entries index_entries;
  s = ParseBlock(index_block, file, "index", &index_entries);
  if (!s.ok()) return s;
  std::string block;
  for (const auto& [separator, handle_bytes] : index_entries) {
    BlockHandle handle;
    const char* hp = handle_bytes.data();
    const char* hend = hp + handle_bytes.size();
    if (!DecodeHandle(&hp, hend, &handle)) {
      return Corrupt(file, absl::StrCat("index entry '", separator, "' holds no valid block handle"));
    }
    s = ReadBlock(contents, file, handle, "data", &block);
    if (!s.ok()) return s;
    const size_t before = entries->size();
    s = ParseBlock(block, file, "data", entries);
    if (!s.ok()) return s;
    for (size_t i = before; i < entries->size(); ++i) {
      if (i > 0 && !((*entries)[i - 1].first < (*entries)[i].first)) {
        return Corrupt(file, absl::StrCat("keys are not in increasing order at '",
                                          (*entries)[i].first, "'"));
      }
    }
  }
  return absl::OkStatus();
}

void TableBuilder::BlockBuilder::Reset() {
  buffer_.clear();
  restarts_.assign(1, 0);
  counter_ = 0;
  entries_ = 0;
  last_key_.clear();
}

void TableBuilder::BlockBuilder::Add(absl::string_view key, absl::string_view value) {
  size_t shared = 0;
  if (counter_ < restart_interval_) {
    const size_t min_length = std::min(last_key_.size(), key.size());
    while (shared < min_length && last_key_[shared] == key[shared]) ++shared;
  } else {
    restarts_.push_back(static_cast<uint32_t>(buffer_.size()));
    counter_ = 0;
  }
  coding::PutVarint32(&buffer_, static_cast<uint32_t>(shared));
  coding::PutVarint32(&buffer_, static_cast<uint32_t>(key.size() - shared));
  coding::PutVarint32(&buffer_, static_cast<uint32_t>(value.size()));
  buffer_.append(key.data() + shared, key.size() - shared);
  buffer_.append(value.data(), value.size());
  last_key_.assign(key.data(), key.size());
  ++counter_;
  ++entries_;
}

std::string TableBuilder::BlockBuilder::Finish() {
  std::string out = std::move(buffer_);
  for (uint32_t r : restarts_) coding::PutFixed32(&out, r);
  coding::PutFixed32(&out, static_cast<uint32_t>(restarts_.size()));
  Reset();
  return out;
}

TableBuilder::TableBuilder(BuilderOptions options)
    : options_(options),
      data_block_(options.restart_interval),
      index_block_(1) {}

absl::Status TableBuilder::Add(absl::string_view key, absl::string_view value) {
  if (has_key_ && !(last_key_ < key)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "table keys must be added in increasing order: '", key, "' after '", last_key_, "'"));
  }
  data_block_.Add(key, value);
  last_key_.assign(key.data(), key.size());
  has_key_ = true;
  if (data_block_.EstimatedSize() >= options_.block_size) FlushDataBlock();
  return absl::OkStatus();
}

std::string TableBuilder::WriteBlock(const std::string& raw, bool allow_compression) {
  std::string compressed;
  const std::string* contents = &raw;
  char type = kNoCompression;
  if (allow_compression && options_.snappy) {
    snappy::Compress(raw.data(), raw.size(), &compressed);
    if (compressed.size() < raw.size() - raw.size() / 8) {
      contents = &compressed;
      type = kSnappyCompression;
    }
  }
  std::string handle;
  EncodeHandle(&handle, out_.size(), contents->size());
  out_.append(*contents);
  const uint32_t crc = crc32c::Extend(crc32c::Value(contents->data(), contents->size()), &type, 1);
  out_.push_back(type);
  coding::PutFixed32(&out_, crc32c::Mask(crc));
  return handle;
}

void TableBuilder::FlushDataBlock() {
  if (data_block_.empty()) return;
  std::string handle = WriteBlock(data_block_.Finish(), /*allow_compression=*/true);
  // The last key of the block separates it from the next one.
  index_block_.Add(last_key_, handle);
}

std::string TableBuilder::Finish() {
  FlushDataBlock();
  BlockBuilder metaindex(options_.restart_interval);
  std::string metaindex_handle = WriteBlock(metaindex.Finish(), /*allow_compression=*/false);
  std::string index_handle = WriteBlock(index_block_.Finish(), /*allow_compression=*/false);
  std::string footer = metaindex_handle + index_handle;
  footer.resize(kFooterSize - 8, '\0');
  coding::PutFixed64(&footer, kTableMagicNumber);
  out_.append(footer);
  return std::move(out_);
}

}  // namespace table
}  // namespace plexus

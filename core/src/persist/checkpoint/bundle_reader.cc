// Tensor bundles (TensorFlow V2 checkpoints): CheckpointReader, which reads
// the index and the tensors of a checkpoint.
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "persist/checkpoint/bundle_files.h"
#include "persist/checkpoint/coding.h"
#include "persist/checkpoint/crc32c.h"
#include "persist/checkpoint/table.h"
#include "plexus/checkpoint.h"
#include "plexus/status.h"
#include "tensor_bundle.pb.h"

namespace plexus {
namespace {

using bundle::Fd;
using bundle::kBundleVersion;
using bundle::kMaxShards;
using bundle::OpenForRead;
using bundle::PreadAll;

constexpr size_t kMaxIndexBytes = size_t{1} << 30;

absl::Status DecodeShape(const tf::TensorShapeProto& proto, Shape* shape) {
  if (proto.unknown_rank()) return absl::DataLossError("the stored shape has unknown rank");
  shape->clear();
  for (const auto& d : proto.dim()) {
    if (d.size() < 0) return absl::DataLossError(absl::StrCat("the stored shape has dimension ", d.size()));
    shape->push_back(d.size());
  }
  return absl::OkStatus();
}

// Decodes TensorFlow's string tensor layout: a varint64 length per element,
// a masked CRC32C of the lengths (each as little-endian uint32, or uint64
// when it does not fit), then the bytes. Returns the CRC of everything.
absl::Status DecodeStrings(const std::string& bytes, int64_t n, std::vector<std::string>* out,
                           uint32_t* crc) {
  *crc = 0;
  out->assign(static_cast<size_t>(n), std::string());
  if (bytes.empty() && n == 0) return absl::OkStatus();
  const char* p = bytes.data();
  const char* limit = bytes.data() + bytes.size();
  std::vector<uint64_t> lengths(static_cast<size_t>(n));
  uint64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t len;
    if (!coding::GetVarint64(&p, limit, &len)) {
      return absl::DataLossError(absl::StrCat("string length ", i, " of ", n, " is truncated"));
    }
    if (len <= 0xffffffffu) {
      char le[4];
      for (int b = 0; b < 4; ++b) le[b] = static_cast<char>((len >> (8 * b)) & 0xff);
      *crc = crc32c::Extend(*crc, le, 4);
    } else {
      char le[8];
      for (int b = 0; b < 8; ++b) le[b] = static_cast<char>((len >> (8 * b)) & 0xff);
      *crc = crc32c::Extend(*crc, le, 8);
    }
    if (len > bytes.size() || total > bytes.size() - len) {
      return absl::DataLossError(absl::StrCat("string ", i, " claims ", len,
                                              " bytes, more than the stored ", bytes.size()));
    }
    total += len;
    lengths[static_cast<size_t>(i)] = len;
  }
  if (limit - p < 4) return absl::DataLossError("the string lengths' checksum is missing");
  const uint32_t length_checksum = coding::DecodeFixed32(p);
  if (crc32c::Unmask(length_checksum) != *crc) {
    return absl::DataLossError("the string lengths fail their CRC32C check");
  }
  *crc = crc32c::Extend(*crc, p, 4);
  p += 4;
  if (static_cast<uint64_t>(limit - p) != total) {
    return absl::DataLossError(absl::StrCat("the strings take ", total, " bytes but ", limit - p,
                                            " are stored"));
  }
  for (int64_t i = 0; i < n; ++i) {
    const size_t len = static_cast<size_t>(lengths[static_cast<size_t>(i)]);
    (*out)[static_cast<size_t>(i)].assign(p, len);
    *crc = crc32c::Extend(*crc, p, len);
    p += len;
  }
  return absl::OkStatus();
}

}  // namespace
// ---------------------------------------------------------------------------
// Reader

struct CheckpointReader::Impl {
  std::map<std::string, tf::BundleEntryProto, std::less<>> entries;
  std::map<std::string, size_t, std::less<>> info_index;  // key -> entries_ position
};

CheckpointReader::~CheckpointReader() = default;

absl::StatusOr<std::unique_ptr<CheckpointReader>> CheckpointReader::Open(const std::string& prefix) {
  const std::string index_path = CheckpointIndexFilename(prefix);
  Fd fd;
  uint64_t size = 0;
  absl::Status s = OpenForRead(index_path, &fd, &size);
  if (absl::IsNotFound(s)) {
    return absl::NotFoundError(absl::StrCat("checkpoint '", prefix, "' not found: ", s.message()));
  }
  if (!s.ok()) return s;
  if (size > kMaxIndexBytes) {
    return absl::DataLossError(absl::StrCat("checkpoint index '", index_path, "' has ", size,
                                            " bytes, more than the ", kMaxIndexBytes, " accepted"));
  }
  std::string contents(static_cast<size_t>(size), '\0');
  PX_RETURN_IF_ERROR(PreadAll(fd.get(), index_path, 0, contents.size(), contents.data()));
  table::Entries raw;
  PX_RETURN_IF_ERROR(table::ReadTable(contents, index_path, &raw));

  auto reader = std::unique_ptr<CheckpointReader>(new CheckpointReader());
  reader->prefix_ = prefix;
  reader->impl_ = std::make_unique<Impl>();
  auto corrupt = [&](absl::string_view what) {
    return absl::DataLossError(absl::StrCat("checkpoint index '", index_path, "': ", what));
  };
  if (raw.empty() || !raw[0].first.empty()) return corrupt("the header entry (empty key) is missing");
  tf::BundleHeaderProto header;
  if (!header.ParseFromString(raw[0].second)) return corrupt("the header entry cannot be parsed");
  if (header.num_shards() < 1 || header.num_shards() > kMaxShards) {
    return corrupt(absl::StrCat("the header gives ", header.num_shards(), " shards"));
  }
  if (header.endianness() != tf::BundleHeaderProto::LITTLE) {
    return absl::UnimplementedError(absl::StrCat(
        "checkpoint '", prefix, "' was written on a big-endian machine; only little-endian "
        "checkpoints are supported"));
  }
  if (header.version().min_consumer() > kBundleVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "checkpoint '", prefix, "' needs a reader of bundle version ", header.version().min_consumer(),
        " or newer; Plexus reads version ", kBundleVersion));
  }
  for (int bad : header.version().bad_consumers()) {
    if (bad == kBundleVersion) {
      return absl::FailedPreconditionError(absl::StrCat(
          "checkpoint '", prefix, "' disallows readers of bundle version ", kBundleVersion));
    }
  }
  reader->num_shards_ = header.num_shards();

  for (size_t i = 1; i < raw.size(); ++i) {
    const std::string& key = raw[i].first;
    tf::BundleEntryProto entry;
    if (!entry.ParseFromString(raw[i].second)) {
      return corrupt(absl::StrCat("the entry for key '", key, "' cannot be parsed"));
    }
    // Keys starting with a NUL byte are the per-slice entries of partitioned
    // tensors: kept for lookups, not listed.
    if (key[0] != '\0') {
      CheckpointEntryInfo info;
      info.key = key;
      int32_t raw_type = static_cast<int32_t>(entry.dtype());
      info.dtype = IsKnownDataType(raw_type) ? BaseType(raw_type) : DataType::kInvalid;
      s = DecodeShape(entry.shape(), &info.shape);
      if (!s.ok()) return corrupt(absl::StrCat("key '", key, "': ", s.message()));
      info.num_slices = entry.slices_size();
      reader->impl_->info_index.emplace(key, reader->entries_.size());
      reader->entries_.push_back(std::move(info));
    }
    reader->impl_->entries.emplace(key, std::move(entry));
  }
  return reader;
}

const CheckpointEntryInfo* CheckpointReader::Find(absl::string_view key) const {
  auto it = impl_->info_index.find(key);
  return it == impl_->info_index.end() ? nullptr : &entries_[it->second];
}

absl::StatusOr<std::string> CheckpointReader::RawEntry(absl::string_view key) const {
  auto it = impl_->entries.find(key);
  if (it == impl_->entries.end()) {
    return absl::NotFoundError(absl::StrCat("checkpoint '", prefix_, "' has no tensor '", key, "'"));
  }
  return it->second.SerializeAsString();
}

absl::StatusOr<Tensor> CheckpointReader::Read(absl::string_view key) const {
  auto it = impl_->entries.find(key);
  if (it == impl_->entries.end() || key.empty()) {
    std::vector<std::string> some;
    for (const CheckpointEntryInfo& e : entries_) {
      if (some.size() == 8) {
        some.push_back("...");
        break;
      }
      some.push_back(absl::StrCat("'", e.key, "'"));
    }
    return absl::NotFoundError(absl::StrCat("checkpoint '", prefix_, "' has no tensor '", key,
                                            "' (it has ", entries_.size(), ": ",
                                            absl::StrJoin(some, ", "), ")"));
  }
  const tf::BundleEntryProto& entry = it->second;
  const std::string where = absl::StrCat("tensor '", key, "' of checkpoint '", prefix_, "'");
  if (entry.slices_size() > 0) {
    return absl::UnimplementedError(absl::StrCat(
        where, " is a partitioned variable stored as ", entry.slices_size(),
        " slices; reading sliced checkpoint entries is not supported"));
  }
  const int32_t raw_type = static_cast<int32_t>(entry.dtype());
  if (!IsKnownDataType(raw_type) || raw_type >= kRefTypeOffset) {
    return absl::DataLossError(absl::StrCat(where, " has invalid dtype ", raw_type));
  }
  const DataType dtype = static_cast<DataType>(raw_type);
  if (dtype == DataType::kInvalid) return absl::DataLossError(absl::StrCat(where, " has dtype DT_INVALID"));
  const bool is_string = dtype == DataType::kString;
  if (!is_string && DataTypeSize(dtype) == 0) {
    return absl::UnimplementedError(absl::StrCat(where, " has dtype ", DataTypeName(dtype),
                                                 ", which checkpoints cannot be read as yet"));
  }
  Shape shape;
  absl::Status s = DecodeShape(entry.shape(), &shape);
  if (!s.ok()) return absl::DataLossError(absl::StrCat(where, ": ", s.message()));
  auto checked = CheckedByteSize(is_string ? DataType::kUInt8 : dtype, shape);
  if (!checked.ok()) return absl::DataLossError(absl::StrCat(where, ": ", checked.status().message()));
  if (entry.shard_id() < 0 || entry.shard_id() >= num_shards_) {
    return absl::DataLossError(absl::StrCat(where, " lies in shard ", entry.shard_id(),
                                            " but the checkpoint has ", num_shards_));
  }
  if (entry.offset() < 0 || entry.size() < 0) {
    return absl::DataLossError(absl::StrCat(where, " has offset ", entry.offset(), " and size ", entry.size()));
  }
  const int64_t n = NumElements(shape);
  if (!is_string && static_cast<uint64_t>(entry.size()) != *checked) {
    return absl::DataLossError(absl::StrCat(where, " is ", DataTypeName(dtype), " ",
                                            ShapeToString(shape), " (", *checked,
                                            " bytes) but the index gives ", entry.size(), " bytes"));
  }
  // Each string takes at least one length byte.
  if (is_string && n > entry.size()) {
    return absl::DataLossError(absl::StrCat(where, " has ", n, " strings in only ", entry.size(), " bytes"));
  }

  const std::string data_path = CheckpointDataFilename(prefix_, entry.shard_id(), num_shards_);
  Fd fd;
  uint64_t file_size = 0;
  s = OpenForRead(data_path, &fd, &file_size);
  if (!s.ok()) return Annotate(s, absl::StrCat("reading ", where));
  const uint64_t offset = static_cast<uint64_t>(entry.offset());
  const uint64_t size = static_cast<uint64_t>(entry.size());
  if (offset > file_size || size > file_size - offset) {
    return absl::DataLossError(absl::StrCat(where, " lies at bytes [", offset, ", ", offset + size,
                                            ") but '", data_path, "' has ", file_size, " bytes"));
  }
  if (is_string) {
    std::string bytes(static_cast<size_t>(size), '\0');
    PX_RETURN_IF_ERROR(PreadAll(fd.get(), data_path, offset, bytes.size(), bytes.data()));
    std::vector<std::string> values;
    uint32_t crc = 0;
    s = DecodeStrings(bytes, n, &values, &crc);
    if (!s.ok()) return absl::DataLossError(absl::StrCat(where, " in '", data_path, "': ", s.message()));
    if (size > 0 && crc32c::Unmask(entry.crc32c()) != crc) {
      return absl::DataLossError(absl::StrCat(where, " fails its CRC32C check in '", data_path, "'"));
    }
    return Tensor::FromStrings(std::move(shape), std::move(values));
  }
  PX_ASSIGN_OR_RETURN(Tensor tensor, Tensor::AllocateHost(dtype, shape));
  char* out = static_cast<char*>(tensor.raw_data());
  if (size > 0) PX_RETURN_IF_ERROR(PreadAll(fd.get(), data_path, offset, static_cast<size_t>(size), out));
  if (crc32c::Unmask(entry.crc32c()) != crc32c::Value(out, static_cast<size_t>(size))) {
    return absl::DataLossError(absl::StrCat(where, " fails its CRC32C check in '", data_path, "'"));
  }
  return tensor;
}

}  // namespace plexus

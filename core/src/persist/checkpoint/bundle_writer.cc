// Tensor bundles (TensorFlow V2 checkpoints): CheckpointWriter, which writes
// the tensors of a single-shard checkpoint and installs its index.
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "persist/checkpoint/bundle_files.h"
#include "persist/checkpoint/coding.h"
#include "persist/checkpoint/crc32c.h"
#include "plexus/checkpoint.h"
#include "plexus/status.h"
#include "tensor_bundle.pb.h"

namespace plexus {
namespace {

using bundle::BuildIndex;
using bundle::CreateForWrite;
using bundle::Fd;
using bundle::InstallCheckpoint;
using bundle::RemoveIfExists;
using bundle::SyncAndClose;
using bundle::TempName;
using bundle::WriteAll;

void EncodeStrings(const std::vector<std::string>& values, std::string* out, uint32_t* crc) {
  *crc = 0;
  for (const std::string& v : values) {
    const uint64_t len = v.size();
    coding::PutVarint64(out, len);
    std::string le;
    if (len <= 0xffffffffu) {
      coding::PutFixed32(&le, static_cast<uint32_t>(len));
    } else {
      coding::PutFixed64(&le, len);
    }
    *crc = crc32c::Extend(*crc, le.data(), le.size());
  }
  std::string checksum;
  coding::PutFixed32(&checksum, crc32c::Mask(*crc));
  out->append(checksum);
  *crc = crc32c::Extend(*crc, checksum.data(), 4);
  for (const std::string& v : values) {
    out->append(v);
    *crc = crc32c::Extend(*crc, v.data(), v.size());
  }
}

}  // namespace
// ---------------------------------------------------------------------------
// Writer

struct CheckpointWriter::Impl {
  std::string prefix;
  CheckpointWriterOptions options;
  std::string data_path;
  std::string data_temp;
  Fd data;
  uint64_t offset = 0;
  std::map<std::string, std::string> entries;  // key -> serialized BundleEntryProto
  absl::Status status;
  bool finished = false;
};

absl::StatusOr<std::unique_ptr<CheckpointWriter>> CheckpointWriter::Create(
    const std::string& prefix, CheckpointWriterOptions options) {
  if (prefix.empty()) return absl::InvalidArgumentError("checkpoint prefix is empty");
  auto writer = std::unique_ptr<CheckpointWriter>(new CheckpointWriter());
  writer->impl_ = std::make_unique<Impl>();
  Impl& impl = *writer->impl_;
  impl.prefix = prefix;
  impl.options = options;
  impl.data_path = CheckpointDataFilename(prefix, 0, 1);
  impl.data_temp = TempName(impl.data_path);
  absl::Status s = CreateForWrite(impl.data_temp, &impl.data);
  if (!s.ok()) return Annotate(s, absl::StrCat("writing checkpoint '", prefix, "'"));
  return writer;
}

CheckpointWriter::~CheckpointWriter() {
  if (impl_ && !impl_->finished) {
    impl_->data.Close();
    RemoveIfExists(impl_->data_temp).IgnoreError();
  }
}

absl::Status CheckpointWriter::Add(absl::string_view key, const Tensor& tensor) {
  Impl& impl = *impl_;
  if (!impl.status.ok()) return impl.status;
  if (impl.finished) return absl::FailedPreconditionError("checkpoint writer already finished");
  const std::string where = absl::StrCat("tensor '", key, "' of checkpoint '", impl.prefix, "'");
  if (key.empty()) return absl::InvalidArgumentError("checkpoint keys must not be empty");
  if (impl.entries.count(std::string(key))) {
    return absl::InvalidArgumentError(absl::StrCat(where, " is added twice"));
  }
  if (!tensor.valid()) return absl::InvalidArgumentError(absl::StrCat(where, " is an empty tensor"));
  if (!tensor.host_readable()) {
    return absl::InvalidArgumentError(absl::StrCat(where, " is not in host memory"));
  }
  const DataType dtype = tensor.dtype();
  std::string encoded;
  const char* bytes = nullptr;
  size_t size = 0;
  uint32_t crc = 0;
  if (dtype == DataType::kString) {
    EncodeStrings(tensor.strings(), &encoded, &crc);
    bytes = encoded.data();
    size = encoded.size();
  } else if (DataTypeSize(dtype) > 0 && !tensor.is_ref() && dtype != DataType::kResource) {
    bytes = static_cast<const char*>(tensor.raw_data());
    size = tensor.nbytes();
    crc = crc32c::Value(bytes, size);
  } else {
    return absl::UnimplementedError(absl::StrCat(where, " has dtype ", DataTypeName(dtype),
                                                 ", which checkpoints cannot hold"));
  }
  tf::BundleEntryProto entry;
  entry.set_dtype(static_cast<tf::DataType>(dtype));
  for (int64_t d : tensor.shape()) entry.mutable_shape()->add_dim()->set_size(d);
  entry.set_shard_id(0);
  entry.set_offset(static_cast<int64_t>(impl.offset));
  entry.set_size(static_cast<int64_t>(size));
  entry.set_crc32c(crc32c::Mask(crc));
  impl.status = WriteAll(impl.data.get(), impl.data_temp, bytes, size);
  if (!impl.status.ok()) return impl.status;
  impl.offset += size;
  impl.entries.emplace(std::string(key), entry.SerializeAsString());
  return absl::OkStatus();
}

absl::Status CheckpointWriter::Finish() {
  Impl& impl = *impl_;
  if (!impl.status.ok()) return impl.status;
  if (impl.finished) return absl::FailedPreconditionError("checkpoint writer already finished");
  impl.status = SyncAndClose(&impl.data, impl.data_temp);
  if (impl.status.ok()) {
    impl.status = InstallCheckpoint(impl.prefix, BuildIndex(1, impl.entries, impl.options.compress_index),
                                    {{impl.data_temp, impl.data_path}});
  }
  if (!impl.status.ok()) {
    impl.status = Annotate(impl.status, absl::StrCat("writing checkpoint '", impl.prefix, "'"));
    return impl.status;
  }
  impl.finished = true;
  return absl::OkStatus();
}

}  // namespace plexus

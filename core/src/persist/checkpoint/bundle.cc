// Tensor bundles (TensorFlow V2 checkpoints): the file helpers the reader
// (bundle_reader.cc) and the writer (bundle_writer.cc) share, index
// installation, file names and merging.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <map>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "persist/checkpoint/bundle_files.h"
#include "persist/checkpoint/table.h"
#include "plexus/checkpoint.h"
#include "plexus/status.h"
#include "tensor_bundle.pb.h"

namespace plexus {
namespace bundle {

absl::Status OpenForRead(const std::string& path, Fd* fd, uint64_t* size) {
  int raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (raw < 0) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrCat("cannot open '", path, "': no such file"));
    return absl::UnavailableError(absl::StrCat("cannot open '", path, "': ", ErrnoText()));
  }
  fd->Reset(raw);
  struct stat st;
  if (::fstat(raw, &st) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot stat '", path, "': ", ErrnoText()));
  }
  if (!S_ISREG(st.st_mode)) return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not a regular file"));
  *size = static_cast<uint64_t>(st.st_size);
  return absl::OkStatus();
}

absl::Status PreadAll(int fd, const std::string& path, uint64_t offset, size_t size, char* out) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd, out + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat("cannot read '", path, "': ", ErrnoText()));
    }
    if (n == 0) {
      return absl::DataLossError(absl::StrCat("'", path, "' ended early at byte ", offset + done));
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status WriteAll(int fd, const std::string& path, const char* data, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat("cannot write '", path, "': ", ErrnoText()));
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

// A name beside `final_path` for writing before the rename.
std::string TempName(const std::string& final_path) {
  static std::atomic<uint64_t> counter{0};
  std::random_device device;
  uint64_t r = (static_cast<uint64_t>(device()) << 32) ^ device() ^
               static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
               (counter.fetch_add(1) * 0x9e3779b97f4a7c15ull);
  return absl::StrCat(final_path, ".tempstate", absl::Hex(r, absl::kZeroPad16), ".", ::getpid());
}

absl::Status CreateForWrite(const std::string& path, Fd* fd) {
  std::error_code ec;
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  int raw = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (raw < 0) return absl::UnavailableError(absl::StrCat("cannot create '", path, "': ", ErrnoText()));
  fd->Reset(raw);
  return absl::OkStatus();
}

absl::Status SyncAndClose(Fd* fd, const std::string& path) {
  if (::fsync(fd->get()) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot sync '", path, "': ", ErrnoText()));
  }
  if (fd->Close() != 0) return absl::UnavailableError(absl::StrCat("cannot close '", path, "': ", ErrnoText()));
  return absl::OkStatus();
}

absl::Status RemoveIfExists(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return absl::UnavailableError(absl::StrCat("cannot remove '", path, "': ", ErrnoText()));
  }
  return absl::OkStatus();
}

}  // namespace bundle

namespace {

using bundle::CreateForWrite;
using bundle::ErrnoText;
using bundle::Fd;
using bundle::kMaxShards;
using bundle::RemoveIfExists;
using bundle::SyncAndClose;
using bundle::WriteAll;

absl::Status WriteFileSynced(const std::string& path, const std::string& contents) {
  Fd fd;
  PX_RETURN_IF_ERROR(CreateForWrite(path, &fd));
  PX_RETURN_IF_ERROR(WriteAll(fd.get(), path, contents.data(), contents.size()));
  return SyncAndClose(&fd, path);
}

absl::Status Rename(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot rename '", from, "' to '", to, "': ", ErrnoText()));
  }
  return absl::OkStatus();
}

// Makes the renames in the directory of `path` durable (best effort).
void SyncDirectoryOf(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) parent = ".";
  int fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

namespace bundle {

// Builds an index table: the header under "" followed by the entries (whose
// std::map order is the table's bytewise key order).
std::string BuildIndex(int num_shards, const std::map<std::string, std::string>& entries,
                       bool snappy) {
  tf::BundleHeaderProto header;
  header.set_num_shards(num_shards);
  header.set_endianness(tf::BundleHeaderProto::LITTLE);
  header.mutable_version()->set_producer(kBundleVersion);
  table::BuilderOptions options;
  options.snappy = snappy;
  table::TableBuilder builder(options);
  // Keys are unique, non-empty and sorted, so Add cannot fail.
  builder.Add("", header.SerializeAsString()).IgnoreError();
  for (const auto& [key, value] : entries) builder.Add(key, value).IgnoreError();
  return builder.Finish();
}

// Puts `index` in place as PREFIX.index after renaming the data files: the
// old index goes first, the new one last, so the index never describes data
// files that are not (yet or any more) there.
absl::Status InstallCheckpoint(const std::string& prefix, const std::string& index,
                               const std::vector<std::pair<std::string, std::string>>& data_renames) {
  const std::string index_path = CheckpointIndexFilename(prefix);
  const std::string index_temp = TempName(index_path);
  absl::Status s = WriteFileSynced(index_temp, index);
  if (s.ok()) s = RemoveIfExists(index_path);
  for (size_t i = 0; s.ok() && i < data_renames.size(); ++i) {
    s = Rename(data_renames[i].first, data_renames[i].second);
  }
  if (s.ok()) s = Rename(index_temp, index_path);
  if (!s.ok()) {
    RemoveIfExists(index_temp).IgnoreError();
    return s;
  }
  SyncDirectoryOf(index_path);
  return absl::OkStatus();
}

}  // namespace bundle

using bundle::BuildIndex;
using bundle::InstallCheckpoint;

std::string CheckpointIndexFilename(absl::string_view prefix) { return absl::StrCat(prefix, ".index"); }

std::string CheckpointDataFilename(absl::string_view prefix, int shard, int num_shards) {
  return absl::StrFormat("%s.data-%05d-of-%05d", prefix, shard, num_shards);
}

bool CheckpointExists(absl::string_view prefix) {
  struct stat st;
  return ::stat(CheckpointIndexFilename(prefix).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// ---------------------------------------------------------------------------
// Merging

absl::Status MergeCheckpoints(const std::vector<std::string>& prefixes, const std::string& destination,
                              bool delete_old_dirs, bool allow_missing_files) {
  std::map<std::string, std::string> merged;
  std::vector<std::pair<std::string, std::string>> renames;
  std::vector<std::string> merged_prefixes;
  int total_shards = 0;
  std::vector<std::unique_ptr<CheckpointReader>> readers;
  for (const std::string& prefix : prefixes) {
    if (!CheckpointExists(prefix)) {
      if (allow_missing_files) continue;
      return absl::NotFoundError(absl::StrCat("merging checkpoints: '", CheckpointIndexFilename(prefix),
                                              "' does not exist"));
    }
    PX_ASSIGN_OR_RETURN(auto reader, CheckpointReader::Open(prefix));
    total_shards += reader->num_shards();
    if (total_shards > kMaxShards) return absl::InvalidArgumentError("merging checkpoints: too many shards");
    readers.push_back(std::move(reader));
    merged_prefixes.push_back(prefix);
  }
  if (readers.empty()) {
    return absl::NotFoundError(absl::StrCat("merging checkpoints into '", destination,
                                            "': none of the ", prefixes.size(), " source checkpoints exists"));
  }
  int shard_base = 0;
  for (const auto& reader : readers) {
    std::vector<std::string> keys;
    for (const CheckpointEntryInfo& e : reader->entries()) keys.push_back(e.key);
    for (const std::string& key : keys) {
      PX_ASSIGN_OR_RETURN(std::string raw, reader->RawEntry(key));
      tf::BundleEntryProto entry;
      entry.ParseFromString(raw);
      if (entry.slices_size() > 0) {
        return absl::UnimplementedError(absl::StrCat("merging checkpoints: tensor '", key, "' of '",
                                                     reader->prefix(), "' is sliced; not supported"));
      }
      entry.set_shard_id(entry.shard_id() + shard_base);
      if (!merged.emplace(key, entry.SerializeAsString()).second) {
        return absl::InvalidArgumentError(absl::StrCat("merging checkpoints: tensor '", key,
                                                       "' appears in more than one source"));
      }
    }
    for (int i = 0; i < reader->num_shards(); ++i) {
      renames.emplace_back(CheckpointDataFilename(reader->prefix(), i, reader->num_shards()),
                           CheckpointDataFilename(destination, shard_base + i, total_shards));
    }
    shard_base += reader->num_shards();
  }
  std::error_code ec;
  std::filesystem::path parent = std::filesystem::path(destination).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  absl::Status s = InstallCheckpoint(destination, BuildIndex(total_shards, merged, false), renames);
  if (!s.ok()) return Annotate(s, absl::StrCat("merging checkpoints into '", destination, "'"));
  for (const std::string& prefix : merged_prefixes) {
    if (prefix == destination) continue;
    RemoveIfExists(CheckpointIndexFilename(prefix)).IgnoreError();
    if (delete_old_dirs) {
      std::filesystem::path dir = std::filesystem::path(prefix).parent_path();
      // Removes the directory only when it is empty.
      if (!dir.empty()) std::filesystem::remove(dir, ec);
    }
  }
  return absl::OkStatus();
}

}  // namespace plexus

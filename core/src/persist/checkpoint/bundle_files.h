// File helpers and format constants shared by the tensor-bundle sources:
// bundle.cc (file names, index installation, merging), bundle_reader.cc
// (CheckpointReader) and bundle_writer.cc (CheckpointWriter). Internal to
// the checkpoint code.
#ifndef PLEXUS_CORE_SRC_PERSIST_CHECKPOINT_BUNDLE_FILES_H_
#define PLEXUS_CORE_SRC_PERSIST_CHECKPOINT_BUNDLE_FILES_H_

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace plexus {
namespace bundle {

// The bundle format version this code writes and the newest it reads
// (TensorFlow's kTensorBundleVersion).
inline constexpr int kBundleVersion = 1;
inline constexpr int kMaxShards = 1 << 20;

inline std::string ErrnoText() { return std::strerror(errno); }

// A file descriptor closed on scope exit.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { Close(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int Close() {
    int rc = 0;
    if (fd_ >= 0) rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }
  void Reset(int fd) {
    Close();
    fd_ = fd;
  }

 private:
  int fd_;
};

// Opens `path` for reading and gives its size; NotFound when it does not
// exist.
absl::Status OpenForRead(const std::string& path, Fd* fd, uint64_t* size);
// Reads exactly `size` bytes at `offset`.
absl::Status PreadAll(int fd, const std::string& path, uint64_t offset, size_t size, char* out);
absl::Status WriteAll(int fd, const std::string& path, const char* data, size_t size);
// A name beside `final_path` for writing before the rename.
std::string TempName(const std::string& final_path);
// Creates (truncates) `path`, and its parent directories.
absl::Status CreateForWrite(const std::string& path, Fd* fd);
absl::Status SyncAndClose(Fd* fd, const std::string& path);
absl::Status RemoveIfExists(const std::string& path);
// Builds an index table: the header under "" followed by the entries (whose
// std::map order is the table's bytewise key order).
std::string BuildIndex(int num_shards, const std::map<std::string, std::string>& entries,
                       bool snappy);
// Puts `index` in place as PREFIX.index after renaming the data files: the
// old index goes first, the new one last, so the index never describes data
// files that are not (yet or any more) there.
absl::Status InstallCheckpoint(const std::string& prefix, const std::string& index,
                               const std::vector<std::pair<std::string, std::string>>& data_renames);

}  // namespace bundle
}  // namespace plexus

#endif  // PLEXUS_CORE_SRC_PERSIST_CHECKPOINT_BUNDLE_FILES_H_

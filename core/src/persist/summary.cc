// TensorBoard event files: see plexus/summary.h.
#include "plexus/summary.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <type_traits>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "persist/checkpoint/crc32c.h"
#include "event.pb.h"
#include "plexus/sdk/float16.h"
#include "plexus/status.h"
#include "summary.pb.h"

namespace plexus {
namespace {

constexpr char kFileVersion[] = "brain.Event:2";

double WallTime() {
  using namespace std::chrono;
  return duration_cast<duration<double>>(system_clock::now().time_since_epoch()).count();
}

std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

void PutFixed32(std::string* out, uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  out->append(b, 4);
}

void PutFixed64(std::string* out, uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  out->append(b, 8);
}

std::vector<double> MakeDefaultBucketLimits() {
  // The same arithmetic as TensorFlow's InitDefaultBucketsInner, so the
  // limits are bit for bit TensorFlow's.
  std::vector<double> buckets;
  std::vector<double> neg_buckets;
  double v = 1.0e-12;
  while (v < 1.0e20) {
    buckets.push_back(v);
    neg_buckets.push_back(-v);
    v *= 1.1;
  }
  buckets.push_back(DBL_MAX);
  neg_buckets.push_back(-DBL_MAX);
  std::reverse(neg_buckets.begin(), neg_buckets.end());
  std::vector<double> result(neg_buckets.begin(), neg_buckets.end());
  result.push_back(0.0);
  result.insert(result.end(), buckets.begin(), buckets.end());
  return result;
}

// Accumulates values like TensorFlow's histogram::Histogram.
class Accumulator {
 public:
  Accumulator()
      : limits_(DefaultHistogramBucketLimits()),
        counts_(limits_.size(), 0.0),
        min_(limits_.back()),
        max_(-DBL_MAX) {}

  void Add(double value) {
    size_t b = std::upper_bound(limits_.begin(), limits_.end(), value) - limits_.begin();
    if (b >= counts_.size()) b = counts_.size() - 1;  // value == DBL_MAX
    counts_[b] += 1.0;
    if (min_ > value) min_ = value;
    if (max_ < value) max_ = value;
    num_ += 1.0;
    sum_ += value;
    sum_squares_ += value * value;
  }

  // Histogram::EncodeToProto(proto, /*preserve_zero_buckets=*/false).
  HistogramSummary Encode() const {
    HistogramSummary h;
    h.min = min_;
    h.max = max_;
    h.num = num_;
    h.sum = sum_;
    h.sum_squares = sum_squares_;
    for (size_t i = 0; i < counts_.size();) {
      double end = limits_[i];
      double count = counts_[i];
      ++i;
      if (count <= 0.0) {
        // Collapse the run of empty buckets into one.
        while (i < counts_.size() && counts_[i] <= 0.0) {
          end = limits_[i];
          count = counts_[i];
          ++i;
        }
      }
      h.bucket_limit.push_back(end);
      h.bucket.push_back(count);
    }
    if (h.bucket.empty()) {
      h.bucket_limit.push_back(DBL_MAX);
      h.bucket.push_back(0.0);
    }
    return h;
  }

 private:
  const std::vector<double>& limits_;
  std::vector<double> counts_;
  double min_, max_;
  double num_ = 0, sum_ = 0, sum_squares_ = 0;
};

template <typename T>
absl::Status AddAll(const Tensor& t, Accumulator* acc) {
  const T* data = t.data<T>();
  const int64_t n = t.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_integral_v<T>) {
      acc->Add(static_cast<double>(data[i]));
    } else {
      double v;
      if constexpr (std::is_same_v<T, sdk::half> || std::is_same_v<T, sdk::bfloat16>) {
        v = static_cast<float>(data[i]);
      } else {
        v = static_cast<double>(data[i]);
      }
      if (!std::isfinite(v)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "histogram values must be finite; found ", v, " at flat index ", i));
      }
      acc->Add(v);
    }
  }
  return absl::OkStatus();
}

absl::Status WriteAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return absl::ErrnoToStatus(errno, "write failed");
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

std::atomic<int> file_counter{0};

}  // namespace

const std::vector<double>& DefaultHistogramBucketLimits() {
  static const std::vector<double>* limits = new std::vector<double>(MakeDefaultBucketLimits());
  return *limits;
}

absl::StatusOr<HistogramSummary> ComputeHistogram(const Tensor& values) {
  if (!values.valid()) return absl::InvalidArgumentError("histogram of an invalid tensor");
  if (values.num_elements() > 0 && !values.host_readable()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "histogram values must be in host memory; copy the tensor to the host first (",
        values.DebugString(0), ")"));
  }
  Accumulator acc;
  absl::Status s;
  switch (values.dtype()) {
    case DataType::kFloat: s = AddAll<float>(values, &acc); break;
    case DataType::kDouble: s = AddAll<double>(values, &acc); break;
    case DataType::kHalf: s = AddAll<sdk::half>(values, &acc); break;
    case DataType::kBFloat16: s = AddAll<sdk::bfloat16>(values, &acc); break;
    case DataType::kInt8: s = AddAll<int8_t>(values, &acc); break;
    case DataType::kInt16: s = AddAll<int16_t>(values, &acc); break;
    case DataType::kInt32: s = AddAll<int32_t>(values, &acc); break;
    case DataType::kInt64: s = AddAll<int64_t>(values, &acc); break;
    case DataType::kUInt8: s = AddAll<uint8_t>(values, &acc); break;
    case DataType::kUInt16: s = AddAll<uint16_t>(values, &acc); break;
    case DataType::kUInt32: s = AddAll<uint32_t>(values, &acc); break;
    case DataType::kUInt64: s = AddAll<uint64_t>(values, &acc); break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "histogram values must be of a real number type, not ", DataTypeName(values.dtype())));
  }
  if (!s.ok()) return s;
  return acc.Encode();
}

SummaryWriter::SummaryWriter(std::string logdir, std::string filename, int fd,
                             const SummaryWriterOptions& options)
    : logdir_(std::move(logdir)), filename_(std::move(filename)), options_(options), fd_(fd) {}

absl::StatusOr<std::unique_ptr<SummaryWriter>> SummaryWriter::Create(
    const std::string& logdir, const SummaryWriterOptions& options) {
  if (logdir.empty()) return absl::InvalidArgumentError("summary logdir must not be empty");
  std::error_code ec;
  std::filesystem::create_directories(logdir, ec);
  if (ec) {
    return absl::Status(absl::ErrnoToStatusCode(ec.value()),
                        absl::StrCat("cannot create summary directory '", logdir,
                                     "': ", ec.message()));
  }
  if (!std::filesystem::is_directory(logdir, ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat("summary logdir '", logdir, "' is not a directory"));
  }
  std::string name = absl::StrFormat(
      "events.out.tfevents.%010d.%s.%d.%d%s", static_cast<long long>(std::time(nullptr)),
      HostName(), static_cast<int>(::getpid()), ++file_counter, options.filename_suffix);
  std::string path = (std::filesystem::path(logdir) / name).string();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    int err = errno;
    return absl::Status(absl::ErrnoToStatusCode(err),
                        absl::StrCat("cannot create event file '", path, "': ",
                                     std::strerror(err)));
  }
  std::unique_ptr<SummaryWriter> writer(new SummaryWriter(logdir, path, fd, options));

  tf::Event event;
  event.set_wall_time(WallTime());
  event.set_file_version(kFileVersion);
  {
    std::lock_guard<std::mutex> lock(writer->mu_);
    absl::Status s = writer->AppendRecordLocked(event.SerializeAsString());
    // The header goes to the file at once, so the file is recognizable as
    // an event file even before the first flush.
    if (s.ok()) s = writer->FlushLocked();
    if (!s.ok()) {
      writer->CloseLocked().IgnoreError();
      return s;
    }
  }
  writer->flusher_ = std::thread([w = writer.get()] { w->FlusherLoop(); });
  return writer;
}

SummaryWriter::~SummaryWriter() { Close().IgnoreError(); }

void SummaryWriter::FlusherLoop() {
  const auto interval = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::max(options_.flush_interval_seconds, 0.01)));
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    wake_.wait_for(lock, interval);
    if (stopping_) break;
    if (!buffer_.empty() && fd_ >= 0) FlushLocked().IgnoreError();  // kept in error_
  }
}

absl::Status SummaryWriter::AppendRecordLocked(absl::string_view data) {
  if (!error_.ok()) return error_;
  if (fd_ < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("summary writer for '", filename_, "' is closed"));
  }
  std::string header;
  PutFixed64(&header, data.size());
  buffer_.append(header);
  PutFixed32(&buffer_, crc32c::Mask(crc32c::Value(header.data(), header.size())));
  buffer_.append(data.data(), data.size());
  PutFixed32(&buffer_, crc32c::Mask(crc32c::Value(data.data(), data.size())));
  if (buffer_.size() >= options_.max_buffer_bytes) return FlushLocked();
  return absl::OkStatus();
}

absl::Status SummaryWriter::FlushLocked() {
  if (!error_.ok()) return error_;
  if (fd_ < 0 || buffer_.empty()) return absl::OkStatus();
  absl::Status s = WriteAll(fd_, buffer_.data(), buffer_.size());
  buffer_.clear();
  if (!s.ok()) {
    error_ = Annotate(s, absl::StrCat("writing event file '", filename_, "'"));
    return error_;
  }
  return absl::OkStatus();
}

absl::Status SummaryWriter::CloseLocked() {
  if (fd_ < 0) return absl::OkStatus();
  absl::Status s = FlushLocked();
  if (::close(fd_) != 0 && s.ok()) {
    error_ = Annotate(absl::ErrnoToStatus(errno, "close failed"),
                      absl::StrCat("writing event file '", filename_, "'"));
    s = error_;
  }
  fd_ = -1;
  buffer_.clear();
  return s;
}

absl::Status SummaryWriter::WriteSerializedEvent(absl::string_view event) {
  std::lock_guard<std::mutex> lock(mu_);
  return AppendRecordLocked(event);
}

absl::Status SummaryWriter::Scalar(absl::string_view tag, float value, int64_t step) {
  if (tag.empty()) return absl::InvalidArgumentError("summary tag must not be empty");
  tf::Event event;
  event.set_wall_time(WallTime());
  event.set_step(step);
  tf::Summary::Value* v = event.mutable_summary()->add_value();
  v->set_tag(std::string(tag));
  v->set_simple_value(value);
  return WriteSerializedEvent(event.SerializeAsString());
}

absl::Status SummaryWriter::Histogram(absl::string_view tag, const HistogramSummary& h,
                                      int64_t step) {
  if (tag.empty()) return absl::InvalidArgumentError("summary tag must not be empty");
  if (h.bucket.size() != h.bucket_limit.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "histogram '", tag, "' has ", h.bucket.size(), " buckets but ",
        h.bucket_limit.size(), " bucket limits"));
  }
  tf::Event event;
  event.set_wall_time(WallTime());
  event.set_step(step);
  tf::Summary::Value* v = event.mutable_summary()->add_value();
  v->set_tag(std::string(tag));
  tf::HistogramProto* p = v->mutable_histo();
  p->set_min(h.min);
  p->set_max(h.max);
  p->set_num(h.num);
  p->set_sum(h.sum);
  p->set_sum_squares(h.sum_squares);
  p->mutable_bucket_limit()->Add(h.bucket_limit.begin(), h.bucket_limit.end());
  p->mutable_bucket()->Add(h.bucket.begin(), h.bucket.end());
  return WriteSerializedEvent(event.SerializeAsString());
}

absl::Status SummaryWriter::Histogram(absl::string_view tag, const Tensor& values,
                                      int64_t step) {
  absl::StatusOr<HistogramSummary> h = ComputeHistogram(values);
  if (!h.ok()) return Annotate(h.status(), absl::StrCat("histogram '", tag, "'"));
  return Histogram(tag, *h, step);
}

absl::Status SummaryWriter::Flush() {
  std::lock_guard<std::mutex> lock(mu_);
  return FlushLocked();
}

absl::Status SummaryWriter::Close() {
  // Stop the flusher thread first; only one caller gets to join it.
  std::thread flusher;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    flusher = std::move(flusher_);
  }
  wake_.notify_all();
  if (flusher.joinable()) flusher.join();
  std::lock_guard<std::mutex> lock(mu_);
  return CloseLocked();
}

bool SummaryWriter::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fd_ < 0;
}

}  // namespace plexus

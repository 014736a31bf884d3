#include "dist/communicator.h"

#include <gloo/allgather.h>
#include <gloo/allgatherv.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "dist/reduce.h"
#include "plexus/dtype.h"
#include "plexus/shape.h"
#include "plexus/status.h"

namespace plexus::dist {

absl::StatusOr<ReduceOp> ParseReduceOp(const std::string& name) {
  if (name == "sum" || name == "Add") return ReduceOp::kSum;
  if (name == "prod" || name == "product" || name == "Mul") return ReduceOp::kProd;
  if (name == "min" || name == "Min") return ReduceOp::kMin;
  if (name == "max" || name == "Max") return ReduceOp::kMax;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown reduction '", name, "' (expected sum, prod, min, max or mean)"));
}

namespace {

// Gloo's store, on ours: Gloo's errors are exceptions, so ours become one.
class GlooStore : public gloo::rendezvous::Store {
 public:
  GlooStore(std::shared_ptr<dist::Store> store, absl::Duration timeout)
      : store_(std::move(store)), timeout_(timeout) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    absl::Status s = store_->Set(key, std::string(data.begin(), data.end()));
    if (!s.ok()) throw gloo::IoException(std::string(s.message()));
  }
  std::vector<char> get(const std::string& key) override {
    absl::StatusOr<std::string> v = store_->Get(key, timeout_);
    if (!v.ok()) throw gloo::IoException(std::string(v.status().message()));
    return std::vector<char>(v->begin(), v->end());
  }
  void wait(const std::vector<std::string>& keys) override {
    wait(keys, std::chrono::milliseconds(absl::ToInt64Milliseconds(timeout_)));
  }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    const absl::Time deadline = absl::Now() + absl::Milliseconds(timeout.count());
    for (const std::string& key : keys) {
      absl::StatusOr<std::string> v = store_->Get(key, std::max(deadline - absl::Now(), absl::ZeroDuration()));
      if (!v.ok()) throw gloo::IoException(std::string(v.status().message()));
    }
  }

 private:
  std::shared_ptr<dist::Store> store_;
  absl::Duration timeout_;
};

// Stand-ins of each element size for Gloo's typed buffers (only the size
// matters to Gloo; the reduction function knows the real type).
template <size_t N>
struct Bytes {
  unsigned char b[N];
};

template <typename F>
void WithElementSize(size_t size, F&& f) {
  switch (size) {
    case 1: f(Bytes<1>{}); break;
    case 2: f(Bytes<2>{}); break;
    case 4: f(Bytes<4>{}); break;
    case 8: f(Bytes<8>{}); break;
    default: f(Bytes<16>{}); break;
  }
}

std::chrono::milliseconds Ms(absl::Duration d) { return std::chrono::milliseconds(absl::ToInt64Milliseconds(d)); }

absl::Status SupportedForReduce(const Tensor& t) {
  if (!ReductionSupported(t.dtype())) {
    return absl::UnimplementedError(
        absl::StrCat("collectives cannot reduce ", DataTypeName(t.dtype()),
                     " tensors (supported: float16, bfloat16, float32, float64 and the integer types)"));
  }
  return absl::OkStatus();
}

absl::Status CheckHost(const Tensor& t) {
  if (!t.valid() || (t.num_elements() > 0 && !t.host_readable())) {
    return absl::InvalidArgumentError("host collectives take host tensors");
  }
  if (DataTypeSize(t.dtype()) == 0) {
    return absl::UnimplementedError(absl::StrCat("collectives do not carry ", DataTypeName(t.dtype()), " tensors"));
  }
  return absl::OkStatus();
}

// A host tensor whose values the collective will overwrite: not zeroed
// first (Tensor::AllocateHost zeroes, which costs as much as the copy).
absl::StatusOr<Tensor> Uninitialized(DataType dtype, const Shape& shape) {
  const size_t bytes = static_cast<size_t>(NumElements(shape)) * DataTypeSize(dtype);
  // Large buffers are fresh pages every time (malloc maps them); in huge
  // pages they fault 512 times less often (a 64 MiB all-reduce spent 40% of
  // its time in page faults with 4 KiB pages).
  const bool huge = bytes >= (4u << 20);
  const size_t alignment = huge ? (2u << 20) : 64;
  const size_t rounded = std::max(alignment, (bytes + alignment - 1) / alignment * alignment);
  void* data = std::aligned_alloc(alignment, rounded);
  if (data == nullptr) return absl::ResourceExhaustedError(absl::StrCat("out of host memory allocating ", bytes, " bytes"));
  if (huge) ::madvise(data, rounded, MADV_HUGEPAGE);
  return Tensor(dtype, shape, std::make_shared<Buffer>(data, bytes, nullptr, [](void* p) { std::free(p); }));
}

}  // namespace

// The copy a collective reduces into when its input is shared. A large
// result buffer is kept, and handed out again (as a view) once every result
// made in it has been released: a loop of all-reduces of one size then
// reuses one buffer instead of faulting in fresh pages each time.
absl::StatusOr<Tensor> Communicator::Copy(const Tensor& in) {
  const size_t bytes = in.nbytes();
  Tensor out;
  {
    std::lock_guard<std::mutex> lock(spare_mu_);
    if (spare_ != nullptr && spare_.use_count() == 1 && spare_->size() == bytes) {
      out = Tensor(in.dtype(), in.shape(), std::make_shared<Buffer>(spare_->data(), bytes, spare_));
    }
  }
  if (!out.valid()) {
    PX_ASSIGN_OR_RETURN(out, Uninitialized(in.dtype(), in.shape()));
    if (bytes >= (1u << 20)) {
      std::lock_guard<std::mutex> lock(spare_mu_);
      if (spare_ == nullptr || spare_.use_count() == 1) {
        spare_ = out.buffer();
        out = Tensor(in.dtype(), in.shape(), std::make_shared<Buffer>(spare_->data(), bytes, spare_));
      }
    }
  }
  if (bytes > 0) std::memcpy(out.raw_data(), in.raw_data(), bytes);
  return out;
}

struct Communicator::Impl {
  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<gloo::rendezvous::Context> context;
};

Communicator::Communicator(CommOptions options) : options_(std::move(options)), impl_(new Impl) {}

Communicator::~Communicator() {
  stop_ = true;
  if (heartbeat_.joinable()) heartbeat_.join();
}

absl::StatusOr<std::shared_ptr<Communicator>> Communicator::Create(CommOptions options) {
  if (options.size < 1 || options.rank < 0 || options.rank >= options.size) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", options.rank, " is not within a world of ", options.size, " ranks"));
  }
  std::shared_ptr<Communicator> comm(new Communicator(std::move(options)));
  const CommOptions& o = comm->options_;
  if (o.size == 1) return comm;
  if (o.store == nullptr) return absl::InvalidArgumentError("a communicator of several ranks needs a store");
  // Arrival first, so that a missing rank is named rather than a Gloo key.
  PX_RETURN_IF_ERROR(o.store->Set(absl::StrCat("arrived/", o.rank), "1"));
  const absl::Time deadline = absl::Now() + o.timeout;
  std::vector<int> missing;
  for (int r = 0; r < o.size; ++r) {
    absl::StatusOr<std::string> v = o.store->Get(absl::StrCat("arrived/", r),
                                                 std::max(deadline - absl::Now(), absl::ZeroDuration()));
    if (v.ok()) continue;
    if (v.status().code() != absl::StatusCode::kDeadlineExceeded) return v.status();
    missing.push_back(r);
  }
  if (!missing.empty()) {
    return absl::DeadlineExceededError(absl::StrCat(
        "communicator '", o.name, "' (rank ", o.rank, " of ", o.size, "): rank", missing.size() > 1 ? "s " : " ",
        absl::StrJoin(missing, ", "), missing.size() > 1 ? " never arrived" : " never arrived", " within ",
        absl::FormatDuration(o.timeout), " (", o.store->Describe(), ")"));
  }
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = o.address;
    comm->impl_->device = gloo::transport::tcp::CreateDevice(attr);
    comm->impl_->context = std::make_shared<gloo::rendezvous::Context>(o.rank, o.size);
    comm->impl_->context->setTimeout(Ms(std::max(deadline - absl::Now(), absl::Seconds(1))));
    GlooStore gs(o.store, o.timeout);
    comm->impl_->context->connectFullMesh(gs, comm->impl_->device);
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("communicator '", o.name, "' (rank ", o.rank, " of ", o.size,
                                               "): connecting to the other ranks failed: ", e.what()));
  }
  if (o.open_store) {
    absl::StatusOr<std::shared_ptr<Store>> hb = o.open_store();
    if (hb.ok()) {
      std::shared_ptr<Store> store = *hb;
      Communicator* self = comm.get();
      comm->heartbeat_ = std::thread([self, store] {
        int64_t beat = 0;
        while (!self->stop_) {
          if (!store->Set(absl::StrCat("hb/", self->rank()), absl::StrCat(++beat, " ", self->seq_.load())).ok()) {
            break;
          }
          for (int i = 0; i < 5 && !self->stop_; ++i) absl::SleepFor(absl::Milliseconds(100));
        }
      });
    }
  }
  return comm;
}

absl::Status Communicator::health() const {
  std::lock_guard<std::mutex> lock(health_mu_);
  return health_;
}

void Communicator::Abort(const absl::Status& why) {
  {
    std::lock_guard<std::mutex> lock(health_mu_);
    if (!health_.ok()) return;
    health_ = why;
  }
  if (options_.store != nullptr) {
    (void)options_.store->Set(absl::StrCat("abort/", options_.rank), std::string(why.message()));
  }
  if (impl_->context != nullptr) {
    try {
      impl_->context->closeConnections();
    } catch (const std::exception&) {
    }
  }
}

// Which ranks are behind or silent: heartbeats are rewritten every 0.5 s
// with a counter and the rank's sequence number, so a counter that does not
// move for 1.5 s belongs to a rank that is stopped or dead.
std::string Communicator::Diagnose(int64_t seq) {
  if (options_.store == nullptr) return "";
  auto read = [&](int r) -> std::pair<int64_t, int64_t> {
    absl::StatusOr<bool> has = options_.store->Check(absl::StrCat("hb/", r));
    if (!has.ok() || !*has) return {-1, -1};
    absl::StatusOr<std::string> v = options_.store->Get(absl::StrCat("hb/", r), absl::Milliseconds(200));
    if (!v.ok()) return {-1, -1};
    std::vector<std::string> parts = absl::StrSplit(*v, ' ');
    if (parts.size() != 2) return {-1, -1};
    return {std::atoll(parts[0].c_str()), std::atoll(parts[1].c_str())};
  };
  std::vector<std::pair<int64_t, int64_t>> before(options_.size);
  for (int r = 0; r < options_.size; ++r) before[r] = r == rank() ? std::make_pair(0L, 0L) : read(r);
  absl::SleepFor(absl::Milliseconds(1500));
  std::vector<std::string> notes;
  for (int r = 0; r < options_.size; ++r) {
    if (r == rank()) continue;
    auto after = read(r);
    if (after.first < 0) {
      notes.push_back(absl::StrCat("rank ", r, " left no heartbeat"));
    } else if (after.first == before[r].first) {
      notes.push_back(absl::StrCat("rank ", r, " is not responding (its heartbeat stopped)"));
    } else if (after.second < seq) {
      notes.push_back(absl::StrCat("rank ", r, " is alive but has not reached collective #", seq,
                                   " (it is at #", after.second, ")"));
    }
    absl::StatusOr<bool> aborted = options_.store->Check(absl::StrCat("abort/", r));
    if (aborted.ok() && *aborted) {
      absl::StatusOr<std::string> why = options_.store->Get(absl::StrCat("abort/", r), absl::Milliseconds(200));
      if (why.ok()) notes.push_back(absl::StrCat("rank ", r, " failed with: ", *why));
    }
  }
  return notes.empty() ? "" : absl::StrCat("; ", absl::StrJoin(notes, "; "));
}

absl::Status Communicator::Run(const char* kind, const Tensor* in, int root, absl::Duration timeout,
                               const std::function<void(uint32_t, std::chrono::milliseconds)>& body) {
  std::lock_guard<std::mutex> lock(run_mu_);
  PX_RETURN_IF_ERROR(health());
  const int64_t seq = ++seq_;
  const absl::Duration limit = timeout > absl::ZeroDuration() ? timeout : options_.timeout;
  auto where = [&] {
    return absl::StrCat(kind, " #", seq, " on communicator '", options_.name, "' (rank ", rank(), " of ", size(), ")");
  };
  try {
    if (options_.debug && size() > 1) {
      absl::Status s = CheckSignature(kind, in, root, Ms(limit));
      if (!s.ok()) {
        absl::Status poisoned(s.code(), absl::StrCat(where(), ": ", s.message()));
        Abort(poisoned);
        return poisoned;
      }
    }
    body(static_cast<uint32_t>(seq << 2), Ms(limit));
  } catch (const gloo::IoException& e) {
    const std::string what = e.what();
    const bool timed_out = what.find("Timed out") != std::string::npos || what.find("timeout") != std::string::npos;
    absl::Status s(timed_out ? absl::StatusCode::kDeadlineExceeded : absl::StatusCode::kUnavailable,
                   absl::StrCat(where(), timed_out ? " timed out after " + absl::FormatDuration(limit) : " failed: a peer is gone",
                                Diagnose(seq), " [", what, "]"));
    Abort(s);
    return s;
  } catch (const std::exception& e) {
    absl::Status s = absl::InternalError(absl::StrCat(where(), " failed: ", e.what()));
    Abort(s);
    return s;
  }
  return absl::OkStatus();
}

// Every rank shares (sequence, kind, dtype, shape, root) and compares them
// with rank 0's; a mismatch names the ranks and what each issued.
absl::Status Communicator::CheckSignature(const char* kind, const Tensor* in, int root,
                                          std::chrono::milliseconds ms) {
  constexpr int kFields = 16;
  std::vector<int64_t> mine(kFields, -1), all(static_cast<size_t>(kFields) * size());
  mine[0] = seq_;
  mine[1] = static_cast<int64_t>(std::hash<std::string>()(kind) & 0x7fffffff);
  mine[2] = in ? static_cast<int64_t>(in->dtype()) : -1;
  mine[3] = in ? in->dims() : -1;
  for (int d = 0; in && d < std::min<int64_t>(in->dims(), 11); ++d) mine[4 + d] = in->shape()[d];
  mine[15] = root;
  gloo::AllgatherOptions o(impl_->context);
  o.setInput(mine.data(), mine.size());
  o.setOutput(all.data(), all.size());
  o.setTag(static_cast<uint32_t>((seq_ << 2) | 3));
  o.setTimeout(ms);
  gloo::allgather(o);
  auto describe = [&](int r) {
    const int64_t* f = &all[static_cast<size_t>(r) * kFields];
    std::string s = absl::StrCat("rank ", r, " issued collective #", f[0]);
    if (f[1] != mine[1]) s += " of another kind";
    else s += absl::StrCat(" ", kind);
    if (f[2] >= 0) {
      Shape shape(f + 4, f + 4 + std::min<int64_t>(f[3], 11));
      s += absl::StrCat(" ", DataTypeName(static_cast<DataType>(f[2])), " ", ShapeToString(shape));
    }
    if (f[15] >= 0) s += absl::StrCat(" root ", f[15]);
    return s;
  };
  std::vector<std::string> diffs;
  for (int r = 1; r < size(); ++r) {
    if (!std::equal(all.begin() + r * kFields, all.begin() + (r + 1) * kFields, all.begin())) {
      diffs.push_back(describe(r));
    }
  }
  if (diffs.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("ranks disagree on the collective: ", describe(0), "; ",
                                                 absl::StrJoin(diffs, "; ")));
}

absl::StatusOr<Tensor> Communicator::AllReduce(Tensor in, ReduceOp op, bool mean, absl::Duration timeout) {
  PX_RETURN_IF_ERROR(CheckHost(in));
  PX_RETURN_IF_ERROR(SupportedForReduce(in));
  // A host buffer nobody else holds (a graph's intermediate gradient) is
  // reduced in place; otherwise into a copy.
  const bool unique = in.buffer() != nullptr && in.buffer().use_count() == 1 && in.device() == nullptr &&
                      !in.is_ref() && in.resource() == nullptr;
  Tensor out;
  if (unique) {
    out = std::move(in);
  } else {
    PX_ASSIGN_OR_RETURN(out, Copy(in));
  }
  PX_RETURN_IF_ERROR(Run("all-reduce", &out, -1, timeout, [&](uint32_t tag, std::chrono::milliseconds ms) {
    if (size() == 1 || out.num_elements() == 0) return;
    WithElementSize(DataTypeSize(out.dtype()), [&](auto proxy) {
      using P = decltype(proxy);
      gloo::AllreduceOptions o(impl_->context);
      o.setOutput(out.data<P>(), static_cast<size_t>(out.num_elements()));
      o.setReduceFunction(ReductionFunction(out.dtype(), op));
      o.setTag(tag);
      o.setTimeout(ms);
      gloo::allreduce(o);
    });
  }));
  if (mean) DivideInPlace(out, size());
  return out;
}

absl::StatusOr<Tensor> Communicator::AllGather(const Tensor& in, absl::Duration timeout) {
  PX_RETURN_IF_ERROR(CheckHost(in));
  if (in.dims() < 1) return absl::InvalidArgumentError("all-gather needs a tensor of rank 1 or more");
  // First every rank's shape, then the data (dimension 0 may differ).
  constexpr int kFields = 10;
  std::vector<int64_t> mine(kFields, -1), shapes(static_cast<size_t>(kFields) * size());
  mine[0] = static_cast<int64_t>(in.dtype());
  mine[1] = in.dims();
  for (int d = 0; d < std::min<int64_t>(in.dims(), 8); ++d) mine[2 + d] = in.shape()[d];
  Tensor out;
  absl::Status layout;
  PX_RETURN_IF_ERROR(Run("all-gather", &in, -1, timeout, [&](uint32_t tag, std::chrono::milliseconds ms) {
    std::copy(mine.begin(), mine.end(), shapes.begin());
    if (size() > 1) {
      gloo::AllgatherOptions o(impl_->context);
      o.setInput(mine.data(), mine.size());
      o.setOutput(shapes.data(), shapes.size());
      o.setTag(tag | 1);
      o.setTimeout(ms);
      gloo::allgather(o);
    }
    Shape shape = in.shape();
    shape[0] = 0;
    std::vector<size_t> counts;
    const int64_t row = in.dims() > 0 && in.shape()[0] > 0 ? in.num_elements() / in.shape()[0]
                                                            : NumElements(Shape(in.shape().begin() + 1, in.shape().end()));
    for (int r = 0; r < size(); ++r) {
      const int64_t* f = &shapes[static_cast<size_t>(r) * kFields];
      bool same = f[0] == mine[0] && f[1] == mine[1] && std::equal(f + 3, f + kFields, mine.begin() + 3);
      if (!same) {
        layout = absl::InvalidArgumentError(absl::StrCat(
            "all-gather: rank ", r, " sent ", DataTypeName(static_cast<DataType>(f[0])), " with dims past the first of ",
            ShapeToString(Shape(f + 3, f + 2 + std::max<int64_t>(f[1], 1))), ", rank ", rank(), " ",
            DataTypeName(in.dtype()), " ", ShapeToString(Shape(in.shape().begin() + 1, in.shape().end()))));
        return;
      }
      shape[0] += f[2];
      counts.push_back(static_cast<size_t>(f[2] * row));
    }
    absl::StatusOr<Tensor> t = Uninitialized(in.dtype(), shape);
    if (!t.ok()) {
      layout = t.status();
      return;
    }
    out = *t;
    if (size() == 1) {
      if (in.nbytes() > 0) std::memcpy(out.raw_data(), in.raw_data(), in.nbytes());
      return;
    }
    WithElementSize(DataTypeSize(in.dtype()), [&](auto proxy) {
      using P = decltype(proxy);
      gloo::AllgathervOptions o(impl_->context);
      o.setInput(in.data<P>(), static_cast<size_t>(in.num_elements()));
      o.setOutput(out.data<P>(), counts);
      o.setTag(tag | 2);
      o.setTimeout(ms);
      gloo::allgatherv(o);
    });
  }));
  PX_RETURN_IF_ERROR(layout);
  return out;
}

absl::StatusOr<Tensor> Communicator::AllToAll(const Tensor& in, absl::Duration timeout) {
  PX_RETURN_IF_ERROR(CheckHost(in));
  if (in.dims() < 1 || in.shape()[0] % size() != 0) {
    return absl::InvalidArgumentError(absl::StrCat("all-to-all needs dimension 0 divisible by the ", size(),
                                                   " ranks; got shape ", ShapeToString(in.shape())));
  }
  PX_ASSIGN_OR_RETURN(Tensor out, Uninitialized(in.dtype(), in.shape()));
  PX_RETURN_IF_ERROR(Run("all-to-all", &in, -1, timeout, [&](uint32_t tag, std::chrono::milliseconds ms) {
    if (size() == 1 || in.num_elements() == 0) {
      if (in.nbytes() > 0) std::memcpy(out.raw_data(), in.raw_data(), in.nbytes());
      return;
    }
    WithElementSize(DataTypeSize(in.dtype()), [&](auto proxy) {
      using P = decltype(proxy);
      gloo::AlltoallOptions o(impl_->context);
      o.setInput(in.data<P>(), static_cast<size_t>(in.num_elements()));
      o.setOutput(out.data<P>(), static_cast<size_t>(out.num_elements()));
      o.setTag(tag);
      o.setTimeout(ms);
      gloo::alltoall(o);
    });
  }));
  return out;
}

absl::StatusOr<Tensor> Communicator::ReduceScatter(const Tensor& in, ReduceOp op, bool mean, absl::Duration timeout) {
  PX_RETURN_IF_ERROR(SupportedForReduce(in));
  if (in.dims() < 1 || in.shape()[0] % size() != 0) {
    return absl::InvalidArgumentError(absl::StrCat("reduce-scatter needs dimension 0 divisible by the ", size(),
                                                   " ranks; got shape ", ShapeToString(in.shape())));
  }
  // Slice j goes to rank j, which reduces the slices it received in rank
  // order (so the result does not depend on timing).
  PX_ASSIGN_OR_RETURN(Tensor received, AllToAll(in, timeout));
  Shape shape = in.shape();
  shape[0] /= size();
  PX_ASSIGN_OR_RETURN(Tensor out, Uninitialized(in.dtype(), shape));
  const size_t slice = out.nbytes();
  if (slice > 0) {
    std::memcpy(out.raw_data(), received.raw_data(), slice);
    auto fn = ReductionFunction(in.dtype(), op);
    const size_t n = static_cast<size_t>(out.num_elements());
    for (int r = 1; r < size(); ++r) {
      fn(out.raw_data(), out.raw_data(), static_cast<const char*>(received.raw_data()) + r * slice, n);
    }
  }
  if (mean) DivideInPlace(out, size());
  return out;
}

absl::StatusOr<Tensor> Communicator::Broadcast(const Tensor& in, int root, absl::Duration timeout) {
  PX_RETURN_IF_ERROR(CheckHost(in));
  if (root < 0 || root >= size()) {
    return absl::InvalidArgumentError(absl::StrCat("broadcast root ", root, " is not a rank of ", size()));
  }
  PX_ASSIGN_OR_RETURN(Tensor out, Copy(in));
  PX_RETURN_IF_ERROR(Run("broadcast", &in, root, timeout, [&](uint32_t tag, std::chrono::milliseconds ms) {
    if (size() == 1 || out.num_elements() == 0) return;
    WithElementSize(DataTypeSize(in.dtype()), [&](auto proxy) {
      using P = decltype(proxy);
      gloo::BroadcastOptions o(impl_->context);
      o.setOutput(out.data<P>(), static_cast<size_t>(out.num_elements()));
      o.setRoot(root);
      o.setTag(tag);
      o.setTimeout(ms);
      gloo::broadcast(o);
    });
  }));
  return out;
}

absl::StatusOr<Tensor> Communicator::BroadcastFromSender(const Tensor& in, bool is_sender,
                                                         absl::Duration timeout) {
  PX_RETURN_IF_ERROR(CheckHost(in));
  PX_ASSIGN_OR_RETURN(Tensor out, Copy(in));
  absl::Status agreement;
  PX_RETURN_IF_ERROR(Run("broadcast", &in, -1, timeout, [&](uint32_t tag, std::chrono::milliseconds ms) {
    if (size() == 1) {
      if (!is_sender) agreement = absl::InvalidArgumentError("a broadcast receiver in a group of one has no sender");
      return;
    }
    std::vector<int64_t> mine = {is_sender ? 1 : 0, static_cast<int64_t>(in.dtype()), in.num_elements()};
    std::vector<int64_t> all(mine.size() * size());
    gloo::AllgatherOptions a(impl_->context);
    a.setInput(mine.data(), mine.size());
    a.setOutput(all.data(), all.size());
    a.setTag(tag | 1);
    a.setTimeout(ms);
    gloo::allgather(a);
    std::vector<int> senders;
    for (int r = 0; r < size(); ++r) {
      if (all[3 * r] == 1) senders.push_back(r);
    }
    if (senders.size() != 1) {
      agreement = absl::InvalidArgumentError(
          senders.empty() ? std::string("no rank sent the broadcast (every rank ran a receive)")
                          : absl::StrCat("ranks ", absl::StrJoin(senders, ", "), " all sent the broadcast"));
      return;
    }
    const int root = senders[0];
    if (all[3 * root + 1] != mine[1] || all[3 * root + 2] != mine[2]) {
      agreement = absl::InvalidArgumentError(absl::StrCat(
          "the sender, rank ", root, ", broadcasts ", all[3 * root + 2], " ",
          DataTypeName(static_cast<DataType>(all[3 * root + 1])), " values, but rank ", rank(), " expects ", mine[2],
          " ", DataTypeName(in.dtype()), " values"));
      return;
    }
    if (out.num_elements() == 0) return;
    WithElementSize(DataTypeSize(in.dtype()), [&](auto proxy) {
      using P = decltype(proxy);
      gloo::BroadcastOptions o(impl_->context);
      o.setOutput(out.data<P>(), static_cast<size_t>(out.num_elements()));
      o.setRoot(root);
      o.setTag(tag | 2);
      o.setTimeout(ms);
      gloo::broadcast(o);
    });
  }));
  PX_RETURN_IF_ERROR(agreement);
  return out;
}

absl::Status Communicator::Barrier(absl::Duration timeout) {
  return Run("barrier", nullptr, -1, timeout, [&](uint32_t tag, std::chrono::milliseconds ms) {
    if (size() == 1) return;
    gloo::BarrierOptions o(impl_->context);
    o.setTag(tag);
    o.setTimeout(ms);
    gloo::barrier(o);
  });
}

}  // namespace plexus::dist

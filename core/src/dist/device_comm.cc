#include "dist/device_comm.h"

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "devices/host_services.h"
#include "plexus/dtype.h"
#include "plexus/plugin_host.h"
#include "plexus/shape.h"
#include "plexus/status.h"

namespace plexus::dist {
namespace {

// The store as the plugin sees it (PX_KVStore): ctx is the Store.
PX_Status* KvPut(void* ctx, const char* key, const void* value, size_t size) {
  return MakePluginStatus(static_cast<Store*>(ctx)->Set(key, std::string(static_cast<const char*>(value), size)));
}

PX_Status* KvGet(void* ctx, const char* key, int64_t timeout_ms, void** out_value, size_t* out_size) {
  const absl::Duration timeout = timeout_ms < 0 ? absl::Hours(24 * 365) : absl::Milliseconds(timeout_ms);
  absl::StatusOr<std::string> v = static_cast<Store*>(ctx)->Get(key, timeout);
  if (!v.ok()) return MakePluginStatus(v.status());
  void* copy = std::malloc(v->size() + 1);
  if (copy == nullptr) return MakePluginStatus(absl::ResourceExhaustedError("out of host memory"));
  std::memcpy(copy, v->data(), v->size());
  *out_value = copy;
  *out_size = v->size();
  return nullptr;
}

void KvFree(void*, void* value) { std::free(value); }

int32_t ReduceCode(ReduceOp op, bool mean) {
  if (mean) return PX_REDUCE_MEAN;
  switch (op) {
    case ReduceOp::kProd: return PX_REDUCE_PROD;
    case ReduceOp::kMin: return PX_REDUCE_MIN;
    case ReduceOp::kMax: return PX_REDUCE_MAX;
    default: return PX_REDUCE_SUM;
  }
}

// Calls `abort` unless Done() comes first, within `deadline`.
class Watchdog {
 public:
  Watchdog(absl::Duration deadline, std::function<void()> abort)
      : thread_([this, deadline, abort] {
          std::unique_lock<std::mutex> lock(mu_);
          if (!cv_.wait_for(lock, std::chrono::milliseconds(absl::ToInt64Milliseconds(deadline)),
                            [this] { return done_; })) {
            fired_ = true;
            lock.unlock();
            abort();
          }
        }) {}
  ~Watchdog() { Done(); }
  void Done() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  bool fired() const { return fired_; }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  bool fired_ = false;
  std::thread thread_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<DeviceCommunicator>> DeviceCommunicator::Create(std::shared_ptr<Device> device,
                                                                              std::shared_ptr<Store> store,
                                                                              std::string name, int size, int rank,
                                                                              absl::Duration timeout) {
  const PX_CollectivesExt* ext = device->collectives();
  if (ext == nullptr) {
    return absl::UnimplementedError(absl::StrCat(device->name(), ": the ", device->plugin().name(),
                                                 " plugin offers no collectives extension"));
  }
  PX_RETURN_IF_ERROR(device->Open());
  std::shared_ptr<DeviceCommunicator> c(new DeviceCommunicator());
  c->device_ = std::move(device);
  c->ext_ = ext;
  c->store_ = std::move(store);
  c->kv_ = PX_KVStore{sizeof(PX_KVStore), c->store_.get(), KvPut, KvGet, KvFree};
  c->name_ = std::move(name);
  c->size_ = size;
  c->rank_ = rank;
  c->timeout_ = timeout;
  PX_Status* s = ext->comm_create(c->device_->handle(), &c->kv_, c->name_.c_str(), size, rank,
                                  absl::ToInt64Milliseconds(timeout), &c->comm_);
  PX_RETURN_IF_ERROR(c->device_->Check(s, absl::StrCat("creating communicator '", c->name_, "' (rank ", rank,
                                                        " of ", size, ")")));
  return c;
}

DeviceCommunicator::~DeviceCommunicator() {
  if (comm_ == nullptr) return;
  PX_Status* s = health_.ok() ? ext_->comm_destroy(comm_) : ext_->comm_abort(comm_);
  if (!health_.ok() && s == nullptr) s = ext_->comm_destroy(comm_);
  (void)TakePluginStatus(s);
}

absl::Status DeviceCommunicator::Run(const char* kind, absl::Duration timeout,
                                     const std::function<PX_Status*(PX_Stream*)>& enqueue) {
  std::lock_guard<std::mutex> lock(mu_);
  PX_RETURN_IF_ERROR(health_);
  const int64_t seq = ++seq_;
  const absl::Duration limit = timeout > absl::ZeroDuration() ? timeout : timeout_;
  auto where = [&] {
    return absl::StrCat(kind, " #", seq, " on ", device_->name(), " communicator '", name_, "' (rank ", rank_, " of ",
                        size_, ")");
  };
  PX_ASSIGN_OR_RETURN(PX_Stream* stream, device_->AcquireStream());
  absl::Status s = TakePluginStatus(enqueue(stream));
  bool fired = false;
  if (s.ok()) {
    Watchdog watchdog(limit, [this] { (void)TakePluginStatus(ext_->comm_abort(comm_)); });
    s = device_->SynchronizeStream(stream);
    watchdog.Done();
    fired = watchdog.fired();
  }
  device_->ReleaseStream(stream, s.ok());
  if (fired) {
    s = absl::DeadlineExceededError(absl::StrCat(where(), " timed out after ", absl::FormatDuration(limit),
                                                 "; the communicator was aborted (", s.message(), ")"));
  } else if (!s.ok()) {
    absl::Status async = TakePluginStatus(ext_->comm_get_async_error(comm_));
    s = absl::Status(s.code(), absl::StrCat(where(), " failed: ", s.message(),
                                            async.ok() ? "" : absl::StrCat(" (", async.message(), ")")));
  }
  if (!s.ok() && s.code() != absl::StatusCode::kInvalidArgument && s.code() != absl::StatusCode::kUnimplemented) {
    health_ = s;
  }
  return s;
}

absl::StatusOr<Tensor> DeviceCommunicator::AllReduce(const Tensor& in, ReduceOp op, bool mean,
                                                     absl::Duration timeout) {
  PX_ASSIGN_OR_RETURN(Tensor out, device_->AllocateTensor(in.dtype(), in.shape()));
  DLTensor din = in.ToDLTensor(), dout = out.ToDLTensor();
  const int32_t code = ReduceCode(op, mean);
  PX_RETURN_IF_ERROR(Run("all-reduce", timeout, [&](PX_Stream* s) {
    return ext_->all_reduce(comm_, s, &din, &dout, code);
  }));
  return out;
}

absl::StatusOr<Tensor> DeviceCommunicator::AllGather(const Tensor& in, absl::Duration timeout) {
  if (in.dims() < 1) return absl::InvalidArgumentError("all-gather needs a tensor of rank 1 or more");
  Shape shape = in.shape();
  shape[0] *= size_;
  PX_ASSIGN_OR_RETURN(Tensor out, device_->AllocateTensor(in.dtype(), shape));
  DLTensor din = in.ToDLTensor(), dout = out.ToDLTensor();
  PX_RETURN_IF_ERROR(Run("all-gather", timeout, [&](PX_Stream* s) { return ext_->all_gather(comm_, s, &din, &dout); }));
  return out;
}

absl::StatusOr<Tensor> DeviceCommunicator::ReduceScatter(const Tensor& in, ReduceOp op, bool mean,
                                                         absl::Duration timeout) {
  if (in.dims() < 1 || in.shape()[0] % size_ != 0) {
    return absl::InvalidArgumentError(absl::StrCat("reduce-scatter needs dimension 0 divisible by the ", size_,
                                                   " ranks; got shape ", ShapeToString(in.shape())));
  }
  Shape shape = in.shape();
  shape[0] /= size_;
  PX_ASSIGN_OR_RETURN(Tensor out, device_->AllocateTensor(in.dtype(), shape));
  DLTensor din = in.ToDLTensor(), dout = out.ToDLTensor();
  const int32_t code = ReduceCode(op, mean);
  PX_RETURN_IF_ERROR(Run("reduce-scatter", timeout, [&](PX_Stream* s) {
    return ext_->reduce_scatter(comm_, s, &din, &dout, code);
  }));
  return out;
}

absl::StatusOr<Tensor> DeviceCommunicator::AllToAll(const Tensor& in, absl::Duration timeout) {
  if (in.dims() < 1 || in.shape()[0] % size_ != 0) {
    return absl::InvalidArgumentError(absl::StrCat("all-to-all needs dimension 0 divisible by the ", size_,
                                                   " ranks; got shape ", ShapeToString(in.shape())));
  }
  PX_ASSIGN_OR_RETURN(Tensor out, device_->AllocateTensor(in.dtype(), in.shape()));
  DLTensor din = in.ToDLTensor(), dout = out.ToDLTensor();
  PX_RETURN_IF_ERROR(Run("all-to-all", timeout, [&](PX_Stream* s) { return ext_->all_to_all(comm_, s, &din, &dout); }));
  return out;
}

}  // namespace plexus::dist

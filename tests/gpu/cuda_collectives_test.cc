// The cuda plugin's collectives (ABI 0.7, PX_CollectivesExt on NCCL), as the
// core finds them (Device::collectives()), on CUDA:0 with an in-memory
// key-value store: (A) every collective of a 1-rank communicator and every
// reduce op on float32, float16, int32 and int64 against host values, with
// the argument checks; (B) a 2-rank communicator of which only one rank
// exists times out within its deadline and names the missing rank (also
// when rank 0 is the missing one); (C) comm_abort, after which every call
// errors cleanly. Label gpu: skipped without a CUDA device or without NCCL
// (libnccl.so.2).
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cuda_test_util.h"
#include "devices/host_services.h"
#include "gtest/gtest.h"
#include "plexus/device.h"
#include "plexus/plugin_host.h"
#include "plexus/sdk/float16.h"

namespace plexus::cuda_test {
namespace {

// A PX_KVStore in memory: a map, a mutex and a condition variable; get
// waits for the key up to its timeout.
class MemoryStore {
 public:
  MemoryStore() {
    table_.struct_size = sizeof(table_);
    table_.ctx = this;
    table_.put = &Put;
    table_.get = &Get;
    table_.free_value = &FreeValue;
  }
  const PX_KVStore* table() const { return &table_; }

 private:
  static PX_Status* Put(void* ctx, const char* key, const void* value, size_t size) {
    auto* self = static_cast<MemoryStore*>(ctx);
    {
      std::lock_guard<std::mutex> lock(self->mu_);
      self->values_[key] = std::string(static_cast<const char*>(value), size);
    }
    self->cv_.notify_all();
    return nullptr;
  }
  static PX_Status* Get(void* ctx, const char* key, int64_t timeout_ms, void** out_value, size_t* out_size) {
    auto* self = static_cast<MemoryStore*>(ctx);
    std::unique_lock<std::mutex> lock(self->mu_);
    auto present = [&] { return self->values_.count(key) != 0; };
    if (timeout_ms < 0) {
      self->cv_.wait(lock, present);
    } else if (!self->cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), present)) {
      return MakePluginStatus(absl::DeadlineExceededError(
          std::string("key '") + key + "' did not appear within " + std::to_string(timeout_ms) + " ms"));
    }
    const std::string& v = self->values_[key];
    *out_size = v.size();
    *out_value = v.empty() ? nullptr : std::malloc(v.size());
    if (!v.empty()) std::memcpy(*out_value, v.data(), v.size());
    return nullptr;
  }
  static void FreeValue(void*, void* value) { std::free(value); }

  PX_KVStore table_{};
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::string> values_;
};

// The element types of (A), with their host encoding.
enum class Type { kFloat32, kFloat16, kInt32, kInt64 };
const char* Name(Type t) {
  switch (t) {
    case Type::kFloat32: return "float32";
    case Type::kFloat16: return "float16";
    case Type::kInt32: return "int32";
    default: return "int64";
  }
}
DLDataType DlType(Type t) {
  switch (t) {
    case Type::kFloat32: return {kDLFloat, 32, 1};
    case Type::kFloat16: return {kDLFloat, 16, 1};
    case Type::kInt32: return {kDLInt, 32, 1};
    default: return {kDLInt, 64, 1};
  }
}
size_t Bytes(Type t) { return DlType(t).bits / 8; }

std::vector<char> Encode(Type t, const std::vector<double>& values) {
  std::vector<char> bytes(values.size() * Bytes(t));
  for (size_t i = 0; i < values.size(); ++i) {
    char* p = bytes.data() + i * Bytes(t);
    if (t == Type::kFloat32) { float v = static_cast<float>(values[i]); std::memcpy(p, &v, 4); }
    if (t == Type::kFloat16) { sdk::half v(static_cast<float>(values[i])); std::memcpy(p, &v.bits, 2); }
    if (t == Type::kInt32) { int32_t v = static_cast<int32_t>(values[i]); std::memcpy(p, &v, 4); }
    if (t == Type::kInt64) { int64_t v = static_cast<int64_t>(values[i]); std::memcpy(p, &v, 8); }
  }
  return bytes;
}

std::vector<double> Decode(Type t, const std::vector<char>& bytes) {
  std::vector<double> values(bytes.size() / Bytes(t));
  for (size_t i = 0; i < values.size(); ++i) {
    const char* p = bytes.data() + i * Bytes(t);
    if (t == Type::kFloat32) { float v; std::memcpy(&v, p, 4); values[i] = v; }
    if (t == Type::kFloat16) { sdk::half v; std::memcpy(&v.bits, p, 2); values[i] = static_cast<float>(v); }
    if (t == Type::kInt32) { int32_t v; std::memcpy(&v, p, 4); values[i] = v; }
    if (t == Type::kInt64) { int64_t v; std::memcpy(&v, p, 8); values[i] = static_cast<double>(v); }
  }
  return values;
}

// Anywhere, device or not: the core finds the extension of the cuda plugin
// (ABI 0.7), whole, and none for the cpu plugin, which offers none.
TEST(CollectivesExtension, OfferedByTheCudaPluginOnly) {
  std::shared_ptr<Plugin> cuda, cpu;
  for (const auto& p : TheRuntime().plugins()) {
    if (p->name() == "cuda") cuda = p;
    if (p->name() == "cpu") cpu = p;
  }
  ASSERT_NE(cuda, nullptr) << "the cuda plugin did not load";
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->collectives(), nullptr);
  const PX_CollectivesExt* ext = cuda->collectives();
  ASSERT_NE(ext, nullptr);
  EXPECT_EQ(ext->struct_size, sizeof(PX_CollectivesExt));
  for (const void* slot : {reinterpret_cast<const void*>(ext->comm_create),
                           reinterpret_cast<const void*>(ext->comm_destroy),
                           reinterpret_cast<const void*>(ext->comm_abort),
                           reinterpret_cast<const void*>(ext->comm_get_async_error),
                           reinterpret_cast<const void*>(ext->all_reduce),
                           reinterpret_cast<const void*>(ext->all_gather),
                           reinterpret_cast<const void*>(ext->reduce_scatter),
                           reinterpret_cast<const void*>(ext->broadcast),
                           reinterpret_cast<const void*>(ext->all_to_all),
                           reinterpret_cast<const void*>(ext->barrier)}) {
    EXPECT_NE(slot, nullptr);
  }
  // A call without a device or a communicator is refused, not a crash.
  PX_Comm* comm = nullptr;
  absl::Status created = TakePluginStatus(ext->comm_create(nullptr, nullptr, "x", 1, 0, 0, &comm));
  EXPECT_EQ(created.code(), absl::StatusCode::kInvalidArgument) << created;
  absl::Status s = TakePluginStatus(ext->comm_abort(nullptr));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(TakePluginStatus(ext->comm_destroy(nullptr)), absl::OkStatus());
}

// A 1-D device tensor of n elements (its DLTensor points at the buffer).
struct DeviceTensor {
  std::shared_ptr<Buffer> buffer;
  int64_t shape[1] = {0};
  DLTensor dl{};
};

class Collectives : public ::testing::Test {
 protected:
  void SetUp() override {
    PX_SKIP_WITHOUT_CUDA();
    auto device = TheRuntime().FindDevice("CUDA:0");
    ASSERT_TRUE(device.ok()) << device.status();
    device_ = *device;
    ASSERT_TRUE(device_->Open().ok());
    ext_ = device_->collectives();
    ASSERT_NE(ext_, nullptr) << "the cuda plugin offers no collectives extension";
    auto stream = device_->AcquireStream();
    ASSERT_TRUE(stream.ok()) << stream.status();
    stream_ = *stream;
    // Without NCCL comm_create says so (UNAVAILABLE): skip.
    PX_Comm* probe = nullptr;
    absl::Status s = Create(UniqueName("probe"), 1, 0, 60000, &probe);
    if (s.code() == absl::StatusCode::kUnavailable && s.message().find("NCCL") != absl::string_view::npos) {
      GTEST_SKIP() << "no NCCL: " << s.message();
    }
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_TRUE(Check(ext_->comm_destroy(probe), "comm_destroy").ok());
  }
  void TearDown() override {
    if (stream_ != nullptr) device_->ReleaseStream(stream_, device_->SynchronizeStream(stream_).ok());
  }

  static std::string UniqueName(const std::string& what) {
    static int counter = 0;
    return "cuda_collectives_test/" + what + "/" + std::to_string(++counter);
  }
  absl::Status Check(PX_Status* s, const char* what) const { return device_->Check(s, what); }
  absl::Status Create(const std::string& name, int nranks, int rank, int64_t timeout_ms, PX_Comm** comm) {
    return Check(ext_->comm_create(device_->handle(), store_.table(), name.c_str(), nranks, rank, timeout_ms, comm),
                 "comm_create");
  }

  DeviceTensor Upload(Type t, const std::vector<double>& values) {
    DeviceTensor d = Make(t, static_cast<int64_t>(values.size()));
    const std::vector<char> bytes = Encode(t, values);
    if (!bytes.empty()) EXPECT_TRUE(device_->CopyHostToDevice(d.dl.data, bytes.data(), bytes.size()).ok());
    return d;
  }
  // Filled with 0x7f bytes, so that an output left unwritten shows.
  DeviceTensor Make(Type t, int64_t n) {
    DeviceTensor d;
    auto buffer = device_->Allocate(std::max<size_t>(1, n * Bytes(t)));
    EXPECT_TRUE(buffer.ok()) << buffer.status();
    d.buffer = *buffer;
    d.shape[0] = n;
    d.dl.data = d.buffer->data();
    d.dl.device = {kDLCUDA, 0};
    d.dl.ndim = 1;
    d.dl.dtype = DlType(t);
    d.dl.shape = d.shape;
    std::vector<char> fill(n * Bytes(t), 0x7f);
    if (!fill.empty()) EXPECT_TRUE(device_->CopyHostToDevice(d.dl.data, fill.data(), fill.size()).ok());
    return d;
  }
  std::vector<double> Download(Type t, const DeviceTensor& d) {
    EXPECT_TRUE(device_->SynchronizeStream(stream_).ok());
    std::vector<char> bytes(d.shape[0] * Bytes(t));
    if (!bytes.empty()) EXPECT_TRUE(device_->CopyDeviceToHost(bytes.data(), d.dl.data, bytes.size()).ok());
    return Decode(t, bytes);
  }

  std::shared_ptr<Device> device_;
  const PX_CollectivesExt* ext_ = nullptr;
  PX_Stream* stream_ = nullptr;
  MemoryStore store_;
};

// (A) One rank: each collective gives back its input (the mean divides by
// one), for every reduce op, type and size.
TEST_F(Collectives, OneRankEveryCollectiveTypeAndSize) {
  PX_Comm* comm = nullptr;
  ASSERT_TRUE(Create(UniqueName("one_rank"), 1, 0, 60000, &comm).ok());
  EXPECT_TRUE(Check(ext_->comm_get_async_error(comm), "comm_get_async_error").ok());
  for (Type t : {Type::kFloat32, Type::kFloat16, Type::kInt32, Type::kInt64}) {
    for (int64_t n : {0, 1, 7, 1000}) {
      SCOPED_TRACE(std::string(Name(t)) + " [" + std::to_string(n) + "]");
      std::vector<double> values(n);
      for (int64_t i = 0; i < n; ++i) values[i] = static_cast<double>((i * 7) % 23) - 11;
      DeviceTensor in = Upload(t, values);
      for (int32_t op : {PX_REDUCE_SUM, PX_REDUCE_PROD, PX_REDUCE_MIN, PX_REDUCE_MAX, PX_REDUCE_MEAN}) {
        DeviceTensor out = Make(t, n);
        ASSERT_TRUE(Check(ext_->all_reduce(comm, stream_, &in.dl, &out.dl, op), "all_reduce").ok()) << op;
        EXPECT_EQ(Download(t, out), values) << "all_reduce op " << op;
        out = Make(t, n);
        ASSERT_TRUE(Check(ext_->reduce_scatter(comm, stream_, &in.dl, &out.dl, op), "reduce_scatter").ok());
        EXPECT_EQ(Download(t, out), values) << "reduce_scatter op " << op;
      }
      DeviceTensor out = Make(t, n);
      ASSERT_TRUE(Check(ext_->all_gather(comm, stream_, &in.dl, &out.dl), "all_gather").ok());
      EXPECT_EQ(Download(t, out), values) << "all_gather";
      out = Make(t, n);
      ASSERT_TRUE(Check(ext_->broadcast(comm, stream_, &in.dl, &out.dl, 0), "broadcast").ok());
      EXPECT_EQ(Download(t, out), values) << "broadcast";
      out = Make(t, n);
      ASSERT_TRUE(Check(ext_->all_to_all(comm, stream_, &in.dl, &out.dl), "all_to_all").ok());
      EXPECT_EQ(Download(t, out), values) << "all_to_all";
    }
  }
  ASSERT_TRUE(Check(ext_->barrier(comm, stream_), "barrier").ok());
  EXPECT_TRUE(device_->SynchronizeStream(stream_).ok());
  EXPECT_TRUE(Check(ext_->comm_get_async_error(comm), "comm_get_async_error").ok());
  EXPECT_TRUE(Check(ext_->comm_destroy(comm), "comm_destroy").ok());
}

// (A) The argument checks, before anything is queued.
TEST_F(Collectives, RefusesBadArgumentsNamingThem) {
  PX_Comm* comm = nullptr;
  ASSERT_TRUE(Create(UniqueName("arguments"), 1, 0, 60000, &comm).ok());
  DeviceTensor in = Upload(Type::kInt32, {1, 2, 3, 4});
  DeviceTensor out = Make(Type::kInt32, 4);
  DeviceTensor int16 = Make(Type::kInt32, 4);
  int16.dl.dtype = {kDLInt, 16, 1};
  absl::Status s = Check(ext_->all_reduce(comm, stream_, &int16.dl, &int16.dl, PX_REDUCE_SUM), "all_reduce");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_NE(s.message().find("int16"), absl::string_view::npos) << s;
  s = Check(ext_->all_reduce(comm, stream_, &in.dl, &out.dl, 99), "all_reduce");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  DeviceTensor wide = Make(Type::kInt32, 8);
  s = Check(ext_->all_gather(comm, stream_, &in.dl, &wide.dl), "all_gather");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  s = Check(ext_->broadcast(comm, stream_, &in.dl, &out.dl, 1), "broadcast");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  DeviceTensor as_float = Make(Type::kFloat32, 4);
  s = Check(ext_->all_to_all(comm, stream_, &in.dl, &as_float.dl), "all_to_all");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  // None of them poisoned the stream.
  EXPECT_TRUE(device_->SynchronizeStream(stream_).ok());
  EXPECT_TRUE(Check(ext_->comm_destroy(comm), "comm_destroy").ok());
}

// (B) Rank 0 of 2 alone: DEADLINE_EXCEEDED within the deadline (and a
// second for the abort), naming rank 1.
TEST_F(Collectives, MissingPeerTimesOutNamingIt) {
  PX_Comm* comm = nullptr;
  const auto start = std::chrono::steady_clock::now();
  absl::Status s = Create(UniqueName("alone"), 2, 0, 2000, &comm);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_LT(ms, 3000) << s;
  EXPECT_NE(s.message().find("rank 0 of 2 timed out after 2000 ms"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("never reached the store: 1"), absl::string_view::npos) << s;
  EXPECT_EQ(comm, nullptr);
}

// (B) Rank 1 of 2 alone: rank 0 never publishes NCCL's id.
TEST_F(Collectives, MissingRankZeroTimesOutNamingIt) {
  PX_Comm* comm = nullptr;
  absl::Status s = Create(UniqueName("no_root"), 2, 1, 500, &comm);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_NE(s.message().find("rank 0 did not publish"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("never reached the store: 0"), absl::string_view::npos) << s;
}

// (C) After comm_abort every call errors (ABORTED) and comm_destroy frees.
TEST_F(Collectives, AbortThenEveryCallErrorsCleanly) {
  PX_Comm* comm = nullptr;
  ASSERT_TRUE(Create(UniqueName("aborted"), 1, 0, 60000, &comm).ok());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(Check(ext_->comm_abort(comm), "comm_abort").ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  DeviceTensor in = Upload(Type::kFloat32, {1, 2, 3});
  DeviceTensor out = Make(Type::kFloat32, 3);
  absl::Status s = Check(ext_->all_reduce(comm, stream_, &in.dl, &out.dl, PX_REDUCE_SUM), "all_reduce");
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted) << s;
  s = Check(ext_->barrier(comm, stream_), "barrier");
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted) << s;
  s = Check(ext_->comm_get_async_error(comm), "comm_get_async_error");
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted) << s;
  EXPECT_TRUE(Check(ext_->comm_abort(comm), "comm_abort").ok());  // again: a no-op
  EXPECT_TRUE(device_->SynchronizeStream(stream_).ok());
  EXPECT_TRUE(Check(ext_->comm_destroy(comm), "comm_destroy").ok());
}

}  // namespace
}  // namespace plexus::cuda_test

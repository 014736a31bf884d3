// The collectives of PX_CollectivesExt on NCCL (collectives.h): argument
// checks, DLPack dtypes and reduce ops to NCCL's, and the calls queued on
// the plugin's CUDA stream of the call.
#include "collectives.h"

#include <atomic>
#include <cstdint>
#include <string>

#include "gpu_device.h"
#include "gpu_error.h"
#include "gpu_stream.h"
#include "nccl_comm.h"
#include "plexus/sdk/plugin.h"

namespace plexus::cuda {
namespace {

constexpr const char* kPlugin = "cuda";
std::atomic<const PX_HostServices*> g_host{nullptr};

// "float32", "bfloat16", "int16", "bool", "complex64", "float32x4".
std::string DTypeName(DLDataType t) {
  std::string name;
  switch (t.code) {
    case kDLInt: name = "int"; break;
    case kDLUInt: name = "uint"; break;
    case kDLFloat: name = "float"; break;
    case kDLBfloat: name = "bfloat"; break;
    case kDLComplex: name = "complex"; break;
    case PX_DL_BOOL: name = "bool"; break;
    case PX_DL_STRING: return "string";
    default: name = "dtype code " + std::to_string(t.code) + " of "; break;
  }
  if (t.code != PX_DL_BOOL || t.bits != 8) name += std::to_string(t.bits);
  if (t.lanes != 1) name += "x" + std::to_string(t.lanes);
  return name;
}

bool ToNcclType(DLDataType t, nccl::DataType* out) {
  if (t.lanes != 1) return false;
  const int bits = t.bits;
  switch (t.code) {
    case kDLFloat:
      if (bits == 16) *out = nccl::kFloat16;
      else if (bits == 32) *out = nccl::kFloat32;
      else if (bits == 64) *out = nccl::kFloat64;
      else return false;
      return true;
    case kDLBfloat:
      *out = nccl::kBfloat16;
      return bits == 16;
    case kDLInt:
      if (bits == 8) *out = nccl::kInt8;
      else if (bits == 32) *out = nccl::kInt32;
      else if (bits == 64) *out = nccl::kInt64;
      else return false;
      return true;
    case kDLUInt:
      if (bits == 8) *out = nccl::kUint8;
      else if (bits == 32) *out = nccl::kUint32;
      else if (bits == 64) *out = nccl::kUint64;
      else return false;
      return true;
    default:
      return false;
  }
}

PX_Status* Fail(const NcclComm& c, PX_Code code, const char* what, const std::string& message) {
  return c.host->status_create(code, (c.Describe(what) + ": " + message).c_str());
}

PX_Status* ToNcclOp(const NcclComm& c, const char* what, int32_t op, nccl::RedOp* out) {
  switch (op) {
    case PX_REDUCE_SUM: *out = nccl::kSum; return nullptr;
    case PX_REDUCE_PROD: *out = nccl::kProd; return nullptr;
    case PX_REDUCE_MIN: *out = nccl::kMin; return nullptr;
    case PX_REDUCE_MAX: *out = nccl::kMax; return nullptr;
    case PX_REDUCE_MEAN: *out = nccl::kAvg; return nullptr;  // NCCL 2.10+ (2.14 is required)
    default:
      return Fail(c, PX_CODE_INVALID_ARGUMENT, what, "unknown reduce_op " + std::to_string(op) +
                                                         " (PX_REDUCE_SUM, PROD, MIN, MAX or MEAN)");
  }
}

// A checked tensor argument.
struct Buffer {
  char* data = nullptr;
  int64_t count = 0;  // elements
  nccl::DataType type = 0;
  size_t element_bytes = 0;
  DLDataType dtype{};
};

PX_Status* CheckTensor(const NcclComm& c, const char* what, const char* role, const DLTensor* t, Buffer* b) {
  if (t == nullptr) return Fail(c, PX_CODE_INVALID_ARGUMENT, what, std::string(role) + " is null");
  if (t->ndim < 0 || (t->ndim > 0 && t->shape == nullptr)) {
    return Fail(c, PX_CODE_INVALID_ARGUMENT, what, std::string(role) + " has no shape");
  }
  if (!ToNcclType(t->dtype, &b->type)) {
    return Fail(c, PX_CODE_UNIMPLEMENTED, what,
                "NCCL cannot move or reduce " + DTypeName(t->dtype) + " (" + role +
                    "); it takes float16, bfloat16, float32, float64, int8, uint8, int32, uint32, int64 "
                    "and uint64");
  }
  b->dtype = t->dtype;
  b->element_bytes = t->dtype.bits / 8;
  b->count = 1;
  int64_t expected_stride = 1;
  for (int i = t->ndim - 1; i >= 0; --i) {
    if (t->shape[i] < 0) return Fail(c, PX_CODE_INVALID_ARGUMENT, what, std::string(role) + " has a negative dim");
    if (t->strides != nullptr && t->shape[i] != 1 && t->strides[i] != expected_stride) {
      return Fail(c, PX_CODE_INVALID_ARGUMENT, what, std::string(role) + " is not dense (row-major)");
    }
    expected_stride *= t->shape[i];
    b->count *= t->shape[i];
  }
  if (t->device.device_type != kDLCUDA && t->device.device_type != kDLCUDAManaged) {
    return Fail(c, PX_CODE_INVALID_ARGUMENT, what,
                std::string(role) + " is not in CUDA device memory (DLPack device type " +
                    std::to_string(t->device.device_type) + ")");
  }
  if (b->count > 0 && t->data == nullptr) {
    return Fail(c, PX_CODE_INVALID_ARGUMENT, what, std::string(role) + " has no data");
  }
  b->data = static_cast<char*>(t->data) + t->byte_offset;
  return nullptr;
}

PX_Status* CheckPair(const NcclComm& c, const char* what, const DLTensor* in, const DLTensor* out, Buffer* bin,
                     Buffer* bout) {
  PX_SDK_RETURN_IF_ERROR(CheckTensor(c, what, "in", in, bin));
  PX_SDK_RETURN_IF_ERROR(CheckTensor(c, what, "out", out, bout));
  if (bin->type != bout->type) {
    return Fail(c, PX_CODE_INVALID_ARGUMENT, what,
                "in is " + DTypeName(bin->dtype) + " but out is " + DTypeName(bout->dtype));
  }
  return nullptr;
}

// Dim 0 of `big` is nranks times dim 0 of `small`, the other dims equal (a
// scalar `small` pairs with a vector of nranks).
PX_Status* CheckStacked(const NcclComm& c, const char* what, const DLTensor* small, const DLTensor* big,
                        const char* rule) {
  bool ok = big->ndim == (small->ndim == 0 ? 1 : small->ndim);
  if (ok) ok = big->shape[0] == int64_t{c.nranks} * (small->ndim == 0 ? 1 : small->shape[0]);
  for (int i = 1; ok && i < big->ndim; ++i) ok = big->shape[i] == small->shape[i];
  return ok ? nullptr : Fail(c, PX_CODE_INVALID_ARGUMENT, what, rule);
}

PX_Status* NullComm(const char* what) {
  const PX_HostServices* host = g_host.load();
  return host->status_create(PX_CODE_INVALID_ARGUMENT, (std::string(what) + ": the communicator is null").c_str());
}

// Queues `enqueue` (see RunOnComm) on the stream: the device made current;
// a failure to queue also becomes the stream's sticky error; synchronous
// debug mode waits for the stream.
template <typename Enqueue>
PX_Status* Queue(NcclComm& c, PX_Stream* handle, const char* what, Enqueue&& enqueue) {
  if (handle == nullptr) return Fail(c, PX_CODE_INVALID_ARGUMENT, what, "the stream is null");
  GpuStream& stream = *sdk::HandleCast<GpuStream>(handle);
  PX_Status* status = nullptr;
  const px_gpu::Error entered = stream.EnterDevice();
  if (entered != px_gpu::kSuccess) {
    status = GpuStatus(c.host, entered, "EnterDevice()", __FILE__, __LINE__);
  } else {
    status = RunOnComm(c, what, [&](nccl::Comm comm) { return enqueue(comm, stream.get()); });
  }
  if (status == nullptr && stream.synchronous_debug) {
    const px_gpu::Error e = px_gpu::StreamSynchronize(stream.get());
    if (e != px_gpu::kSuccess) status = GpuStatus(c.host, e, "StreamSynchronize(stream)", __FILE__, __LINE__);
  }
  stream.error.Record(c.host, status);
  return status;
}

// Runs a slot's body with the communicator checked and exceptions caught.
template <typename Body>
PX_Status* Slot(PX_Comm* handle, const char* what, Body&& body) noexcept {
  if (handle == nullptr) return NullComm(what);
  NcclComm& c = *CommOf(handle);
  return sdk::internal::Guarded(c.host, kPlugin, what, [&]() -> PX_Status* {
    if (c.aborted.load()) return AbortedStatus(c, what);
    return body(c);
  });
}

// -- the slots ----------------------------------------------------------------

PX_Status* CommCreate(PX_Device* device, const PX_KVStore* store, const char* name, int32_t nranks, int32_t rank,
                      int64_t timeout_ms, PX_Comm** out_comm) noexcept {
  const PX_HostServices* host = g_host.load();
  if (device == nullptr) return host->status_create(PX_CODE_INVALID_ARGUMENT, "comm_create: the device is null");
  GpuDevice& d = *sdk::HandleCast<GpuDevice>(device);
  return sdk::internal::Guarded(d.host(), kPlugin, "comm_create", [&]() -> PX_Status* {
    if (out_comm == nullptr) return d.Error(PX_CODE_INVALID_ARGUMENT, "comm_create: out_comm is null");
    *out_comm = nullptr;
    NcclComm* comm = nullptr;
    PX_SDK_RETURN_IF_ERROR(CreateComm(d, store, name, nranks, rank, timeout_ms, &comm));
    *out_comm = CommHandle(comm);
    return nullptr;
  });
}

PX_Status* CommDestroy(PX_Comm* comm) noexcept {
  if (comm == nullptr) return nullptr;
  NcclComm* c = CommOf(comm);
  return sdk::internal::Guarded(c->host, kPlugin, "comm_destroy", [&] { return DestroyComm(c); });
}

PX_Status* CommAbort(PX_Comm* comm) noexcept {
  if (comm == nullptr) return NullComm("comm_abort");
  NcclComm* c = CommOf(comm);
  return sdk::internal::Guarded(c->host, kPlugin, "comm_abort", [&] { return AbortComm(c); });
}

PX_Status* CommGetAsyncError(PX_Comm* comm) noexcept {
  return Slot(comm, "comm_get_async_error", [](NcclComm& c) { return CommAsyncError(&c); });
}

PX_Status* AllReduce(PX_Comm* comm, PX_Stream* stream, const DLTensor* in, DLTensor* out, int32_t op) noexcept {
  constexpr const char* what = "all_reduce";
  return Slot(comm, what, [&](NcclComm& c) -> PX_Status* {
    Buffer i, o;
    nccl::RedOp red;
    PX_SDK_RETURN_IF_ERROR(CheckPair(c, what, in, out, &i, &o));
    PX_SDK_RETURN_IF_ERROR(ToNcclOp(c, what, op, &red));
    if (i.count != o.count) return Fail(c, PX_CODE_INVALID_ARGUMENT, what, "in and out differ in size");
    if (o.count == 0) return nullptr;
    return Queue(c, stream, what, [&](nccl::Comm n, cudaStream_t s) {
      return c.api->ncclAllReduce(i.data, o.data, o.count, o.type, red, n, s);
    });
  });
}

PX_Status* AllGather(PX_Comm* comm, PX_Stream* stream, const DLTensor* in, DLTensor* out) noexcept {
  constexpr const char* what = "all_gather";
  return Slot(comm, what, [&](NcclComm& c) -> PX_Status* {
    Buffer i, o;
    PX_SDK_RETURN_IF_ERROR(CheckPair(c, what, in, out, &i, &o));
    PX_SDK_RETURN_IF_ERROR(
        CheckStacked(c, what, in, out, "out's dim 0 must be nranks times in's, the other dims equal"));
    if (i.count == 0) return nullptr;
    return Queue(c, stream, what, [&](nccl::Comm n, cudaStream_t s) {
      return c.api->ncclAllGather(i.data, o.data, i.count, i.type, n, s);
    });
  });
}

PX_Status* ReduceScatter(PX_Comm* comm, PX_Stream* stream, const DLTensor* in, DLTensor* out,
                         int32_t op) noexcept {
  constexpr const char* what = "reduce_scatter";
  return Slot(comm, what, [&](NcclComm& c) -> PX_Status* {
    Buffer i, o;
    nccl::RedOp red;
    PX_SDK_RETURN_IF_ERROR(CheckPair(c, what, in, out, &i, &o));
    PX_SDK_RETURN_IF_ERROR(ToNcclOp(c, what, op, &red));
    PX_SDK_RETURN_IF_ERROR(
        CheckStacked(c, what, out, in, "in's dim 0 must be nranks times out's, the other dims equal"));
    if (o.count == 0) return nullptr;
    return Queue(c, stream, what, [&](nccl::Comm n, cudaStream_t s) {
      return c.api->ncclReduceScatter(i.data, o.data, o.count, o.type, red, n, s);
    });
  });
}

PX_Status* Broadcast(PX_Comm* comm, PX_Stream* stream, const DLTensor* in, DLTensor* out, int32_t root) noexcept {
  constexpr const char* what = "broadcast";
  return Slot(comm, what, [&](NcclComm& c) -> PX_Status* {
    if (root < 0 || root >= c.nranks) {
      return Fail(c, PX_CODE_INVALID_ARGUMENT, what, "root " + std::to_string(root) + " is not a rank");
    }
    Buffer i, o;
    if (c.rank == root || in != nullptr) {
      PX_SDK_RETURN_IF_ERROR(CheckPair(c, what, in, out, &i, &o));
      if (i.count != o.count) return Fail(c, PX_CODE_INVALID_ARGUMENT, what, "in and out differ in size");
    } else {
      PX_SDK_RETURN_IF_ERROR(CheckTensor(c, what, "out", out, &o));
    }
    if (o.count == 0) return nullptr;
    const void* send = c.rank == root ? i.data : o.data;  // read on the root only
    return Queue(c, stream, what, [&](nccl::Comm n, cudaStream_t s) {
      return c.api->ncclBroadcast(send, o.data, o.count, o.type, root, n, s);
    });
  });
}

PX_Status* AllToAll(PX_Comm* comm, PX_Stream* stream, const DLTensor* in, DLTensor* out) noexcept {
  constexpr const char* what = "all_to_all";
  return Slot(comm, what, [&](NcclComm& c) -> PX_Status* {
    Buffer i, o;
    PX_SDK_RETURN_IF_ERROR(CheckPair(c, what, in, out, &i, &o));
    bool same = in->ndim == out->ndim && in->ndim >= 1;
    for (int d = 0; same && d < in->ndim; ++d) same = in->shape[d] == out->shape[d];
    if (!same || in->shape[0] % c.nranks != 0) {
      return Fail(c, PX_CODE_INVALID_ARGUMENT, what,
                  "in and out must have the same shape, of at least one dim, dim 0 a multiple of nranks");
    }
    if (i.count == 0) return nullptr;
    const size_t block = static_cast<size_t>(i.count / c.nranks);
    const size_t block_bytes = block * i.element_bytes;
    return Queue(c, stream, what, [&](nccl::Comm n, cudaStream_t s) {
      nccl::Result first = c.api->ncclGroupStart();
      if (first != nccl::kSuccess) return first;
      for (int peer = 0; peer < c.nranks && first == nccl::kSuccess; ++peer) {
        first = c.api->ncclSend(i.data + peer * block_bytes, block, i.type, peer, n, s);
        if (first == nccl::kSuccess) first = c.api->ncclRecv(o.data + peer * block_bytes, block, o.type, peer, n, s);
      }
      // Closed in every case: a thread left inside a group would break every later call.
      const nccl::Result end = c.api->ncclGroupEnd();
      return first != nccl::kSuccess ? first : end;
    });
  });
}

PX_Status* Barrier(PX_Comm* comm, PX_Stream* stream) noexcept {
  constexpr const char* what = "barrier";
  return Slot(comm, what, [&](NcclComm& c) -> PX_Status* {
    return Queue(c, stream, what, [&](nccl::Comm n, cudaStream_t s) {
      return c.api->ncclAllReduce(c.barrier_word, c.barrier_word, 1, nccl::kInt32, nccl::kSum, n, s);
    });
  });
}

constexpr PX_CollectivesExt kExtension = {
    sizeof(PX_CollectivesExt), &CommCreate, &CommDestroy,   &CommAbort, &CommGetAsyncError, &AllReduce,
    &AllGather,                &ReduceScatter, &Broadcast, &AllToAll,  &Barrier,
};

}  // namespace

const PX_CollectivesExt* NcclCollectives(const PX_HostServices* host) {
  g_host.store(host);
  return &kExtension;
}

}  // namespace plexus::cuda

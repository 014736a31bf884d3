// The layer's wrapper of the collectives extension (ABI 0.7): communicators
// are the plugin's own handles, checked for liveness; streams and devices
// are the layer's and are translated back to the plugin's.
#include <string>

#include "layer.h"

namespace pxv {
namespace {

Layer* CommLayer(PX_Comm* comm, const char* call, PX_Status** error) {
  Layer* layer = nullptr;
  std::string why = CheckHandle(comm, Kind::kComm, &layer);
  *error = nullptr;
  if (!why.empty()) {
    Layer* named = layer ? layer : AnyLayer();
    *error = Breach(named, call, "comm", why);
    if (*error == nullptr) {
      *error = MakeStatus(named, PX_CODE_FAILED_PRECONDITION, "validation layer: unusable communicator");
    }
    return nullptr;
  }
  return layer;
}

// A collective on a stream: the communicator and the stream checked, then
// `fn(real stream)`.
template <typename Fn>
PX_Status* OnComm(PX_Comm* comm, PX_Stream* stream_handle, const char* call, Fn fn) {
  PX_Status* error = nullptr;
  Layer* layer = CommLayer(comm, call, &error);
  if (layer == nullptr) return error;
  Layer* owner = nullptr;
  std::string why = CheckHandle(stream_handle, Kind::kStream, &owner);
  if (!why.empty()) {
    PX_Status* s = Breach(layer, call, "stream", why);
    return s ? s : MakeStatus(layer, PX_CODE_FAILED_PRECONDITION, "validation layer: unusable stream");
  }
  auto* wrap = reinterpret_cast<StreamWrap*>(stream_handle);
  StreamWrap* stream = nullptr;
  if (PX_Status* s = EnterStream(wrap->device, stream_handle, call, "stream", &stream)) return s;
  PX_Status* s = fn(layer->real.collectives, stream->real);
  LeaveStream(stream);
  return s;
}

PX_Status* CommCreate(PX_Device* handle, const PX_KVStore* store, const char* name, int32_t nranks,
                      int32_t rank, int64_t timeout_ms, PX_Comm** out_comm) {
  DeviceWrap* device = nullptr;
  if (PX_Status* s = EnterDevice(handle, "comm_create", &device)) return s;
  Layer* layer = device->layer;
  if (store == nullptr) return Breach(layer, "comm_create", "store", "is NULL");
  if (name == nullptr) return Breach(layer, "comm_create", "name", "is NULL");
  if (out_comm == nullptr) return Breach(layer, "comm_create", "out_comm", "is NULL");
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    return Breach(layer, "comm_create", "rank", "rank " + std::to_string(rank) + " of " +
                  std::to_string(nranks) + " is out of range");
  }
  PX_Status* s = layer->real.collectives->comm_create(device->real, store, name, nranks, rank, timeout_ms,
                                                      out_comm);
  if (s != nullptr) return s;
  if (*out_comm == nullptr) {
    return Breach(layer, "comm_create", "out_comm", "the plugin returned OK with a NULL communicator",
                  PX_CODE_INTERNAL);
  }
  AddHandle(*out_comm, Kind::kComm, layer);
  return nullptr;
}

PX_Status* CommDestroy(PX_Comm* comm) {
  PX_Status* error = nullptr;
  Layer* layer = CommLayer(comm, "comm_destroy", &error);
  if (layer == nullptr) return error;
  KillHandle(comm);
  return layer->real.collectives->comm_destroy(comm);
}

PX_Status* CommAbort(PX_Comm* comm) {
  PX_Status* error = nullptr;
  Layer* layer = CommLayer(comm, "comm_abort", &error);
  return layer == nullptr ? error : layer->real.collectives->comm_abort(comm);
}

PX_Status* CommAsyncError(PX_Comm* comm) {
  PX_Status* error = nullptr;
  Layer* layer = CommLayer(comm, "comm_get_async_error", &error);
  if (layer == nullptr) return error;
  auto fn = layer->real.collectives->comm_get_async_error;
  return fn ? fn(comm) : nullptr;
}

PX_Status* Missing(Layer* layer, const char* call) {
  return MakeStatus(layer, PX_CODE_UNIMPLEMENTED, std::string(call) + " is not implemented");
}

PX_Status* AllReduce(PX_Comm* comm, PX_Stream* stream, const DLTensor* in, DLTensor* out, int32_t op) {
  return OnComm(comm, stream, "all_reduce", [&](const PX_CollectivesExt* c, PX_Stream* real) {
    return c->all_reduce ? c->all_reduce(comm, real, in, out, op) : Missing(AnyLayer(), "all_reduce");
  });
}

PX_Status* AllGather(PX_Comm* comm, PX_Stream* stream, const DLTensor* in, DLTensor* out) {
  return OnComm(comm, stream, "all_gather", [&](const PX_CollectivesExt* c, PX_Stream* real) {
    return c->all_gather ? c->all_gather(comm, real, in, out) : Missing(AnyLayer(), "all_gather");
  });
}

PX_Status* ReduceScatter(PX_Comm* comm, PX_Stream* stream, const DLTensor* in, DLTensor* out, int32_t op) {
  return OnComm(comm, stream, "reduce_scatter", [&](const PX_CollectivesExt* c, PX_Stream* real) {
    return c->reduce_scatter ? c->reduce_scatter(comm, real, in, out, op) : Missing(AnyLayer(), "reduce_scatter");
  });
}

PX_Status* Broadcast(PX_Comm* comm, PX_Stream* stream, const DLTensor* in, DLTensor* out, int32_t root) {
  return OnComm(comm, stream, "broadcast", [&](const PX_CollectivesExt* c, PX_Stream* real) {
    return c->broadcast ? c->broadcast(comm, real, in, out, root) : Missing(AnyLayer(), "broadcast");
  });
}

PX_Status* AllToAll(PX_Comm* comm, PX_Stream* stream, const DLTensor* in, DLTensor* out) {
  return OnComm(comm, stream, "all_to_all", [&](const PX_CollectivesExt* c, PX_Stream* real) {
    return c->all_to_all ? c->all_to_all(comm, real, in, out) : Missing(AnyLayer(), "all_to_all");
  });
}

PX_Status* Barrier(PX_Comm* comm, PX_Stream* stream) {
  return OnComm(comm, stream, "barrier", [&](const PX_CollectivesExt* c, PX_Stream* real) {
    return c->barrier ? c->barrier(comm, real) : Missing(AnyLayer(), "barrier");
  });
}

}  // namespace

void FillCollectives(Layer* layer, PX_PluginTable* out) {
  const PX_PluginTable& t = layer->real;
  if (t.abi_minor < 7 || !PX_STRUCT_HAS(&t, PX_PluginTable, collectives) || t.collectives == nullptr) return;
  const PX_CollectivesExt* c = t.collectives;
  if (!PX_STRUCT_HAS(c, PX_CollectivesExt, barrier)) return;  // the host ignores it too
  PX_CollectivesExt& w = layer->collectives;
  w.struct_size = sizeof(w);
  w.comm_create = c->comm_create ? CommCreate : nullptr;
  w.comm_destroy = c->comm_destroy ? CommDestroy : nullptr;
  w.comm_abort = c->comm_abort ? CommAbort : nullptr;
  w.comm_get_async_error = c->comm_get_async_error ? CommAsyncError : nullptr;
  w.all_reduce = c->all_reduce ? AllReduce : nullptr;
  w.all_gather = c->all_gather ? AllGather : nullptr;
  w.reduce_scatter = c->reduce_scatter ? ReduceScatter : nullptr;
  w.broadcast = c->broadcast ? Broadcast : nullptr;
  w.all_to_all = c->all_to_all ? AllToAll : nullptr;
  w.barrier = c->barrier ? Barrier : nullptr;
  out->collectives = &w;
}

}  // namespace pxv

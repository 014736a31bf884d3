// The layer's wrappers of the stream, event, callback, capture and
// collectives slots. Streams and events are the layer's own handles: each
// call checks that the handle is live, belongs to the device it is used
// with, and (streams) is not in use by another call at the same time.
#include <string>

#include "layer.h"

namespace pxv {

PX_Status* EnterStream(DeviceWrap* device, PX_Stream* handle, const char* call, const char* arg,
                       StreamWrap** out) {
  *out = nullptr;
  Layer* layer = device->layer;
  std::string why = CheckHandle(handle, Kind::kStream, nullptr);
  if (!why.empty()) {
    PX_Status* s = Breach(layer, call, arg, why);
    return s ? s : MakeStatus(layer, PX_CODE_FAILED_PRECONDITION, "validation layer: unusable stream handle");
  }
  auto* stream = reinterpret_cast<StreamWrap*>(handle);
  if (stream->device != device) {
    if (PX_Status* s = Breach(layer, call, arg, "belongs to device " + std::to_string(stream->device->ordinal) +
                              ", not to device " + std::to_string(device->ordinal))) {
      return s;
    }
  }
  if (stream->busy.fetch_add(1) != 0) {
    PX_Status* s = Breach(layer, call, arg, "called while another call on the same stream is running "
                                            "(the host must serialize the calls on a stream)");
    if (s != nullptr) {
      stream->busy.fetch_sub(1);
      return s;
    }
  }
  *out = stream;
  return nullptr;
}

void LeaveStream(StreamWrap* stream) {
  if (stream != nullptr) stream->busy.fetch_sub(1);
}

namespace {

// A stream call: device and stream checked, then `fn(real device, real stream)`.
template <typename Fn>
PX_Status* OnStream(PX_Device* handle, PX_Stream* stream_handle, const char* call, Fn fn) {
  DeviceWrap* device = nullptr;
  if (PX_Status* s = EnterDevice(handle, call, &device)) return s;
  StreamWrap* stream = nullptr;
  if (PX_Status* s = EnterStream(device, stream_handle, call, "stream", &stream)) return s;
  PX_Status* s = fn(device, stream);
  LeaveStream(stream);
  return s;
}

PX_Status* StreamCreate(PX_Device* handle, PX_Stream** out_stream) {
  DeviceWrap* device = nullptr;
  if (PX_Status* s = EnterDevice(handle, "stream_create", &device)) return s;
  Layer* layer = device->layer;
  if (out_stream == nullptr) return Breach(layer, "stream_create", "out_stream", "is NULL");
  if (PX_Status* s = FaultCall(layer, "PLEXUS_FAULT_STREAM_FAIL", "create")) return s;
  PX_Stream* real = nullptr;
  PX_Status* s = layer->real.stream_create(device->real, &real);
  if (s != nullptr) return s;
  if (real == nullptr) {
    return Breach(layer, "stream_create", "out_stream", "the plugin returned OK with a NULL stream",
                  PX_CODE_INTERNAL);
  }
  auto* stream = new StreamWrap();
  stream->layer = layer;
  stream->device = device;
  stream->real = real;
  AddHandle(stream, Kind::kStream, layer);
  *out_stream = reinterpret_cast<PX_Stream*>(stream);
  return nullptr;
}

void StreamDestroy(PX_Device* handle, PX_Stream* stream_handle) {
  Layer* layer = nullptr;
  std::string why = CheckHandle(handle, Kind::kDevice, &layer);
  if (why.empty()) why = CheckHandle(stream_handle, Kind::kStream, &layer);
  if (!why.empty()) {
    BreachLater(layer ? layer : AnyLayer(), "stream_destroy", "stream", why);
    return;
  }
  auto* device = reinterpret_cast<DeviceWrap*>(handle);
  auto* stream = reinterpret_cast<StreamWrap*>(stream_handle);
  if (stream->busy.load() != 0) {
    BreachLater(device->layer, "stream_destroy", "stream", "destroyed while another call on it is running");
  }
  device->layer->real.stream_destroy(device->real, stream->real);
  KillHandle(stream);
}

PX_Status* StreamSynchronize(PX_Device* handle, PX_Stream* stream) {
  return OnStream(handle, stream, "stream_synchronize", [](DeviceWrap* d, StreamWrap* s) -> PX_Status* {
    if (PX_Status* f = FaultCall(d->layer, "PLEXUS_FAULT_STREAM_FAIL", "synchronize")) return f;
    return d->layer->real.stream_synchronize(d->real, s->real);
  });
}

PX_Status* StreamGetStatus(PX_Device* handle, PX_Stream* stream) {
  return OnStream(handle, stream, "stream_get_status", [](DeviceWrap* d, StreamWrap* s) {
    return d->layer->real.stream_get_status(d->real, s->real);
  });
}

template <bool kDstDevice, bool kSrcDevice>
PX_Status* CopyAsync(PX_Device* handle, PX_Stream* stream, void* dst, const void* src, size_t bytes) {
  const char* call =
      kDstDevice ? (kSrcDevice ? "memcpy_d2d_async" : "memcpy_h2d_async") : "memcpy_d2h_async";
  return OnStream(handle, stream, call, [&](DeviceWrap* d, StreamWrap* s) -> PX_Status* {
    if (PX_Status* bad = CheckCopy(d, call, dst, src, bytes, kDstDevice, kSrcDevice)) return bad;
    const PX_PluginTable& t = d->layer->real;
    auto fn = kDstDevice ? (kSrcDevice ? t.memcpy_d2d_async : t.memcpy_h2d_async) : t.memcpy_d2h_async;
    return fn(d->real, s->real, dst, src, bytes);
  });
}

PX_Status* EnterEvent(DeviceWrap* device, PX_Event* handle, const char* call, EventWrap** out) {
  std::string why = CheckHandle(handle, Kind::kEvent, nullptr);
  if (!why.empty()) {
    PX_Status* s = Breach(device->layer, call, "event", why);
    return s ? s : MakeStatus(device->layer, PX_CODE_FAILED_PRECONDITION, "validation layer: unusable event");
  }
  *out = reinterpret_cast<EventWrap*>(handle);
  return nullptr;
}

PX_Status* EventCreate(PX_Device* handle, PX_Event** out_event) {
  DeviceWrap* device = nullptr;
  if (PX_Status* s = EnterDevice(handle, "event_create", &device)) return s;
  Layer* layer = device->layer;
  if (out_event == nullptr) return Breach(layer, "event_create", "out_event", "is NULL");
  if (PX_Status* s = FaultCall(layer, "PLEXUS_FAULT_EVENT_FAIL", "create")) return s;
  PX_Event* real = nullptr;
  PX_Status* s = layer->real.event_create(device->real, &real);
  if (s != nullptr) return s;
  if (real == nullptr) {
    return Breach(layer, "event_create", "out_event", "the plugin returned OK with a NULL event",
                  PX_CODE_INTERNAL);
  }
  auto* event = new EventWrap();
  event->layer = layer;
  event->device = device;
  event->real = real;
  AddHandle(event, Kind::kEvent, layer);
  *out_event = reinterpret_cast<PX_Event*>(event);
  return nullptr;
}

void EventDestroy(PX_Device* handle, PX_Event* event_handle) {
  Layer* layer = nullptr;
  std::string why = CheckHandle(handle, Kind::kDevice, &layer);
  if (why.empty()) why = CheckHandle(event_handle, Kind::kEvent, &layer);
  if (!why.empty()) {
    BreachLater(layer ? layer : AnyLayer(), "event_destroy", "event", why);
    return;
  }
  auto* device = reinterpret_cast<DeviceWrap*>(handle);
  auto* event = reinterpret_cast<EventWrap*>(event_handle);
  device->layer->real.event_destroy(device->real, event->real);
  KillHandle(event);
}

PX_Status* EventRecord(PX_Device* handle, PX_Stream* stream, PX_Event* event_handle) {
  return OnStream(handle, stream, "event_record", [&](DeviceWrap* d, StreamWrap* s) -> PX_Status* {
    EventWrap* event = nullptr;
    if (PX_Status* bad = EnterEvent(d, event_handle, "event_record", &event)) return bad;
    if (PX_Status* f = FaultCall(d->layer, "PLEXUS_FAULT_EVENT_FAIL", "record")) return f;
    return d->layer->real.event_record(d->real, s->real, event->real);
  });
}

PX_Status* EventSynchronize(PX_Device* handle, PX_Event* event_handle) {
  DeviceWrap* device = nullptr;
  if (PX_Status* s = EnterDevice(handle, "event_synchronize", &device)) return s;
  EventWrap* event = nullptr;
  if (PX_Status* s = EnterEvent(device, event_handle, "event_synchronize", &event)) return s;
  if (PX_Status* f = FaultCall(device->layer, "PLEXUS_FAULT_EVENT_FAIL", "synchronize")) return f;
  return device->layer->real.event_synchronize(device->real, event->real);
}

PX_Status* StreamWaitEvent(PX_Device* handle, PX_Stream* stream, PX_Event* event_handle) {
  return OnStream(handle, stream, "stream_wait_event", [&](DeviceWrap* d, StreamWrap* s) -> PX_Status* {
    EventWrap* event = nullptr;
    if (PX_Status* bad = EnterEvent(d, event_handle, "stream_wait_event", &event)) return bad;
    if (PX_Status* f = FaultCall(d->layer, "PLEXUS_FAULT_EVENT_FAIL", "wait")) return f;
    return d->layer->real.stream_wait_event(d->real, s->real, event->real);
  });
}

PX_Status* StreamAddCallback(PX_Device* handle, PX_Stream* stream, PX_HostCallbackFn fn, void* arg) {
  return OnStream(handle, stream, "stream_add_callback", [&](DeviceWrap* d, StreamWrap* s) -> PX_Status* {
    if (fn == nullptr) return Breach(d->layer, "stream_add_callback", "fn", "is NULL");
    return d->layer->real.stream_add_callback(d->real, s->real, fn, arg);
  });
}

PX_Status* CaptureBegin(PX_Device* handle, PX_Stream* stream) {
  return OnStream(handle, stream, "stream_capture_begin", [](DeviceWrap* d, StreamWrap* s) -> PX_Status* {
    if (s->capturing) return Breach(d->layer, "stream_capture_begin", "stream", "is already capturing");
    PX_Status* status = d->layer->real.stream_capture_begin(d->real, s->real);
    if (status == nullptr) s->capturing = true;
    return status;
  });
}

PX_Status* CaptureEnd(PX_Device* handle, PX_Stream* stream, PX_Graph** out_graph) {
  return OnStream(handle, stream, "stream_capture_end", [&](DeviceWrap* d, StreamWrap* s) -> PX_Status* {
    if (out_graph == nullptr) return Breach(d->layer, "stream_capture_end", "out_graph", "is NULL");
    if (!s->capturing) return Breach(d->layer, "stream_capture_end", "stream", "is not capturing");
    s->capturing = false;
    PX_Status* status = d->layer->real.stream_capture_end(d->real, s->real, out_graph);
    if (status == nullptr && *out_graph == nullptr) {
      return Breach(d->layer, "stream_capture_end", "out_graph", "the plugin returned OK with a NULL graph",
                    PX_CODE_INTERNAL);
    }
    if (status == nullptr) AddHandle(*out_graph, Kind::kGraph, d->layer);
    return status;
  });
}

PX_Status* GraphLaunch(PX_Device* handle, PX_Stream* stream, PX_Graph* graph) {
  return OnStream(handle, stream, "graph_launch", [&](DeviceWrap* d, StreamWrap* s) -> PX_Status* {
    std::string why = CheckHandle(graph, Kind::kGraph, nullptr);
    if (!why.empty()) return Breach(d->layer, "graph_launch", "graph", why);
    return d->layer->real.graph_launch(d->real, s->real, graph);
  });
}

void GraphDestroy(PX_Device* handle, PX_Graph* graph) {
  Layer* layer = nullptr;
  std::string why = CheckHandle(handle, Kind::kDevice, &layer);
  if (why.empty()) why = CheckHandle(graph, Kind::kGraph, &layer);
  if (!why.empty()) {
    BreachLater(layer ? layer : AnyLayer(), "graph_destroy", "graph", why);
    return;
  }
  auto* device = reinterpret_cast<DeviceWrap*>(handle);
  KillHandle(graph);
  device->layer->real.graph_destroy(device->real, graph);
}

PX_Status* NativeHandle(PX_Device* handle, PX_Stream* stream, uint64_t* out_handle) {
  return OnStream(handle, stream, "stream_native_handle", [&](DeviceWrap* d, StreamWrap* s) -> PX_Status* {
    if (out_handle == nullptr) return Breach(d->layer, "stream_native_handle", "out_handle", "is NULL");
    PX_Status* status = d->layer->real.stream_native_handle(d->real, s->real, out_handle);
    if (status == nullptr && *out_handle <= 2) {
      return Breach(d->layer, "stream_native_handle", "out_handle",
                    "the plugin returned OK with handle " + std::to_string(*out_handle) +
                        " (0, 1 and 2 are not stream handles)",
                    PX_CODE_INTERNAL);
    }
    return status;
  });
}

PX_Status* NativeWait(PX_Device* handle, uint64_t native, PX_Stream* stream) {
  return OnStream(handle, stream, "native_stream_wait", [&](DeviceWrap* d, StreamWrap* s) -> PX_Status* {
    return d->layer->real.native_stream_wait(d->real, native, s->real);
  });
}

template <typename T>
void Slot(T* wrapped, T real, T wrapper) { *wrapped = real != nullptr ? wrapper : nullptr; }

}  // namespace

void FillStreamSlots(Layer* layer, PX_PluginTable* out) {
  const PX_PluginTable& t = layer->real;
  Slot(&out->stream_create, t.stream_create, StreamCreate);
  Slot(&out->stream_destroy, t.stream_destroy, StreamDestroy);
  Slot(&out->stream_synchronize, t.stream_synchronize, StreamSynchronize);
  Slot(&out->stream_get_status, t.stream_get_status, StreamGetStatus);
  Slot(&out->memcpy_h2d_async, t.memcpy_h2d_async, CopyAsync<true, false>);
  Slot(&out->memcpy_d2h_async, t.memcpy_d2h_async, CopyAsync<false, true>);
  Slot(&out->memcpy_d2d_async, t.memcpy_d2d_async, CopyAsync<true, true>);
  Slot(&out->event_create, t.event_create, EventCreate);
  Slot(&out->event_destroy, t.event_destroy, EventDestroy);
  Slot(&out->event_record, t.event_record, EventRecord);
  Slot(&out->event_synchronize, t.event_synchronize, EventSynchronize);
  Slot(&out->stream_wait_event, t.stream_wait_event, StreamWaitEvent);
  Slot(&out->stream_add_callback, t.stream_add_callback, StreamAddCallback);
  if (t.struct_size >= offsetof(PX_PluginTable, graph_destroy) + sizeof(t.graph_destroy)) {
    Slot(&out->stream_capture_begin, t.stream_capture_begin, CaptureBegin);
    Slot(&out->stream_capture_end, t.stream_capture_end, CaptureEnd);
    Slot(&out->graph_launch, t.graph_launch, GraphLaunch);
    Slot(&out->graph_destroy, t.graph_destroy, GraphDestroy);
  }
  if (t.abi_minor >= 8 && PX_STRUCT_HAS(&t, PX_PluginTable, native_stream_wait)) {
    Slot(&out->stream_native_handle, t.stream_native_handle, NativeHandle);
    Slot(&out->native_stream_wait, t.native_stream_wait, NativeWait);
  } else if (PX_STRUCT_HAS(&t, PX_PluginTable, native_stream_wait)) {
    out->stream_native_handle = nullptr;
    out->native_stream_wait = nullptr;
  }
}

}  // namespace pxv

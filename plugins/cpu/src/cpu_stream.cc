#include "cpu_stream.h"

#include <mutex>
#include <new>
#include <string>
#include <utility>

#include "cpu_device.h"
#include "plexus/sdk/plugin_sdk.h"

namespace plexus::cpu {
namespace {

// A status kept by value: statuses are created by the host and owned by
// whoever receives them, so a stream or event keeps the code and message and
// makes a fresh status each time it reports.
struct SavedStatus {
  PX_Code code = PX_CODE_OK;
  std::string message;

  PX_Status* ToStatus(const PX_HostServices* host) const {
    if (code == PX_CODE_OK) return nullptr;
    return host->status_create(code, message.c_str());
  }
};

// Calls on one stream are serialized by the host, but an event may be
// synchronized on one thread while another records it: both hold a mutex.
struct CpuStream {
  std::mutex mu;
  SavedStatus status;  // the first error of the work on the stream
};

struct CpuEvent {
  std::mutex mu;
  SavedStatus status;  // the stream's status when the event was recorded
};

CpuStream* AsCpuStream(PX_Stream* stream) {
  return reinterpret_cast<CpuStream*>(stream);
}
CpuEvent* AsCpuEvent(PX_Event* event) {
  return reinterpret_cast<CpuEvent*>(event);
}

SavedStatus ReadStatus(CpuStream* stream) {
  std::lock_guard<std::mutex> lock(stream->mu);
  return stream->status;
}

// Keeps the first error only: later work on a failed stream reports the cause.
void RecordError(const PX_HostServices* host, CpuStream* stream,
                 const PX_Status* status) {
  std::lock_guard<std::mutex> lock(stream->mu);
  if (stream->status.code != PX_CODE_OK) return;
  stream->status.code = host->status_code(status);
  stream->status.message = host->status_message(status);
}

}  // namespace

PX_Status* StreamCreate(PX_Device* device, PX_Stream** out_stream) {
  auto* stream = new (std::nothrow) CpuStream();
  if (stream == nullptr) {
    return px_sdk_error(DeviceHost(device), PX_CODE_RESOURCE_EXHAUSTED,
                        "out of host memory creating a CPU stream");
  }
  *out_stream = reinterpret_cast<PX_Stream*>(stream);
  return nullptr;
}

void StreamDestroy(PX_Device* device, PX_Stream* stream) {
  delete AsCpuStream(stream);
}

PX_Status* StreamSynchronize(PX_Device* device, PX_Stream* stream) {
  // Nothing to wait for: all work already ran.
  return StreamGetStatus(device, stream);
}

PX_Status* StreamGetStatus(PX_Device* device, PX_Stream* stream) {
  try {
    return ReadStatus(AsCpuStream(stream)).ToStatus(DeviceHost(device));
  } catch (...) {
    return px_sdk_error(DeviceHost(device), PX_CODE_RESOURCE_EXHAUSTED,
                        "out of host memory reading a CPU stream's status");
  }
}

PX_Status* StreamAddCallback(PX_Device* device, PX_Stream* stream,
                             PX_HostCallbackFn fn, void* arg) {
  const PX_HostServices* host = DeviceHost(device);
  // Earlier work is done, so the callback runs now, on this thread, with a
  // status borrowed for the call.
  PX_Status* status = StreamGetStatus(device, stream);
  fn(arg, status);
  if (status != nullptr) host->status_destroy(status);
  return nullptr;
}

PX_Status* MemcpyAsync(PX_Device* device, PX_Stream* stream, void* dst,
                       const void* src, size_t bytes) {
  PX_Status* status = Memcpy(device, dst, src, bytes);
  // The copy is work on the stream: a failure also becomes the stream's
  // sticky error, as a device would report it at the next synchronize.
  if (status != nullptr) {
    try {
      RecordError(DeviceHost(device), AsCpuStream(stream), status);
    } catch (...) {
      // Out of memory keeping the message: the caller still gets the error.
    }
  }
  return status;
}

PX_Status* EventCreate(PX_Device* device, PX_Event** out_event) {
  auto* event = new (std::nothrow) CpuEvent();
  if (event == nullptr) {
    return px_sdk_error(DeviceHost(device), PX_CODE_RESOURCE_EXHAUSTED,
                        "out of host memory creating a CPU event");
  }
  *out_event = reinterpret_cast<PX_Event*>(event);
  return nullptr;
}

void EventDestroy(PX_Device* device, PX_Event* event) {
  delete AsCpuEvent(event);
}

PX_Status* EventRecord(PX_Device* device, PX_Stream* stream, PX_Event* event) {
  try {
    SavedStatus status = ReadStatus(AsCpuStream(stream));
    CpuEvent* cpu_event = AsCpuEvent(event);
    std::lock_guard<std::mutex> lock(cpu_event->mu);
    cpu_event->status = std::move(status);
    return nullptr;
  } catch (...) {
    return px_sdk_error(DeviceHost(device), PX_CODE_RESOURCE_EXHAUSTED,
                        "out of host memory recording a CPU event");
  }
}

PX_Status* EventSynchronize(PX_Device* device, PX_Event* event) {
  try {
    CpuEvent* cpu_event = AsCpuEvent(event);
    std::lock_guard<std::mutex> lock(cpu_event->mu);
    return cpu_event->status.ToStatus(DeviceHost(device));
  } catch (...) {
    return px_sdk_error(DeviceHost(device), PX_CODE_INTERNAL,
                        "synchronizing a CPU event failed");
  }
}

PX_Status* StreamWaitEvent(PX_Device* device, PX_Stream* stream,
                           PX_Event* event) {
  // The event's work finished when it was recorded: nothing to wait for.
  return nullptr;
}

}  // namespace plexus::cpu

// Streams and events of the CPU device. Work runs synchronously on the
// calling thread (kernels run inline in compute), so a stream is only its
// sticky status and an event only the status it captured. Every function here
// fills a PX_PluginTable slot of the same name.
#ifndef PLEXUS_PLUGINS_CPU_CPU_STREAM_H_
#define PLEXUS_PLUGINS_CPU_CPU_STREAM_H_

#include <cstddef>

#include "plexus/plugin_api.h"

namespace plexus::cpu {

PX_Status* StreamCreate(PX_Device* device, PX_Stream** out_stream);
void StreamDestroy(PX_Device* device, PX_Stream* stream);
PX_Status* StreamSynchronize(PX_Device* device, PX_Stream* stream);
PX_Status* StreamGetStatus(PX_Device* device, PX_Stream* stream);
PX_Status* StreamAddCallback(PX_Device* device, PX_Stream* stream,
                             PX_HostCallbackFn fn, void* arg);

// The three async copy directions; done now, on the calling thread.
PX_Status* MemcpyAsync(PX_Device* device, PX_Stream* stream, void* dst,
                       const void* src, size_t bytes);

PX_Status* EventCreate(PX_Device* device, PX_Event** out_event);
void EventDestroy(PX_Device* device, PX_Event* event);
PX_Status* EventRecord(PX_Device* device, PX_Stream* stream, PX_Event* event);
PX_Status* EventSynchronize(PX_Device* device, PX_Event* event);
PX_Status* StreamWaitEvent(PX_Device* device, PX_Stream* stream,
                           PX_Event* event);

}  // namespace plexus::cpu

#endif  // PLEXUS_PLUGINS_CPU_CPU_STREAM_H_

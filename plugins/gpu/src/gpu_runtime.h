// The GPU runtime calls that the shared kernel sources make from host code,
// under one set of names for CUDA and HIP. The CUDA plugin (plugins/cuda)
// and the ROCm plugin (plugins/rocm, with PX_GPU_HIP defined) both compile
// the sources of this folder (plugins/gpu/src): the device layer
// (gpu_device, gpu_stream, gpu_error), the kernel classes (kernels/*.cc) and
// the device code (kernels/*.cu, see gpu_portability.h). Host code uses only
// the names below, never cuda* or hip*.
//
// Host-only: safe to include from a file the host compiler builds.
#ifndef PLEXUS_PLUGINS_GPU_GPU_RUNTIME_H_
#define PLEXUS_PLUGINS_GPU_GPU_RUNTIME_H_

#include <cstddef>
#include <cstdint>

#if defined(PX_GPU_HIP)
#include <hip/hip_runtime_api.h>
#define PX_GPU_RUNTIME_NAME "HIP"
#define PX_GPU_DEVICE_NAME "ROCM"
#define PX_GPU_NAME(suffix) hip##suffix
#else
#include <cuda_runtime_api.h>
#define PX_GPU_RUNTIME_NAME "CUDA"
#define PX_GPU_DEVICE_NAME "CUDA"
#define PX_GPU_NAME(suffix) cuda##suffix
#endif

namespace px_gpu {

using Stream = PX_GPU_NAME(Stream_t);
using Error = PX_GPU_NAME(Error_t);
constexpr Error kSuccess = PX_GPU_NAME(Success);
constexpr Error kErrorInvalidPitchValue = PX_GPU_NAME(ErrorInvalidPitchValue);

// Directions of a copy.
using CopyKind = PX_GPU_NAME(MemcpyKind);
constexpr CopyKind kHostToDevice = PX_GPU_NAME(MemcpyHostToDevice);
constexpr CopyKind kDeviceToHost = PX_GPU_NAME(MemcpyDeviceToHost);
constexpr CopyKind kDeviceToDevice = PX_GPU_NAME(MemcpyDeviceToDevice);

inline Error GetLastError() { return PX_GPU_NAME(GetLastError)(); }
inline const char* ErrorString(Error e) { return PX_GPU_NAME(GetErrorString)(e); }
inline const char* ErrorName(Error e) { return PX_GPU_NAME(GetErrorName)(e); }
inline Error SetDevice(int ordinal) { return PX_GPU_NAME(SetDevice)(ordinal); }
inline Error StreamSynchronize(Stream s) { return PX_GPU_NAME(StreamSynchronize)(s); }
inline Error StreamDestroy(Stream s) { return PX_GPU_NAME(StreamDestroy)(s); }
inline Error MemcpyAsync(void* dst, const void* src, size_t bytes, CopyKind kind, Stream s) {
  return PX_GPU_NAME(MemcpyAsync)(dst, src, bytes, kind, s);
}
inline Error Memcpy2DAsync(void* dst, size_t dst_pitch, const void* src, size_t src_pitch,
                           size_t width, size_t height, CopyKind kind, Stream s) {
  return PX_GPU_NAME(Memcpy2DAsync)(dst, dst_pitch, src, src_pitch, width, height, kind, s);
}
inline Error MemsetAsync(void* dst, int byte, size_t bytes, Stream s) {
  return PX_GPU_NAME(MemsetAsync)(dst, byte, bytes, s);
}
// Stream-ordered device memory (CUDA 11.2+, HIP 5.2+).
inline Error MallocAsync(void** p, size_t bytes, Stream s) {
  return PX_GPU_NAME(MallocAsync)(p, bytes, s);
}
inline Error FreeAsync(void* p, Stream s) { return PX_GPU_NAME(FreeAsync)(p, s); }
inline Error Malloc(void** p, size_t bytes) { return PX_GPU_NAME(Malloc)(p, bytes); }

// -- the device layer's (gpu_device.cc) --
using Event = PX_GPU_NAME(Event_t);
using Graph = PX_GPU_NAME(Graph_t);
using GraphExec = PX_GPU_NAME(GraphExec_t);
using HostFn = PX_GPU_NAME(HostFn_t);
constexpr Error kErrorNotReady = PX_GPU_NAME(ErrorNotReady);
inline Error Free(void* p) { return PX_GPU_NAME(Free)(p); }
// Pinned host memory (HIP names it differently).
#if defined(PX_GPU_HIP)
inline Error MallocHost(void** p, size_t bytes) { return hipHostMalloc(p, bytes, 0); }
inline Error FreeHost(void* p) { return hipHostFree(p); }
#else
inline Error MallocHost(void** p, size_t bytes) { return cudaMallocHost(p, bytes); }
inline Error FreeHost(void* p) { return cudaFreeHost(p); }
#endif
inline Error MemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  return PX_GPU_NAME(MemGetInfo)(free_bytes, total_bytes);
}
// Freed memory stays in the device's stream-ordered pool for reuse.
inline Error KeepFreedPoolMemory(int ordinal) {
  PX_GPU_NAME(MemPool_t) pool = nullptr;
  Error e = PX_GPU_NAME(DeviceGetDefaultMemPool)(&pool, ordinal);
  uint64_t keep = UINT64_MAX;
  if (e == kSuccess) e = PX_GPU_NAME(MemPoolSetAttribute)(pool, PX_GPU_NAME(MemPoolAttrReleaseThreshold), &keep);
  return e;
}
inline Error StreamCreateNonBlocking(Stream* s) {
  return PX_GPU_NAME(StreamCreateWithFlags)(s, PX_GPU_NAME(StreamNonBlocking));
}
inline Error StreamQuery(Stream s) { return PX_GPU_NAME(StreamQuery)(s); }
#if defined(PX_GPU_HIP)
// HIP 5.2 declares hipLaunchHostFunc but its runtime does not define it:
// the older stream callback, which also hands over the stream's status.
struct HostFnCall {
  HostFn fn;
  void* arg;
};
inline void RunHostFnCall(hipStream_t, hipError_t, void* data) {
  HostFnCall* call = static_cast<HostFnCall*>(data);
  call->fn(call->arg);
  delete call;
}
inline Error LaunchHostFunc(Stream s, HostFn fn, void* arg) {
  HostFnCall* call = new HostFnCall{fn, arg};
  const Error e = hipStreamAddCallback(s, &RunHostFnCall, call, 0);
  if (e != kSuccess) delete call;
  return e;
}
#else
inline Error LaunchHostFunc(Stream s, HostFn fn, void* arg) { return cudaLaunchHostFunc(s, fn, arg); }
#endif
inline Error EventCreateNoTiming(Event* e) {
  return PX_GPU_NAME(EventCreateWithFlags)(e, PX_GPU_NAME(EventDisableTiming));
}
inline Error EventDestroy(Event e) { return PX_GPU_NAME(EventDestroy)(e); }
inline Error EventRecord(Event e, Stream s) { return PX_GPU_NAME(EventRecord)(e, s); }
inline Error EventSynchronize(Event e) { return PX_GPU_NAME(EventSynchronize)(e); }
inline Error StreamWaitEvent(Stream s, Event e) { return PX_GPU_NAME(StreamWaitEvent)(s, e, 0); }
// Stream capture into a graph, thread-local: see gpu_device.h.
inline Error StreamBeginCapture(Stream s) {
  return PX_GPU_NAME(StreamBeginCapture)(s, PX_GPU_NAME(StreamCaptureModeThreadLocal));
}
inline Error StreamEndCapture(Stream s, Graph* g) { return PX_GPU_NAME(StreamEndCapture)(s, g); }
// Whether work enqueued on `s` now goes into a graph being captured.
inline Error StreamIsCapturing(Stream s, bool* capturing) {
  PX_GPU_NAME(StreamCaptureStatus) status = PX_GPU_NAME(StreamCaptureStatusNone);
  const Error e = PX_GPU_NAME(StreamIsCapturing)(s, &status);
  *capturing = status != PX_GPU_NAME(StreamCaptureStatusNone);
  return e;
}
inline Error GraphInstantiate(GraphExec* exec, Graph g) {
  return PX_GPU_NAME(GraphInstantiateWithFlags)(exec, g, 0);
}
inline Error GraphLaunch(GraphExec exec, Stream s) { return PX_GPU_NAME(GraphLaunch)(exec, s); }
inline Error GraphExecDestroy(GraphExec exec) { return PX_GPU_NAME(GraphExecDestroy)(exec); }
inline Error GraphDestroy(Graph g) { return PX_GPU_NAME(GraphDestroy)(g); }

}  // namespace px_gpu

#undef PX_GPU_NAME

#endif  // PLEXUS_PLUGINS_GPU_GPU_RUNTIME_H_

// What the XPU plugin's kernel classes use of the device layer: their
// stream, kernel launches by OpenCL kernel name, stream-ordered copies and
// fills, and scratch memory (the contract between the two halves of the
// plugin; the stream itself is defined in xpu_device.h).
//
// Kernel argument memory: every tensor the host hands a kernel is Level Zero
// device USM (or host USM for host-memory inputs, which kernels read on the
// host), so its data pointer is passed to Launch as it is.
#ifndef PLEXUS_PLUGINS_XPU_XPU_STREAM_H_
#define PLEXUS_PLUGINS_XPU_XPU_STREAM_H_

#include <cstddef>
#include <initializer_list>

#include "plexus/sdk/kernel.h"

namespace plexus::xpu {

struct XpuStream;  // a Level Zero immediate command list (xpu_device.h)

// The stream of a kernel call (throws sdk::Error when the call has no stream).
XpuStream& StreamOf(sdk::Call& call);

// One kernel argument: `size` bytes at `data`. Pointers to device memory are
// passed by value: Arg(ptr) where ptr is a void* / const void*; scalars:
// Arg(int64_t{n}), Arg(1.5f). The value must outlive the Launch call (a
// temporary in the argument list does).
struct KernelArg {
  size_t size;
  const void* data;
};
template <typename T>
KernelArg Arg(const T& value) {
  return {sizeof(T), &value};
}

// Appends kernel `kernel` (an OpenCL kernel name, found in any embedded
// module) to the stream: `global` work-items in up to 3 dimensions (dims
// 1..3), work-group `local` (nullptr: the plugin chooses with
// zeKernelSuggestGroupSize), global rounded up to whole groups (kernels
// return early past their element count). Throws sdk::Error naming the
// kernel when it is unknown, an argument is refused, or the append fails;
// the stream's error becomes sticky.
void Launch(XpuStream& stream, const char* kernel, int dims, const size_t* global,
            const size_t* local, std::initializer_list<KernelArg> args);

// Stream-ordered copy between any USM (or plain host) memory; throws on error.
void CopyAsync(XpuStream& stream, void* dst, const void* src, size_t bytes);

// Stream-ordered fill of `bytes` bytes with `byte`; throws on error.
void FillAsync(XpuStream& stream, void* dst, unsigned char byte, size_t bytes);

// Waits for the stream's work; throws the stream's (sticky) error.
void Synchronize(XpuStream& stream);

// Device memory for one kernel call, freed when the stream's work before
// the free is done (the free is deferred to the stream's next
// synchronization). Throws sdk::Error, naming `what`, when the allocation
// fails. Zero bytes: get() is null.
class ScratchBuffer {
 public:
  ScratchBuffer(XpuStream& stream, size_t bytes, const char* what);
  ~ScratchBuffer();
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  void* get() const { return ptr_; }
  size_t size() const { return bytes_; }

 private:
  XpuStream* stream_;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace plexus::xpu

#endif  // PLEXUS_PLUGINS_XPU_XPU_STREAM_H_

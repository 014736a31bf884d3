// A constant input of a kernel converted once into the layout a vendor
// library wants, kept in device memory the kernel instance owns and shared by
// every later call, on any stream.
//
// Only for inputs the host promises are constants (sdk::ConstantInput: the
// optimizer's `_plexus_const_inputs`, true of a frozen graph's filters): the
// same contents at the same address on every run of the executor that
// created the kernel. Without this, the cuDNN convolutions reordered their
// filter on every call (one more launch and a scratch allocation per
// convolution per run).
//
// The first call whose stream is not capturing a graph prepares it:
// allocates device memory (not stream-ordered: it outlives the call), runs
// the caller's conversion on the call's stream, and waits for it on the
// host, once, so the buffer is complete before any other stream can see it.
// Get returns nullptr, and the caller converts into scratch for that call
// as before, when
//   - the stream is capturing a graph and nothing is prepared yet (an
//     allocation or a host wait would break the capture; the executor
//     records its device graph only after a first plain run, which prepares
//     it);
//   - the input's address or geometry differs from the prepared one's (the
//     promise is about the node, so this should not happen; the check keeps
//     a broken promise from reading a stale copy at another address);
//   - the allocation failed once (out of memory: never tried again).
// The memory is freed when the kernel instance is destroyed.
#ifndef PLEXUS_PLUGINS_GPU_PREPARED_WEIGHT_H_
#define PLEXUS_PLUGINS_GPU_PREPARED_WEIGHT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>

#include "gpu_stream.h"

namespace plexus::cuda {

class PreparedWeight {
 public:
  // What identifies a conversion besides the input's address: its dtype and
  // sizes, as the caller chooses.
  using Geometry = std::array<int64_t, 6>;

  PreparedWeight() = default;
  ~PreparedWeight();
  PreparedWeight(const PreparedWeight&) = delete;
  PreparedWeight& operator=(const PreparedWeight&) = delete;

  // The prepared copy of `source` (`bytes` long) for `geometry`, preparing
  // it first if this is the first call that may; nullptr when the caller
  // must convert for this call itself (above). `prepare(dst)` enqueues the
  // conversion into dst on `stream` and checks its launch (CheckLaunch).
  // Throws sdk::Error, naming `what` (the op), when the conversion fails.
  // A template, so the call that finds the copy ready (every call after the
  // first) makes no std::function.
  template <typename Prepare>
  const void* Get(GpuStream& stream, const void* source, const Geometry& geometry, size_t bytes,
                  Prepare&& prepare, const char* what) {
    if (const void* ready = Ready(source, geometry)) return ready;
    return Fill(stream, source, geometry, bytes, std::function<void(void*)>(prepare), what);
  }

 private:
  const void* Ready(const void* source, const Geometry& geometry);
  const void* Fill(GpuStream& stream, const void* source, const Geometry& geometry, size_t bytes,
                   const std::function<void(void* dst)>& prepare, const char* what);

  std::mutex mu_;
  void* buffer_ = nullptr;  // guarded by mu_; never changes once set
  const void* source_ = nullptr;
  Geometry geometry_{};
  bool gave_up_ = false;
};

}  // namespace plexus::cuda

#endif  // PLEXUS_PLUGINS_GPU_PREPARED_WEIGHT_H_

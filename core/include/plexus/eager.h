// Eager execution: ops run one at a time as they are called, the way Python
// users call them. An op is prepared once per (op, attributes, input dtypes,
// device): its node is built and checked against the op's declaration, its
// kernel found and instantiated. Later calls with the same key reuse it, so
// a call costs one shape function, the output allocations and one kernel
// launch.
//
//   EagerContext eager(runtime);
//   AttrMap attrs;  // T is inferred from the inputs
//   PX_ASSIGN_OR_RETURN(std::vector<Tensor> out, eager.Execute("AddV2", {a, b}, attrs, nullptr));
//
// Placement: the op runs on the device asked for (null: the device of the
// first input in a device's memory, else the host device). When that device
// has no kernel for it, it runs on another device, host-accessible ones
// first, as the session's placer does; ops the core implements itself
// (variables, strings, TensorArrays) run on the host. Inputs are copied to
// where the kernel wants them.
//
// Streams: each device's eager ops queue on one stream of their own, in
// call order. On a device whose memory the host cannot read, work is
// asynchronous: Synchronize(device) waits for it (reading a result back does
// so first). Ops on host-accessible devices have finished when Execute
// returns.
#ifndef PLEXUS_EAGER_H_
#define PLEXUS_EAGER_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "attr_value.pb.h"
#include "plexus/graph.h"
#include "plexus/runtime.h"

namespace plexus {

class EagerContext;
class HostOpContext;
// One device's eager stream: ops queue on it in call order; calls on it are
// serialized (the plugin ABI asks for that).
struct EagerContextStream {
  std::shared_ptr<Device> device;
  PX_Stream* stream = nullptr;  // acquired on first use
  std::mutex launch_mu;
  // The inputs and outputs of the work queued since the last wait: a device
  // that finishes later still reads and writes them, so their memory must
  // not go back to the device (or its pool) before then, whoever drops
  // them. Released by Sync().
  std::vector<Tensor> in_flight;
  absl::flat_hash_set<const void*> in_flight_buffers;  // each buffer once
  size_t in_flight_bytes = 0;
  // Events the stream waits on (DLPack imports): destroyed by Sync().
  std::vector<PX_Event*> in_flight_events;
  // With launch_mu held: the stream (acquiring it), and a wait for it that
  // gives up a failed stream and releases what was in flight.
  absl::StatusOr<PX_Stream*> Get();
  absl::Status Sync();
  // Keeps `t` until the next Sync(); waits first when too much is held.
  absl::Status Hold(const Tensor& t);
};
class SessionState;
class ResourceStore;
struct KernelRegistration;

// One prepared op: a node (its inputs are placeholders), where it runs and
// its kernel instance. Immutable once prepared; Run may be called from
// several threads.
class EagerOp {
 public:
  ~EagerOp();
  EagerOp(const EagerOp&) = delete;
  EagerOp& operator=(const EagerOp&) = delete;

  const Node& node() const { return *node_; }
  // The device whose kernel runs the op; null when the core runs it on the
  // host (ops without kernels, such as variables and string ops).
  Device* device() const { return device_.get(); }
  // "placed on CPU:0: CUDA:0 has no kernel for op Foo", or empty.
  const std::string& placement_note() const { return note_; }

  // Runs the op on `inputs` (in the node's input order, any device).
  absl::StatusOr<std::vector<Tensor>> Run(absl::Span<const Tensor> inputs) const;

 private:
  friend class EagerContext;
  EagerOp() = default;
  // The paths of Run that launch no kernel: a metadata op (a view or shape
  // values) and a host op of the core.
  absl::StatusOr<std::vector<Tensor>> RunMetadata(absl::Span<const Tensor> inputs) const;
  absl::StatusOr<std::vector<Tensor>> RunHostOp(absl::Span<const Tensor> inputs) const;

  EagerContext* context_ = nullptr;
  std::unique_ptr<Graph> graph_;  // owns node_ and its placeholder inputs
  Node* node_ = nullptr;
  std::shared_ptr<Device> device_;
  const KernelRegistration* kernel_ = nullptr;
  void* instance_ = nullptr;
  bool owns_instance_ = false;
  absl::Status (*host_op_)(HostOpContext&) = nullptr;
  std::vector<char> host_memory_inputs_;  // per input: the kernel reads it on the host
  std::string note_;
  EagerContextStream* slot_ = nullptr;  // the device's eager stream
};

class EagerContext {
 public:
  explicit EagerContext(Runtime* runtime);
  ~EagerContext();
  EagerContext(const EagerContext&) = delete;
  EagerContext& operator=(const EagerContext&) = delete;

  Runtime& runtime() const { return *runtime_; }

  // The prepared op for this key, from the cache or made now. `attrs` may
  // leave out attributes with defaults and type attributes that the input
  // dtypes determine (see InferTypeAttrs). Errors name the op.
  absl::StatusOr<std::shared_ptr<const EagerOp>> Prepare(absl::string_view op,
                                                         absl::Span<const DataType> input_types,
                                                         const AttrMap& attrs, Device* device);

  // Prepare, then Run. `device` as for Prepare (null: see the file comment).
  absl::StatusOr<std::vector<Tensor>> Execute(absl::string_view op, absl::Span<const Tensor> inputs,
                                              const AttrMap& attrs, Device* device);

  // Fills the attributes that the inputs determine and `attrs` leaves out:
  // type attributes (T, Tidx, ...) from the dtypes of the inputs declared
  // with them, the count of an "N * T" input and the types of a "Tlist"
  // input. An op with one variable-length input takes every input that the
  // other arguments leave. Errors name the op and the argument.
  static absl::Status InferAttrs(const OpDef& def, absl::Span<const DataType> input_types,
                                 AttrMap* attrs);

  // Where an op on `inputs` runs when `requested` is null: the device of the
  // first input in a device's memory, else null (the host).
  static Device* DeviceFor(absl::Span<const Tensor> inputs, Device* requested);

  // Waits for the eager work queued on `device` and returns its first error.
  absl::Status Synchronize(Device* device);

  // The DLPack stream handshake, on devices whose plugin has stream interop
  // (Device::supports_stream_interop).
  //
  // An import: BeginNativeImport gives a stream of the device's own and its
  // native handle, for another library to order its work before; then
  // FinishNativeImport makes `device`'s eager stream wait for that stream on
  // the device (an event; no host wait) and gives the stream back. Call
  // FinishNativeImport whatever the producer did (`ordered` false when it
  // failed: then nothing waits). Not the eager stream itself: a failed eager
  // op on another thread may give that stream up, and destroy it, while the
  // producer still holds its handle.
  struct NativeImport {
    Device* device = nullptr;
    PX_Stream* stream = nullptr;
    uint64_t handle = 0;
  };
  absl::StatusOr<NativeImport> BeginNativeImport(Device* device);
  absl::Status FinishNativeImport(const NativeImport& import, bool ordered);
  // An export: another library's stream `native_stream` made to wait on the
  // device for the eager work queued on `device` so far.
  absl::Status OrderNativeStream(Device* device, uint64_t native_stream);

  // Number of prepared ops in the cache; Clear drops them.
  size_t cache_size() const;
  void ClearCache();

  // For host ops: resources (variables, TensorArrays) live here.
  SessionState* state() const { return state_.get(); }
  // The context's variables, to share with sessions (SessionOptions::resources).
  std::shared_ptr<ResourceStore> resources() const;

 private:
  friend class EagerOp;
  absl::StatusOr<std::shared_ptr<const EagerOp>> Build(absl::string_view op,
                                                       absl::Span<const DataType> input_types,
                                                       const AttrMap& attrs, Device* device);
  using DeviceStream = EagerContextStream;
  DeviceStream* Slot(Device* device);

  Runtime* runtime_;
  std::unique_ptr<SessionState> state_;
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const EagerOp>> cache_;
  std::map<Device*, std::unique_ptr<DeviceStream>> streams_;
};

}  // namespace plexus

#endif  // PLEXUS_EAGER_H_

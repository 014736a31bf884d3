// Shared pieces of the Python extension `plexus._plexus` (nanobind): the
// process's runtime and eager context, the Python tensor types, status to
// exception conversion and Python value to tensor conversion.
#ifndef PLEXUS_PYTHON_COMMON_H_
#define PLEXUS_PYTHON_COMMON_H_

#include <nanobind/nanobind.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "plexus/auto_control_deps.h"
#include "plexus/eager.h"
#include "plexus/graph_builder.h"
#include "plexus/runtime.h"
#include "plexus/tensor.h"

namespace plexus::python {

namespace nb = nanobind;

// The runtime of this process (plugins found at import) and its eager
// context. Both live until the process exits.
Runtime& GetRuntime();
EagerContext& GetEager();

// The device set by `with plexus.device(...)` on this thread, or null.
Device* ScopeDevice();

// Raises the status as the matching plexus.errors exception.
[[noreturn]] void Throw(const absl::Status& status);
template <typename T>
T Unwrap(absl::StatusOr<T> value) {
  if (!value.ok()) Throw(value.status());
  return *std::move(value);
}
inline void Check(const absl::Status& status) {
  if (!status.ok()) Throw(status);
}

// A dtype as Python sees it.
struct PyDType {
  DataType type = DataType::kInvalid;
};
nb::object DTypeObject(DataType type);
// DType, numpy dtype, numpy scalar type or a name ("float32", "float").
DataType ToDataType(nb::handle obj);
// NumPy's name for the dtype ("float32"); empty when NumPy has none.
const char* NumpyName(DataType type);

// An eager tensor.
struct PyTensor {
  Tensor tensor;
  // Identity on gradient tapes (0: not yet numbered; TapeId numbers it).
  int64_t tape_id = 0;
};

// A symbolic tensor of the function being traced.
struct TraceState;
struct PyGraphTensor {
  std::shared_ptr<TraceState> trace;
  Node* node = nullptr;
  int index = 0;
  DataType dtype() const { return node->output_types[index]; }
  const PartialShape& shape() const { return node->output_shapes[index]; }
};

// What a traced function's graph is being built in.
struct TraceState {
  explicit TraceState(std::string name) : builder(std::move(name)) {}
  GraphBuilder builder;
  // Orders the stateful ops as the function wrote them.
  AutoControlDeps deps;
  // Eager tensors captured as constants, by their memory, dtype and shape.
  // The tensor is kept alive with its node: were it freed, a device pool
  // would hand its block to the next tensor, and a different value at the
  // same address would be taken for this one.
  struct Captured {
    Tensor value;
    Node* node = nullptr;
  };
  std::map<std::string, Captured> captured;
};
// The trace active on this thread, or null.
std::shared_ptr<TraceState> ActiveTrace();
void SetActiveTrace(std::shared_ptr<TraceState> trace);

nb::object WrapTensor(Tensor t);
// A Python value as a host (or device) tensor. `want` = kInvalid infers the
// dtype the way TensorFlow does (Python float -> float32, int -> int32,
// lists of them likewise; NumPy arrays keep theirs). `what` names the value
// in errors.
Tensor ToTensor(nb::handle value, DataType want, const std::string& what);
// The tensor's data in host memory (waiting for and copying from its device).
Tensor HostCopy(const Tensor& t);

// An op of the registry, looked up once.
struct OpInfo {
  const OpDef* def = nullptr;
  bool has_lists = false;  // some input is a list (N * T or a type list)
  // Prepared ops of calls without attributes, by (device, input dtypes):
  // the common case skips the eager context's keyed cache.
  struct Prepared {
    Device* device;
    absl::InlinedVector<DataType, 4> types;
    std::shared_ptr<const EagerOp> op;
  };
  mutable std::mutex mu;
  mutable std::vector<Prepared> prepared;
};
// The op's info; raises NotFoundError for an unknown op. The reference
// stays valid for the life of the process.
const OpInfo& FindOp(const std::string& name);

// Runs one op eagerly, or adds it to the active trace. `inputs` flat.
nb::list Execute(const std::string& op, nb::handle inputs, nb::handle attrs);
nb::list ExecuteOp(const OpInfo& op, const nb::handle* inputs, size_t n, nb::handle attrs);
// Python attribute values as an AttrMap, checked against the op.
AttrMap ToAttrs(const OpDef& def, nb::handle attrs);

// Gradient tapes (gradients.cc): whether a tape is recording on this
// thread, and the recording of one executed op.
bool TapesActive();
// Waits for the eager work queued on every device the host cannot read
// (call without the GIL); the first error, with every device waited for.
absl::Status SynchronizeEagerWork();
// Drops this thread's active tapes (at exit, while Python can still free them).
void ClearTapes();
void RecordOnTapes(const EagerOp& op, const nb::handle* inputs, const absl::InlinedVector<Tensor, 4>& tensors,
                   const nb::list& outputs);

// Registration of each part of the module.
void BindTensor(nb::module_& m);
void BindExecute(nb::module_& m);
void BindGraph(nb::module_& m);
// Checkpoint files and SavedModel export (checkpoint.cc).
void BindCheckpoint(nb::module_& m);
// TensorBoard event files (summary.cc).
void BindSummary(nb::module_& m);
void BindTFRecord(nb::module_& m);
void BindDistributed(nb::module_& m);
// Symbolic gradients and the gradient tape (gradients.cc).
void BindGradients(nb::module_& m);

}  // namespace plexus::python

#endif  // PLEXUS_PYTHON_COMMON_H_

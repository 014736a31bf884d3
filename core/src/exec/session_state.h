// Session-wide state shared by every executor of a session (and by the
// executors of the functions it calls): resources such as variables and
// TensorArrays, and instantiated functions. Internal to the core.
#ifndef PLEXUS_CORE_SRC_SESSION_STATE_H_
#define PLEXUS_CORE_SRC_SESSION_STATE_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "function.pb.h"
#include "plexus/graph.h"
#include "plexus/runtime.h"
#include "plexus/tensor.h"

namespace plexus {

class Executor;

// A variable: TensorFlow 1 VariableV2 (read through references) and
// TensorFlow 2 resource variables (VarHandleOp) alike.
class Variable : public ResourceBase {
 public:
  Variable(std::string name, DataType dtype, PartialShape shape)
      : name_(std::move(name)), dtype_(dtype), shape_(std::move(shape)) {}
  std::string DebugString() const override;

  const std::string& name() const { return name_; }
  DataType dtype() const { return dtype_; }
  const PartialShape& shape() const { return shape_; }
  // The current value, shared with the variable (no copy; see Keep);
  // FAILED_PRECONDITION naming the variable when it was never assigned.
  absl::StatusOr<Tensor> Read() const;
  bool initialized() const;
  // Replaces the value. Tensors are immutable inside Plexus, so the value is
  // kept without a copy unless someone outside may write its memory. A
  // variable whose value is in a device's memory stays on that device: a
  // host value is copied there.
  absl::Status Assign(Tensor value);
  // Runs fn(current value) -> new value under the variable's lock.
  absl::Status Update(const std::function<absl::StatusOr<Tensor>(const Tensor&)>& fn);

 private:
  // What the variable keeps of an assigned value: the value itself, its
  // buffer pinned (Buffer::Pin), when it is Plexus's own memory (host or a
  // device's) that nobody outside can write; otherwise a pinned copy in the
  // same memory. A value in device memory stays on that device.
  static absl::StatusOr<Tensor> Keep(Tensor value);

  std::string name_;
  DataType dtype_;
  PartialShape shape_;
  mutable std::mutex mu_;
  Tensor value_;
};

// Resources by key ("variable/<container>/<shared_name>"): variables and
// the like. A session owns one; sessions and an eager context may share one
// (SessionOptions::resources), so a traced function sees the variables that
// eager code created.
// The name a resource variable has in a ResourceStore: what VarHandleOp
// with this container and shared_name looks up.
std::string VariableResourceKey(absl::string_view container, absl::string_view shared_name);

class ResourceStore {
 public:
  // The resource named `key`, created by `create` the first time.
  absl::StatusOr<std::shared_ptr<ResourceBase>> LookupOrCreate(
      const std::string& key,
      const std::function<absl::StatusOr<std::shared_ptr<ResourceBase>>()>& create);
  // The resource named `key`, or null.
  std::shared_ptr<ResourceBase> Find(const std::string& key);
  // Forgets `key` (holders of the resource keep it alive).
  void Erase(const std::string& key);

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<ResourceBase>> resources_;
};

class SessionState {
 public:
  // `resources` null: a store of the session's own.
  SessionState(Runtime* runtime, std::shared_ptr<Device> device,
               std::shared_ptr<const tf::FunctionDefLibrary> library,
               std::shared_ptr<ResourceStore> resources = nullptr);
  ~SessionState();

  Runtime& runtime() const { return *runtime_; }
  const std::shared_ptr<Device>& device() const { return device_; }

  // The resource named `key`, created by `create` the first time.
  absl::StatusOr<std::shared_ptr<ResourceBase>> LookupOrCreate(
      const std::string& key,
      const std::function<absl::StatusOr<std::shared_ptr<ResourceBase>>()>& create) {
    return resources_->LookupOrCreate(key, create);
  }
  const std::shared_ptr<ResourceStore>& resources() const { return resources_; }

  // Runs library function `name` on `args`; returns its outputs. Functions
  // are instantiated once (graph and executor) and cached. The function's
  // executor takes the arguments (Executor::Run(&&)): a variant argument
  // nobody else holds may be changed in place by the function.
  absl::StatusOr<std::vector<Tensor>> CallFunction(const std::string& name, std::vector<Tensor> args);
  bool HasFunction(const std::string& name) const;

 private:
  struct Instance;
  absl::StatusOr<std::shared_ptr<Instance>> Instantiate(const std::string& name);

  Runtime* runtime_;
  std::shared_ptr<Device> device_;
  std::shared_ptr<const tf::FunctionDefLibrary> library_;
  std::shared_ptr<ResourceStore> resources_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Instance>> functions_;
};

}  // namespace plexus

#endif  // PLEXUS_CORE_SRC_SESSION_STATE_H_

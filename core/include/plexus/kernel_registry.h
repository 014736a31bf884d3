// Kernels a plugin registered, and lookup by (op, dtype attributes).
// Device type is implied: each plugin has its own registry.
#ifndef PLEXUS_KERNEL_REGISTRY_H_
#define PLEXUS_KERNEL_REGISTRY_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "plexus/dtype.h"
#include "plexus/plugin_api.h"

namespace plexus {

struct Node;
class Plugin;

struct KernelRegistration {
  std::string op;
  // (type attribute, allowed types); every constraint must hold.
  std::vector<std::pair<std::string, std::vector<DataType>>> type_constraints;
  std::vector<int> host_memory_inputs;
  std::vector<int> host_memory_outputs;
  void* user_data = nullptr;
  PX_KernelCreateFn create = nullptr;
  PX_KernelComputeFn compute = nullptr;
  PX_KernelDestroyFn destroy = nullptr;
  int priority = 0;
  Plugin* plugin = nullptr;

  // True when the node's type attributes satisfy every constraint.
  bool Matches(const Node& node) const;
  bool InputInHostMemory(int index) const;
  bool OutputInHostMemory(int index) const;
  // "MatMul [T in {float,double}]"
  std::string Describe() const;
};

// Checks a kernel definition a plugin registers (every host that takes
// registrations calls it: the runtime and the conformance tool):
// struct sizes, names, arrays, dtypes that exist, and, for ops the core
// knows, type constraints on type attributes of the op (each once) and
// host-memory indices within the op's inputs and outputs. INVALID_ARGUMENT
// naming the op and the field.
absl::Status CheckKernelDef(const PX_KernelDef* def);

class KernelRegistry {
 public:
  void Add(KernelRegistration registration);
  // The matching kernel with the highest priority, or null.
  const KernelRegistration* Find(const Node& node) const;
  std::vector<const KernelRegistration*> ForOp(const std::string& op) const;
  size_t size() const { return count_; }
  std::vector<std::string> Ops() const;

 private:
  std::map<std::string, std::vector<KernelRegistration>> by_op_;
  size_t count_ = 0;
};

}  // namespace plexus

#endif  // PLEXUS_KERNEL_REGISTRY_H_

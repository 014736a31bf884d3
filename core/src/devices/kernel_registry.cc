#include "plexus/kernel_registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "plexus/graph.h"

namespace plexus {

bool KernelRegistration::Matches(const Node& node) const {
  for (const auto& [attr, allowed] : type_constraints) {
    auto type = GetAttrType(node, attr);
    if (!type.ok()) return false;
    if (std::find(allowed.begin(), allowed.end(), *type) == allowed.end()) return false;
  }
  return true;
}

bool KernelRegistration::InputInHostMemory(int index) const {
  return std::find(host_memory_inputs.begin(), host_memory_inputs.end(), index) !=
         host_memory_inputs.end();
}

bool KernelRegistration::OutputInHostMemory(int index) const {
  return std::find(host_memory_outputs.begin(), host_memory_outputs.end(), index) !=
         host_memory_outputs.end();
}

std::string KernelRegistration::Describe() const {
  std::string out = op;
  for (const auto& [attr, allowed] : type_constraints) {
    std::vector<std::string> names;
    for (DataType t : allowed) names.push_back(DataTypeName(t));
    absl::StrAppend(&out, " [", attr, " in {", absl::StrJoin(names, ","), "}]");
  }
  return out;
}

void KernelRegistry::Add(KernelRegistration registration) {
  by_op_[registration.op].push_back(std::move(registration));
  ++count_;
}

const KernelRegistration* KernelRegistry::Find(const Node& node) const {
  auto it = by_op_.find(node.op);
  if (it == by_op_.end()) return nullptr;
  const KernelRegistration* best = nullptr;
  for (const KernelRegistration& reg : it->second) {
    if (reg.Matches(node) && (best == nullptr || reg.priority > best->priority)) best = &reg;
  }
  return best;
}

std::vector<const KernelRegistration*> KernelRegistry::ForOp(const std::string& op) const {
  std::vector<const KernelRegistration*> out;
  auto it = by_op_.find(op);
  if (it != by_op_.end()) {
    for (const KernelRegistration& reg : it->second) out.push_back(&reg);
  }
  return out;
}

std::vector<std::string> KernelRegistry::Ops() const {
  std::vector<std::string> ops;
  for (const auto& entry : by_op_) ops.push_back(entry.first);
  return ops;
}

}  // namespace plexus

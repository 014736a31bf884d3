// CheckKernelDef: what a plugin's kernel registration must satisfy.
#include <algorithm>
#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "plexus/kernel_registry.h"
#include "plexus/op_def.h"

namespace plexus {
namespace {

// Struct sizes beyond this are not a struct of this ABI family (a garbage
// or uninitialized size), however new the plugin.
constexpr size_t kMaxStructSize = 4096;

absl::Status Bad(const char* op, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("kernel_register: op ", op ? op : "?", ": ", what));
}

// The op's type attributes ("type" and "list(type)"), or empty when the op
// is unknown to the core.
std::vector<std::string> TypeAttrs(const OpDef& op) {
  std::vector<std::string> out;
  for (const AttrSpec& a : op.attrs) {
    if (a.type == "type" || a.type == "list(type)") out.push_back(a.name);
  }
  return out;
}

// The op's inputs (or outputs) are a fixed count when none is a list.
bool FixedArity(const std::vector<ArgSpec>& args) {
  for (const ArgSpec& a : args) {
    if (!a.number_attr.empty() || !a.type_list_attr.empty()) return false;
  }
  return true;
}

absl::Status CheckConstraint(const PX_KernelDef& def, const PX_TypeConstraint& c, const OpDef* op,
                             std::set<std::string>* seen) {
  if (c.struct_size < sizeof(PX_TypeConstraint) || c.struct_size > kMaxStructSize) {
    return Bad(def.op_name, absl::StrCat("a type constraint has struct_size ", c.struct_size,
                                         " (expected ", sizeof(PX_TypeConstraint), ")"));
  }
  if (c.attr_name == nullptr || c.attr_name[0] == '\0' || (c.num_allowed > 0 && c.allowed == nullptr)) {
    return Bad(def.op_name, "type constraint without attr_name or types");
  }
  if (!seen->insert(c.attr_name).second) {
    return Bad(def.op_name, absl::StrCat("two type constraints on attr '", c.attr_name, "'"));
  }
  for (size_t k = 0; k < c.num_allowed; ++k) {
    int32_t dt = static_cast<int32_t>(c.allowed[k]);
    if (!IsKnownDataType(dt) || dt >= kRefTypeOffset) {
      return Bad(def.op_name, absl::StrCat("the type constraint on attr '", c.attr_name, "' lists dtype ", dt,
                                           ", which is not a dtype"));
    }
  }
  if (op != nullptr) {
    std::vector<std::string> attrs = TypeAttrs(*op);
    if (std::find(attrs.begin(), attrs.end(), c.attr_name) == attrs.end()) {
      return Bad(def.op_name, absl::StrCat("a type constraint names attr '", c.attr_name,
                                           "', which is not a type attribute of the op (its type attributes: ",
                                           attrs.empty() ? "none" : absl::StrJoin(attrs, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckHostMemory(const PX_KernelDef& def, const int32_t* indices, size_t count,
                             const std::vector<ArgSpec>* args, const char* what) {
  for (size_t i = 0; i < count; ++i) {
    int32_t index = indices[i];
    bool past = args != nullptr && FixedArity(*args) && static_cast<size_t>(index) >= args->size();
    if (index < 0 || past) {
      return Bad(def.op_name, absl::StrCat("host-memory ", what, " index ", index, " is outside the op's ",
                                           args ? absl::StrCat(args->size(), " ", what, "s") : std::string(what) + "s"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckKernelDef(const PX_KernelDef* def) {
  if (def == nullptr || def->struct_size < offsetof(PX_KernelDef, priority)) {
    return absl::InvalidArgumentError("kernel_register: PX_KernelDef is too small");
  }
  if (def->struct_size > kMaxStructSize) {
    return Bad(def->op_name, absl::StrCat("PX_KernelDef has struct_size ", def->struct_size, " (this ABI's is ",
                                          sizeof(PX_KernelDef), "; no version's is over ", kMaxStructSize, ")"));
  }
  if (def->op_name == nullptr || def->op_name[0] == '\0') {
    return absl::InvalidArgumentError("kernel_register: op_name is empty");
  }
  if (def->compute == nullptr) {
    return Bad(def->op_name, "the kernel has no compute function (required)");
  }
  if ((def->num_type_constraints > 0 && def->type_constraints == nullptr) ||
      (def->num_host_memory_inputs > 0 && def->host_memory_inputs == nullptr) ||
      (def->num_host_memory_outputs > 0 && def->host_memory_outputs == nullptr)) {
    return Bad(def->op_name, "an array is NULL but its count is not zero");
  }
  const OpDef* op = OpRegistry::Global().Find(def->op_name);
  std::set<std::string> seen;
  for (size_t i = 0; i < def->num_type_constraints; ++i) {
    absl::Status s = CheckConstraint(*def, def->type_constraints[i], op, &seen);
    if (!s.ok()) return s;
  }
  absl::Status in = CheckHostMemory(*def, def->host_memory_inputs, def->num_host_memory_inputs,
                                    op ? &op->inputs : nullptr, "input");
  if (!in.ok()) return in;
  return CheckHostMemory(*def, def->host_memory_outputs, def->num_host_memory_outputs,
                         op ? &op->outputs : nullptr, "output");
}

}  // namespace plexus

// abi.kernel_signatures: every kernel a plugin registers for an op of the
// SDK's op-signature table (plexus/sdk/op_signatures.h) declares the table's
// type attributes and at least the table's host-memory arguments. More in
// host memory is allowed (a kernel may read a value on the host that others
// read on the device) and named in the detail; less, or other type
// attributes, fails naming the op and the argument.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "checks.h"
#include "plexus/op_def.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::conformance {
namespace {

// "input 1 (shape)": the argument's name when its position does not depend
// on a count attribute.
std::string DescribeArg(const OpDef* def, bool input, int32_t index) {
  std::string where = absl::StrCat(input ? "input " : "output ", index);
  if (def == nullptr) return where;
  const std::vector<ArgSpec>& args = input ? def->inputs : def->outputs;
  for (size_t k = 0; k < args.size(); ++k) {
    if (!args[k].number_attr.empty() || !args[k].type_list_attr.empty()) break;
    if (static_cast<int32_t>(k) == index) return absl::StrCat(where, " (", args[k].name, ")");
  }
  return where;
}

template <typename List>
std::string JoinNames(const List& names) {
  std::vector<std::string> v(names.begin(), names.end());
  return absl::StrCat("(", absl::StrJoin(v, ", "), ")");
}

// Host-memory indices the table lists and the kernel leaves out (missing) or
// the kernel adds (extra).
void CompareHostArgs(const sdk::OpSignature::HostOutputs& table_list,
                     const std::vector<int32_t>& kernel_list, std::vector<int32_t>* missing,
                     std::vector<int32_t>* extra) {
  for (int32_t i : table_list) {
    if (std::find(kernel_list.begin(), kernel_list.end(), i) == kernel_list.end()) {
      missing->push_back(i);
    }
  }
  for (int32_t i : kernel_list) {
    if (!table_list.contains(i)) extra->push_back(i);
  }
}

sdk::OpSignature::HostOutputs Widen(const sdk::OpSignature::HostInputs& inputs) {
  sdk::OpSignature::HostOutputs list;
  for (int32_t i : inputs) list.push_back(i);
  return list;
}

}  // namespace

void CheckKernelSignatures(const HarnessPlugin& plugin, Report& report) {
  std::set<std::string> checked_ops, other_ops;
  std::vector<std::string> bad, extras;
  for (const KernelInfo& k : plugin.kernels()) {
    const sdk::OpSignature* sig = sdk::FindOpSignature(k.op.c_str());
    if (sig == nullptr) {
      other_ops.insert(k.op);
      continue;
    }
    checked_ops.insert(k.op);
    const OpDef* def = OpRegistry::Global().Find(k.op);
    std::set<std::string> declared, wanted(sig->type_attrs.begin(), sig->type_attrs.end());
    for (const auto& constraint : k.type_constraints) declared.insert(constraint.first);
    if (declared != wanted) {
      bad.push_back(absl::StrCat(k.op, ": constrains type attributes ", JoinNames(declared),
                                 ", the op-signature table has ", JoinNames(sig->type_attrs)));
    }
    for (bool input : {true, false}) {
      std::vector<int32_t> missing, extra;
      CompareHostArgs(input ? Widen(sig->host_inputs) : sig->host_outputs,
                      input ? k.host_memory_inputs : k.host_memory_outputs, &missing, &extra);
      for (int32_t i : missing) {
        bad.push_back(absl::StrCat(k.op, ": ", DescribeArg(def, input, i),
                                   " is in host memory in the op-signature table, the kernel "
                                   "does not declare it"));
      }
      for (int32_t i : extra) extras.push_back(absl::StrCat(k.op, " ", DescribeArg(def, input, i)));
    }
  }
  if (!bad.empty()) {
    report.Fail("abi", "kernel_signatures", absl::StrJoin(bad, "; "));
    return;
  }
  std::string detail =
      absl::StrCat("the kernels of ", checked_ops.size(), " ops match the op-signature table");
  if (!other_ops.empty()) absl::StrAppend(&detail, " (", other_ops.size(), " ops not in it)");
  if (!extras.empty()) {
    absl::StrAppend(&detail, "; in host memory beyond the table: ", absl::StrJoin(extras, ", "));
  }
  report.Pass("abi", "kernel_signatures", detail);
}

}  // namespace plexus::conformance

#include "plexus/op_catalog.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "devices/host_ops.h"
#include "plexus/op_def.h"

namespace plexus {
namespace {

bool RunByExecutor(const std::string& op) {
  static const std::set<std::string> kOps = {"Switch", "Merge", "Enter", "Exit", "NextIteration",
                                             "LoopCond"};
  return kOps.count(op) > 0;
}

// "float, double" for a set of dtypes.
std::string TypeList(const std::vector<DataType>& types) {
  std::vector<std::string> names;
  for (DataType t : types) names.push_back(DataTypeName(t));
  return absl::StrJoin(names, ", ");
}

// What a plugin implements of `def`: the dtypes its kernels accept for the
// op's first type attribute, "yes" for an op without one, "" for nothing.
std::string PluginCoverage(const Plugin& plugin, const OpDef& def) {
  std::vector<const KernelRegistration*> kernels = plugin.kernels().ForOp(def.name);
  if (kernels.empty()) return "";
  // The element type: "T", "dtype" or "SrcT" when the op has one, else its
  // first type attribute.
  std::string attr;
  for (const char* preferred : {"T", "dtype", "SrcT"}) {
    const AttrSpec* a = def.FindAttr(preferred);
    if (a != nullptr && a->type == "type") {
      attr = preferred;
      break;
    }
  }
  for (const AttrSpec& a : def.attrs) {
    if (attr.empty() && a.type == "type") attr = a.name;
  }
  if (attr.empty()) return "yes";
  std::set<int> seen;
  std::vector<DataType> types;
  bool unconstrained = false;
  for (const KernelRegistration* k : kernels) {
    bool constrained = false;
    for (const auto& [name, allowed] : k->type_constraints) {
      if (name != attr) continue;
      constrained = true;
      for (DataType t : allowed) {
        if (seen.insert(static_cast<int>(t)).second) types.push_back(t);
      }
    }
    if (!constrained) unconstrained = true;
  }
  if (unconstrained) return "all";
  return TypeList(types);
}

}  // namespace

std::string OpCatalogMarkdown(const Runtime& runtime) {
  std::vector<std::shared_ptr<Plugin>> plugins = runtime.plugins();
  std::string out =
      "# Ops\n\n"
      "Generated from the op registry and the kernels of the cpu and reference plugins\n"
      "by `plexus_ops_catalog` (`plexus ops` prints the same table for the plugins it\n"
      "finds); do not edit by hand: the test suite checks that this file is current.\n\n"
      "The type column lists each type attribute with the dtypes TensorFlow allows for it\n"
      "(\"any\" when unconstrained). A plugin column lists the dtypes its kernels accept\n"
      "for the op's element type attribute (\"yes\" for an op without one). \"core\" means\n"
      "the core runs the op itself: on the host (state, strings, functions), in the\n"
      "executor (control flow), by forwarding its input (Identity and the like), as a\n"
      "view of its input (\"view\": Reshape, ExpandDims, Squeeze) or from its inputs'\n"
      "shapes (\"from shapes\": Shape, Size, Rank); the placer prefers the core's view\n"
      "over a plugin's kernel.\n\n";
  absl::StrAppend(&out, "| Op | Types | Core |");
  for (const auto& p : plugins) absl::StrAppend(&out, " ", p->name(), " |");
  absl::StrAppend(&out, "\n|---|---|---|");
  for (size_t i = 0; i < plugins.size(); ++i) absl::StrAppend(&out, "---|");
  absl::StrAppend(&out, "\n");
  int count = 0;
  for (const std::string& name : OpRegistry::Global().ListOps()) {
    const OpDef* def = OpRegistry::Global().Find(name);
    std::vector<std::string> attrs;
    for (const AttrSpec& a : def->attrs) {
      if (a.type != "type" && a.type != "list(type)") continue;
      attrs.push_back(absl::StrCat(a.name, ": ", a.allowed_types.empty() ? "any" : TypeList(a.allowed_types)));
    }
    HostOpUse use;
    std::string core;
    if (RunByExecutor(name)) {
      core = "executor";
    } else if (def->forwards_inputs) {
      core = "forwarded";
    } else if (def->output_is_view) {
      core = "view";
    } else if (def->outputs_from_shapes) {
      core = "from shapes";
    } else if (FindHostOp(name, &use) != nullptr) {
      core = use == HostOpUse::kAlways ? "host" : "host (when no kernel)";
    }
    absl::StrAppend(&out, "| ", name, " | ", absl::StrJoin(attrs, "; "), " | ", core, " |");
    for (const auto& p : plugins) absl::StrAppend(&out, " ", PluginCoverage(*p, *def), " |");
    absl::StrAppend(&out, "\n");
    ++count;
  }
  absl::StrAppend(&out, "\n", count, " ops.\n");
  return out;
}

}  // namespace plexus

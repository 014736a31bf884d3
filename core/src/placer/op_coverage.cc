// Which ops of a graph nothing here can run (plexus/op_coverage.h).
#include "plexus/op_coverage.h"

#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "google/protobuf/text_format.h"
#include "plexus/op_def.h"
#include "plexus/plugin_host.h"

namespace plexus {
namespace {

bool RunByCore(const std::string& op, const OpDef& def) {
  static const char* const kControlFlow[] = {"Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond",
                                             "RefSwitch", "RefMerge", "RefEnter", "RefExit",
                                             "RefNextIteration"};
  for (const char* c : kControlFlow) {
    if (op == c) return true;
  }
  return def.forwards_inputs || def.output_is_view || def.outputs_from_shapes ||
         FindHostOp(op) != nullptr;
}

}  // namespace

absl::StatusOr<tf::GraphDef> ReadGraphDefFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  std::ostringstream contents;
  contents << file.rdbuf();
  const std::string bytes = contents.str();
  tf::GraphDef def;
  if (def.ParseFromString(bytes)) return def;
  def.Clear();
  if (google::protobuf::TextFormat::ParseFromString(bytes, &def)) return def;
  return absl::InvalidArgumentError(absl::StrCat("'", path, "' is neither a binary nor a text GraphDef"));
}

std::vector<MissingOp> FindMissingOps(const tf::GraphDef& def, const Runtime& runtime) {
  std::map<std::string, MissingOp> uses;  // every op used, by name
  auto count = [&](const std::string& op, const std::string& where) {
    MissingOp& m = uses[op];
    m.op = op;
    if (m.nodes++ == 0) m.example = where;
  };
  for (const auto& node : def.node()) count(node.op(), absl::StrCat("node '", node.name(), "'"));
  for (const auto& function : def.library().function()) {
    for (const auto& node : function.node_def()) {
      count(node.op(), absl::StrCat("node '", node.name(), "' in function '", function.signature().name(), "'"));
    }
  }
  const auto plugins = runtime.plugins();
  std::vector<MissingOp> missing;
  for (auto& [op, use] : uses) {
    const OpDef* known = OpRegistry::Global().Find(op);
    bool library_function = false;
    for (const auto& function : def.library().function()) library_function |= function.signature().name() == op;
    if (library_function) continue;  // a call of the graph's own function
    if (known == nullptr) {
      use.why = "Plexus has no such op";
    } else if (RunByCore(op, *known)) {
      continue;
    } else {
      bool kernel = false;
      for (const auto& plugin : plugins) kernel |= !plugin->kernels().ForOp(op).empty();
      if (kernel) continue;
      use.why = "no loaded plugin has a kernel for it";
    }
    missing.push_back(use);
  }
  return missing;
}

}  // namespace plexus

// Which ops of a graph nothing here can run (plexus/op_coverage.h).
#include "plexus/op_coverage.h"

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "plexus/op_def.h"
#include "placer/placer.h"
#include "plexus/plugin_host.h"

namespace plexus {
absl::StatusOr<tf::GraphDef> ReadGraphDefFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  std::ostringstream contents;
  contents << file.rdbuf();
  const std::string bytes = contents.str();
  tf::GraphDef def;
  if (def.ParseFromString(bytes)) return def;
  def.Clear();
  google::protobuf::TextFormat::Parser parser;
  parser.SetRecursionLimit(100);  // deep nesting would overflow the stack
  class Quiet : public google::protobuf::io::ErrorCollector {
   public:
    void AddError(int, int, const std::string&) override {}
  } quiet;
  parser.RecordErrorsTo(&quiet);
  if (parser.ParseFromString(bytes, &def)) return def;
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
  std::set<std::string> functions;  // calls of the graph's own functions
  for (const auto& function : def.library().function()) functions.insert(function.signature().name());
  const auto plugins = runtime.plugins();
  std::vector<MissingOp> missing;
  for (auto& [op, use] : uses) {
    if (functions.count(op) > 0) continue;
    const OpDef* known = OpRegistry::Global().Find(op);
    if (known == nullptr) {
      use.why = "Plexus has no such op";
    } else if (OpRunsInCore(op, *known)) {
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

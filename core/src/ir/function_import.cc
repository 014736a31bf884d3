// Turns a FunctionDef into a GraphDef the importer can read: one _Arg node
// per input argument, the body with "node:out_arg:index" inputs rewritten to
// flat "node:k" outputs, and calls of library functions by op name rewritten
// to PartitionedCall / StatefulPartitionedCall.
#include <map>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "plexus/graph_import.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

const tf::FunctionDef* FindFunction(const tf::FunctionDefLibrary& lib, absl::string_view name) {
  for (const tf::FunctionDef& f : lib.function()) {
    if (f.signature().name() == name) return &f;
  }
  return nullptr;
}

// The attribute `name` of a node def, or the op's default.
const tf::AttrValue* AttrOrDefault(const tf::NodeDef& node, const OpDef& def, const std::string& name) {
  auto it = node.attr().find(name);
  if (it != node.attr().end()) return &it->second;
  const AttrSpec* spec = def.FindAttr(name);
  return spec != nullptr && spec->has_default ? &spec->default_value : nullptr;
}

// Output argument name -> (first flat index, count) of a body node.
absl::StatusOr<std::map<std::string, std::pair<int, int>>> OutputRanges(
    const tf::NodeDef& node, const tf::FunctionDefLibrary& lib) {
  std::map<std::string, std::pair<int, int>> ranges;
  if (const tf::FunctionDef* f = FindFunction(lib, node.op())) {
    int k = 0;
    for (const tf::OpDef::ArgDef& arg : f->signature().output_arg()) ranges[arg.name()] = {k++, 1};
    return ranges;
  }
  const OpDef* def = OpRegistry::Global().Find(node.op());
  if (def == nullptr) {
    return absl::NotFoundError(absl::StrCat("op '", node.op(), "' of node '", node.name(),
                                            "' is not registered in Plexus"));
  }
  int k = 0;
  for (const ArgSpec& arg : def->outputs) {
    int count = 1;
    if (!arg.number_attr.empty()) {
      const tf::AttrValue* v = AttrOrDefault(node, *def, arg.number_attr);
      if (v == nullptr) return absl::InvalidArgumentError(absl::StrCat("node '", node.name(), "' lacks attribute ", arg.number_attr));
      count = static_cast<int>(v->i());
    } else if (!arg.type_list_attr.empty()) {
      const tf::AttrValue* v = AttrOrDefault(node, *def, arg.type_list_attr);
      if (v == nullptr) return absl::InvalidArgumentError(absl::StrCat("node '", node.name(), "' lacks attribute ", arg.type_list_attr));
      count = v->list().type_size();
    }
    ranges[arg.name] = {k, count};
    k += count;
  }
  return ranges;
}

}  // namespace

bool RewriteCall(const tf::FunctionDefLibrary& library, tf::NodeDef* n) {
  // A registered op wins over a library function of the same name (which
  // also keeps a function named "PartitionedCall" from being rewritten into
  // itself).
  if (OpRegistry::Global().Find(n->op()) != nullptr) return false;
  const tf::FunctionDef* callee = FindFunction(library, n->op());
  if (callee == nullptr) return false;
  // A direct call by function name becomes an explicit call op.
  std::string name = n->op();
  n->set_op(callee->signature().is_stateful() ? "StatefulPartitionedCall" : "PartitionedCall");
  n->clear_attr();
  auto* attrs = n->mutable_attr();
  (*attrs)["f"].mutable_func()->set_name(name);
  (*attrs)["Tin"].mutable_list();
  (*attrs)["Tout"].mutable_list();
  for (const tf::OpDef::ArgDef& a : callee->signature().input_arg()) (*attrs)["Tin"].mutable_list()->add_type(a.type());
  for (const tf::OpDef::ArgDef& a : callee->signature().output_arg()) (*attrs)["Tout"].mutable_list()->add_type(a.type());
  return true;
}

absl::StatusOr<FunctionGraph> FunctionToGraphDef(const tf::FunctionDef& function,
                                                 const tf::FunctionDefLibrary& library) {
  const std::string& fname = function.signature().name();
  auto error = [&](const std::string& message) {
    return absl::InvalidArgumentError(absl::StrCat("function '", fname, "': ", message));
  };
  FunctionGraph out;
  // The library is not copied into the function's graph: calls are
  // rewritten here, and the session state resolves them in its own copy.
  tf::GraphDef& def = out.graph;
  std::set<std::string> arg_names;
  int index = 0;
  for (const tf::OpDef::ArgDef& arg : function.signature().input_arg()) {
    if (arg.type() == tf::DT_INVALID) {
      return absl::UnimplementedError(absl::StrCat(
          "function '", fname, "': argument '", arg.name(),
          "' has a polymorphic type; only functions with concrete types are supported"));
    }
    tf::NodeDef* n = def.add_node();
    n->set_name(arg.name());
    n->set_op("_Arg");
    (*n->mutable_attr())["T"].set_type(arg.type());
    (*n->mutable_attr())["index"].set_i(index++);
    arg_names.insert(arg.name());
    out.arg_nodes.push_back(arg.name());
  }
  std::map<std::string, std::map<std::string, std::pair<int, int>>> ranges;
  for (const tf::NodeDef& node : function.node_def()) {
    if (arg_names.count(node.name())) return error(absl::StrCat("node '", node.name(), "' shadows an argument"));
    PX_ASSIGN_OR_RETURN(ranges[node.name()], OutputRanges(node, library));
  }
  // "x" (an argument), "node:out:i", "^node" -> GraphDef tensor names.
  auto rewrite = [&](const std::string& input) -> absl::StatusOr<std::string> {
    if (!input.empty() && input[0] == '^') return input;
    std::vector<std::string> parts = absl::StrSplit(input, ':');
    if (parts.size() == 1) {
      if (arg_names.count(parts[0])) return absl::StrCat(parts[0], ":0");
      if (ranges.count(parts[0])) return absl::StrCat(parts[0], ":0");
      return error(absl::StrCat("input '", input, "' names no argument or node"));
    }
    if (parts.size() == 2 && arg_names.count(parts[0])) return input;
    if (parts.size() != 3) return error(absl::StrCat("malformed input '", input, "'"));
    auto it = ranges.find(parts[0]);
    if (it == ranges.end()) return error(absl::StrCat("input '", input, "' names no node"));
    auto range = it->second.find(parts[1]);
    int i = 0;
    if (range == it->second.end() || !absl::SimpleAtoi(parts[2], &i) || i < 0 ||
        i >= range->second.second) {
      return error(absl::StrCat("input '", input, "' names no output of node '", parts[0], "'"));
    }
    return absl::StrCat(parts[0], ":", range->second.first + i);
  };
  for (const tf::NodeDef& body : function.node_def()) {
    tf::NodeDef* n = def.add_node();
    *n = body;
    n->clear_input();
    for (const std::string& input : body.input()) {
      PX_ASSIGN_OR_RETURN(std::string rewritten, rewrite(input));
      n->add_input(rewritten);
    }
    for (const auto& [name, value] : n->attr()) {
      if (!value.placeholder().empty()) {
        return absl::UnimplementedError(absl::StrCat(
            "function '", fname, "': node '", body.name(), "' uses attribute placeholder $",
            value.placeholder(), "; polymorphic functions are not supported"));
      }
    }
    RewriteCall(library, n);
  }
  for (const tf::OpDef::ArgDef& arg : function.signature().output_arg()) {
    auto it = function.ret().find(arg.name());
    if (it == function.ret().end()) return error(absl::StrCat("output '", arg.name(), "' has no ret entry"));
    PX_ASSIGN_OR_RETURN(std::string fetch, rewrite(it->second));
    out.fetches.push_back(fetch);
  }
  for (const auto& [name, node] : function.control_ret()) out.targets.push_back(node);
  // Stateful nodes run even when no output needs them (TensorFlow 2's
  // automatic control dependencies make the same promise).
  for (const tf::NodeDef& body : function.node_def()) {
    const OpDef* op = OpRegistry::Global().Find(body.op());
    bool call = FindFunction(library, body.op()) != nullptr;
    if ((op != nullptr && op->is_stateful) || call) out.targets.push_back(body.name());
  }
  return out;
}

}  // namespace plexus

// Common-subexpression elimination: two nodes with the same op, attributes,
// requested device and inputs (in order, or either order for commutative
// ops), and the same control inputs, compute the same value. Consumers of
// the later one read the earlier one instead. Stateful, control-flow and
// input-less placeholder-like nodes are never merged; a node the signature
// names is never the one dropped.
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "optimizer/graph_util.h"
#include "optimizer/optimizer.h"

namespace plexus::opt {
namespace {

bool Commutative(const std::string& op) {
  static const std::set<std::string> kOps = {"Add", "AddV2", "Mul", "Maximum", "Minimum", "LogicalAnd",
                                             "LogicalOr", "Equal", "NotEqual", "SquaredDifference"};
  return kOps.count(op) > 0;
}

std::string Signature(const tf::NodeDef& n) {
  std::vector<std::string> data, control;
  for (const std::string& in : n.input()) {
    InputRef ref = ParseInput(in);
    if (ref.control) {
      control.push_back(ref.node);
    } else {
      data.push_back(EndpointKey(ref.node, ref.index));
    }
  }
  // String Add concatenates: its operands do not commute.
  const bool strings = n.attr().count("T") > 0 && n.attr().at("T").type() == tf::DT_STRING;
  if (Commutative(n.op()) && !strings && data.size() == 2 && data[1] < data[0]) std::swap(data[0], data[1]);
  std::sort(control.begin(), control.end());
  std::map<std::string, std::string> attrs;  // sorted by name
  for (const auto& [name, value] : n.attr()) attrs[name] = value.ShortDebugString();
  std::string sig = absl::StrCat(n.op(), "|", n.device(), "|", absl::StrJoin(data, ","), "|^",
                                 absl::StrJoin(control, ","), "|");
  for (const auto& [name, value] : attrs) absl::StrAppend(&sig, name, "=", value, ";");
  return sig;
}

}  // namespace

absl::StatusOr<bool> EliminateCommonSubexpressions(tf::GraphDef& def, const PassContext& ctx) {
  NodeIndex index(def);
  std::map<std::string, std::string> representative;  // signature -> node
  std::map<std::string, std::string> replaced;        // node -> the node it now reads
  for (const std::string& name : index.TopologicalOrder()) {
    tf::NodeDef* n = index.Find(name);
    if (n == nullptr || IsStateful(*n) || IsControlFlow(*n) || n->op() == "Placeholder" ||
        n->op() == "PlaceholderWithDefault" || n->op() == "_Arg" || n->op() == "NoOp") {
      continue;
    }
    // Inputs already merged read their representative first, so chains of
    // duplicates collapse in one pass.
    for (int i = 0; i < n->input_size(); ++i) {
      InputRef ref = ParseInput(n->input(i));
      auto it = replaced.find(ref.node);
      if (it == replaced.end()) continue;
      n->set_input(i, ref.control ? absl::StrCat("^", it->second) : OutputName(it->second, ref.index));
    }
    bool fed = false;
    for (const std::string& f : ctx.fed) fed |= ParseInput(f).node == name;
    if (fed) continue;
    std::string sig = Signature(*n);
    auto [it, inserted] = representative.emplace(sig, name);
    if (inserted || ctx.protected_nodes.count(name) > 0) continue;
    replaced[name] = it->second;
  }
  if (replaced.empty()) return false;
  // Rewire every consumer of a replaced node, data and control.
  for (tf::NodeDef& n : *def.mutable_node()) {
    for (int i = 0; i < n.input_size(); ++i) {
      InputRef ref = ParseInput(n.input(i));
      auto it = replaced.find(ref.node);
      if (it == replaced.end()) continue;
      n.set_input(i, ref.control ? absl::StrCat("^", it->second) : OutputName(it->second, ref.index));
    }
  }
  if (ctx.log) ctx.log->push_back(absl::StrCat("cse: ", replaced.size(), " duplicate nodes merged"));
  return true;
}

}  // namespace plexus::opt

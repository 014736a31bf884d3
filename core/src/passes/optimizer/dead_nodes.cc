// Dead-node removal: a node whose outputs nobody reads, that has no effect
// (not stateful) and that the signature does not name can go, and so can
// whole unused chains behind it (left behind by folding, fusion and the
// arithmetic rewrites). One backward sweep: the nodes that must stay (named
// by the signature, stateful, control flow, NoOp) are the roots; everything
// they reach through data and control inputs is live; the rest is removed
// at once. This is the fixed point of removing reader-less nodes one layer
// at a time (every cycle of a valid graph runs through control-flow nodes,
// which are roots), in time linear in the graph.
#include "passes/optimizer/graph_util.h"
#include "passes/optimizer/optimizer.h"

#include "absl/strings/str_cat.h"

namespace plexus::opt {

absl::StatusOr<bool> RemoveDeadNodes(tf::GraphDef& def, const PassContext& ctx) {
  NodeIndex index(def);
  std::unordered_set<const tf::NodeDef*> live;
  live.reserve(def.node_size());
  std::vector<const tf::NodeDef*> stack;
  for (const tf::NodeDef& n : def.node()) {
    // Control-flow nodes belong to their loop or conditional structure;
    // stateful nodes have effects.
    if (ctx.protected_nodes.count(n.name()) > 0 || IsStateful(n) || IsControlFlow(n) || n.op() == "NoOp") {
      if (live.insert(&n).second) stack.push_back(&n);
    }
  }
  while (!stack.empty()) {
    const tf::NodeDef* n = stack.back();
    stack.pop_back();
    for (const std::string& in : n->input()) {
      const tf::NodeDef* producer = index.Find(ParseInput(in).node);
      if (producer != nullptr && live.insert(producer).second) stack.push_back(producer);
    }
  }
  std::set<std::string> dead;
  for (const tf::NodeDef& n : def.node()) {
    if (live.count(&n) == 0) dead.insert(n.name());
  }
  if (dead.empty()) return false;
  RemoveNodes(def, dead);
  if (ctx.log) ctx.log->push_back(absl::StrCat("dead_nodes: removed ", dead.size(), " unused nodes"));
  return true;
}

}  // namespace plexus::opt

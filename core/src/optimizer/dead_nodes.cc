// Dead-node removal: a node whose outputs nobody reads, that has no effect
// (not stateful) and that the signature does not name can go. Repeats until
// nothing changes, so whole unused chains disappear (left behind by folding,
// fusion and the arithmetic rewrites).
#include "optimizer/graph_util.h"
#include "optimizer/optimizer.h"

#include "absl/strings/str_cat.h"

namespace plexus::opt {

absl::StatusOr<bool> RemoveDeadNodes(tf::GraphDef& def, const PassContext& ctx) {
  size_t total = 0;
  for (;;) {
    NodeIndex index(def);
    std::set<std::string> dead;
    for (const tf::NodeDef& n : def.node()) {
      if (ctx.protected_nodes.count(n.name()) > 0 || index.HasConsumers(n.name())) continue;
      // Control-flow nodes belong to their loop or conditional structure;
      // stateful nodes have effects.
      if (IsStateful(n) || IsControlFlow(n) || n.op() == "NoOp") continue;
      dead.insert(n.name());
    }
    if (dead.empty()) break;
    total += dead.size();
    RemoveNodes(def, dead);
  }
  if (total == 0) return false;
  if (ctx.log) ctx.log->push_back(absl::StrCat("dead_nodes: removed ", total, " unused nodes"));
  return true;
}

}  // namespace plexus::opt

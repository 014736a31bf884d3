// Pruning: keep only the nodes the signature's fetches and targets need
// (through data and control inputs), and the nodes it names. Everything else
// would never run: the executor prunes the same way, but a smaller graph
// makes every later pass cheaper.
#include "passes/optimizer/graph_util.h"
#include "passes/optimizer/optimizer.h"

#include "absl/strings/str_cat.h"

namespace plexus::opt {

absl::StatusOr<bool> PruneToFetches(tf::GraphDef& def, const PassContext& ctx) {
  NodeIndex index(def);
  std::set<std::string> keep;
  std::vector<std::string> stack(ctx.roots.begin(), ctx.roots.end());
  for (const std::string& name : ctx.protected_nodes) stack.push_back(name);
  while (!stack.empty()) {
    std::string name = stack.back();
    stack.pop_back();
    if (!keep.insert(name).second) continue;
    const tf::NodeDef* n = index.Find(name);
    if (n == nullptr) continue;
    for (const std::string& in : n->input()) stack.push_back(ParseInput(in).node);
  }
  std::set<std::string> remove;
  for (const tf::NodeDef& n : def.node()) {
    if (keep.count(n.name()) == 0) remove.insert(n.name());
  }
  if (remove.empty()) return false;
  RemoveNodes(def, remove);
  if (ctx.log) ctx.log->push_back(absl::StrCat("prune: removed ", remove.size(), " nodes the signature does not need"));
  return true;
}

}  // namespace plexus::opt

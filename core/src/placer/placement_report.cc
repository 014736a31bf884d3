// The placement report's text (plexus/placement.h).
#include "plexus/placement.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace plexus {

const char* PlacedByName(PlacedBy how) {
  switch (how) {
    case PlacedBy::kKernel:
      return "kernel";
    case PlacedBy::kHostOp:
      return "host op";
    case PlacedBy::kCore:
      return "core";
  }
  return "?";
}

std::map<std::string, int> PlacementReport::NodesPerDevice() const {
  std::map<std::string, int> count;
  for (const NodePlacement& n : nodes) count[n.how == PlacedBy::kKernel ? n.device : "core"]++;
  return count;
}

std::string PlacementReport::Summary() const {
  std::vector<std::string> parts;
  for (const auto& [device, n] : NodesPerDevice()) parts.push_back(absl::StrCat(device, ": ", n));
  return absl::StrCat(nodes.size(), nodes.size() == 1 ? " node" : " nodes", " (",
                      absl::StrJoin(parts, ", "), "), ", copies.size(),
                      copies.size() == 1 ? " copy" : " copies", " across devices");
}

std::string PlacementReport::ToString() const {
  std::string out;
  for (const NodePlacement& n : nodes) {
    absl::StrAppend(&out, "node '", n.node, "' (op ", n.op, "): ");
    switch (n.how) {
      case PlacedBy::kKernel:
        absl::StrAppend(&out, n.device, ", kernel of plugin '", n.plugin, "'");
        break;
      case PlacedBy::kHostOp:
        absl::StrAppend(&out, "host op of the core");
        break;
      case PlacedBy::kCore:
        absl::StrAppend(&out, "run by the core (no kernel)");
        break;
    }
    if (!n.reason.empty()) absl::StrAppend(&out, "; ", n.reason);
    if (n.once) absl::StrAppend(&out, "; computed once, when the executor was built");
    out += "\n";
  }
  for (const CopyPlacement& c : copies) {
    absl::StrAppend(&out, "copy of '", c.tensor, "' from ", c.from, " to ", c.to, " for ", c.reader, "\n");
  }
  absl::StrAppend(&out, "summary: ", Summary(), "\n");
  return out;
}

}  // namespace plexus

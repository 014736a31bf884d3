// px_graph's state: an imported graph, a builder extending it, the finished
// graph sessions run, and the operation handles callers hold.
#include "handles.h"

const plexus::Node* px_graph::Resolve(const px_operation* operation) const {
  if (operation == nullptr || operation->graph != this) return nullptr;
  return current().FindNode(operation->name);
}

px_operation* px_graph::Handle(const plexus::Node* node) const {
  if (node == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(mu);
  auto it = by_name.find(node->name);
  if (it != by_name.end()) return it->second;
  operations.push_back(px_operation{this, node->name});
  px_operation* handle = &operations.back();
  by_name.emplace(node->name, handle);
  return handle;
}

absl::Status px_graph::EnsureBuilder() {
  if (builder) return absl::OkStatus();
  if (!graph) {
    builder = std::make_unique<plexus::GraphBuilder>("<built graph>");
    return absl::OkStatus();
  }
  PX_ASSIGN_OR_RETURN(builder, plexus::GraphBuilder::FromGraph(*graph));
  retired = graph;
  return absl::OkStatus();
}

void px_graph::Changed() {
  std::lock_guard<std::mutex> lock(mu);
  graph.reset();
}

absl::StatusOr<std::shared_ptr<const plexus::Graph>> px_graph::Finished() const {
  std::lock_guard<std::mutex> lock(mu);
  if (!graph) {
    if (!builder) return absl::InternalError("graph has neither nodes nor a builder");
    PX_ASSIGN_OR_RETURN(graph, builder->Finish());
  }
  return graph;
}

#include "plexus/auto_control_deps.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace plexus {
namespace {

// Ops that only read the resources they are given.
bool ReadsOnly(const std::string& op) {
  return op == "ReadVariableOp" || op == "VariableShape" || op == "VarIsInitializedOp" ||
         op == "ResourceGather";
}

// Stateful ops that create a handle and touch no state: ordering them would
// only serialize the graph.
bool MakesHandleOnly(const std::string& op) {
  return op == "VarHandleOp" || op == "Placeholder" || op == "_Arg";
}

std::string AttrString(const Node& node, const char* name) {
  const tf::AttrValue* v = node.FindAttr(name);
  return v == nullptr ? std::string() : v->s();
}

// What a resource input stands for: a variable by its names, else the
// endpoint that made the handle (seen through Identity).
std::string ResourceKey(Endpoint e) {
  while ((e.node->op == "Identity" || e.node->op == "IdentityN") && e.index < e.node->num_inputs()) {
    e = e.node->inputs[e.index];
  }
  if (e.node->op == "VarHandleOp") {
    const std::string shared = AttrString(*e.node, "shared_name");
    if (!shared.empty()) return absl::StrCat("variable ", AttrString(*e.node, "container"), "/", shared);
  }
  return absl::StrCat("node ", e.node->id, ":", e.index);
}

std::vector<std::string> ResourceKeys(const std::vector<Endpoint>& inputs) {
  std::vector<std::string> keys;
  for (const Endpoint& e : inputs) {
    if (e.node == nullptr || e.index >= e.node->num_outputs()) continue;
    if (e.node->output_types[e.index] != DataType::kResource) continue;
    std::string key = ResourceKey(e);
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(std::move(key));
  }
  return keys;
}

void AddOnce(std::vector<Node*>* nodes, Node* n) {
  if (n != nullptr && std::find(nodes->begin(), nodes->end(), n) == nodes->end()) nodes->push_back(n);
}

}  // namespace

std::vector<Node*> AutoControlDeps::ControlInputs(const OpDef& def,
                                                  const std::vector<Endpoint>& inputs) const {
  std::vector<Node*> controls;
  // Stateless ops (an Identity of a handle, say) touch no state: data edges
  // order them enough.
  if (!def.is_stateful || MakesHandleOnly(def.name)) return controls;
  const std::vector<std::string> keys = ResourceKeys(inputs);
  if (keys.empty()) {
    AddOnce(&controls, last_stateful_);
    return controls;
  }
  const bool read = ReadsOnly(def.name);
  for (const std::string& key : keys) {
    auto it = resources_.find(key);
    if (it == resources_.end()) continue;
    AddOnce(&controls, it->second.last_write);
    if (!read) {
      for (Node* r : it->second.reads) AddOnce(&controls, r);
    }
  }
  // A data input already orders its producer first.
  controls.erase(std::remove_if(controls.begin(), controls.end(),
                                [&](Node* c) {
                                  return std::any_of(inputs.begin(), inputs.end(),
                                                     [&](const Endpoint& e) { return e.node == c; });
                                }),
                 controls.end());
  return controls;
}

void AutoControlDeps::Added(Node* node) {
  if (node->def == nullptr || !node->def->is_stateful || MakesHandleOnly(node->op)) return;
  const std::vector<std::string> keys = ResourceKeys(node->inputs);
  if (keys.empty()) {
    last_stateful_ = node;
    return;
  }
  const bool read = ReadsOnly(node->op);
  for (const std::string& key : keys) {
    Uses& uses = resources_[key];
    if (read) {
      uses.reads.push_back(node);
    } else {
      uses.last_write = node;
      uses.reads.clear();
    }
  }
}

}  // namespace plexus

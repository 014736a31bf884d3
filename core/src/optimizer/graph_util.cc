#include "optimizer/graph_util.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "plexus/tensor_proto.h"

namespace plexus::opt {

InputRef ParseInput(absl::string_view input) {
  absl::StatusOr<TensorRef> ref = ParseTensorRef(input);
  if (ref.ok()) return *std::move(ref);
  InputRef plain;
  plain.node = std::string(input);
  return plain;
}

std::string OutputName(const std::string& node, int index) {
  return index == 0 ? node : absl::StrCat(node, ":", index);
}

std::string EndpointKey(const std::string& node, int index) { return absl::StrCat(node, ":", index); }

NodeIndex::NodeIndex(tf::GraphDef& def) : def_(&def) {
  for (tf::NodeDef& n : *def.mutable_node()) by_name_[n.name()] = &n;
  for (tf::NodeDef& n : *def.mutable_node()) {
    for (int i = 0; i < n.input_size(); ++i) {
      InputRef ref = ParseInput(n.input(i));
      if (ref.control) {
        control_[ref.node].push_back(&n);
      } else {
        data_[ref.node].emplace_back(&n, i);
      }
    }
  }
}

tf::NodeDef* NodeIndex::Find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

const std::vector<std::pair<tf::NodeDef*, int>>& NodeIndex::DataConsumers(const std::string& node) const {
  static const std::vector<std::pair<tf::NodeDef*, int>> kNone;
  auto it = data_.find(node);
  return it == data_.end() ? kNone : it->second;
}

const std::vector<tf::NodeDef*>& NodeIndex::ControlConsumers(const std::string& node) const {
  static const std::vector<tf::NodeDef*> kNone;
  auto it = control_.find(node);
  return it == control_.end() ? kNone : it->second;
}

bool NodeIndex::HasConsumers(const std::string& node) const {
  return !DataConsumers(node).empty() || !ControlConsumers(node).empty();
}

std::vector<std::string> NodeIndex::TopologicalOrder() const {
  std::vector<std::string> order;
  std::map<std::string, int> state;  // 1 visiting, 2 done
  std::function<void(const tf::NodeDef&)> visit = [&](const tf::NodeDef& n) {
    int& s = state[n.name()];
    if (s != 0) return;
    s = 1;
    if (n.op() != "Merge" && n.op() != "RefMerge") {
      for (const std::string& in : n.input()) {
        tf::NodeDef* producer = Find(ParseInput(in).node);
        if (producer != nullptr) visit(*producer);
      }
    } else {
      // A Merge's back edge comes from NextIteration: visit the forward
      // inputs only.
      for (const std::string& in : n.input()) {
        tf::NodeDef* producer = Find(ParseInput(in).node);
        if (producer != nullptr && producer->op() != "NextIteration" && producer->op() != "RefNextIteration") {
          visit(*producer);
        }
      }
    }
    s = 2;
    order.push_back(n.name());
  };
  for (const tf::NodeDef& n : def_->node()) visit(n);
  return order;
}

std::set<std::string> FeedTainted(tf::GraphDef& def, const std::set<std::string>& fed) {
  std::set<std::string> tainted;
  if (fed.empty()) return tainted;
  NodeIndex index(def);
  for (const std::string& name : index.TopologicalOrder()) {
    const tf::NodeDef* n = index.Find(name);
    for (const std::string& in : n->input()) {
      InputRef ref = ParseInput(in);
      if (ref.control) continue;
      const tf::NodeDef* producer = index.Find(ref.node);
      if (tainted.count(ref.node) > 0 ||
          (fed.count(EndpointKey(ref.node, ref.index)) > 0 && producer != nullptr && producer->op() != "Placeholder")) {
        tainted.insert(name);
        break;
      }
    }
  }
  return tainted;
}

std::set<std::string> UnderControlFlow(tf::GraphDef& def) {
  static const std::set<std::string> kOps = {"Switch", "RefSwitch", "Merge", "RefMerge", "Enter", "RefEnter",
                                             "Exit", "RefExit", "NextIteration", "RefNextIteration", "LoopCond"};
  std::set<std::string> under;
  NodeIndex index(def);
  for (const std::string& name : index.TopologicalOrder()) {
    const tf::NodeDef* n = index.Find(name);
    bool inside = kOps.count(n->op()) > 0;
    for (const std::string& in : n->input()) inside |= under.count(ParseInput(in).node) > 0;
    if (inside) under.insert(name);
  }
  return under;
}

int RewireOutputs(tf::GraphDef& def, const std::string& from_node, int from_index, const std::string& to,
                  const std::set<std::string>& skip) {
  int changed = 0;
  for (tf::NodeDef& n : *def.mutable_node()) {
    if (skip.count(n.name()) > 0) continue;
    for (int i = 0; i < n.input_size(); ++i) {
      InputRef ref = ParseInput(n.input(i));
      if (!ref.control && ref.node == from_node && ref.index == from_index) {
        n.set_input(i, to);
        ++changed;
      }
    }
  }
  return changed;
}

void RemoveNodes(tf::GraphDef& def, const std::set<std::string>& names) {
  if (names.empty()) return;
  auto* nodes = def.mutable_node();
  int out = 0;
  for (int i = 0; i < nodes->size(); ++i) {
    if (names.count(nodes->Get(i).name()) > 0) continue;
    if (out != i) nodes->SwapElements(out, i);
    ++out;
  }
  while (nodes->size() > out) nodes->RemoveLast();
  for (tf::NodeDef& n : *def.mutable_node()) {
    auto* inputs = n.mutable_input();
    for (int i = inputs->size() - 1; i >= 0; --i) {
      InputRef ref = ParseInput(inputs->Get(i));
      if (ref.control && names.count(ref.node) > 0) inputs->erase(inputs->begin() + i);
    }
  }
}

std::string UniqueName(const tf::GraphDef& def, const std::string& base) {
  std::set<std::string> used;
  for (const tf::NodeDef& n : def.node()) used.insert(n.name());
  if (used.count(base) == 0) return base;
  for (int i = 1;; ++i) {
    std::string name = absl::StrCat(base, "_", i);
    if (used.count(name) == 0) return name;
  }
}

const OpDef* FindOpDef(const tf::NodeDef& node) { return OpRegistry::Global().Find(node.op()); }

bool IsStateful(const tf::NodeDef& node) {
  const OpDef* def = FindOpDef(node);
  return def == nullptr || def->is_stateful;
}

bool IsControlFlow(const tf::NodeDef& node) {
  static const std::set<std::string> kOps = {
      "Switch", "RefSwitch", "Merge", "RefMerge", "Enter", "RefEnter", "Exit", "RefExit",
      "NextIteration", "RefNextIteration", "LoopCond", "ControlTrigger", "If", "StatelessIf",
      "While", "StatelessWhile", "PartitionedCall", "StatefulPartitionedCall"};
  return kOps.count(node.op()) > 0;
}

DataType TypeAttr(const tf::NodeDef& node, const std::string& name) {
  auto it = node.attr().find(name);
  if (it == node.attr().end() || it->second.value_case() != tf::AttrValue::kType) return DataType::kInvalid;
  return static_cast<DataType>(it->second.type());
}

absl::StatusOr<tf::NodeDef> MakeConst(const std::string& name, const Tensor& value, const std::string& device) {
  auto proto = TensorToProto(value);
  if (!proto.ok()) return proto.status();
  tf::NodeDef n;
  n.set_name(name);
  n.set_op("Const");
  n.set_device(device);
  (*n.mutable_attr())["dtype"].set_type(static_cast<tf::DataType>(value.dtype()));
  *(*n.mutable_attr())["value"].mutable_tensor() = *std::move(proto);
  return n;
}

}  // namespace plexus::opt

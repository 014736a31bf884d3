#include "passes/optimizer/graph_util.h"

#include <algorithm>

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
  by_name_.reserve(def.node_size());
  for (tf::NodeDef& n : *def.mutable_node()) by_name_[n.name()] = &n;
  for (tf::NodeDef& n : *def.mutable_node()) AddInputs(n);
}

tf::NodeDef* NodeIndex::Find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

const std::vector<NodeIndex::Consumer>& NodeIndex::DataConsumers(const std::string& node) const {
  static const std::vector<Consumer> kNone;
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

void NodeIndex::AddInput(tf::NodeDef& n, int i) {
  InputRef ref = ParseInput(n.input(i));
  if (ref.control) {
    control_[ref.node].push_back(&n);
  } else {
    data_[ref.node].emplace_back(&n, i);
  }
}

void NodeIndex::RemoveInput(tf::NodeDef& n, int i) {
  InputRef ref = ParseInput(n.input(i));
  if (ref.control) {
    auto it = control_.find(ref.node);
    if (it == control_.end()) return;
    auto pos = std::find(it->second.begin(), it->second.end(), &n);
    if (pos != it->second.end()) it->second.erase(pos);
  } else {
    auto it = data_.find(ref.node);
    if (it == data_.end()) return;
    auto pos = std::find(it->second.begin(), it->second.end(), Consumer(&n, i));
    if (pos != it->second.end()) it->second.erase(pos);
  }
}

void NodeIndex::AddInputs(tf::NodeDef& n) {
  for (int i = 0; i < n.input_size(); ++i) AddInput(n, i);
}

void NodeIndex::RemoveInputs(tf::NodeDef& n) {
  for (int i = 0; i < n.input_size(); ++i) RemoveInput(n, i);
}

void NodeIndex::SetInput(tf::NodeDef& n, int i, const std::string& input) {
  RemoveInput(n, i);
  n.set_input(i, input);
  AddInput(n, i);
}

tf::NodeDef* NodeIndex::AddNode(tf::NodeDef node) {
  tf::NodeDef* n = def_->add_node();
  *n = std::move(node);
  by_name_[n->name()] = n;
  AddInputs(*n);
  return n;
}

void NodeIndex::ReplaceNode(tf::NodeDef& n, tf::NodeDef replacement) {
  RemoveInputs(n);
  n = std::move(replacement);
  by_name_[n.name()] = &n;
  AddInputs(n);
}

int NodeIndex::RewireOutputs(const std::string& from_node, int from_index, const std::string& to,
                             const std::set<std::string>* skip) {
  auto it = data_.find(from_node);
  if (it == data_.end()) return 0;
  std::vector<Consumer> kept, moved;
  for (const Consumer& c : it->second) {
    if (ParseInput(c.first->input(c.second)).index == from_index &&
        (skip == nullptr || skip->count(c.first->name()) == 0)) {
      c.first->set_input(c.second, to);
      moved.push_back(c);
    } else {
      kept.push_back(c);
    }
  }
  if (moved.empty()) return 0;
  it->second = std::move(kept);
  std::vector<Consumer>& target = data_[ParseInput(to).node];  // references survive rehashing
  target.insert(target.end(), moved.begin(), moved.end());
  return static_cast<int>(moved.size());
}

std::vector<std::string> NodeIndex::TopologicalOrder() const {
  std::vector<std::string> order;
  order.reserve(def_->node_size());
  std::unordered_map<const tf::NodeDef*, int> state;  // 1 visiting, 2 done
  state.reserve(def_->node_size());
  // The recursion "visit every input, then the node" with an explicit
  // stack, so a graph of any depth fits: a frame is a node and the next of
  // its inputs to visit.
  std::vector<std::pair<const tf::NodeDef*, int>> stack;
  auto enter = [&](const tf::NodeDef* n) {
    int& s = state[n];
    if (s != 0) return;
    s = 1;
    stack.emplace_back(n, 0);
  };
  for (const tf::NodeDef& root : def_->node()) {
    enter(&root);
    while (!stack.empty()) {
      const tf::NodeDef* n = stack.back().first;
      int& next = stack.back().second;
      if (next < n->input_size()) {
        const tf::NodeDef* producer = Find(ParseInput(n->input(next++)).node);
        if (producer == nullptr) continue;
        // A Merge's back edge comes from NextIteration: visit the forward
        // inputs only.
        if ((n->op() == "Merge" || n->op() == "RefMerge") &&
            (producer->op() == "NextIteration" || producer->op() == "RefNextIteration")) {
          continue;
        }
        enter(producer);  // may reallocate the stack: `next` is not used after this
        continue;
      }
      state[n] = 2;
      order.push_back(n->name());
      stack.pop_back();
    }
  }
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

NameSet::NameSet(const tf::GraphDef& def) {
  used_.reserve(def.node_size());
  for (const tf::NodeDef& n : def.node()) used_.insert(n.name());
}

std::string NameSet::Unique(const std::string& base) {
  if (used_.insert(base).second) return base;
  // Names are only ever added, so every suffix below the one recorded is
  // taken: resuming there gives the first unused one.
  int& next = next_suffix_.emplace(base, 1).first->second;
  for (;; ++next) {
    std::string name = absl::StrCat(base, "_", next);
    if (used_.insert(name).second) {
      ++next;
      return name;
    }
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

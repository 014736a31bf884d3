// Elementwise fusion: a tree of elementwise nodes (Add, Mul, Relu, Exp, ...)
// of one static shape, where every node but the root feeds only the next
// one, becomes one _PlexusFusedElementwise node carrying the tree as a small
// program (plexus/sdk/fused_elementwise.h). One launch replaces many, and
// the intermediate values never leave the cache. Only float and double
// (16-bit floats would round differently between the steps), only where the
// session device's plugin has the fused kernel, and at most kMaxNodes nodes
// per fused node. Scalar Const inputs become immediate operands of the
// program (exact hex floats), so the fused node does not take them as
// inputs. The fused node takes the root's name.
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "passes/optimizer/graph_util.h"
#include "passes/optimizer/optimizer.h"
#include "plexus/device.h"
#include "plexus/graph_import.h"
#include "plexus/sdk/fused_elementwise.h"
#include "plexus/tensor_proto.h"

namespace plexus::opt {
namespace {

// A fused node's cost grows with its program only (the kernels reuse the
// registers of dead results), so the cap only bounds the size of one node.
constexpr size_t kMaxNodes = 1024;

bool DeviceHasFusedKernel(const PassContext& ctx, DataType t) {
  if (ctx.device == nullptr) return false;
  for (const KernelRegistration* k : ctx.device->plugin().kernels().ForOp("_PlexusFusedElementwise")) {
    for (const auto& [attr, allowed] : k->type_constraints) {
      if (attr == "T" && std::find(allowed.begin(), allowed.end(), t) != allowed.end()) return true;
    }
  }
  return false;
}

int64_t Elements(const PartialShape& s) {
  int64_t n = 1;
  for (int64_t d : s.dims()) n *= d;
  return n;
}

// The value of output `index` of `n` when it is a one-element Const of
// dtype `t` that nothing feeds or controls, or nullopt.
std::optional<double> ScalarConst(const tf::NodeDef* n, int index, DataType t, const PassContext& ctx) {
  if (n == nullptr || n->op() != "Const" || index != 0 || n->input_size() > 0) return std::nullopt;
  if (ctx.fed.count(EndpointKey(n->name(), 0)) > 0) return std::nullopt;
  auto it = n->attr().find("value");
  if (it == n->attr().end()) return std::nullopt;
  auto value = TensorFromProto(it->second.tensor());
  if (!value.ok() || value->dtype() != t || value->num_elements() != 1) return std::nullopt;
  return t == DataType::kFloat ? static_cast<double>(value->data<float>()[0]) : value->data<double>()[0];
}

// An immediate operand: a C99 hex float, exact for float and double.
std::string Immediate(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "c%a", v);
  return buf;
}

// A tree being fused: its root, dtype and members.
struct Tree {
  const Node* root;
  DataType t;
  std::vector<const Node*> members;
  std::set<std::string> in_tree;

  const PartialShape& shape() const { return root->output_shapes[0]; }
};

// What the fusion of one graph shares between its trees.
struct Fusion {
  const PassContext& ctx;
  const Graph& graph;
  const NodeIndex& index;
  // The fused node fixes its output shape: not where static shapes may not
  // hold.
  const std::set<std::string> tainted;
  std::set<std::string> taken;

  // A node that can be part of a fused tree at all.
  const Node* Fusable(const tf::NodeDef& n) const;
  // Grows `tree` from its root through producers that feed only it.
  void GrowTree(const tf::NodeDef& root, Tree* tree) const;
};

const Node* Fusion::Fusable(const tf::NodeDef& n) const {
  if (!sdk::IsFusedUnaryOp(n.op()) && !sdk::IsFusedBinaryOp(n.op())) return nullptr;
  const Node* node = graph.FindNode(n.name());
  if (node == nullptr || node->num_outputs() != 1 || !node->control_inputs.empty()) return nullptr;
  DataType t = node->output_types[0];
  if (t != DataType::kFloat && t != DataType::kDouble) return nullptr;
  if (!node->output_shapes[0].fully_defined() || ctx.fed.count(EndpointKey(n.name(), 0)) > 0) return nullptr;
  if (!DeviceHasFusedKernel(ctx, t) || tainted.count(n.name()) > 0) return nullptr;
  return node;
}

void Fusion::GrowTree(const tf::NodeDef& root, Tree* tree) const {
  std::vector<const Node*>& members = tree->members;
  std::set<std::string>& in_tree = tree->in_tree;
  for (size_t m = 0; m < members.size() && members.size() < kMaxNodes; ++m) {
    for (const Endpoint& in : members[m]->inputs) {
      if (members.size() >= kMaxNodes) break;
      const Node* p = in.node;
      if (in_tree.count(p->name) > 0 || taken.count(p->name) > 0 || ctx.protected_nodes.count(p->name) > 0) {
        continue;
      }
      tf::NodeDef* pdef = index.Find(p->name);
      if (pdef == nullptr || Fusable(*pdef) == nullptr || p->output_types[0] != tree->t) continue;
      if (p->output_shapes[0].dims() != tree->shape().dims() || pdef->device() != root.device()) continue;
      const auto& consumers = index.DataConsumers(p->name);
      if (consumers.size() != 1 || !index.ControlConsumers(p->name).empty() ||
          in_tree.count(consumers[0].first->name()) == 0) {
        continue;
      }
      members.push_back(p);
      in_tree.insert(p->name);
    }
  }
}

// Every input from outside the tree has the tree's shape or one element.
bool OutsideInputsFit(const Tree& tree) {
  const PartialShape& shape = tree.shape();
  bool ok = true;
  for (const Node* m : tree.members) {
    for (const Endpoint& in : m->inputs) {
      if (tree.in_tree.count(in.node->name) > 0) continue;
      const PartialShape& s = in.node->output_shapes[in.index];
      ok &= s.fully_defined() && (s.dims() == shape.dims() ||
                                  (Elements(s) == 1 && s.rank() <= static_cast<int64_t>(shape.dims().size())));
    }
  }
  return ok;
}

// The program of `tree`: members in post-order (operands before their
// users), walked with an explicit stack (a tree can be a chain of
// kMaxNodes). With `immediates`, scalar constants become immediates.
void EmitProgram(const Tree& tree, const Fusion& fusion, bool immediates, std::vector<std::string>* inputs,
                 std::vector<std::string>* program) {
  inputs->clear();
  program->clear();
  std::map<std::string, int> input_index, result_index;
  struct Frame {
    explicit Frame(const Node* n) : node(n) {}
    const Node* node;
    size_t next = 0;
    std::vector<std::string> operands;
  };
  std::vector<Frame> stack;
  stack.emplace_back(tree.root);
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next < f.node->inputs.size()) {
      const Endpoint& in = f.node->inputs[f.next++];
      if (tree.in_tree.count(in.node->name) > 0) {
        auto r = result_index.find(in.node->name);
        if (r != result_index.end()) {
          f.operands.push_back(absl::StrCat("r", r->second));
        } else {
          stack.emplace_back(in.node);  // invalidates f
        }
        continue;
      }
      if (immediates) {
        if (std::optional<double> v = ScalarConst(fusion.index.Find(in.node->name), in.index, tree.t, fusion.ctx)) {
          f.operands.push_back(Immediate(*v));
          continue;
        }
      }
      std::string name = OutputName(in.node->name, in.index);
      auto [pos, added] = input_index.emplace(name, static_cast<int>(inputs->size()));
      if (added) inputs->push_back(name);
      f.operands.push_back(absl::StrCat("i", pos->second));
      continue;
    }
    std::string ins = f.node->op;
    for (const std::string& o : f.operands) absl::StrAppend(&ins, " ", o);
    program->push_back(ins);
    const int result = static_cast<int>(program->size()) - 1;
    result_index[f.node->name] = result;
    stack.pop_back();
    if (!stack.empty()) stack.back().operands.push_back(absl::StrCat("r", result));
  }
}

// The _PlexusFusedElementwise node that replaces `root`, taking its name.
tf::NodeDef FusedNode(const tf::NodeDef& root, const Tree& tree, const std::vector<std::string>& inputs,
                      const std::vector<std::string>& program) {
  tf::NodeDef fused;
  fused.set_name(root.name());
  fused.set_op("_PlexusFusedElementwise");
  fused.set_device(root.device());
  for (const std::string& in : inputs) fused.add_input(in);
  auto& attr = *fused.mutable_attr();
  attr["T"].set_type(static_cast<tf::DataType>(tree.t));
  attr["N"].set_i(static_cast<int64_t>(inputs.size()));
  attr["shape"].mutable_list();  // set even when empty (a scalar tree)
  for (int64_t d : tree.shape().dims()) attr["shape"].mutable_list()->add_i(d);
  for (const std::string& ins : program) attr["program"].mutable_list()->add_s(ins);
  return fused;
}

}  // namespace

absl::StatusOr<bool> FuseElementwise(tf::GraphDef& def, const PassContext& ctx) {
  if (OpRegistry::Global().Find("_PlexusFusedElementwise") == nullptr) return false;
  auto graph = ImportGraphDef(def, ctx.source);
  if (!graph.ok()) return graph.status();
  NodeIndex index(def);
  Fusion fusion{ctx, **graph, index, FeedTainted(def, ctx.fed), {}};

  std::vector<std::string> order = index.TopologicalOrder();
  // The members other than the roots: only their tree read them, so they
  // go at the end (here, not one by one in dead_nodes' rounds).
  std::set<std::string> fused_members;
  int fused_nodes = 0, fused_away = 0;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    tf::NodeDef* root = index.Find(*it);
    if (root == nullptr || fusion.taken.count(root->name()) > 0) continue;
    const Node* root_node = fusion.Fusable(*root);
    if (root_node == nullptr) continue;
    Tree tree{root_node, root_node->output_types[0], {root_node}, {root->name()}};
    fusion.GrowTree(*root, &tree);
    if (tree.members.size() < 2) continue;
    if (!OutsideInputsFit(tree)) continue;

    // Scalar constants become immediates, unless that would leave the fused
    // node with no input at all (it needs one).
    std::vector<std::string> inputs, program;
    EmitProgram(tree, fusion, true, &inputs, &program);
    if (inputs.empty()) EmitProgram(tree, fusion, false, &inputs, &program);
    *root = FusedNode(*root, tree, inputs, program);
    for (const std::string& name : tree.in_tree) {
      fusion.taken.insert(name);
      if (name != root->name()) fused_members.insert(name);
    }
    ++fused_nodes;
    fused_away += static_cast<int>(tree.members.size());
  }
  if (fused_nodes == 0) return false;
  RemoveNodes(def, fused_members);
  if (ctx.log) {
    ctx.log->push_back(absl::StrCat("fuse_elementwise: ", fused_away, " elementwise nodes fused into ", fused_nodes,
                                    " _PlexusFusedElementwise nodes"));
  }
  return true;
}

}  // namespace plexus::opt

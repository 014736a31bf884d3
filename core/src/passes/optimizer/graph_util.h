// Helpers shared by the optimizer passes: input strings, a consumer index
// over a GraphDef, and small node builders. Internal to the core.
#ifndef PLEXUS_SRC_OPTIMIZER_GRAPH_UTIL_H_
#define PLEXUS_SRC_OPTIMIZER_GRAPH_UTIL_H_

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/strings/string_view.h"
#include "graph.pb.h"
#include "plexus/graph_import.h"
#include "plexus/op_def.h"
#include "plexus/tensor.h"

namespace plexus::opt {

// One input string of a NodeDef: "node", "node:k" or "^node", parsed by the
// importer's ParseTensorRef. Passes only see inputs the importer accepted,
// so a malformed one (never expected) reads as a plain node name.
using InputRef = TensorRef;
InputRef ParseInput(absl::string_view input);
// "node" for output 0, "node:k" otherwise.
std::string OutputName(const std::string& node, int index);
// "node:k" always (the form used in PassContext::fed).
std::string EndpointKey(const std::string& node, int index);

// Every node of a GraphDef by name, and the readers (consumers) of every
// node. Built once per pass in O(nodes + inputs); the editing methods below
// keep it current, so a pass that edits only through them never rebuilds
// it. Editing the GraphDef directly leaves it stale (rebuild it then).
// Nodes removed from the GraphDef (RemoveNodes) must not be looked up
// afterwards: protobuf may reuse their memory for nodes added later.
class NodeIndex {
 public:
  using Consumer = std::pair<tf::NodeDef*, int>;  // (reader, input position)

  explicit NodeIndex(tf::GraphDef& def);
  tf::NodeDef* Find(const std::string& name) const;
  // (consumer, input position) for every data input reading `node` (any
  // output), and consumers through control inputs. The order is that of
  // the GraphDef for a fresh index; edits append.
  const std::vector<Consumer>& DataConsumers(const std::string& node) const;
  const std::vector<tf::NodeDef*>& ControlConsumers(const std::string& node) const;
  bool HasConsumers(const std::string& node) const;
  // Node names in an order where every node comes after its inputs, except
  // across NextIteration back edges: the depth-first post-order from each
  // node in GraphDef order, inputs in order. Iterative (any depth).
  std::vector<std::string> TopologicalOrder() const;

  // Edits that keep the index current.
  // Sets input `i` of `n` (a node of the GraphDef) to `input`.
  void SetInput(tf::NodeDef& n, int i, const std::string& input);
  // Appends `node` to the GraphDef; returns it (pointers to other nodes
  // stay valid).
  tf::NodeDef* AddNode(tf::NodeDef node);
  // Replaces `n` in place by `replacement`, which has the same name.
  void ReplaceNode(tf::NodeDef& n, tf::NodeDef replacement);
  // Replaces every data input reading output `from_index` of `from_node`
  // with `to`, in readers whose names are not in `skip`. Returns how many
  // inputs changed. Costs O(readers of from_node), not O(graph).
  int RewireOutputs(const std::string& from_node, int from_index, const std::string& to,
                    const std::set<std::string>* skip = nullptr);

 private:
  void AddInputs(tf::NodeDef& n);
  void RemoveInputs(tf::NodeDef& n);
  void AddInput(tf::NodeDef& n, int i);
  void RemoveInput(tf::NodeDef& n, int i);

  tf::GraphDef* def_;
  std::unordered_map<std::string, tf::NodeDef*> by_name_;
  std::unordered_map<std::string, std::vector<Consumer>> data_;
  std::unordered_map<std::string, std::vector<tf::NodeDef*>> control_;
};

// The names used in a GraphDef, owned by a pass: Unique() is O(1) amortized
// (no scan of the graph per new name).
class NameSet {
 public:
  explicit NameSet(const tf::GraphDef& def);
  // `base` when unused, otherwise the first unused of base_1, base_2, ...;
  // the name is recorded as used.
  std::string Unique(const std::string& base);
  void Insert(const std::string& name) { used_.insert(name); }
  bool Contains(const std::string& name) const { return used_.count(name) > 0; }

 private:
  std::unordered_set<std::string> used_;
  std::unordered_map<std::string, int> next_suffix_;  // base -> first suffix to try
};

// Removes nodes by name (and control inputs that point at them), in one
// sweep over the graph.
void RemoveNodes(tf::GraphDef& def, const std::set<std::string>& names);

// Nodes whose static shapes may not hold at run time: those downstream of a
// fed tensor that is not a placeholder's (a fed constant may change values,
// such as a Reshape's target, that static shapes were inferred from).
std::set<std::string> FeedTainted(tf::GraphDef& def, const std::set<std::string>& fed);
// Nodes inside TensorFlow 1 control flow: downstream (through data or
// control edges) of a Switch, Merge, Enter, Exit, NextIteration or LoopCond.
std::set<std::string> UnderControlFlow(tf::GraphDef& def);

// The op definition of a node, or null.
const OpDef* FindOpDef(const tf::NodeDef& node);
bool IsStateful(const tf::NodeDef& node);
bool IsControlFlow(const tf::NodeDef& node);
// The attribute of type "type" named `name`, or DT_INVALID.
DataType TypeAttr(const tf::NodeDef& node, const std::string& name);

// A Const node holding `value`.
absl::StatusOr<tf::NodeDef> MakeConst(const std::string& name, const Tensor& value,
                                      const std::string& device);

}  // namespace plexus::opt

#endif  // PLEXUS_SRC_OPTIMIZER_GRAPH_UTIL_H_

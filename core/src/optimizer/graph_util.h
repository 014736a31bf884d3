// Helpers shared by the optimizer passes: input strings, a consumer index
// over a GraphDef, and small node builders. Internal to the core.
#ifndef PLEXUS_SRC_OPTIMIZER_GRAPH_UTIL_H_
#define PLEXUS_SRC_OPTIMIZER_GRAPH_UTIL_H_

#include <map>
#include <set>
#include <string>
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

// Consumers of every node of a GraphDef, by name. Rebuild after edits.
class NodeIndex {
 public:
  explicit NodeIndex(tf::GraphDef& def);
  tf::NodeDef* Find(const std::string& name) const;
  // (consumer, input position) for every data input reading `node` (any
  // output), and consumers through control inputs.
  const std::vector<std::pair<tf::NodeDef*, int>>& DataConsumers(const std::string& node) const;
  const std::vector<tf::NodeDef*>& ControlConsumers(const std::string& node) const;
  bool HasConsumers(const std::string& node) const;
  // Node names in an order where every node comes after its inputs, except
  // across NextIteration back edges.
  std::vector<std::string> TopologicalOrder() const;

 private:
  tf::GraphDef* def_;
  std::map<std::string, tf::NodeDef*> by_name_;
  std::map<std::string, std::vector<std::pair<tf::NodeDef*, int>>> data_;
  std::map<std::string, std::vector<tf::NodeDef*>> control_;
};

// Replaces every data input reading `from` ("node:k" form via OutputName)
// with `to`, in nodes not in `skip`. Returns how many inputs changed.
int RewireOutputs(tf::GraphDef& def, const std::string& from_node, int from_index,
                  const std::string& to, const std::set<std::string>& skip = {});

// Removes nodes by name (and control inputs that point at them).
void RemoveNodes(tf::GraphDef& def, const std::set<std::string>& names);

// A name not used in `def`, starting from `base`.
std::string UniqueName(const tf::GraphDef& def, const std::string& base);

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

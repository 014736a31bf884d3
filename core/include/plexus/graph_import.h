// Imports TensorFlow GraphDefs (binary or text format) into a Graph. Graph
// files are untrusted input: every field is validated, and every error names
// the file and the node involved.
#ifndef PLEXUS_GRAPH_IMPORT_H_
#define PLEXUS_GRAPH_IMPORT_H_

#include <memory>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "graph.pb.h"
#include "plexus/graph.h"

namespace plexus {

// The consumer version of this build, for the GraphDef versions check.
inline constexpr int kGraphDefConsumerVersion = 2000;
// The oldest GraphDef producer version this build reads (TensorFlow's is 0).
inline constexpr int kGraphDefMinProducerVersion = 0;

absl::StatusOr<std::unique_ptr<Graph>> ImportGraphDef(const tf::GraphDef& def,
                                                      absl::string_view source);

enum class GraphFormat {
  kAuto,    // binary, else text
  kBinary,
  kText,
};

// Parses `bytes` as a GraphDef in the given format.
absl::StatusOr<std::unique_ptr<Graph>> ImportGraphDefBytes(
    absl::string_view bytes, absl::string_view source, GraphFormat format = GraphFormat::kAuto);

// Reads a file: ".pbtxt"/".txt" are text, anything else binary with a text
// fallback.
absl::StatusOr<std::unique_ptr<Graph>> ImportGraphDefFile(const std::string& path);

// A FunctionDef as a GraphDef: its arguments are _Arg nodes (named like the
// arguments, in order), its results the `fetches`, and `targets` the nodes
// that must run for their effects (control returns and stateful nodes).
struct FunctionGraph {
  tf::GraphDef graph;
  std::vector<std::string> arg_nodes;
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
};
absl::StatusOr<FunctionGraph> FunctionToGraphDef(const tf::FunctionDef& function,
                                                 const tf::FunctionDefLibrary& library);

// Rewrites a node that calls a library function by name (op: "my_fn") into
// a PartitionedCall / StatefulPartitionedCall of it. False when `node` is not
// such a call.
bool RewriteCall(const tf::FunctionDefLibrary& library, tf::NodeDef* node);

// Completes a node whose `def` and `attrs` are set: fills attribute
// defaults, checks every attribute against the op's declaration, and
// expands the op's argument specs into input and output dtypes. Errors name
// the node. Used by the importer, the graph builder and eager execution.
absl::Status PrepareNode(Node* node);

// The graph as a GraphDef (nodes in order, attributes, devices, library).
tf::GraphDef GraphToGraphDef(const Graph& graph);

// Parses "name" / "name:k" / "^name" (control) as used in NodeDef.input.
struct TensorRef {
  std::string node;
  int index = 0;
  bool control = false;
};
absl::StatusOr<TensorRef> ParseTensorRef(absl::string_view text);

}  // namespace plexus

#endif  // PLEXUS_GRAPH_IMPORT_H_

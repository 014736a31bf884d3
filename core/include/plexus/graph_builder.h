// Builds a graph node by node, checking each node as it is added: the op
// exists, its attributes are complete (type and count attributes inferred
// from the inputs, as in eager execution), its inputs have the dtypes it
// declares, and its output shapes are inferred at once. Tracing a Python
// function (plexus.function) builds its graph this way.
//
//   GraphBuilder b("my_fn");
//   PX_ASSIGN_OR_RETURN(Node* x, b.AddPlaceholder(DataType::kFloat, shape, "x"));
//   PX_ASSIGN_OR_RETURN(Node* y, b.AddNode("Relu", {{x, 0}}, {}));
//   PX_ASSIGN_OR_RETURN(std::shared_ptr<const Graph> g, b.Finish());
#ifndef PLEXUS_GRAPH_BUILDER_H_
#define PLEXUS_GRAPH_BUILDER_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "graph.pb.h"
#include "plexus/graph.h"
#include "plexus/tensor.h"

namespace plexus {

class GraphBuilder {
 public:
  // `source` names the graph in messages ("function 'f'").
  explicit GraphBuilder(std::string source);

  // A builder holding a copy of `graph` (its nodes re-added in topological
  // order, so each is checked again; its function library kept), to extend
  // it, e.g. with gradients. Graphs with cycles (TensorFlow 1 loops) are
  // refused. Nodes keep their names.
  static absl::StatusOr<std::unique_ptr<GraphBuilder>> FromGraph(const Graph& graph);

  // Adds a node running `op` on `inputs` (outputs of nodes added before),
  // named after `name_hint` (or the op), made unique. Errors name the op and
  // the node and leave the builder unchanged.
  absl::StatusOr<Node*> AddNode(absl::string_view op, const std::vector<Endpoint>& inputs,
                                AttrMap attrs, absl::string_view name_hint = {},
                                const std::vector<Node*>& control_inputs = {});
  absl::StatusOr<Node*> AddPlaceholder(DataType dtype, const PartialShape& shape,
                                       absl::string_view name_hint);
  // A Const node holding `value` (copied to the host when it is not there).
  absl::StatusOr<Node*> AddConst(const Tensor& value, absl::string_view name_hint);

  const Graph& graph() const { return graph_; }
  // The value of a Const node added with AddConst, else null.
  const Tensor* ConstValue(const Node* node) const;
  tf::GraphDef ToGraphDef() const;
  // The finished graph, imported from ToGraphDef() and so checked as a graph
  // file is.
  absl::StatusOr<std::shared_ptr<const Graph>> Finish() const;

 private:
  std::string UniqueName(absl::string_view hint);

  Graph graph_;
  absl::flat_hash_map<std::string, int> name_counts_;
  std::map<int, Tensor> const_values_;
};

}  // namespace plexus

#endif  // PLEXUS_GRAPH_BUILDER_H_

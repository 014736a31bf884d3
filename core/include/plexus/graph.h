// The in-memory graph: nodes with typed data inputs, control inputs and
// attributes. Built by the GraphDef importer (graph_import.h); immutable once
// built and shared by the sessions that run it.
#ifndef PLEXUS_GRAPH_H_
#define PLEXUS_GRAPH_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "attr_value.pb.h"
#include "function.pb.h"
#include "plexus/dtype.h"
#include "plexus/op_def.h"
#include "plexus/shape.h"

namespace plexus {

class Tensor;  // plexus/tensor.h (the devices layer): graphs hold pointers only

// Attribute values by name, ordered (as NodeDef's map prints): what the graph
// builder, eager execution and the tape give an op.
using AttrMap = std::map<std::string, tf::AttrValue, std::less<>>;

// Fills the attributes that the inputs determine and `attrs` leaves out:
// type attributes (T, Tidx, ...) from the dtypes of the inputs declared
// with them, the count of an "N * T" input and the types of a "Tlist"
// input. An op with one variable-length input takes every input that the
// other arguments leave. Errors name the op and the argument.
absl::Status InferOpAttrs(const OpDef& def, absl::Span<const DataType> input_types, AttrMap* attrs);

struct Node;

// One output of a node.
struct Endpoint {
  Node* node = nullptr;
  int index = 0;
};

struct Node {
  int id = 0;                   // index in Graph::nodes()
  std::string name;
  std::string op;
  const OpDef* def = nullptr;   // owned by the OpRegistry
  std::string requested_device; // NodeDef.device, may be empty
  std::map<std::string, tf::AttrValue, std::less<>> attrs;  // defaults filled
  std::vector<Endpoint> inputs;            // data inputs, in order
  std::vector<Node*> control_inputs;
  std::vector<DataType> input_types;
  std::vector<DataType> output_types;
  std::vector<bool> input_is_ref;          // the op takes input k by reference
  std::vector<PartialShape> output_shapes; // from static shape inference
  std::vector<Node*> consumers;            // data and control, deduplicated

  int num_inputs() const { return static_cast<int>(inputs.size()); }
  int num_outputs() const { return static_cast<int>(output_types.size()); }
  const tf::AttrValue* FindAttr(absl::string_view attr) const;
  // "node 'dense/MatMul' (op MatMul)": the prefix of every error about it.
  std::string Describe() const;
};

// Typed attribute access; errors name the node and the attribute.
absl::StatusOr<int64_t> GetAttrInt(const Node& node, absl::string_view name);
absl::StatusOr<float> GetAttrFloat(const Node& node, absl::string_view name);
absl::StatusOr<bool> GetAttrBool(const Node& node, absl::string_view name);
absl::StatusOr<DataType> GetAttrType(const Node& node, absl::string_view name);
absl::StatusOr<std::string> GetAttrString(const Node& node, absl::string_view name);
absl::StatusOr<std::vector<int64_t>> GetAttrIntList(const Node& node, absl::string_view name);
absl::StatusOr<PartialShape> GetAttrShape(const Node& node, absl::string_view name);
absl::StatusOr<const tf::TensorProto*> GetAttrTensorProto(const Node& node, absl::string_view name);

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  Node* AddNode(std::string name, std::string op);
  Node* FindNode(absl::string_view name) const;
  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }

  // Parses "name", "name:k" into an endpoint; errors name the tensor.
  absl::StatusOr<Endpoint> ResolveTensor(absl::string_view tensor_name) const;

  // Where the graph came from (file name or "<bytes>"), for messages.
  std::string source;
  int producer_version = 0;
  tf::FunctionDefLibrary library;  // kept for functions (later issues)

 private:
  std::vector<std::unique_ptr<Node>> nodes_;
  absl::flat_hash_map<std::string, Node*> by_name_;
};

// Shape-function context. At import time inputs may be partly known; at run
// time they are exact and host-resident input values may be provided.
class InferenceContext {
 public:
  InferenceContext(const Node& node, std::vector<PartialShape> input_shapes,
                   std::vector<const Tensor*> input_values = {});

  const Node& node() const { return node_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  const PartialShape& input(int i) const { return inputs_[i]; }
  // The value of input i when known on the host, else null.
  const Tensor* input_value(int i) const;
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  void set_output(int i, PartialShape shape) { outputs_[i] = std::move(shape); }
  const PartialShape& output(int i) const { return outputs_[i]; }
  std::vector<PartialShape>& outputs() { return outputs_; }

  // An INVALID_ARGUMENT error prefixed with the node's description.
  absl::Status Error(absl::string_view message) const;

 private:
  const Node& node_;
  std::vector<PartialShape> inputs_;
  std::vector<const Tensor*> values_;
  std::vector<PartialShape> outputs_;
};

// Runs node's shape function (unknown outputs when it has none).
absl::Status InferShapes(InferenceContext& ctx);

}  // namespace plexus

#endif  // PLEXUS_GRAPH_H_

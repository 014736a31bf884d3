#include "plexus/graph.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "plexus/status.h"

namespace plexus {

const tf::AttrValue* Node::FindAttr(absl::string_view attr) const {
  auto it = attrs.find(attr);
  return it == attrs.end() ? nullptr : &it->second;
}

std::string Node::Describe() const {
  return absl::StrCat("node '", name, "' (op ", op, ")");
}

namespace {

absl::StatusOr<const tf::AttrValue*> FindTyped(const Node& node, absl::string_view name,
                                               tf::AttrValue::ValueCase expected,
                                               const char* type_name) {
  const tf::AttrValue* value = node.FindAttr(name);
  if (value == nullptr) {
    return absl::NotFoundError(absl::StrCat(node.Describe(), ": attribute '", name,
                                            "' is missing"));
  }
  if (value->value_case() != expected) {
    return absl::InvalidArgumentError(absl::StrCat(node.Describe(), ": attribute '", name,
                                                   "' is not of type ", type_name));
  }
  return value;
}

}  // namespace

absl::StatusOr<int64_t> GetAttrInt(const Node& node, absl::string_view name) {
  PX_ASSIGN_OR_RETURN(auto* v, FindTyped(node, name, tf::AttrValue::kI, "int"));
  return v->i();
}
absl::StatusOr<float> GetAttrFloat(const Node& node, absl::string_view name) {
  PX_ASSIGN_OR_RETURN(auto* v, FindTyped(node, name, tf::AttrValue::kF, "float"));
  return v->f();
}
absl::StatusOr<bool> GetAttrBool(const Node& node, absl::string_view name) {
  PX_ASSIGN_OR_RETURN(auto* v, FindTyped(node, name, tf::AttrValue::kB, "bool"));
  return v->b();
}
absl::StatusOr<DataType> GetAttrType(const Node& node, absl::string_view name) {
  PX_ASSIGN_OR_RETURN(auto* v, FindTyped(node, name, tf::AttrValue::kType, "type"));
  return BaseType(v->type());
}
absl::StatusOr<std::string> GetAttrString(const Node& node, absl::string_view name) {
  PX_ASSIGN_OR_RETURN(auto* v, FindTyped(node, name, tf::AttrValue::kS, "string"));
  return v->s();
}
absl::StatusOr<std::vector<int64_t>> GetAttrIntList(const Node& node, absl::string_view name) {
  PX_ASSIGN_OR_RETURN(auto* v, FindTyped(node, name, tf::AttrValue::kList, "list(int)"));
  return std::vector<int64_t>(v->list().i().begin(), v->list().i().end());
}
absl::StatusOr<PartialShape> GetAttrShape(const Node& node, absl::string_view name) {
  PX_ASSIGN_OR_RETURN(auto* v, FindTyped(node, name, tf::AttrValue::kShape, "shape"));
  if (v->shape().unknown_rank()) return PartialShape::Unknown();
  Shape dims;
  for (const auto& d : v->shape().dim()) dims.push_back(d.size() < 0 ? -1 : d.size());
  return PartialShape(std::move(dims));
}
absl::StatusOr<const tf::TensorProto*> GetAttrTensorProto(const Node& node,
                                                          absl::string_view name) {
  PX_ASSIGN_OR_RETURN(auto* v, FindTyped(node, name, tf::AttrValue::kTensor, "tensor"));
  return &v->tensor();
}

Node* Graph::AddNode(std::string name, std::string op) {
  auto node = std::make_unique<Node>();
  node->id = static_cast<int>(nodes_.size());
  node->name = std::move(name);
  node->op = std::move(op);
  Node* raw = node.get();
  by_name_[raw->name] = raw;
  nodes_.push_back(std::move(node));
  return raw;
}

Node* Graph::FindNode(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

absl::StatusOr<Endpoint> Graph::ResolveTensor(absl::string_view tensor_name) const {
  absl::string_view node_name = tensor_name;
  int index = 0;
  size_t colon = tensor_name.rfind(':');
  if (colon != absl::string_view::npos) {
    if (!absl::SimpleAtoi(tensor_name.substr(colon + 1), &index) || index < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor name '", tensor_name, "' must be 'node' or 'node:index'"));
    }
    node_name = tensor_name.substr(0, colon);
  }
  Node* node = FindNode(node_name);
  if (node == nullptr) {
    return absl::NotFoundError(absl::StrCat("no node named '", node_name,
                                            "' in the graph (tensor '", tensor_name, "')"));
  }
  if (index >= node->num_outputs()) {
    return absl::OutOfRangeError(absl::StrCat(node->Describe(), " has ", node->num_outputs(),
                                              " output(s); tensor '", tensor_name,
                                              "' does not exist"));
  }
  return Endpoint{node, index};
}

InferenceContext::InferenceContext(const Node& node, std::vector<PartialShape> input_shapes,
                                   std::vector<const Tensor*> input_values)
    : node_(node), inputs_(std::move(input_shapes)), values_(std::move(input_values)),
      outputs_(node.num_outputs()) {}

const Tensor* InferenceContext::input_value(int i) const {
  return i < static_cast<int>(values_.size()) ? values_[i] : nullptr;
}

absl::Status InferenceContext::Error(absl::string_view message) const {
  return absl::InvalidArgumentError(absl::StrCat(node_.Describe(), ": ", message));
}

absl::Status InferShapes(InferenceContext& ctx) {
  const Node& node = ctx.node();
  if (node.def == nullptr || !node.def->shape_fn) return absl::OkStatus();
  absl::Status status = node.def->shape_fn(ctx);
  if (!status.ok() && !absl::StrContains(status.message(), node.Describe())) {
    return Annotate(status, node.Describe());
  }
  if (!status.ok()) return status;
  // A shape whose element count does not fit in int64 (a Placeholder's
  // shape attribute of [2^62, 2^31], say) is refused here, where it is
  // made: every consumer's shape function counts elements in int64. A
  // known zero dimension makes the count zero whatever the others are.
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    const PartialShape& shape = ctx.output(i);
    const auto& dims = shape.dims();
    if (std::find(dims.begin(), dims.end(), 0) != dims.end()) continue;
    int64_t n = 1;
    for (int64_t d : dims) {
      if (d > 0 && __builtin_mul_overflow(n, d, &n)) {
        return ctx.Error(absl::StrCat("output ", i, " has shape ", shape.ToString(),
                                      ", whose number of elements overflows int64"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace plexus

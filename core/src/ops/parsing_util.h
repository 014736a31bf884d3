// Helpers shared by the ParseExample shape function (ops/parsing_ops.cc)
// and its host kernel (host_kernels/parsing.cc): the feature type and shape
// attributes, and where each ParseExample variant keeps its inputs and
// outputs.
#ifndef PLEXUS_CORE_SRC_OPS_PARSING_UTIL_H_
#define PLEXUS_CORE_SRC_OPS_PARSING_UTIL_H_

#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/shape.h"
#include "plexus/status.h"
#include "plexus/tensor_proto.h"

namespace plexus {
namespace parsing_util {

inline absl::StatusOr<std::vector<DataType>> TypeListAttr(const Node& node, absl::string_view name) {
  std::vector<DataType> types;
  const tf::AttrValue* attr = node.FindAttr(name);
  if (attr == nullptr) return types;
  for (int t : attr->list().type()) {
    DataType dtype = static_cast<DataType>(t);
    if (dtype != DataType::kFloat && dtype != DataType::kInt64 && dtype != DataType::kString) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.Describe(), ": attr '", name, "' lists ", DataTypeName(dtype),
          "; features are float, int64 or string"));
    }
    types.push_back(dtype);
  }
  return types;
}

inline absl::StatusOr<std::vector<PartialShape>> ShapeListAttr(const Node& node, absl::string_view name) {
  std::vector<PartialShape> shapes;
  const tf::AttrValue* attr = node.FindAttr(name);
  if (attr == nullptr) return shapes;
  for (const auto& proto : attr->list().shape()) {
    auto shape = ShapeFromProto(proto);
    if (!shape.ok()) return Annotate(shape.status(), absl::StrCat(node.Describe(), ": attr '", name, "'"));
    shapes.push_back(*shape);
  }
  return shapes;
}

// Where a ParseExample variant keeps its inputs and outputs.
struct ParseLayout {
  bool v2 = false;
  int num_sparse = 0;
  int num_dense = 0;
  int num_ragged = 0;       // V2: ragged value outputs
  int dense_keys_input = 0; // V1: first of num_dense scalars; V2: one vector
  int sparse_keys_input = 0;
  int ragged_keys_input = -1;
  int dense_defaults_input = 0;
  int dense_output = 0;
};

inline absl::StatusOr<ParseLayout> LayoutOf(const Node& node) {
  ParseLayout l;
  l.v2 = node.op == "ParseExampleV2";
  PX_ASSIGN_OR_RETURN(std::vector<DataType> tdense, TypeListAttr(node, "Tdense"));
  PX_ASSIGN_OR_RETURN(std::vector<DataType> sparse_types, TypeListAttr(node, "sparse_types"));
  l.num_dense = static_cast<int>(tdense.size());
  l.num_sparse = static_cast<int>(sparse_types.size());
  // The count attributes must agree with the type lists, or the inputs and
  // outputs would be misread: V1 gives each key its own input (Nsparse and
  // Ndense count them), V2 counts its sparse outputs with num_sparse, and
  // each ragged value has one row-splits output.
  std::vector<std::tuple<const char*, const char*, int>> counts;
  if (l.v2) {
    PX_ASSIGN_OR_RETURN(std::vector<DataType> ragged_values, TypeListAttr(node, "ragged_value_types"));
    PX_ASSIGN_OR_RETURN(std::vector<DataType> ragged_splits, TypeListAttr(node, "ragged_split_types"));
    l.num_ragged = static_cast<int>(ragged_values.size());
    if (ragged_splits.size() != ragged_values.size()) {
      return absl::InvalidArgumentError(absl::StrCat(node.Describe(), ": attr 'ragged_split_types' lists ",
                                                     ragged_splits.size(), " types but 'ragged_value_types' lists ",
                                                     ragged_values.size()));
    }
    counts = {{"num_sparse", "sparse_types", l.num_sparse}};
    l.sparse_keys_input = 2;
    l.dense_keys_input = 3;
    l.ragged_keys_input = 4;
    l.dense_defaults_input = 5;
  } else {
    counts = {{"Nsparse", "sparse_types", l.num_sparse}, {"Ndense", "Tdense", l.num_dense}};
    l.sparse_keys_input = 2;
    l.dense_keys_input = 2 + l.num_sparse;
    l.dense_defaults_input = l.dense_keys_input + l.num_dense;
  }
  for (const auto& [count_attr, types_attr, types] : counts) {
    const tf::AttrValue* count = node.FindAttr(count_attr);
    if (count != nullptr && count->i() != types) {
      return absl::InvalidArgumentError(absl::StrCat(node.Describe(), ": attr '", count_attr, "' is ",
                                                     count->i(), " but '", types_attr, "' lists ", types,
                                                     " types"));
    }
  }
  l.dense_output = 3 * l.num_sparse;
  return l;
}

}  // namespace parsing_util
}  // namespace plexus

#endif  // PLEXUS_CORE_SRC_OPS_PARSING_UTIL_H_

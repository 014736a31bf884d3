// The op registry: each op declares its inputs, outputs, attributes (with
// defaults and type constraints) and a shape function. Ops use TensorFlow's
// names and attribute names, so imported graphs need no translation.
//
// Ops are declared with TensorFlow-style spec strings:
//   PX_REGISTER_OP(OpDefBuilder("MatMul")
//       .Input("a: T").Input("b: T").Output("product: T")
//       .Attr("transpose_a: bool = false")
//       .Attr("T: {float, double, int32}")
//       .SetShapeFn(MatMulShape));
#ifndef PLEXUS_OP_DEF_H_
#define PLEXUS_OP_DEF_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "attr_value.pb.h"
#include "plexus/dtype.h"
#include "plexus/shape.h"

namespace plexus {

class InferenceContext;
using ShapeFn = std::function<absl::Status(InferenceContext&)>;

struct ArgSpec {
  std::string name;
  DataType fixed_type = DataType::kInvalid;  // set for "x: float"
  std::string type_attr;                     // set for "x: T"
  std::string number_attr;                   // set for "x: N * T"
  std::string type_list_attr;                // set for "x: Tlist"
  bool is_ref = false;                       // "x: Ref(T)"
};

struct AttrSpec {
  std::string name;
  std::string type;  // "int", "float", "bool", "type", "shape", "tensor",
                     // "string", "func", or "list(<one of those>)"
  bool has_default = false;
  tf::AttrValue default_value;
  std::vector<DataType> allowed_types;  // empty = any
  bool has_minimum = false;
  int64_t minimum = 0;
};

struct OpDef {
  std::string name;
  std::vector<ArgSpec> inputs;
  std::vector<ArgSpec> outputs;
  std::vector<AttrSpec> attrs;
  ShapeFn shape_fn;  // null = outputs of unknown shape
  bool is_stateful = false;
  // Outputs depend on attributes only (Const): an executor computes them
  // once and shares them between runs.
  bool is_constant = false;
  // Output k is input k unchanged (Identity): an executor forwards the tensor
  // and runs no kernel.
  bool forwards_inputs = false;
  // Output 0 is input 0's memory under the shape the shape function gives
  // (Reshape, ExpandDims, Squeeze): the core makes a view and no kernel runs.
  bool output_is_view = false;
  // The outputs are the inputs' shapes, sizes or ranks (Shape, ShapeN, Size,
  // Rank): the core makes them on the host and never reads input data.
  bool outputs_from_shapes = false;

  const AttrSpec* FindAttr(absl::string_view name) const;
};

class OpDefBuilder {
 public:
  explicit OpDefBuilder(std::string name);
  OpDefBuilder& Input(std::string spec);
  OpDefBuilder& Output(std::string spec);
  OpDefBuilder& Attr(std::string spec);
  OpDefBuilder& SetShapeFn(ShapeFn fn);
  OpDefBuilder& SetIsStateful();
  OpDefBuilder& SetIsConstant();
  OpDefBuilder& SetForwardsInputs();
  OpDefBuilder& SetOutputIsView();
  OpDefBuilder& SetOutputsFromShapes();
  // Parses the specs; errors name the op and the spec.
  absl::StatusOr<OpDef> Build() const;

 private:
  std::string name_;
  std::vector<std::string> inputs_, outputs_, attrs_;
  ShapeFn shape_fn_;
  bool stateful_ = false;
  bool constant_ = false;
  bool forwards_ = false;
  bool view_ = false;
  bool from_shapes_ = false;
};

class OpRegistry {
 public:
  static OpRegistry& Global();
  absl::Status Register(OpDef def);
  const OpDef* Find(absl::string_view name) const;  // null when unknown
  std::vector<std::string> ListOps() const;

 private:
  std::map<std::string, std::unique_ptr<OpDef>, std::less<>> ops_;
};

// Registers at static-initialization time; a bad spec aborts at load time of
// the core library (a programming error, never user input).
struct OpRegistration {
  explicit OpRegistration(const OpDefBuilder& builder);
};

#define PX_REGISTER_OP(builder) \
  PX_REGISTER_OP_UNIQ_(__COUNTER__, builder)
#define PX_REGISTER_OP_UNIQ_(ctr, builder) PX_REGISTER_OP_UNIQ2_(ctr, builder)
#define PX_REGISTER_OP_UNIQ2_(ctr, builder) \
  static ::plexus::OpRegistration px_op_registration_##ctr(builder)

}  // namespace plexus

#endif  // PLEXUS_OP_DEF_H_

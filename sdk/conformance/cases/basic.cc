// Cases for Const, Placeholder and NoOp: the ops every plugin usually
// registers first.
#include <cstring>

#include "cases.h"

namespace plexus::conformance {
namespace {

// A "value" attribute holding `t` (its bytes as tensor_content).
tf::AttrValue TensorAttr(const Tensor& t) {
  tf::AttrValue v;
  tf::TensorProto* proto = v.mutable_tensor();
  proto->set_dtype(static_cast<tf::DataType>(t.dtype()));
  for (int64_t d : t.shape()) proto->mutable_tensor_shape()->add_dim()->set_size(d);
  proto->set_tensor_content(std::string(static_cast<const char*>(t.raw_data()), t.nbytes()));
  return v;
}

PX_CONFORMANCE_CASES("Const")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (ctx.dtype == DataType::kString || ctx.dtype == DataType::kInvalid) return cases;
  for (const Shape& shape : std::vector<Shape>{{}, {3}, {2, 3, 4}, {0, 5}}) {
    Tensor value = RandomTensor(ctx.dtype, shape, ctx.rng);
    cases.push_back(Case("Const", "value " + ShapeToString(shape))
                        .Attr("dtype", ctx.dtype)
                        .Attr("value", TensorAttr(value)));
  }
  return cases;
}

PX_CONFORMANCE_CASES("Placeholder")(const CaseContext& ctx) {
  std::vector<Case> cases;
  if (ctx.dtype == DataType::kString || ctx.dtype == DataType::kInvalid) return cases;
  // A kernel only runs for a Placeholder nobody fed: it must refuse.
  tf::AttrValue shape;
  shape.mutable_shape()->add_dim()->set_size(2);
  cases.push_back(Case("Placeholder", "error: not fed")
                      .Attr("dtype", ctx.dtype)
                      .Attr("shape", shape)
                      .ExpectError(absl::StatusCode::kInvalidArgument));
  return cases;
}

PX_CONFORMANCE_CASES("NoOp")(const CaseContext& ctx) {
  return {Case("NoOp", "no inputs, no outputs")};
}

}  // namespace
}  // namespace plexus::conformance

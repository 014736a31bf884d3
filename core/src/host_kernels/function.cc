// Host kernels of the function-call and functional control-flow ops
// (schemas in ops/function_ops.cc): PartitionedCall,
// StatefulPartitionedCall, If / StatelessIf, While / StatelessWhile and
// _Retval. Each runs a library function through the session state, which
// instantiates and caches it.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "exec/session_state.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

absl::StatusOr<std::string> FuncName(HostOpContext& ctx, const char* attr) {
  const tf::AttrValue* f = ctx.node().FindAttr(attr);
  if (f == nullptr || f->value_case() != tf::AttrValue::kFunc || f->func().name().empty()) {
    return ctx.InvalidArgument(absl::StrCat("attribute '", attr, "' must name a function"));
  }
  return f->func().name();
}

absl::Status SetOutputs(HostOpContext& ctx, std::vector<Tensor> results, const std::string& f) {
  if (static_cast<int>(results.size()) != ctx.node().num_outputs()) {
    return ctx.InvalidArgument(absl::StrCat("function '", f, "' returned ", results.size(),
                                            " value(s), the node has ", ctx.node().num_outputs(),
                                            " output(s)"));
  }
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].dtype() != ctx.node().output_types[i]) {
      return ctx.InvalidArgument(absl::StrCat("function '", f, "' result ", i, " is ",
                                              DataTypeName(results[i].dtype()), ", expected ",
                                              DataTypeName(ctx.node().output_types[i])));
    }
    ctx.set_output(static_cast<int>(i), std::move(results[i]));
  }
  return absl::OkStatus();
}

// The node's inputs from `first` on, taken from the context: a call hands
// its arguments on, so that a list argument nobody else holds can be
// changed in place inside the function (devices/variant.h).
std::vector<Tensor> TakeInputs(HostOpContext& ctx, int first) {
  std::vector<Tensor> args;
  for (int i = first; i < ctx.num_inputs(); ++i) args.push_back(ctx.TakeInput(i));
  return args;
}

absl::Status Call(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(std::string f, FuncName(ctx, "f"));
  PX_ASSIGN_OR_RETURN(std::vector<Tensor> results, ctx.state()->CallFunction(f, TakeInputs(ctx, 0)));
  return SetOutputs(ctx, std::move(results), f);
}
PX_REGISTER_HOST_OP("PartitionedCall", Call);
PX_REGISTER_HOST_OP("StatefulPartitionedCall", Call);

// TensorFlow's truth value of a tensor: a scalar's value (non-zero), or for
// any other shape, whether it has elements.
absl::StatusOr<bool> Truth(const Tensor& t) {
  if (t.dims() != 0) return t.num_elements() > 0;
  if (!t.host_readable()) return absl::InternalError("the predicate is not in host memory");
  switch (t.dtype()) {
    case DataType::kBool:
    case DataType::kUInt8:
    case DataType::kInt8: return t.data<uint8_t>()[0] != 0;
    case DataType::kInt32: return t.data<int32_t>()[0] != 0;
    case DataType::kInt64: return t.data<int64_t>()[0] != 0;
    case DataType::kFloat: return t.data<float>()[0] != 0;
    case DataType::kDouble: return t.data<double>()[0] != 0;
    case DataType::kString: return !t.strings().empty() && !t.strings()[0].empty();
    default:
      return absl::InvalidArgumentError(absl::StrCat("cannot use a ", DataTypeName(t.dtype()),
                                                     " tensor as a predicate"));
  }
}

absl::Status IfOp(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(bool cond, Truth(ctx.input(0)));
  PX_ASSIGN_OR_RETURN(std::string f, FuncName(ctx, cond ? "then_branch" : "else_branch"));
  PX_ASSIGN_OR_RETURN(std::vector<Tensor> results, ctx.state()->CallFunction(f, TakeInputs(ctx, 1)));
  return SetOutputs(ctx, std::move(results), f);
}
PX_REGISTER_HOST_OP("If", IfOp);
PX_REGISTER_HOST_OP("StatelessIf", IfOp);

absl::Status WhileOp(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(std::string cond, FuncName(ctx, "cond"));
  PX_ASSIGN_OR_RETURN(std::string body, FuncName(ctx, "body"));
  std::vector<Tensor> values = TakeInputs(ctx, 0);
  const size_t num_vars = values.size();
  for (int64_t iteration = 0;; ++iteration) {
    PX_ASSIGN_OR_RETURN(std::vector<Tensor> c, ctx.state()->CallFunction(cond, values));
    if (c.size() != 1) {
      return ctx.InvalidArgument(absl::StrCat("cond function '", cond, "' must return one value, got ", c.size()));
    }
    PX_ASSIGN_OR_RETURN(Tensor pred, CopyTensorTo(c[0], nullptr));
    PX_ASSIGN_OR_RETURN(bool go_on, Truth(pred));
    if (!go_on) break;
    // The body takes the loop variables: its list updates happen in place.
    PX_ASSIGN_OR_RETURN(std::vector<Tensor> next, ctx.state()->CallFunction(body, std::move(values)));
    if (next.size() != num_vars) {
      return ctx.InvalidArgument(absl::StrCat("body function '", body, "' returned ", next.size(),
                                              " value(s) for ", num_vars, " loop variable(s)"));
    }
    values = std::move(next);
  }
  return SetOutputs(ctx, std::move(values), body);
}
PX_REGISTER_HOST_OP("While", WhileOp);
PX_REGISTER_HOST_OP("StatelessWhile", WhileOp);

absl::Status RetvalOp(HostOpContext&) { return absl::OkStatus(); }
PX_REGISTER_HOST_OP("_Retval", RetvalOp);

}  // namespace
}  // namespace plexus

// Host kernels of the variable ops (schemas in ops/state_ops.cc): TensorFlow
// 1 reference variables (VariableV2, Assign, AssignAdd, ...), TensorFlow 2
// resource variables (VarHandleOp, ReadVariableOp, AssignVariableOp, ...)
// and the plain gradient-descent update. A variable lives in the session's
// state (exec/session_state.h).
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "devices/host_ops.h"
#include "exec/session_state.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

std::string ResourceKey(const Node& node) {
  std::string container, shared;
  if (auto c = GetAttrString(node, "container"); c.ok()) container = *c;
  if (auto s = GetAttrString(node, "shared_name"); s.ok()) shared = *s;
  if (shared.empty()) shared = node.name;
  return VariableResourceKey(container, shared);
}

absl::StatusOr<std::shared_ptr<ResourceBase>> VariableFor(HostOpContext& ctx) {
  const Node& node = ctx.node();
  PX_ASSIGN_OR_RETURN(DataType dtype, GetAttrType(node, "dtype"));
  PX_ASSIGN_OR_RETURN(PartialShape shape, GetAttrShape(node, "shape"));
  std::string key = ResourceKey(node);
  PX_ASSIGN_OR_RETURN(std::shared_ptr<ResourceBase> r,
                      ctx.state()->LookupOrCreate(key, [&]() -> absl::StatusOr<std::shared_ptr<ResourceBase>> {
                        return std::make_shared<Variable>(node.name, dtype, shape);
                      }));
  auto* var = dynamic_cast<Variable*>(r.get());
  if (var == nullptr || var->dtype() != dtype) {
    return ctx.InvalidArgument(absl::StrCat("resource '", key, "' already exists as ", r->DebugString()));
  }
  return r;
}

absl::Status VariableV2Op(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(std::shared_ptr<ResourceBase> r, VariableFor(ctx));
  ctx.set_output(0, Tensor::MakeRef(r, static_cast<Variable*>(r.get())->dtype()));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("VariableV2", VariableV2Op);

absl::Status VarHandle(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(std::shared_ptr<ResourceBase> r, VariableFor(ctx));
  ctx.set_output(0, Tensor::FromResource(r));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("VarHandleOp", VarHandle);

absl::StatusOr<Variable*> VariableOf(HostOpContext& ctx, int input) {
  const Tensor& t = ctx.input(input);
  auto* var = t.resource_as<Variable>();
  if (var == nullptr) {
    return ctx.InvalidArgument(absl::StrCat("input ", input, " is not a variable (got ",
                                            t.DebugString(), ")"));
  }
  return var;
}

absl::Status CheckAssignable(HostOpContext& ctx, const Variable& var, const Tensor& value,
                             bool validate_shape) {
  if (value.dtype() != var.dtype()) {
    return ctx.InvalidArgument(absl::StrCat("cannot assign a ", DataTypeName(value.dtype()),
                                            " value to ", var.DebugString()));
  }
  if (validate_shape && var.shape().rank_known()) {
    bool ok = var.shape().rank() == value.dims();
    for (int64_t d = 0; ok && d < value.dims(); ++d) {
      ok = var.shape().dim(d) < 0 || var.shape().dim(d) == value.shape()[d];
    }
    if (!ok) {
      return ctx.InvalidArgument(absl::StrCat("cannot assign a value of shape ",
                                              ShapeToString(value.shape()), " to ", var.DebugString()));
    }
  }
  return absl::OkStatus();
}

absl::Status AssignRef(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(Variable * var, VariableOf(ctx, 0));
  bool validate = true;
  if (auto v = GetAttrBool(ctx.node(), "validate_shape"); v.ok()) validate = *v;
  PX_RETURN_IF_ERROR(CheckAssignable(ctx, *var, ctx.input(1), validate));
  PX_RETURN_IF_ERROR(var->Assign(ctx.input(1)));
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("Assign", AssignRef);

template <typename T>
void Combine(T* out, const T* a, const T* b, int64_t n, double scale) {
  if constexpr (std::is_integral<T>::value) {
    if (scale == 1.0 || scale == -1.0) {
      // Integer AssignAdd / AssignSub: exact, without a round trip through
      // double (which loses int64 values above 2^53). Wraps like TensorFlow.
      using U = typename std::make_unsigned<T>::type;
      for (int64_t i = 0; i < n; ++i) {
        const U x = static_cast<U>(a[i]), y = static_cast<U>(b[i]);
        out[i] = static_cast<T>(scale > 0 ? x + y : x - y);
      }
      return;
    }
  }
  // The product rounded to T first, as TensorFlow computes `alpha * delta`
  // in T (exact for float: a product of two floats fits in a double).
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(a[i] + static_cast<T>(scale * b[i]));
}

// out = a + scale * b elementwise (b of a's shape).
absl::StatusOr<Tensor> AddScaled(const Tensor& a, const Tensor& b, double scale) {
  if (a.dtype() != b.dtype()) {
    return absl::InvalidArgumentError(absl::StrCat("dtype mismatch: ", DataTypeName(a.dtype()),
                                                   " and ", DataTypeName(b.dtype())));
  }
  if (a.shape() != b.shape()) {
    return absl::InvalidArgumentError(absl::StrCat("shape mismatch: ", ShapeToString(a.shape()),
                                                   " and ", ShapeToString(b.shape())));
  }
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(a.dtype(), a.shape()));
  int64_t n = a.num_elements();
  switch (a.dtype()) {
    case DataType::kFloat: Combine(out.data<float>(), a.data<float>(), b.data<float>(), n, scale); break;
    case DataType::kDouble: Combine(out.data<double>(), a.data<double>(), b.data<double>(), n, scale); break;
    case DataType::kInt32: Combine(out.data<int32_t>(), a.data<int32_t>(), b.data<int32_t>(), n, scale); break;
    case DataType::kInt64: Combine(out.data<int64_t>(), a.data<int64_t>(), b.data<int64_t>(), n, scale); break;
    default:
      return absl::UnimplementedError(absl::StrCat("variable updates of ", DataTypeName(a.dtype()),
                                                   " are not supported yet"));
  }
  return out;
}

absl::Status UpdateVariable(HostOpContext& ctx, Variable* var, const Tensor& delta, double scale) {
  absl::Status s = var->Update([&](const Tensor& current) { return AddScaled(current, delta, scale); });
  if (!s.ok()) return ctx.Error(s.code(), absl::StrCat(var->DebugString(), ": ", s.message()));
  return absl::OkStatus();
}

absl::Status AssignAddRef(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(Variable * var, VariableOf(ctx, 0));
  PX_RETURN_IF_ERROR(UpdateVariable(ctx, var, ctx.input(1), ctx.node().op == "AssignSub" ? -1.0 : 1.0));
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("AssignAdd", AssignAddRef);
PX_REGISTER_HOST_OP("AssignSub", AssignAddRef);

absl::Status IsInitialized(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(Variable * var, VariableOf(ctx, 0));
  PX_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateHost(DataType::kBool, {}));
  out.data<uint8_t>()[0] = var->initialized() ? 1 : 0;
  ctx.set_output(0, out);
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("IsVariableInitialized", IsInitialized);
PX_REGISTER_HOST_OP("VarIsInitializedOp", IsInitialized);

absl::Status ReadVariable(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(Variable * var, VariableOf(ctx, 0));
  auto value = var->Read();
  if (!value.ok()) return ctx.Error(value.status().code(), value.status().message());
  PX_ASSIGN_OR_RETURN(DataType dtype, GetAttrType(ctx.node(), "dtype"));
  if (value->dtype() != dtype) {
    return ctx.InvalidArgument(absl::StrCat("reads ", DataTypeName(dtype), " from ", var->DebugString()));
  }
  ctx.set_output(0, *value);
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("ReadVariableOp", ReadVariable);

absl::Status AssignVariable(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(Variable * var, VariableOf(ctx, 0));
  bool validate = false;
  if (auto v = GetAttrBool(ctx.node(), "validate_shape"); v.ok()) validate = *v;
  PX_RETURN_IF_ERROR(CheckAssignable(ctx, *var, ctx.input(1), validate));
  return var->Assign(ctx.input(1));
}
PX_REGISTER_HOST_OP("AssignVariableOp", AssignVariable);

absl::Status AssignAddVariable(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(Variable * var, VariableOf(ctx, 0));
  return UpdateVariable(ctx, var, ctx.input(1), ctx.node().op == "AssignSubVariableOp" ? -1.0 : 1.0);
}
PX_REGISTER_HOST_OP("AssignAddVariableOp", AssignAddVariable);
PX_REGISTER_HOST_OP("AssignSubVariableOp", AssignAddVariable);

absl::Status NoEffect(HostOpContext&) { return absl::OkStatus(); }
PX_REGISTER_HOST_OP("DisableCopyOnRead", NoEffect);
PX_REGISTER_HOST_OP("DestroyResourceOp", NoEffect);

double ScalarAsDouble(const Tensor& t) {
  switch (t.dtype()) {
    case DataType::kFloat: return t.data<float>()[0];
    case DataType::kDouble: return t.data<double>()[0];
    case DataType::kInt32: return t.data<int32_t>()[0];
    case DataType::kInt64: return static_cast<double>(t.data<int64_t>()[0]);
    default: return 0;
  }
}

absl::Status ApplyGradientDescent(HostOpContext& ctx) {
  PX_ASSIGN_OR_RETURN(Variable * var, VariableOf(ctx, 0));
  const Tensor& alpha = ctx.input(1);
  if (alpha.num_elements() != 1) return ctx.InvalidArgument("alpha must be a scalar");
  PX_RETURN_IF_ERROR(UpdateVariable(ctx, var, ctx.input(2), -ScalarAsDouble(alpha)));
  if (ctx.node().num_outputs() > 0) ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}
PX_REGISTER_HOST_OP("ApplyGradientDescent", ApplyGradientDescent);
PX_REGISTER_HOST_OP("ResourceApplyGradientDescent", ApplyGradientDescent);

}  // namespace
}  // namespace plexus

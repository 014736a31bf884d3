// Fused optimizer updates: Plexus-internal functional ops.
//
// TensorFlow's Apply* and ResourceApply* ops update their variables in
// place. These ops are functional instead: they take the current values of
// the variable and of its accumulators and return the new values, and the
// core assigns those to the variables. The executor therefore never writes a
// tensor in place (a kernel only ever writes its own outputs), and the
// ResourceApply* ops of an imported training graph are lowered onto these
// ops (read the variables, run the update, assign the results).
//
// Every hyperparameter (learning rate, decay rates, epsilon, ...) is a scalar
// of T, in the kernel's device memory (a GPU kernel reads it there, so a
// step's beta powers never travel to the host); var, the accumulators and
// grad are tensors of one shape, which is also the shape of every output.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/shape_util.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

// Merges two partial shapes: an unknown rank or dimension takes the other's.
// False when they conflict.
bool MergeShapes(const PartialShape& a, const PartialShape& b, PartialShape* out) {
  if (!a.rank_known()) {
    *out = b;
    return true;
  }
  if (!b.rank_known()) {
    *out = a;
    return true;
  }
  if (a.rank() != b.rank()) return false;
  Shape dims = a.dims();
  for (int64_t i = 0; i < a.rank(); ++i) {
    const int64_t x = a.dim(i), y = b.dim(i);
    if (x < 0) {
      dims[i] = y;
    } else if (y >= 0 && x != y) {
      return false;
    }
  }
  *out = PartialShape(dims);
  return true;
}

// The shape function of an update: `tensors` are the inputs of var's shape
// (var first), `scalars` the hyperparameters. Every output has var's shape.
ShapeFn UpdateShape(std::initializer_list<int> tensors, std::initializer_list<int> scalars) {
  std::vector<int> t(tensors), s(scalars);
  return [t, s](InferenceContext& ctx) -> absl::Status {
    const OpDef* def = ctx.node().def;
    auto name = [&](int i) -> std::string {
      return def != nullptr && i < static_cast<int>(def->inputs.size()) ? def->inputs[i].name
                                                                        : absl::StrCat("input ", i);
    };
    for (int i : s) {
      const PartialShape& shape = ctx.input(i);
      if (shape.rank_known() && shape.rank() != 0) {
        return ctx.Error(absl::StrCat(name(i), " is not a scalar: shape ", shape.ToString()));
      }
    }
    PartialShape merged = ctx.input(t.front());
    for (int i : t) {
      PartialShape next;
      if (!MergeShapes(merged, ctx.input(i), &next)) {
        return ctx.Error(absl::StrCat(name(t.front()), " and ", name(i),
                                      " do not have the same shape: ",
                                      ctx.input(t.front()).ToString(), " and ",
                                      ctx.input(i).ToString()));
      }
      merged = next;
    }
    for (int k = 0; k < ctx.num_outputs(); ++k) ctx.set_output(k, merged);
    return absl::OkStatus();
  };
}

// var_out = var - alpha * delta.
PX_REGISTER_OP(OpDefBuilder("_PlexusApplyGradientDescent")
                   .Input("var: T")
                   .Input("alpha: T")
                   .Input("delta: T")
                   .Output("var_out: T")
                   .Attr(kFloatTypes)
                   .SetShapeFn(UpdateShape({0, 2}, {1})));

// TensorFlow's ApplyMomentum: accum = accum * momentum + grad;
// var -= lr * accum, or with use_nesterov var -= lr * grad + lr * momentum *
// accum.
PX_REGISTER_OP(OpDefBuilder("_PlexusApplyMomentum")
                   .Input("var: T")
                   .Input("accum: T")
                   .Input("lr: T")
                   .Input("grad: T")
                   .Input("momentum: T")
                   .Output("var_out: T")
                   .Output("accum_out: T")
                   .Attr(kFloatTypes)
                   .Attr("use_nesterov: bool = false")
                   .SetShapeFn(UpdateShape({0, 1, 3}, {2, 4})));

// TensorFlow's ApplyAdam: lr_t = lr * sqrt(1 - beta2_power) / (1 -
// beta1_power); m += (grad - m) * (1 - beta1); v += (grad^2 - v) * (1 -
// beta2); var -= lr_t * m / (sqrt(v) + epsilon), or with use_nesterov
// var -= lr_t * (m * beta1 + (1 - beta1) * grad) / (sqrt(v) + epsilon).
PX_REGISTER_OP(OpDefBuilder("_PlexusApplyAdam")
                   .Input("var: T")
                   .Input("m: T")
                   .Input("v: T")
                   .Input("beta1_power: T")
                   .Input("beta2_power: T")
                   .Input("lr: T")
                   .Input("beta1: T")
                   .Input("beta2: T")
                   .Input("epsilon: T")
                   .Input("grad: T")
                   .Output("var_out: T")
                   .Output("m_out: T")
                   .Output("v_out: T")
                   .Attr(kFloatTypes)
                   .Attr("use_nesterov: bool = false")
                   .SetShapeFn(UpdateShape({0, 1, 2, 9}, {3, 4, 5, 6, 7, 8})));

// PyTorch's AdamW (decoupled weight decay): var *= 1 - lr * weight_decay;
// m = beta1 * m + (1 - beta1) * grad; v = beta2 * v + (1 - beta2) * grad^2;
// var -= lr / (1 - beta1_power) * m / (sqrt(v) / sqrt(1 - beta2_power) +
// epsilon).
PX_REGISTER_OP(OpDefBuilder("_PlexusApplyAdamW")
                   .Input("var: T")
                   .Input("m: T")
                   .Input("v: T")
                   .Input("beta1_power: T")
                   .Input("beta2_power: T")
                   .Input("lr: T")
                   .Input("beta1: T")
                   .Input("beta2: T")
                   .Input("epsilon: T")
                   .Input("weight_decay: T")
                   .Input("grad: T")
                   .Output("var_out: T")
                   .Output("m_out: T")
                   .Output("v_out: T")
                   .Attr(kFloatTypes)
                   .SetShapeFn(UpdateShape({0, 1, 2, 10}, {3, 4, 5, 6, 7, 8, 9})));

// TensorFlow's ApplyRMSProp: ms += (grad^2 - ms) * (1 - rho); mom = mom *
// momentum + lr * grad / sqrt(ms + epsilon); var -= mom.
PX_REGISTER_OP(OpDefBuilder("_PlexusApplyRMSProp")
                   .Input("var: T")
                   .Input("ms: T")
                   .Input("mom: T")
                   .Input("lr: T")
                   .Input("rho: T")
                   .Input("momentum: T")
                   .Input("epsilon: T")
                   .Input("grad: T")
                   .Output("var_out: T")
                   .Output("ms_out: T")
                   .Output("mom_out: T")
                   .Attr(kFloatTypes)
                   .SetShapeFn(UpdateShape({0, 1, 2, 7}, {3, 4, 5, 6})));

}  // namespace
}  // namespace plexus

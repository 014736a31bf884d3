// _PlexusLayerNorm: layer normalization over the last axis, made by the
// graph optimizer from the ops Keras exports for LayerNormalization
// (passes/optimizer/layer_norm.cc). Internal: a plugin that registers a
// kernel for it gets it; the others keep the separate ops.
//   y = (x - mean) / sqrt(variance + epsilon) * gamma + beta
// with mean and variance (the biased one, over the last axis) per row, and
// gamma and beta vectors of the last axis's size.
#include "absl/strings/str_cat.h"
#include "plexus/graph.h"
#include "plexus/op_def.h"
#include "plexus/status.h"

namespace plexus {
namespace {

absl::Status LayerNormShape(InferenceContext& ctx) {
  const PartialShape& x = ctx.input(0);
  if (x.rank_known() && x.rank() < 1) {
    return ctx.Error(absl::StrCat("_PlexusLayerNorm input must have at least one dimension, got ",
                                  x.ToString()));
  }
  const int64_t channels = x.rank_known() ? x.dim(x.rank() - 1) : -1;
  static const char* const kNames[] = {"gamma", "beta"};
  for (int i = 1; i < 3; ++i) {
    const PartialShape& v = ctx.input(i);
    if (!v.rank_known()) continue;
    if (v.rank() != 1) {
      return ctx.Error(absl::StrCat("_PlexusLayerNorm ", kNames[i - 1], " must be 1-D, got ", v.ToString()));
    }
    if (channels >= 0 && v.dim(0) >= 0 && v.dim(0) != channels) {
      return ctx.Error(absl::StrCat("_PlexusLayerNorm ", kNames[i - 1], " ", v.ToString(),
                                    " must have the input's last dimension ", channels));
    }
  }
  ctx.set_output(0, x);
  return absl::OkStatus();
}

PX_REGISTER_OP(OpDefBuilder("_PlexusLayerNorm")
                   .Input("x: T")
                   .Input("gamma: T")
                   .Input("beta: T")
                   .Output("y: T")
                   .Attr("T: {float, double}")
                   .Attr("epsilon: float")
                   .SetShapeFn(LayerNormShape));

}  // namespace
}  // namespace plexus
